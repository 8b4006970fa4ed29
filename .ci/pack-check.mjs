#!/usr/bin/env node
/**
 * The published packages as a user installs them: `pnpm pack`s @orgplane/schema, mcp, server, client and cli (built
 * first: run `pnpm build`), installs the tarballs with npm into a new project under the system's temporary folder,
 * outside the workspace (dependencies come from the npm registry, at the versions npm picks), then:
 *
 * - checks that the five packages carry one version (a fixed changesets group) and that the CLI's tarball stays
 *   under 2 MB;
 * - fails on any npm warning that a dependency wants another Node (EBADENGINE) while installing;
 * - loads every package with `import`, and with `require` where its `exports` offer it, and typechecks both ways
 *   against the published declarations;
 * - embeds the server with its web handler on an in-memory database: sign-up, `/v1/me`, `/docs`, and `/health`
 *   reporting the packages' version; the client's user agent carries it too;
 * - runs the installed `orgplane` binary (`npx orgplane --version`: the version again), and the CLI installed
 *   alone, globally, as people install a CLI (`npm install -g @orgplane/cli`; it bundles the other packages):
 *   `serve --data memory` on a free port (`/health`: the version), `auth signup`, `whoami` and `mcp serve` (an MCP
 *   client's `initialize` and `tools/list` over stdio) against it, and a
 *   stop with SIGTERM that must exit 0.
 *
 * This catches what the workspace hides: files missing from a tarball, wrong `exports`, dependencies that only
 * resolve inside the workspace, assets loaded at run time (PGlite's WebAssembly and data files).
 *
 *   node .ci/pack-check.mjs        (pnpm pack:check)
 *
 * Fails at the first broken step, saying which and why, and keeps the project for inspection. Set
 * PACK_CHECK_KEEP=1 to keep it after success too.
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { installLines } from "../scripts/pack.mjs"

const ROOT = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "..")
const PACKAGES = ["schema", "mcp", "server", "client", "cli"]
/** What each package must export, whichever way it is loaded. */
const EXPORTS = {
  schema: ["Api", "openApiDocument"],
  mcp: ["Server", "Tools", "Transport", "Catalog"],
  server: ["makeWebHandler", "makeNodeListener"],
  client: ["createClient", "VERSION"],
  cli: ["run", "VERSION"]
}
/**
 * The CLI's packed tarball: it bundles everything but PGlite and the server's protocol libraries, minified (names
 * kept), without source maps. 1,904,465 bytes with the MCP server (the server it embeds for `orgplane serve`, the MCP
 * server of `orgplane mcp serve` on effect/ai's McpServer, the schema's catalog, and the API reference's script,
 * 695,616 bytes of it, already brotli); the budget catches a library bundled by mistake (node-saml and its XML stack
 * were 270 KB) and barrel imports of Effect, which keep whole modules (the server's took 66 KB of the tarball:
 * .ci/deep-imports.mjs).
 */
const CLI_TARBALL_LIMIT = 2_000_000
const started = Date.now()
const work = Fs.mkdtempSync(Path.join(Fs.realpathSync(Os.tmpdir()), "orgplane-pack-"))
const tarballs = Path.join(work, "tarballs")
const app = Path.join(work, "app")
const global = Path.join(work, "global")

class CheckFailed extends Error {}

const fail = (message) => {
  throw new CheckFailed(message)
}

/** Runs `command`; on a non-zero exit (or a timeout) fails with `what`, the command and its output. */
/** The environment of every command: the calling shell's, without a database or credentials of its own. */
const environment = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => name !== "DATABASE_URL" && !name.startsWith("ORGPLANE_"))
)

const runWithOutput = (what, command, args, options = {}) => {
  const result = spawnSync(command, args, { encoding: "utf8", timeout: 120_000, ...options, env: { ...environment, ...options.env } })
  if (result.status !== 0) {
    const why = result.error?.code === "ETIMEDOUT" ? "timed out" : result.error ? result.error.message : `exited with ${result.status}`
    fail(`${what}: \`${[command, ...args].join(" ")}\` ${why}\n${result.stdout ?? ""}${result.stderr ?? ""}`)
  }
  return result
}

const run = (what, command, args, options = {}) => runWithOutput(what, command, args, options).stdout

/** `npm install`, failing on a warning that a dependency does not support this Node (npm only warns). */
const npmInstall = (what, args, options) => {
  const { stdout, stderr } = runWithOutput(what, "npm", ["install", "--no-audit", "--no-fund", "--loglevel=warn", ...args], { timeout: 300_000, ...options })
  const unsupported = `${stdout}\n${stderr}`.split("\n").filter((line) => line.includes("EBADENGINE"))
  if (unsupported.length > 0) fail(`${what}: a dependency does not support Node ${process.version}:\n${unsupported.join("\n")}`)
}

/** The tarball of `@orgplane/<name>` (they all carry one version: checked first). */
let version
const tarballOf = (name) => Path.join(tarballs, `orgplane-${name}-${version}.tgz`)

const step = async (name, body) => {
  const at = Date.now()
  await body()
  console.log(`  ok  ${((Date.now() - at) / 1000).toFixed(1).padStart(5)} s  ${name}`)
}

/** Every file a package.json points at (main, module, types, exports, bin). */
const pointedAt = (manifest) => {
  const paths = []
  const walk = (value) => {
    if (typeof value === "string") paths.push(value)
    else if (value !== null && typeof value === "object") Object.values(value).forEach(walk)
  }
  walk([manifest.main, manifest.module, manifest.types, manifest.exports, manifest.bin].filter(Boolean))
  return [...new Set(paths.filter((path) => path.startsWith("./") || !path.includes(":")).map((path) => Path.normalize(path)))]
}

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = Net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
    server.on("error", reject)
  })

const main = async () => {
  console.log(`pack check in ${work}`)
  if (work.startsWith(ROOT + Path.sep)) fail(`the temporary folder ${work} is inside the workspace: set TMPDIR elsewhere`)

  await step("pnpm pack:local --no-build (schema, mcp, server, client, cli)", async () => {
    run("packing the five packages", process.execPath, [Path.join(ROOT, "scripts", "pack.mjs"), "--no-build", "--out", tarballs], { cwd: ROOT })
  })

  await step("one version for the five packages; the CLI's tarball under 2 MB", async () => {
    const versions = PACKAGES.map((name) => JSON.parse(Fs.readFileSync(Path.join(ROOT, "packages", name, "package.json"), "utf8")).version)
    if (new Set(versions).size !== 1) fail(`the packages' versions differ: ${PACKAGES.map((name, i) => `${name} ${versions[i]}`).join(", ")}`)
    version = versions[0]
    const cli = Fs.statSync(tarballOf("cli")).size
    const unpacked = run("listing the CLI's tarball", "tar", ["tzvf", tarballOf("cli")]).split("\n").filter(Boolean)
      .reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[2] ?? 0), 0)
    console.log(`        @orgplane/cli ${version}: ${(cli / 1e6).toFixed(2)} MB packed (${cli} bytes), ${(unpacked / 1e6).toFixed(2)} MB unpacked`)
    if (cli > CLI_TARBALL_LIMIT) fail(`the CLI's tarball is ${cli} bytes, over ${CLI_TARBALL_LIMIT}: what was added to the bundle or dist/?`)
  })

  await step("tarballs hold every file their package.json points at, and nothing of the workspace", async () => {
    for (const name of PACKAGES) {
      const tarball = tarballOf(name)
      if (!Fs.existsSync(tarball)) fail(`@orgplane/${name}: expected ${Path.basename(tarball)} in ${tarballs}`)
      const files = run(`listing ${tarball}`, "tar", ["tzf", tarball]).split("\n").filter(Boolean).map((file) => file.replace(/^package\//, ""))
      const manifest = JSON.parse(run(`reading ${tarball}`, "tar", ["xzf", tarball, "-O", "package/package.json"]))
      const text = JSON.stringify(manifest)
      if (text.includes("workspace:")) fail(`@orgplane/${name}: the packed package.json still has a workspace: dependency`)
      if (text.includes("@orgplane/source")) fail(`@orgplane/${name}: the packed package.json still has the @orgplane/source condition (publishConfig.exports missing?)`)
      const missing = pointedAt(manifest).filter((path) => !files.includes(path))
      if (missing.length > 0) fail(`@orgplane/${name}: package.json points at files the tarball lacks: ${missing.join(", ")}`)
      if (!files.includes("README.md")) fail(`@orgplane/${name}: the tarball has no README.md`)
      if (!files.includes("CHANGELOG.md")) fail(`@orgplane/${name}: the tarball has no CHANGELOG.md (is it in package.json's files?)`)
      if (!files.some((file) => /^LICEN[CS]E/i.test(file))) fail(`@orgplane/${name} declares the ${manifest.license} license but its tarball has no LICENSE file`)
    }
  })

  await step("npm install the tarballs into a new project", async () => {
    Fs.mkdirSync(app)
    Fs.writeFileSync(Path.join(app, "package.json"), JSON.stringify({ name: "orgplane-pack-check", private: true, type: "module" }, null, 2))
    npmInstall("installing the tarballs", PACKAGES.map(tarballOf), { cwd: app })
  })

  await step("the README's line for the client alone installs it (schema, client, effect) and it loads", async () => {
    const clientApp = Path.join(work, "client-app")
    Fs.mkdirSync(clientApp)
    Fs.writeFileSync(Path.join(clientApp, "package.json"), JSON.stringify({ name: "orgplane-client-alone", private: true, type: "module" }, null, 2))
    const line = installLines(tarballs, version).find((text) => text.includes(tarballOf("client")))
    npmInstall("installing the client as pack:local says", line.split(" ").slice(2), { cwd: clientApp })
    Fs.writeFileSync(Path.join(clientApp, "load.mjs"), `import { createClient } from "@orgplane/client"\nif (typeof createClient !== "function") throw new Error("no createClient")\n`)
    run("loading the client installed alone", process.execPath, ["load.mjs"], { cwd: clientApp })
  })

  await step("every package loads with import, and with require where its exports offer it", async () => {
    for (const name of PACKAGES) {
      const exports = JSON.parse(Fs.readFileSync(Path.join(app, "node_modules", "@orgplane", name, "package.json"), "utf8")).exports["."]
      const check = (module) => `const missing = ${JSON.stringify(EXPORTS[name])}.filter((key) => ${module}[key] === undefined)
if (missing.length > 0) throw new Error("@orgplane/${name} lacks " + missing.join(", "))
`
      if (exports.import !== undefined) {
        Fs.writeFileSync(Path.join(app, `load-${name}.mjs`), `const loaded = await import("@orgplane/${name}")\n${check("loaded")}`)
        run(`loading @orgplane/${name} with import`, process.execPath, [`load-${name}.mjs`], { cwd: app })
      }
      if (exports.require !== undefined) {
        Fs.writeFileSync(Path.join(app, `load-${name}.cjs`), `const loaded = require("@orgplane/${name}")\n${check("loaded")}`)
        run(`loading @orgplane/${name} with require`, process.execPath, [`load-${name}.cjs`], { cwd: app })
      }
    }
  })

  await step("the client works with import and require, and its user agent carries the version", async () => {
    // A server that answers every request like /health and reports the user agent it got.
    const recorder = `const Http = require("node:http")
const agents = []
const server = Http.createServer((request, response) => {
  agents.push(request.headers["user-agent"])
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true, version: "x" }))
})
exports.start = () => new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve("http://127.0.0.1:" + server.address().port)))
exports.stop = () => new Promise((resolve) => server.close(resolve))
exports.agents = agents
`
    Fs.writeFileSync(Path.join(app, "recorder.cjs"), recorder)
    const body = (load) => `${load}
const expected = "orgplane-client/${version} pack-check/1"
const url = await recorder.start()
const client = createClient({ baseUrl: url, userAgent: "pack-check/1" })
if (typeof client.teams.list !== "function" || typeof paginate !== "function" || OrgplaneClient === undefined) throw new Error("the client is incomplete")
if (Object.keys(Api.groups).length === 0) throw new Error("Api has no groups")
await client.system.health()
await client.close()
await recorder.stop()
if (recorder.agents[0] !== expected) throw new Error("user agent " + JSON.stringify(recorder.agents[0]) + ", expected " + expected)
`
    Fs.writeFileSync(
      Path.join(app, "esm.mjs"),
      body(`import { createClient, OrgplaneClient, paginate } from "@orgplane/client"
import { Api } from "@orgplane/schema"
import recorder from "./recorder.cjs"`)
    )
    Fs.writeFileSync(
      Path.join(app, "cjs.cjs"),
      `(async () => {\n${body(`const { createClient, OrgplaneClient, paginate } = require("@orgplane/client")
const { Api } = require("@orgplane/schema")
const recorder = require("./recorder.cjs")`)}})().catch((error) => { console.error(error); process.exit(1) })\n`
    )
    run("using @orgplane/client with import", process.execPath, ["esm.mjs"], { cwd: app })
    run("using @orgplane/client with require", process.execPath, ["cjs.cjs"], { cwd: app })
  })

  await step("TypeScript finds the published types (import and require)", async () => {
    const typed = `import { createClient, layerFetch, OrgplaneClient } from "@orgplane/client"
import { Api, type TeamId } from "@orgplane/schema"
import { makeWebHandler, type ServerOptions } from "@orgplane/server"
import { Tools } from "@orgplane/mcp"
const client = createClient({ baseUrl: "http://127.0.0.1:8787", apiKey: "opk_x" })
export const teams: Promise<ReadonlyArray<{ readonly id: TeamId }>> = client.teams.list({ urlParams: {} }).then((page) => page.items)
export const options: ServerOptions = { databaseUrl: "postgres://localhost/orgplane", sessionTtl: "7 days" }
export const handler: (request: Request) => Promise<Response> = makeWebHandler(options).handler
export const layer = layerFetch({ baseUrl: "http://127.0.0.1:8787" })
export const tag = OrgplaneClient
export const api = Api
export const mcpOptions: Tools.Options = { toolsets: ["teams"], readOnly: true }
// Types that resolve to \`any\` (a declaration importing a module it cannot find) would let these through:
// @ts-expect-error: the client has no such namespace
client.noSuchNamespace
// @ts-expect-error: databaseUrl is a string
makeWebHandler({ databaseUrl: 42 })
`
    Fs.writeFileSync(Path.join(app, "typed.mts"), typed)
    Fs.writeFileSync(Path.join(app, "typed.cts"), typed)
    Fs.writeFileSync(
      Path.join(app, "cli.mts"),
      `import { run } from "@orgplane/cli"\nexport const exitCode = run(["node", "orgplane", "--version"])\n`
    )
    Fs.writeFileSync(
      Path.join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          lib: ["ES2022", "DOM"],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: true
        },
        files: ["typed.mts", "typed.cts", "cli.mts"]
      })
    )
    const tsc = createRequire(Path.join(ROOT, "package.json")).resolve("typescript/bin/tsc")
    run("typechecking against the published declarations", process.execPath, [tsc, "-p", "tsconfig.json", "--pretty", "false"], { cwd: app })
  })

  await step("the server embeds: web handler on an in-memory database, sign-up, /v1/me, /docs, /health's version", async () => {
    Fs.writeFileSync(
      Path.join(app, "embed.mjs"),
      `import { makeWebHandler } from "@orgplane/server"
const { handler, dispose } = makeWebHandler({ dataDir: "memory", logLevel: "warn", passwordCost: 10 })
const call = async (path, init, expected) => {
  const response = await handler(new Request("http://orgplane.local" + path, init))
  if (response.status !== expected) throw new Error(path + " answered " + response.status + ", expected " + expected + ": " + (await response.text()).slice(0, 500))
  return response
}
try {
  const signUp = await call("/v1/auth/sign-up", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "pack@example.com", password: "a long password", name: "Pack" })
  }, 201)
  const { session } = await signUp.json()
  const me = await (await call("/v1/me", { headers: { authorization: "Bearer " + session.token } }, 200)).json()
  if (me.user.email !== "pack@example.com") throw new Error("/v1/me answered " + JSON.stringify(me))
  await call("/docs", {}, 200)
  await call("/openapi.json", {}, 200)
  const health = await (await call("/health", {}, 200)).json()
  if (health.version !== ${JSON.stringify(version)}) throw new Error("/health answered " + JSON.stringify(health) + ", expected version ${version}")
} finally {
  await dispose()
}
`
    )
    run("embedding the server", process.execPath, ["embed.mjs"], { cwd: app })
  })

  await step("npx orgplane --version", async () => {
    const printed = run("npx orgplane --version", "npx", ["orgplane", "--version"], { cwd: app }).trim()
    if (printed !== version) fail(`npx orgplane --version printed ${JSON.stringify(printed)}, expected ${version}`)
  })

  await step("npm install -g the CLI alone (into a temporary prefix)", async () => {
    npmInstall("installing the CLI alone", ["-g", "--prefix", global, tarballOf("cli")], { cwd: work })
    const size = run("measuring the global install", "du", ["-sk", global]).split(/\s/)[0]
    console.log(`        npm install -g @orgplane/cli: ${(Number(size) / 1024).toFixed(0)} MB on disk`)
  })

  await step("that orgplane: serve --data memory, /health's version, /docs, auth signup, whoami and mcp serve against it, stop", async () => {
    const bin = Path.join(global, "bin", "orgplane")
    if (!Fs.existsSync(bin)) fail(`npm install -g did not create ${bin}`)
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const log = []
    const server = spawn(bin, ["serve", "--data", "memory", "--port", String(port)], { cwd: work, env: { ...environment, ORGPLANE_PASSWORD_COST: "10" } })
    server.stdout.on("data", (chunk) => log.push(chunk))
    server.stderr.on("data", (chunk) => log.push(chunk))
    const exited = new Promise((resolve) => server.on("exit", (code, signal) => resolve({ code, signal })))
    const serverLog = () => `--- orgplane serve output:\n${Buffer.concat(log).toString("utf8")}`
    try {
      const deadline = Date.now() + 60_000
      for (;;) {
        if (server.exitCode !== null) fail(`orgplane serve exited with ${server.exitCode} before answering\n${serverLog()}`)
        const health = await fetch(`${url}/health`).then((response) => (response.ok ? response.json() : undefined), () => undefined)
        if (health !== undefined) {
          if (health.version !== version) fail(`orgplane serve's /health answered ${JSON.stringify(health)}, expected version ${version}`)
          break
        }
        if (Date.now() > deadline) fail(`orgplane serve did not answer /health on ${url} within 60 s\n${serverLog()}`)
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      const docs = await fetch(`${url}/docs`)
      if (docs.status !== 200) fail(`orgplane serve answered /docs with ${docs.status}\n${serverLog()}`)
      const env = { ORGPLANE_CONFIG_DIR: Path.join(work, "config"), ORGPLANE_PASSWORD: "a long password" }
      run("orgplane auth signup", bin, ["auth", "signup", "--email", "pack@example.com", "--name", "Pack", "--url", url], { cwd: work, env })
      const whoami = JSON.parse(run("orgplane whoami", bin, ["whoami", "--json", "--url", url], { cwd: work, env }))
      if (whoami.user?.email !== "pack@example.com") fail(`orgplane whoami --json printed ${JSON.stringify(whoami)}`)
      // The MCP server over stdio, from the bundle (@orgplane/mcp is loaded on demand): stdout is JSON-RPC alone.
      const requests = [
        { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pack-check", version: "1" } } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" }
      ].map((message) => `${JSON.stringify(message)}\n`).join("")
      const printed = run("orgplane mcp serve", bin, ["mcp", "serve", "--url", url], { cwd: work, env, input: requests })
      const answers = printed.split("\n").filter(Boolean).map((line) => {
        try {
          return JSON.parse(line)
        } catch {
          return fail(`orgplane mcp serve printed a line that is not JSON-RPC: ${line}`)
        }
      })
      const tools = answers.find((answer) => answer.id === 2)?.result?.tools?.map((tool) => tool.name).join(", ")
      if (tools !== "find_operations, describe_operation, read_operation, call_operation") fail(`orgplane mcp serve listed the tools ${tools}\n${printed}`)
    } finally {
      if (server.exitCode === null) server.kill("SIGTERM")
    }
    const stopped = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(undefined), 30_000).unref())])
    if (stopped === undefined) {
      server.kill("SIGKILL")
      fail(`orgplane serve did not stop within 30 s of SIGTERM\n${serverLog()}`)
    }
    if (stopped.code !== 0) fail(`orgplane serve exited with ${stopped.code ?? stopped.signal} after SIGTERM, expected 0\n${serverLog()}`)
  })
}

try {
  await main()
  console.log(`pack check passed in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  if (process.env.PACK_CHECK_KEEP === "1") console.log(`kept ${work}`)
  else Fs.rmSync(work, { recursive: true, force: true })
} catch (error) {
  console.error(`\nPACK CHECK FAILED: ${error instanceof CheckFailed ? error.message : error?.stack ?? error}`)
  console.error(`(the project is kept for inspection: ${work})`)
  process.exit(1)
}
