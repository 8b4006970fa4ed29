/**
 * Start-up: wall time from spawning `node` running `orgplane serve` to the first 200 from `GET /health`, for the
 * three ways a server opens its database: Postgres at DATABASE_URL (already migrated), a reopened embedded folder
 * (already migrated), and `--data memory` (a fresh in-memory database each start). Each case is started as
 * `pnpm start` runs it (the TypeScript sources through tsx) and, when `packages/cli/dist/bin.js` is built, through
 * the built CLI. Prints the median and spread of each, and of `node -e 0` measured in the same run, each row as a
 * multiple of it, and issue 59's targets beside the built CLI's rows (the `pnpm start` rows when it is not built):
 * ≤ 0.7 s on a migrated Postgres, ≤ 1.0 s on a reopened embedded folder, ≤ 1.5 s for `--data memory`, on a quiet
 * machine. Asserts nothing.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import { request } from "node:http"
import { createServer } from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import pg from "pg"

export interface Options {
  /** Checkout whose server is started. */
  readonly root: string
  /** Starts measured per case and way (after one warm-up start that migrates, not counted). */
  readonly runs: number
  readonly databaseUrl: string | undefined
}

interface Way {
  readonly label: string
  readonly argv: ReadonlyArray<string>
}

/** How the server is started: as `pnpm start` does, and through the built CLI when there is one. */
const waysOf = (root: string): ReadonlyArray<Way> => {
  const cli = Path.join(root, "packages", "cli")
  const ways: Array<Way> = [{
    label: "pnpm start (tsx)",
    argv: ["--conditions=@orgplane/source", "--import", "tsx", Path.join(cli, "src/bin.ts"), "serve"]
  }]
  const built = Path.join(cli, "dist/bin.js")
  if (Fs.existsSync(built)) ways.push({ label: "built CLI (dist)", argv: [built, "serve"] })
  return ways
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

const health = (port: number) =>
  new Promise<number>((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/health", agent: false, timeout: 1000 }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    })
    req.on("error", () => resolve(0))
    req.on("timeout", () => req.destroy())
    req.end()
  })

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const kill = setTimeout(() => child.kill("SIGKILL"), 15_000)
    child.once("exit", () => {
      clearTimeout(kill)
      resolve()
    })
    child.kill("SIGTERM")
  })

const running = new Set<ChildProcess>()
// Whatever way this process ends, no server it started outlives it.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL")
})

interface Start {
  /** Milliseconds from spawn to the first 200 from /health. */
  readonly wall: number
  /** CPU milliseconds the server had used by then. */
  readonly cpu: number | undefined
}

/** Starts the server once and stops it after its first 200 from /health. */
const startOnce = async (root: string, way: Way, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const port = await freePort()
  let output = ""
  const started = performance.now()
  const child = spawn(process.execPath, [...way.argv, "--port", String(port), ...args], {
    cwd: root,
    env,
    stdio: ["ignore", "pipe", "pipe"]
  })
  running.add(child)
  child.once("exit", () => running.delete(child))
  child.stdout!.on("data", (chunk) => (output = (output + chunk).slice(-4000)))
  child.stderr!.on("data", (chunk) => (output = (output + chunk).slice(-4000)))
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}) before /health answered:\n${output}`)
      if (performance.now() - started > 60_000) throw new Error(`no 200 from /health within 60 s:\n${output}`)
      if ((await health(port)) === 200) return { wall: performance.now() - started, cpu: cpuMillis(child.pid) } satisfies Start
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  } finally {
    await stop(child)
  }
}

/**
 * CPU time (user + system) the process has used, in milliseconds, from /proc (Linux); steadier than wall time on a
 * shared machine. Undefined elsewhere.
 */
const cpuMillis = (pid: number | undefined) => {
  try {
    const fields = Fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 a second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10
  } catch {
    return undefined
  }
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const summary = (starts: ReadonlyArray<Start>) => {
  const times = starts.map((start) => start.wall)
  const sorted = [...times].sort((a, b) => a - b)
  const seconds = (ms: number) => (ms / 1000).toFixed(2)
  const cpu = starts.flatMap((start) => start.cpu === undefined ? [] : [start.cpu])
  return `median ${seconds(median(times))} s   min ${seconds(sorted[0]!)} s   max ${seconds(sorted.at(-1)!)} s` +
    (cpu.length === starts.length ? `   cpu ${seconds(median(cpu))} s` : "")
}

const createDatabase = async (url: string) => {
  const name = `orgplane_startup_${process.pid}_${Date.now()}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return {
    url: parsed.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}

export const measure = async (options: Options) => {
  const { DATABASE_URL: _, ...inherited } = process.env
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    ORGPLANE_LOG_LEVEL: inherited.ORGPLANE_LOG_LEVEL ?? "warn",
    // Another server on this host (or the previous run, still stopping) must not hold the runner's port.
    ORGPLANE_CLUSTER_PORT: "0",
    // On Postgres a server needs its key, the same one at every start of the run.
    ORGPLANE_ENCRYPTION_KEYS: inherited.ORGPLANE_ENCRYPTION_KEYS ?? `bench:${randomBytes(32).toString("base64")}`
  }
  const ways = waysOf(options.root)
  let commit = ""
  try {
    commit = execFileSync("git", ["-C", options.root, "log", "-1", "--format=%h %s"], { encoding: "utf8" }).trim().slice(0, 70)
  } catch {}
  console.log(`orgplane: ${options.root} (${commit})`)
  console.log(`start to the first 200 from GET /health, ${options.runs} starts per row after one warm-up start; node ${process.version}\n`)

  const cases: Array<{ readonly label: string; readonly args: ReadonlyArray<string>; readonly env: NodeJS.ProcessEnv; readonly cleanup: () => Promise<void> }> = []
  if (options.databaseUrl !== undefined) {
    const database = await createDatabase(options.databaseUrl)
    cases.push({ label: "Postgres (migrated)", args: [], env: { ...env, DATABASE_URL: database.url }, cleanup: database.drop })
  } else {
    console.log("Postgres: skipped (set DATABASE_URL)")
  }
  const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-startup-"))
  cases.push({
    label: "embedded folder (reopened)",
    args: ["--data", folder],
    env,
    cleanup: async () => Fs.rmSync(folder, { recursive: true, force: true })
  })
  cases.push({ label: "--data memory", args: ["--data", "memory"], env, cleanup: async () => {} })

  // Bare node, the yardstick of this run: what the machine takes to start a process that does nothing.
  const bare: Array<number> = []
  for (let i = 0; i < Math.max(5, options.runs); i++) {
    const started = performance.now()
    execFileSync(process.execPath, ["-e", "0"])
    bare.push(performance.now() - started)
  }
  const node = median(bare)
  console.log(`${"node -e 0".padEnd(45)} median ${(node / 1000).toFixed(2)} s`)
  const targets: Record<string, number> = { "Postgres (migrated)": 0.7, "embedded folder (reopened)": 1.0, "--data memory": 1.5 }
  const judged = ways[ways.length - 1]!
  const rows: Array<string> = []

  try {
    for (const { label, args, env: caseEnv } of cases) {
      for (const way of ways) {
        // The first start migrates the database (or the template), and warms the file system cache.
        const first = await startOnce(options.root, way, args, caseEnv)
        const starts: Array<Start> = []
        for (let i = 0; i < options.runs; i++) starts.push(await startOnce(options.root, way, args, caseEnv))
        console.log(`${label.padEnd(27)} ${way.label.padEnd(17)} ${summary(starts)}   warm-up ${(first.wall / 1000).toFixed(2)} s`)
        const wall = median(starts.map((start) => start.wall)) / 1000
        const target = way === judged ? targets[label] : undefined
        rows.push(
          `| ${label} | ${way.label} | ${wall.toFixed(2)} s | ${(wall * 1000 / node).toFixed(1)}× | ${
            target === undefined ? "" : `≤ ${target} s: ${wall <= target ? "met" : "NOT MET"}`
          } |`
        )
      }
    }
    console.log(`
start to healthy, medians, against node -e 0 (${(node / 1000).toFixed(3)} s) in this run; targets on a quiet machine:`)
    console.log(`| case | way | start to healthy | × node -e 0 | target |\n| --- | --- | --- | --- | --- |\n${rows.join("\n")}`)
  } finally {
    for (const { cleanup } of cases) await cleanup().catch(() => {})
  }
}
