/**
 * The real `orgplane` executable for tests: bundled as it is published, once per run (test/GlobalSetup.ts with
 * test/Bundle.ts, into a folder of its own: runs may overlap), and run as a child process. Each workspace gets its own
 * config folder and a minimal environment, so neither the developer's profile nor their variables leak in.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { inject } from "vitest"
import { v8Flags } from "../../testkit/src/ShortLived.js"
import { templatesFolder } from "../../client/test/RealServer.js"
import { root } from "./Bundle.js"

export { root } from "./Bundle.js"
export { freePort } from "./Harness.js"

export interface Result {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The run's bundle (built once by test/GlobalSetup.ts) and fresh workspaces to run it in; `dispose` removes them. */
export const ofRun = () => {
  const bin = inject("orgplaneBin")
  return { bin, ...workspacesOf(bin) }
}

/** Fresh workspaces running `bin`. */
const workspacesOf = (bin: string) => {
  const homes: Array<string> = []
  const run = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Result> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [...v8Flags, bin, ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
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
      run(args, { HOME: home, ORGPLANE_CONFIG_DIR: configDir, ORGPLANE_CACHE_DIR: templatesFolder(), ...env })
    return { home, configDir, cli }
  }

  const dispose = async () => {
    await Promise.all(homes.splice(0).map((home) => Fs.rm(home, { recursive: true, force: true })))
  }

  return { fresh, dispose }
}
