/**
 * The built CLI's start: `orgplane --help` and `--version` run cold (a fresh process each time) beside `node -e 0`,
 * and `orgplane teams list --json` timed to the first byte of its output against a server it starts (the built
 * CLI's `serve` on a throwaway embedded database, with one organization and team seeded over HTTP). Builds nothing:
 * run `pnpm build` first. Run by `pnpm bench --cli [runs]`.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { textAt } from "./json.js"

const BIN = Path.resolve(process.env.ORGPLANE_BENCH_ROOT ?? Path.join(import.meta.dirname, ".."), "packages/cli/dist/bin.js")

interface Run {
  /** From spawn to the first byte on stdout, in ms. */
  readonly firstByte: number
  /** From spawn to exit, in ms. */
  readonly exit: number
}

/** One cold run of `node <args>`; fails when it exits with another code than 0. */
const once = (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<Run>((resolve, reject) => {
    const start = performance.now()
    let firstByte: number | undefined
    let stderr = ""
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] })
    child.stdout.on("data", () => (firstByte ??= performance.now() - start))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => {
      const exit = performance.now() - start
      if (code === 0) resolve({ firstByte: firstByte ?? exit, exit })
      else reject(new Error(`node ${args.join(" ")} exited with ${code}: ${stderr.trim()}`))
    })
  })

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!
}

const LABEL = 34

/**
 * Each case `runs` times, the cases taking turns so that a busy machine slows them alike; prints median and p90 of
 * the time to exit (`exit`) or to the first byte of output (`firstByte`).
 */
const measure = async (
  runs: number,
  cases: ReadonlyArray<{ readonly label: string; readonly args: ReadonlyArray<string>; readonly env?: NodeJS.ProcessEnv }>,
  figure: keyof Run
) => {
  const times = cases.map(() => [] as Array<number>)
  for (const test of cases) await once(test.args, { ...process.env, ...test.env }) // warm the file cache
  for (let i = 0; i < runs; i++) {
    for (const [index, test] of cases.entries()) times[index]!.push((await once(test.args, { ...process.env, ...test.env }))[figure])
  }
  for (const [index, test] of cases.entries()) {
    const median = percentile(times[index]!, 0.5)
    const p90 = percentile(times[index]!, 0.9)
    console.log(`${test.label.padEnd(LABEL)} | ${median.toFixed(0).padStart(6)} ${p90.toFixed(0).padStart(6)}`)
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

/** `orgplane serve` of the built CLI on a throwaway database; resolves once it listens. */
const startServer = async () => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [BIN, "serve", "--port", String(port), "--data", "memory"], {
    env: { ...process.env, ORGPLANE_PASSWORD_COST: "10" },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let log = ""
  await new Promise<void>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      log += chunk
      if (log.includes("Listening on")) resolve()
    }
    child.stdout.on("data", look)
    child.stderr.on("data", look)
    child.on("exit", (code) => reject(new Error(`the server exited with ${code}: ${log.trim()}`)))
  })
  return { url, stop: () => child.kill("SIGTERM") }
}

const call = async (url: string, path: string, body: unknown, token?: string) => {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body)
  })
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
  const answer: unknown = await response.json()
  return answer
}

/** A person, their organization (active in their session) and a team in it; the session's token. */
const seed = async (url: string) => {
  const signedUp = await call(url, "/v1/auth/sign-up", { email: "bench@example.com", password: "a long bench password", name: "Bench" })
  const token = textAt(signedUp, "session", "token")
  await call(url, "/v1/organizations", { name: "Bench" }, token)
  await call(url, "/v1/teams", { name: "Platform" }, token)
  return token
}

export const measureCli = async (runs: number) => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run \`pnpm build\` first`)
  console.log(`${BIN}, ${runs} cold runs each (after one to warm the file cache); ms\n`)
  console.log(`${"".padEnd(LABEL)} | median    p90`)
  console.log(`${"-".repeat(LABEL)}-+--------------`)
  await measure(runs, [
    { label: "node -e 0", args: ["-e", "0"] },
    { label: "orgplane --version", args: [BIN, "--version"] },
    { label: "orgplane --help", args: [BIN, "--help"] },
    { label: "orgplane teams --help", args: [BIN, "teams", "--help"] }
  ], "exit")

  const server = await startServer()
  const home = mkdtempSync(Path.join(tmpdir(), "orgplane-bench-cli-"))
  try {
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: await seed(server.url), ORGPLANE_CONFIG_DIR: home }
    console.log("\nto the first byte of output")
    await measure(runs, [
      { label: "node -e \"console.log(0)\"", args: ["-e", "console.log(0)"] },
      { label: "orgplane teams list --json", args: [BIN, "teams", "list", "--json"], env }
    ], "firstByte")
  } finally {
    server.stop()
    rmSync(home, { recursive: true, force: true })
  }
}
