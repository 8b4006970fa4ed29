/**
 * The real `orgplane` executable for tests: bundled as it is published (once per test file, into a folder of its
 * own, since test files run in parallel) and run as a child process. Each workspace gets its own config folder and
 * a minimal environment, so neither the developer's profile nor their variables leak in.

 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "tsup"
import config from "../tsup.config.js"

export const root = fileURLToPath(new URL("../../..", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))
export { freePort } from "./Harness.js"

export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * A bundle named `name` (for example the test file's name): `build` it in `beforeAll`, `dispose` of it in
 * `afterAll`, and run it in `fresh` workspaces meanwhile.
 */
export const make = (name: string) => {
  /** Inside the package, so the bundle resolves its external dependencies (tsup.config.ts) from the package's node_modules. */
  const bundleDir = Path.join(packageDir, ".test-dist", name)
  const bin = Path.join(bundleDir, "bin.js")
  const homes: Array<string> = []

  const buildBundle = async () => {
    const options = Array.isArray(config) ? config[0] : config
    await build({
      ...options,
      config: false,
      dts: false,
      sourcemap: false,
      silent: true,
      outDir: bundleDir,
      tsconfig: Path.join(packageDir, "tsconfig.build.json"),
      entry: [Path.join(packageDir, "src/bin.ts")]
    })
  }

  const dispose = async () => {
    await Fs.rm(bundleDir, { recursive: true, force: true })
    // The shared parent goes with the last bundle in it.
    await Fs.rmdir(Path.dirname(bundleDir)).catch(() => undefined)
    await Promise.all(homes.map((home) => Fs.rm(home, { recursive: true, force: true })))
  }

  const run = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Result> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bin, ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })

  /** A fresh config folder (removed by `dispose`) and a CLI bound to it; `env` adds variables. */
  const fresh = async () => {
    const home = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-cli-"))
    homes.push(home)
    const configDir = Path.join(home, "config")
    const cli = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
      run(args, { HOME: home, ORGPLANE_CONFIG_DIR: configDir, ...env })
    return { home, configDir, cli }
  }

  return { bin, build: buildBundle, dispose, fresh }
}
