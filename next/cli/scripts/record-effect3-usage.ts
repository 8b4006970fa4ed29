/**
 * Writes `test/fixtures/effect3-usage.json`: what the Effect 3 CLI (packages/cli) prints and answers, exit code
 * included, on every case `test/Usage.test.ts` runs (test/UsageCases.ts: every help page of next/cli's tree,
 * `--version`, and the refused invocations), so that the test holds next/cli to it without the Effect 3 tree. Run
 * from the repository's root while the Effect 3 tree exists (again when a case is added):
 *
 *   node --conditions=@orgplane/source --import tsx next/cli/scripts/record-effect3-usage.ts
 *
 * The Effect 3 CLI runs in a process of its own (effect3-cli.mjs: packages/cli/test/Harness.ts's `invoke`, each case
 * with exactly the test's variables), this one lists the cases from next/cli's tree.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"
import { cleanup, fresh, freePort, type Result } from "../test/Harness.js"
import * as UsageCases from "../test/UsageCases.js"

const root = fileURLToPath(new URL("../../../", import.meta.url))

interface Invocation {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

const isResult = (value: unknown): value is Result =>
  typeof value === "object" && value !== null && "code" in value && "stdout" in value && "stderr" in value

/** What the Effect 3 CLI printed and answered for each invocation, in order. */
const runAll = (invocations: ReadonlyArray<Invocation>): Promise<ReadonlyArray<Result>> =>
  new Promise((resolve, reject) => {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith("ORGPLANE_") && name !== "NODE_OPTIONS")
    )
    const child = spawn(
      process.execPath,
      ["--conditions=@orgplane/source", "--import", "tsx", "next/cli/scripts/effect3-cli.mjs"],
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

const words = UsageCases.words(await UsageCases.pages())
const { configDir } = await fresh()
const env = UsageCases.environment(configDir, await freePort())
const results = await runAll(words.map((args) => ({ args, env })))
await cleanup()
const recorded: ReadonlyArray<UsageCases.Recorded> = words.map((args, index) => {
  const { code, stdout, stderr } = results[index]!
  return { args, code, stdout, stderr }
})
Fs.writeFileSync(UsageCases.fixture, `${JSON.stringify(recorded, null, 2)}\n`)
process.stdout.write(`${recorded.length} cases written to ${fileURLToPath(UsageCases.fixture)}\n`)
