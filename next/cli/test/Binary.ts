/**
 * The real `orgplane` executable for tests, as packages/cli/test/Binary.ts gives it, run as a child process. Until the
 * swap next/cli is not bundled: `build` writes a launcher (`bin.mjs`, in a folder of its own per test file, since
 * test files run in parallel) that loads tsx and runs `src/bin.ts` from the sources, so the process is named by a
 * `.mjs` file as the published one is and sees no rendered help pages (help.json) nor the API reference's compressed
 * script beside it. Each workspace gets its own config folder and a minimal environment, so neither the developer's
 * profile nor their variables leak in.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

export const root = fileURLToPath(new URL("../../..", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))
export { freePort } from "./Harness.js"

export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * A launcher named `name` (for example the test file's name): `build` it in `beforeAll`, `dispose` of it in
 * `afterAll`, and run it in `fresh` workspaces meanwhile.
 */
export const make = (name: string) => {
  /** Inside the package, so the launcher resolves tsx from the workspace's node_modules. */
  const bundleDir = Path.join(packageDir, ".test-dist", name)
  const bin = Path.join(bundleDir, "bin.mjs")
  const homes: Array<string> = []

  const build = async () => {
    await Fs.mkdir(bundleDir, { recursive: true })
    const source = pathToFileURL(Path.join(packageDir, "src/bin.ts")).href
    await Fs.writeFile(bin, `import { register } from "tsx/esm/api"\nregister()\nawait import(${JSON.stringify(source)})\n`)
  }

  const dispose = async () => {
    await Fs.rm(bundleDir, { recursive: true, force: true })
    // The shared parent goes with the last launcher in it.
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

  return { bin, build, dispose, fresh }
}
