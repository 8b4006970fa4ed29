/**
 * The Effect 3 CLI (packages/cli), run on the same words as the port to hold it to the same output and exit code:
 * one process (effect3-cli.mjs) runs a batch of invocations in-process, each with exactly the variables given.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import type { Result } from "./Harness.js"

const root = fileURLToPath(new URL("../../../", import.meta.url))

export interface Invocation {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

const isResult = (value: unknown): value is Result =>
  typeof value === "object" && value !== null && "code" in value && "stdout" in value && "stderr" in value

/** What the Effect 3 CLI printed and answered for each invocation, in order. */
export const runAll = (invocations: ReadonlyArray<Invocation>): Promise<ReadonlyArray<Result>> =>
  new Promise((resolve, reject) => {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("ORGPLANE_") && name !== "NODE_OPTIONS")
    )
    const child = spawn(
      process.execPath,
      ["--conditions=@orgplane/source", "--import", "tsx", "next/cli/test/effect3-cli.mjs"],
      { cwd: root, env: inherited, stdio: ["pipe", "pipe", "pipe"] }
    )
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
    child.once("error", reject)
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`the Effect 3 CLI exited ${code}:\n${stderr}`))
      const parsed: unknown = JSON.parse(stdout)
      if (!Array.isArray(parsed) || !parsed.every(isResult)) return reject(new Error(`unexpected output: ${stdout.slice(0, 500)}`))
      resolve(parsed)
    })
    child.stdin.end(JSON.stringify(invocations))
  })
