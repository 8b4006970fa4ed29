/**
 * Stopping a server the documented ways: Ctrl-C on `pnpm start` (the README's) sends SIGINT to the terminal's whole
 * process group, pnpm included, and pnpm exits 0 without `ELIFECYCLE` only when the server does; SIGTERM (a process
 * manager's) on `orgplane serve` itself, however many signals follow the first. Both end on the server's "orgplane stopped" line and exit 0; so does the
 * embedding example's `--serve` (examples/README.md), on its host's "host app stopped".
 */
import { type ChildProcess, spawn } from "node:child_process"
import { describe, expect, it } from "vitest"
import { root } from "./Binary.js"
import { freePort } from "./Harness.js"
import { v8Flags } from "../../testkit/src/ShortLived.js"

interface Running {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exit: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** `command` in a process group of its own (as a terminal runs it), its stdout and stderr kept together. */
const start = (command: string, args: ReadonlyArray<string>): Running => {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("ORGPLANE_") && name !== "DATABASE_URL" && name !== "NODE_OPTIONS")
  )
  const child = spawn(command, args, { cwd: root, env: inherited, detached: true, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  const keep = (chunk: Buffer) => {
    output += chunk.toString("utf8")
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  const exit = new Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  return { child, output: () => output, exit }
}

/** Waits for `url` to answer 2xx, or fails with what the process printed. */
const ready = async (running: Running, url: string) => {
  const deadline = Date.now() + 110_000
  while (Date.now() < deadline) {
    if (running.child.exitCode !== null) throw new Error(`exited before it was ready:\n${running.output()}`)
    if (await fetch(url).then((response) => response.ok, () => false)) return
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  throw new Error(`not ready in time:\n${running.output()}`)
}

/** Stops the group should an assertion fail first, so no server outlives the test. */
const reap = (running: Running) => {
  try {
    if (running.child.exitCode === null) process.kill(-running.child.pid!, "SIGKILL")
  } catch {
    // already gone
  }
}

describe("stopping the server", { timeout: 150_000 }, () => {
  it("Ctrl-C on `pnpm start` stops it with 'orgplane stopped', exit 0 and no ELIFECYCLE", async () => {
    const port = await freePort()
    const running = start("pnpm", ["start", "--port", String(port), "--data", "memory"])
    try {
      await ready(running, `http://127.0.0.1:${port}/ready`)
      // What a terminal does on Ctrl-C: SIGINT to every process of the foreground group.
      process.kill(-running.child.pid!, "SIGINT")
      const { code } = await running.exit
      const lines = running.output().trim().split("\n")
      expect(running.output()).not.toContain("ELIFECYCLE")
      expect(lines.at(-1)).toMatch(/ INFO {2}orgplane stopped$/)
      expect(code).toBe(0)
    } finally {
      reap(running)
    }
  })

  it("SIGTERM on `orgplane serve` stops it with 'orgplane stopped' and exit 0, however many signals follow", async () => {
    const port = await freePort()
    const running = start(process.execPath, [
      ...v8Flags,
      "--conditions=@orgplane/source",
      "--import",
      "tsx",
      "packages/cli/src/bin.ts",
      "serve",
      "--port",
      String(port),
      "--data",
      "memory"
    ])
    try {
      await ready(running, `http://127.0.0.1:${port}/ready`)
      running.child.kill("SIGTERM")
      // Signals keep coming until it has exited (pnpm forwards Ctrl-C a moment after the terminal's): none is fatal.
      let exited = false
      void running.exit.then(() => (exited = true))
      while (!exited) {
        running.child.kill("SIGINT")
        await new Promise((resolve) => setImmediate(resolve))
      }
      const { code, signal } = await running.exit
      expect(running.output().trim().split("\n").at(-1)).toMatch(/ INFO {2}orgplane stopped$/)
      expect({ code, signal }).toEqual({ code: 0, signal: null })
    } finally {
      reap(running)
    }
  })

  it("Ctrl-C on the embedding example's `--serve` stops it with 'host app stopped', exit 0 and no pnpm failure", async () => {
    const port = await freePort()
    const running = start("pnpm", ["--filter", "@orgplane/examples", "embed", "--serve", String(port)])
    try {
      await ready(running, `http://127.0.0.1:${port}/orgplane/ready`)
      process.kill(-running.child.pid!, "SIGINT")
      const { code } = await running.exit
      expect(running.output()).not.toContain("ERR_PNPM")
      expect(running.output().trim().split("\n").at(-1)).toBe("host app stopped")
      expect(code).toBe(0)
    } finally {
      reap(running)
    }
  })
})
