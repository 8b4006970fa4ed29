/**
 * The server (`orgplane serve`: the run's CLI bundle where the run built one, as the CLI's runs do, else the CLI's
 * sources through tsx), started out of process on a free loopback port with a throwaway database: the client is held
 * to the real server over the wire, as a user's would be, and the server runs in a process of its own. One server
 * per test file (`beforeAll`/`afterAll`).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { inject } from "vitest"
import { freePort } from "../../testkit/src/FreePort.js"
import { v8Flags } from "../../testkit/src/ShortLived.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The `bin.js` of the `orgplane` bundle a run's global setup built (packages/cli/test/GlobalSetup.ts). */
    readonly orgplaneBin: string
  }
}

export interface RealServer {
  readonly url: string
  /** Stops the server (SIGTERM, then SIGKILL if it has not exited after 10 seconds) and waits for it to exit. */
  readonly close: () => Promise<void>
}

const root = fileURLToPath(new URL("../../../", import.meta.url))

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
  })

const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = exited(child)
  child.kill("SIGTERM")
  const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
  await gone
  clearTimeout(timer)
}

/**
 * Where the servers a test starts keep the embedded database's templates (platform/EmbeddedTemplate.ts): the test
 * run's cache folder (the server suite's too), not the user's, and one apart for the bundle's servers, whose
 * templates are keyed by the bundle's code: in one folder the two kinds of server would remove each other's.
 */
export const templatesFolder = () => {
  const folder = process.env["ORGPLANE_CACHE_DIR"] || Path.join(Os.tmpdir(), "orgplane-test-cache")
  return inject("orgplaneBin") === undefined ? folder : `${folder}-bundle`
}

/** How `orgplane` starts (Node's arguments, testkit's `v8Flags` first): the run's bundle, or the sources. */
export const command = (): ReadonlyArray<string> => {
  const bundle = inject("orgplaneBin")
  return [...v8Flags, ...(bundle === undefined ? ["--conditions=@orgplane/source", "--import", "tsx", "packages/cli/src/bin.ts"] : [bundle])]
}

/**
 * Starts the server with `environment` added to a clean environment (no `ORGPLANE_*` or `DATABASE_URL` of the
 * caller's), sign-ups unthrottled (the tests sign up many accounts from one address) and password hashing cheap, and
 * waits for `/ready`. Its
 * database is a throwaway one unless `options.data` names a folder (`--data`) it keeps after it stops.
 */
export const start = async (
  environment: Readonly<Record<string, string>> = {},
  options: { readonly data?: string } = {}
): Promise<RealServer> => {
  const port = await freePort()
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("ORGPLANE_") && name !== "DATABASE_URL" && name !== "NODE_OPTIONS")
  )
  const child = spawn(
    process.execPath,
    [...command(), "serve", "--port", String(port), "--data", options.data ?? "memory"],
    {
      cwd: root,
      // Cheap password hashing (the lowest cost the setting takes), as the server's own tests use.
      env: {
        ...inherited,
        ORGPLANE_SIGN_UPS_PER_HOUR: "100000",
        ORGPLANE_PASSWORD_COST: "10",
        ORGPLANE_CACHE_DIR: templatesFolder(),
        ...environment
      },
      stdio: ["ignore", "pipe", "pipe"]
    }
  )
  // Should the test worker end without `close` (a crash, a kill), the server ends with it.
  const orphaned = () => child.kill("SIGTERM")
  process.once("exit", orphaned)
  child.once("exit", () => process.off("exit", orphaned))
  let output = ""
  const keep = (chunk: Buffer) => {
    output = `${output}${chunk.toString("utf8")}`.slice(-8000)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the server exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output}`)
    }
    const ready = await fetch(`${url}/ready`).then((response) => response.ok, () => false)
    if (ready) return { url, close: () => stop(child) }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  await stop(child)
  throw new Error(`the server was not ready within 120 seconds:\n${output}`)
}
