/**
 * The built `orgplane` executable, as it is published (see Binary.ts): what only a real process shows. Everything
 * else runs in-process (Harness.ts); the server's TestDatabase makes a fresh Postgres database.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { spawn, spawnSync } from "node:child_process"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as HttpClient from "node:http"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Zlib from "node:zlib"
import { afterAll, describe, expect, it } from "vitest"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../../server/test/support/TestDatabase.js"
import type * as HelpPages from "../src/HelpPages.js"
import { v8Flags } from "../../testkit/src/ShortLived.js"
import { templatesFolder } from "../../client/test/RealServer.js"
import * as Binary from "./Binary.js"
import { freePort, root } from "./Binary.js"
import { invoke } from "./Harness.js"

// The run's bundle, with the help pages its build rendered (test/GlobalSetup.ts).
const binary = Binary.ofRun()
const { bin, fresh } = binary
afterAll(() => binary.dispose())

/** A GET whose body is kept as the bytes sent (fetch would decompress it). */
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ readonly headers: HttpClient.IncomingHttpHeaders; readonly body: Buffer }>((resolve, reject) => {
    HttpClient.get(url, { headers }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve({ headers: response.headers, body: Buffer.concat(chunks) }))
      response.on("error", reject)
    }).on("error", reject)
  })

const packageVersion = async () =>
  JSON.parse(await Fs.readFile(Path.join(import.meta.dirname, "../package.json"), "utf8")).version as string

/** A Node older than the 22.19 the CLI needs, on the PATH (the system's, beside the project's), if any. */
const olderNode = (() => {
  for (const folder of (process.env["PATH"] ?? "").split(Path.delimiter)) {
    const candidate = Path.join(folder, "node")
    const version = spawnSync(candidate, ["--version"], { encoding: "utf8" }).stdout?.trim() ?? ""
    const [major = 0, minor = 0] = version.replace(/^v/, "").split(".").map(Number)
    if (version !== "" && (major < 22 || (major === 22 && minor < 19))) return { path: candidate, version: version.replace(/^v/, "") }
  }
  return undefined
})()

describe.concurrent("the orgplane executable", { timeout: 120_000 }, () => {
  it.skipIf(olderNode === undefined)("on a Node older than 22.19, says in one line which Node it needs, before anything else (needs an older node on the PATH)", async () => {
    for (const args of [["--version"], ["teams", "list"], ["serve", "--help"]]) {
      const run = spawnSync(olderNode!.path, [bin, ...args], { encoding: "utf8", env: { PATH: process.env["PATH"] ?? "", HOME: Os.tmpdir() } })
      expect(run.status).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr).toBe(
        `orgplane needs Node 22.19 or later and this is Node ${olderNode!.version}: install Node 24 from https://nodejs.org (or \`nvm install 24\`), then run orgplane again.\n`
      )
    }
  })


  it("prints the package's version, and colours its help only on a terminal or with FORCE_COLOR", async () => {
    const { cli } = await fresh()
    const [version, piped, forced, noColor] = await Promise.all([
      cli(["--version"]),
      cli(["teams", "--help"]),
      cli(["teams", "--help"], { FORCE_COLOR: "1" }),
      cli(["teams", "--help"], { FORCE_COLOR: "", NO_COLOR: "1" })
    ])
    expect(version.stdout.trim()).toBe(await packageVersion())
    expect(piped.stdout).toContain("COMMANDS")
    expect(piped.stdout).not.toContain("\u001b[")
    expect(forced.stdout).toContain("\u001b[1mCOMMANDS")
    expect(noColor.stdout).not.toContain("\u001b[")
  })

  it("prints the help pages the build rendered exactly as the CLI itself prints them", async () => {
    const pages = JSON.parse(await Fs.readFile(Path.join(Path.dirname(bin), "help.json"), "utf8")) as HelpPages.Pages
    const asked = [
      [[], pages.overview],
      ...Object.entries(pages.groups).map(([words, page]) => [[...words.split(" "), "--help"], page] as const),
      ...Object.entries(pages.leaves).map(([words, page]) => [[...words.split(" "), "--help"], page] as const)
    ] as const
    expect(Object.keys(pages.leaves)).toContain("teams list")
    for (const [args, page] of asked) {
      const result = await invoke(args, {}, { color: { stdout: true, stderr: false } })
      expect(result.stdout, args.join(" ")).toBe(`${page}\n`)
    }
    const { cli } = await fresh()
    const [plain, coloured, group, leaf] = await Promise.all([
      cli(["--help"]),
      cli(["-h"], { FORCE_COLOR: "1" }),
      cli(["connectors"]),
      cli(["teams", "list", "-h"])
    ])
    expect(plain.stdout).toBe(`${pages.overview.replace(/\u001b\[[0-9;]*m/g, "")}\n`)
    expect(plain.stdout).not.toContain("\u001b[")
    expect(coloured.stdout).toBe(`${pages.overview}\n`)
    expect(group.stdout).toBe((await invoke(["connectors"], {})).stdout)
    expect(leaf.stdout).toBe((await invoke(["teams", "list", "--help"], {})).stdout)
  })

  it("exits quietly when its reader goes away", async () => {
    const { home } = await fresh()
    const child = spawn(process.execPath, [bin, "--help"], { cwd: root, env: { HOME: home }, stdio: ["ignore", "pipe", "pipe"] })
    // The reader is gone before anything is written: the first write fails with EPIPE.
    child.stdout.destroy()
    let stderr = ""
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(stderr).toBe("")
    expect(code).toBe(0)
  })

  it("says which port is taken and how to choose another, before it opens the database", async () => {
    const { cli, home } = await fresh()
    const taken = Net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    try {
      const port = (taken.address() as Net.AddressInfo).port
      const data = Path.join(home, "data")
      const result = await cli(["serve", "--port", String(port), "--data", data])
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split("\n").at(-1)).toBe(
        `error: port ${port} on 127.0.0.1 is already in use: choose another with --port <n> or ORGPLANE_PORT (--port 0 takes any free one)`
      )
      expect(await Fs.access(data).then(() => true, () => false)).toBe(false)
    } finally {
      taken.close()
    }
  })

  it("serves on the given port until SIGTERM, finishes the request in flight, then exits 0, one log line per request", async () => {
    const { home } = await fresh()
    const port = await freePort()
    const child = spawn(
      process.execPath,
      [...v8Flags, bin, "serve", "--port", String(port), "--data", "memory"],
      // A costly password hash keeps a sign-up in flight long enough to stop the server in the middle of it.
      { cwd: root, env: { HOME: home, ORGPLANE_CACHE_DIR: templatesFolder(), ORGPLANE_PASSWORD_COST: "16" }, stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
    try {
      const deadline = Date.now() + 90_000
      let health: Http.RawResponse | undefined
      // Up, and done printing its start-up notes.
      while ((health === undefined || !output.includes("auth signup")) && Date.now() < deadline) {
        health ??= await Http.request(`http://127.0.0.1:${port}`, "GET", "/health").catch(() => undefined)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(health?.status, output).toBe(200)
      // One version: the package's, in /health as in --version.
      expect(health?.body).toEqual({ ok: true, version: await packageVersion() })
      expect(output).toContain(`Listening on http://127.0.0.1:${port} (API reference: http://127.0.0.1:${port}/docs)`)
      // The command that works where the server runs (the installed binary), at the port it really uses.
      expect(output).toContain(`\`orgplane auth signup --url http://127.0.0.1:${port} --email you@example.com`)
      // No organization operates a new instance: the start logs the one-time setup token that makes one the operator.
      expect(output).toMatch(/No organization operates this instance yet\..*`orgplane admin claim-operator opsetup_[A-Za-z0-9_-]{43}`/)

      // The API reference's script ships beside the bundle, brotli-compressed: sent as it is where brotli is
      // accepted, decompressed elsewhere.
      const [compressed, plain] = await Promise.all([
        rawGet(`http://127.0.0.1:${port}/docs/scalar.js`, { "accept-encoding": "gzip, deflate, br" }),
        rawGet(`http://127.0.0.1:${port}/docs/scalar.js`, { "accept-encoding": "gzip" })
      ])
      expect(compressed.headers["content-encoding"]).toBe("br")
      expect(plain.headers["content-encoding"]).toBeUndefined()
      expect(compressed.headers.vary).toBe("accept-encoding")
      expect(plain.body.length).toBeGreaterThan(1_000_000)
      expect(compressed.body.length).toBeLessThan(plain.body.length / 3)
      expect(Zlib.brotliDecompressSync(compressed.body).equals(plain.body)).toBe(true)

      const inFlight = Http.request(`http://127.0.0.1:${port}`, "POST", "/v1/auth/sign-up", {
        body: { email: "late@example.com", password: "a long password", name: "Late" }
      })
      await new Promise((resolve) => setTimeout(resolve, 50))
      child.kill("SIGTERM")
      expect((await inFlight).status).toBe(201)
      expect(await exited).toBe(0)
      // One log line per request, in the server's one-line format.
      const lines = output.split("\n")
      expect(lines.filter((line) => line.includes("route=/health")), output).toHaveLength(1)
      expect(lines.filter((line) => /INFO +request .*route=\/v1\/auth\/sign-up/.test(line)), output).toHaveLength(1)
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  })
})

/**
 * `orgplane serve` on a free port of `data` (a folder, or `--database-url <url>` when `data` is a URL), with `env`
 * added to its environment; `up` waits until it answers /health (true) or has exited (false).
 */
const serve = async (home: string, data: string, env: Record<string, string> = {}) => {
  const port = await freePort()
  const where = data.startsWith("postgres") ? ["--database-url", data] : ["--data", data]
  const child = spawn(process.execPath, [...v8Flags, bin, "serve", "--port", String(port), ...where], {
    cwd: root,
    env: { HOME: home, ORGPLANE_CACHE_DIR: templatesFolder(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  let ended = false
  child.stdout.on("data", (chunk) => (output += chunk))
  child.stderr.on("data", (chunk) => (output += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
  child.on("exit", () => (ended = true))
  const url = `http://127.0.0.1:${port}`
  const up = async () => {
    const deadline = Date.now() + 120_000
    while (Date.now() < deadline && !ended) {
      if ((await Http.request(url, "GET", "/health").catch(() => undefined))?.status === 200) return true
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    return false
  }
  const stop = () => ended || child.kill("SIGKILL")
  return { child, url, up, exited, stop, output: () => output }
}

const newKey = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`

/** The key every server on a folder of `written`'s is started with, in ORGPLANE_ENCRYPTION_KEYS. */
const right = newKey("a")

/**
 * A stopped data folder whose secrets are encrypted with `right` (no key file beside it), and the person signed up
 * on it: the one the lock's test leaves, which the keys' test then starts with other keys (or its own, run alone).
 */
let written: { readonly home: string; readonly data: string; readonly person: Awaited<ReturnType<typeof Http.signUp>> } | undefined

describe("two processes on one embedded data folder", { timeout: 240_000 }, () => {
  it("the second refuses at once, naming the folder and the holder's pid; a SIGKILLed holder's lock is replaced, its writes kept, and a stop removes it", async () => {
    const { home } = await fresh()
    const data = Path.join(await Fs.realpath(home), "data")
    const lockFile = Path.join(data, "orgplane.lock")
    const holderPid = async () => (JSON.parse(await Fs.readFile(lockFile, "utf8")) as { pid: number }).pid
    const started: Array<Awaited<ReturnType<typeof serve>>> = []
    const start = () => serve(home, data, { ORGPLANE_ENCRYPTION_KEYS: right }).then((server) => (started.push(server), server))
    try {
      const first = await start()
      expect(await first.up(), first.output()).toBe(true)
      // A new folder is created (from the run's template, or by initdb and a long wait the first time), and the start
      // says so first; a reopened one does not.
      const creating = first.output().split("\n").findIndex((line) => line.includes(`INFO  Creating the embedded database in ${data} `))
      expect(creating, first.output()).toBeGreaterThanOrEqual(0)
      expect(creating, first.output()).toBeLessThan(first.output().split("\n").findIndex((line) => line.includes("Listening on")))
      const person = await Http.signUp(first.url)

      const second = await start()
      expect(await second.up(), second.output()).toBe(false)
      expect(await second.exited).toBe(1)
      expect(second.output()).not.toContain("Listening")
      const folder = data.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      expect(second.output().trim().split("\n").at(-1)).toMatch(new RegExp(
        `^error: The data folder ${folder} is in use by another orgplane process \\(pid ${first.child.pid} on host ${Os.hostname()}, since \\S+\\); the embedded database belongs to one process`
      ))

      first.child.kill("SIGKILL")
      await first.exited
      // Left behind by the killed holder, and replaced by the next start, which finds what the first wrote.
      expect(await holderPid()).toBe(first.child.pid)
      const third = await start()
      expect(await third.up(), third.output()).toBe(true)
      expect(third.output()).not.toContain("Creating the embedded database")
      expect(await holderPid()).toBe(third.child.pid)
      const signIn = await Http.request(third.url, "POST", "/v1/auth/sign-in", { body: { email: person.email, password: person.password } })
      expect(signIn.status, signIn.text).toBe(200)
      third.child.kill("SIGTERM")
      expect(await third.exited, third.output()).toBe(0)
      await expect(Fs.stat(lockFile)).rejects.toMatchObject({ code: "ENOENT" })
      written = { home, data, person }
    } finally {
      for (const server of started) server.stop()
    }
  })
})

describe("a server whose encryption keys do not open its database", { timeout: 300_000 }, () => {
  const lastLine = (output: string) => output.trim().split("\n").at(-1)

  it("stops at start, before listening, naming ORGPLANE_ENCRYPTION_KEYS and `orgplane keys`; the right key starts it with its data", async () => {
    const started: Array<Awaited<ReturnType<typeof serve>>> = []
    try {
      // The folder the lock's test wrote with the right key, or (run alone, or after it failed) one written here.
      const { home, data, person } = written ?? await (async () => {
        const { home } = await fresh()
        const data = Path.join(await Fs.realpath(home), "data")
        const first = await serve(home, data, { ORGPLANE_ENCRYPTION_KEYS: right })
        started.push(first)
        expect(await first.up(), first.output()).toBe(true)
        const person = await Http.signUp(first.url)
        first.child.kill("SIGTERM")
        expect(await first.exited, first.output()).toBe(0)
        return { home, data, person }
      })()
      const folder = Path.dirname(data)
      const start = (env: Record<string, string> = {}) => serve(home, data, env).then((server) => (started.push(server), server))

      const wrong = await start({ ORGPLANE_ENCRYPTION_KEYS: newKey("b") })
      expect(await wrong.up(), wrong.output()).toBe(false)
      expect(await wrong.exited).toBe(1)
      expect(wrong.output()).not.toContain("Listening")
      expect(lastLine(wrong.output())).toBe(
        `error: The database's secrets are encrypted with key "a", which ORGPLANE_ENCRYPTION_KEYS does not hold (the first of ORGPLANE_ENCRYPTION_KEYS is "b"): start with the keys they were written with. While rotating, list the new key first and the old one after it (ORGPLANE_ENCRYPTION_KEYS=new:…,a:…) until \`orgplane keys rotate\` has re-encrypted everything; \`orgplane keys --help\` says how keys are made and rotated. Nothing was changed.`
      )

      // Without the variable the embedded database uses its key file, made now: not the key the data was written with.
      const keyless = await start()
      expect(await keyless.up(), keyless.output()).toBe(false)
      expect(await keyless.exited).toBe(1)
      expect(keyless.output()).not.toContain("Listening")
      expect(lastLine(keyless.output())).toContain(
        `error: The database's secrets are encrypted with key "a", which the key file ${Path.join(folder, "encryption.key")} (ORGPLANE_ENCRYPTION_KEYS is not set) does not hold`
      )

      const again = await start({ ORGPLANE_ENCRYPTION_KEYS: right })
      expect(await again.up(), again.output()).toBe(true)
      const signIn = await Http.request(again.url, "POST", "/v1/auth/sign-in", { body: { email: person.email, password: person.password } })
      expect(signIn.status, signIn.text).toBe(200)
      again.child.kill("SIGTERM")
      expect(await again.exited).toBe(0)
    } finally {
      for (const server of started) server.stop()
    }
  })

  it.runIf(TestDatabase.onPostgres)("with DATABASE_URL and no ORGPLANE_ENCRYPTION_KEYS, stops at start naming the variable and `orgplane keys generate`, whose key starts it (Postgres only)", async () => {
    const { cli, home } = await fresh()
    const scope = Effect.runSync(Scope.make())
    const started: Array<Awaited<ReturnType<typeof serve>>> = []
    try {
      const url = Option.getOrThrow(Option.fromNullishOr(TestDatabase.postgresUrl))
      const database = Redacted.value(Redacted.make(await Effect.runPromise(Scope.provide(TestDatabase.freshPostgres(url), scope))))
      const keyless = await serve(home, database, { ORGPLANE_CLUSTER_PORT: "0" })
      started.push(keyless)
      expect(await keyless.up(), keyless.output()).toBe(false)
      expect(await keyless.exited).toBe(1)
      expect(keyless.output()).not.toContain("Listening")
      expect(lastLine(keyless.output())).toBe(
        "error: ORGPLANE_ENCRYPTION_KEYS is not set: the server keeps its secrets encrypted and does not start without a key. Set it to kid:<32 random bytes in base64> (`orgplane keys generate` prints one; keep it safe: the secrets are lost without it)."
      )

      const generated = await cli(["keys", "generate", "--id", "prod1"])
      expect(generated.code).toBe(0)
      const key = generated.stdout.trim()
      expect(key).toMatch(/^prod1:[A-Za-z0-9+/]{43}=$/)
      const keyed = await serve(home, database, { ORGPLANE_CLUSTER_PORT: "0", ORGPLANE_ENCRYPTION_KEYS: key })
      started.push(keyed)
      expect(await keyed.up(), keyed.output()).toBe(true)
      keyed.child.kill("SIGTERM")
      expect(await keyed.exited).toBe(0)
    } finally {
      for (const server of started) server.stop()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
