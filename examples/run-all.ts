/**
 * Runs every command of examples/README.md marked `<!-- example: run in CI -->` (the ```sh block right after the
 * marker), exactly as written, from the repository root; fails when one exits non-zero or runs longer than
 * `EXAMPLE_TIMEOUT_SECONDS` (default 180). It also fails when an example script of examples/package.json has no
 * marked command, so a new example cannot skip its README entry.
 *
 *   pnpm examples
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const HERE = Path.dirname(fileURLToPath(import.meta.url))
const ROOT = Path.join(HERE, "..")
const README = Path.join(HERE, "README.md")
const MARKER = "<!-- example: run in CI -->"
const TIMEOUT_MS = Number(process.env.EXAMPLE_TIMEOUT_SECONDS ?? 180) * 1000

/** The marked commands: each marker must be followed by a ```sh block holding one command (`\` continues a line). */
export const markedCommands = (markdown: string): Array<string> => {
  const lines = markdown.split("\n")
  const commands: Array<string> = []
  lines.forEach((line, index) => {
    if (line.trim() !== MARKER) return
    if (lines[index + 1]?.trim() !== "```sh") throw new Error(`README.md:${index + 1}: the marker must be followed by a \`\`\`sh block`)
    const end = lines.findIndex((candidate, at) => at > index + 1 && candidate.trim() === "```")
    if (end === -1) throw new Error(`README.md:${index + 2}: unterminated code block`)
    const command = lines.slice(index + 2, end).join("\n").replace(/\\\n\s*/g, "").trim()
    if (command === "" || command.includes("\n")) {
      throw new Error(`README.md:${index + 2}: a marked block holds exactly one command`)
    }
    commands.push(command)
  })
  return commands
}

const run = (command: string) =>
  new Promise<{ readonly code: number | null; readonly timedOut: boolean }>((resolve) => {
    // Its own process group, so a timeout stops the whole tree (pnpm, node, a server started in the background).
    const child = spawn("bash", ["-c", command], { cwd: ROOT, stdio: "inherit", detached: true })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // already gone
      }
    }, TIMEOUT_MS)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, timedOut })
    })
  })

const main = async () => {
  const commands = markedCommands(Fs.readFileSync(README, "utf8"))
  const scripts = Object.keys(JSON.parse(Fs.readFileSync(Path.join(HERE, "package.json"), "utf8")).scripts ?? {})
  const missing = scripts.filter((script) =>
    !commands.some((command) => new RegExp(`^pnpm (-s )?--filter @orgplane/examples ${script}( |$)`).test(command))
  )
  if (commands.length === 0 || missing.length > 0) {
    console.error(
      commands.length === 0
        ? `examples: no command marked ${MARKER} in examples/README.md`
        : `examples: no command in examples/README.md runs ${missing.map((script) => `\`${script}\``).join(", ")} (mark one with ${MARKER})`
    )
    process.exit(1)
  }
  const results: Array<{ readonly command: string; readonly seconds: string; readonly ok: boolean; readonly why: string }> = []
  for (const command of commands) {
    console.log(`\n=== ${command}`)
    const started = Date.now()
    const { code, timedOut } = await run(command)
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const why = timedOut ? `did not finish within ${TIMEOUT_MS / 1000} s` : code === 0 ? "" : `exited with ${code}`
    results.push({ command, seconds, ok: why === "", why })
  }
  console.log("\nexamples/README.md:")
  for (const { command, ok, seconds, why } of results) {
    console.log(`  ${ok ? "ok  " : "FAIL"} ${seconds.padStart(5)} s  ${command}${ok ? "" : `: ${why}`}`)
  }
  if (results.some((result) => !result.ok)) process.exit(1)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
