import * as Os from "node:os"
import { describe, expect, it } from "vitest"
import * as Launcher from "../src/Launcher.js"

const options = { cwd: Os.tmpdir(), env: { PATH: process.env["PATH"] } }

describe("Launcher.execFile", () => {
  it("runs commands side by side in its process, each with its own input, output and exit code", async () => {
    const [echoed, failed, counted] = await Promise.all([
      Launcher.execFile("cat", [], { ...options, input: Buffer.from([0, 1, 2, 255]) }),
      Launcher.execFile("sh", ["-c", "echo oops >&2; exit 3"], options),
      Launcher.execFile("sh", ["-c", "printf %s \"$HOME-$0\"", "arg"], { ...options, env: { ...options.env, HOME: "/nowhere" } })
    ])
    expect([...echoed.stdout]).toEqual([0, 1, 2, 255])
    expect(echoed).toMatchObject({ code: 0, failure: undefined })
    expect(failed.code).toBe(3)
    expect(failed.stderr.toString()).toBe("oops\n")
    expect(failed.failure).toContain("Command failed")
    expect(counted.stdout.toString()).toBe("/nowhere-arg")
  })

  it("answers a command that does not exist with its failure, and goes on", async () => {
    const missing = await Launcher.execFile("orgplane-no-such-command", [], options)
    expect(missing.code).toBeNull()
    expect(missing.failure).toContain("ENOENT")
    expect((await Launcher.execFile("true", [], options)).code).toBe(0)
  })

  it("starts each command from its own process, not this one", async () => {
    const parent = await Launcher.execFile("sh", ["-c", "echo $PPID"], options)
    expect(Number(parent.stdout.toString().trim())).not.toBe(process.pid)
  })
})
