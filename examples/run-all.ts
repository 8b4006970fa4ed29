/**
 * Runs every command of examples/README.md marked `<!-- example: run in CI -->` (the ```sh block right after the
 * marker), exactly as written, from the repository root; fails when one exits non-zero, runs longer than
 * `EXAMPLE_TIMEOUT_SECONDS` (default 180), or prints what its README sample (the ```text block after it) does not
 * show. It also fails when an example script of examples/package.json has no marked command, so a new example cannot
 * skip its README entry.
 *
 * A sample is held to the end of the command's standard output (log lines may come before it), spaces aligned
 * loosely: `…` stands for any text within a line (an id's suffix, a timestamp, a token, a port), and a line of `…`
 * alone for any number of lines.
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

/** A marked command and the sample of its output the README shows (the ```text block after it, before the next section). */
export interface Marked {
  readonly command: string
  readonly sample: string
  /** The sample's first line in the README (1-based), for messages. */
  readonly line: number
}

/**
 * The marked commands with their samples: each marker must be followed by a ```sh block holding one command (`\`
 * continues a line), then, before the next marker or `##` heading, a ```text block of what it prints.
 */
export const marked = (markdown: string): Array<Marked> => {
  const lines = markdown.split("\n")
  const found: Array<Marked> = []
  const closing = (from: number) => lines.findIndex((candidate, at) => at > from && candidate.trim() === "```")
  lines.forEach((line, index) => {
    if (line.trim() !== MARKER) return
    if (lines[index + 1]?.trim() !== "```sh") throw new Error(`README.md:${index + 1}: the marker must be followed by a \`\`\`sh block`)
    const end = closing(index + 1)
    if (end === -1) throw new Error(`README.md:${index + 2}: unterminated code block`)
    const command = lines.slice(index + 2, end).join("\n").replace(/\\\n\s*/g, "").trim()
    if (command === "" || command.includes("\n")) {
      throw new Error(`README.md:${index + 2}: a marked block holds exactly one command`)
    }
    const next = lines.findIndex((candidate, at) => at > end && (candidate.trim() === MARKER || candidate.startsWith("## ")))
    const start = lines.findIndex((candidate, at) => at > end && (next === -1 || at < next) && candidate.trim() === "```text")
    if (start === -1) throw new Error(`README.md:${index + 2}: a marked command is followed by a \`\`\`text block of what it prints`)
    const stop = closing(start)
    if (stop === -1) throw new Error(`README.md:${start + 1}: unterminated code block`)
    found.push({ command, sample: lines.slice(start + 1, stop).join("\n"), line: start + 2 })
  })
  return found
}

/** The marked commands alone. */
export const markedCommands = (markdown: string): Array<string> => marked(markdown).map(({ command }) => command)

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Whether `output` ends with what `sample` shows: `…` is any text within a line, a line of `…` alone any number of
 * lines, a run of spaces any run of spaces (columns widen with the ids they hold); trailing spaces do not count.
 */
export const showsSample = (sample: string, output: string): boolean => {
  const lines = sample.trimEnd().split("\n").map((line) => line.trimEnd())
  const pattern = lines
    .map((line) =>
      line.trim() === "…"
        ? "(?:[^\\n]*\\n)*?"
        : `${escape(line).replace(/…/g, "[^\\n]*?").replace(/ +/g, " +")}\\n`
    )
    .join("")
  const normalized = `${output.split("\n").map((line) => line.trimEnd()).join("\n").trimEnd()}\n`
  return new RegExp(`(?:^|\\n)${pattern}$`).test(normalized)
}

const run = (command: string) =>
  new Promise<{ readonly code: number | null; readonly timedOut: boolean; readonly stdout: string }>((resolve) => {
    // Its own process group, so a timeout stops the whole tree (pnpm, node, a server started in the background).
    // Its standard output is shown as it comes, and kept for the README's sample.
    const child = spawn("bash", ["-c", command], { cwd: ROOT, stdio: ["inherit", "pipe", "inherit"], detached: true })
    let stdout = ""
    child.stdout?.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      process.stdout.write(chunk)
    })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // already gone
      }
    }, TIMEOUT_MS)
    // Its output is read to the end ("close"), unless something it left in the background keeps the pipe open.
    child.on("exit", (code) => {
      clearTimeout(timer)
      const done = () => resolve({ code, timedOut, stdout })
      const grace = setTimeout(done, 2000)
      child.once("close", () => {
        clearTimeout(grace)
        done()
      })
    })
  })

const main = async () => {
  const examples = marked(Fs.readFileSync(README, "utf8"))
  const commands = examples.map(({ command }) => command)
  const scripts = Object.keys(JSON.parse(Fs.readFileSync(Path.join(HERE, "package.json"), "utf8")).scripts ?? {})
  const missing = scripts.filter((script) =>
    // A command may set environment variables first (`NAME=value pnpm ...`).
    !commands.some((command) => new RegExp(`^(\\w+=\\S*\\s+)*pnpm (-s )?--filter @orgplane/examples ${script}( |$)`).test(command))
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
  for (const { command, line, sample } of examples) {
    console.log(`\n=== ${command}`)
    const started = Date.now()
    const { code, stdout, timedOut } = await run(command)
    const seconds = ((Date.now() - started) / 1000).toFixed(1)
    const why = timedOut
      ? `did not finish within ${TIMEOUT_MS / 1000} s`
      : code !== 0
      ? `exited with ${code}`
      : showsSample(sample, stdout)
      ? ""
      : `its output is not what README.md:${line} shows`
    results.push({ command, seconds, ok: why === "", why })
    if (code === 0 && !timedOut && why !== "") {
      const printed = stdout.trimEnd().split("\n")
      console.log(`\n--- README.md:${line} shows:\n${sample}\n--- it printed (its last ${Math.min(printed.length, 40)} lines):\n${printed.slice(-40).join("\n")}`)
    }
  }
  console.log("\nexamples/README.md:")
  for (const { command, ok, seconds, why } of results) {
    console.log(`  ${ok ? "ok  " : "FAIL"} ${seconds.padStart(5)} s  ${command}${ok ? "" : `: ${why}`}`)
  }
  if (results.some((result) => !result.ok)) process.exit(1)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
