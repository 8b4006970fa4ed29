/**
 * The root README's quick start, in sequence on one machine as a newcomer types it: the `pnpm orgplane …` block
 * (sign up, organization, API key, invitation, team, skill, plugin), then the invitee's line the README gives, with
 * the token the invitation printed, beside the inviter's session. Each line runs as `orgplane` from the sources, in
 * the repository (the block names files there), against a throwaway server.
 */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { root } from "./Binary.js"
import { command as orgplaneCommand } from "../../client/test/RealServer.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer
let configDir: string

beforeAll(async () => {
  server = await RealServer.start()
  configDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-quick-start-"))
})
afterAll(async () => {
  await server?.close()
  Fs.rmSync(configDir, { recursive: true, force: true })
})

/** A shell line's words: quotes grouped, a trailing `# comment` dropped. */
const words = (line: string): ReadonlyArray<string> =>
  [...line.replace(/\s+#.*$/, "").matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map(([, single, double, bare]) => single ?? double ?? bare!)

const orgplane = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    // The run's `orgplane` bundle (the sources through tsx where there is none): what `pnpm orgplane` runs, built.
    const child = spawn(process.execPath, [...orgplaneCommand(), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: configDir, ORGPLANE_CONFIG_DIR: configDir, ORGPLANE_URL: server.url, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("the README's quick start", { timeout: 300_000 }, () => {
  it("runs line after line on one machine, the invitee's line too", async () => {
    const readme = Fs.readFileSync(Path.join(root, "README.md"), "utf8")
    const block = /```sh\n(pnpm orgplane auth signup[\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBeDefined()
    const lines = block!.trim().split("\n")
    expect(lines.length).toBeGreaterThan(5)
    let inviteToken: string | undefined
    for (const line of lines) {
      const [pnpm, script, ...args] = words(line)
      expect([pnpm, script], line).toEqual(["pnpm", "orgplane"])
      // The password a terminal would be asked for.
      const result = await orgplane(args, { ORGPLANE_PASSWORD: "a long password" })
      expect(result.code, `${line}\n${result.stderr}`).toBe(0)
      inviteToken ??= /^\s+(opi_\S+)$/m.exec(result.stdout)?.[1]
    }
    expect(inviteToken).toBeDefined()

    const invitee = /`(pnpm orgplane invitations accept <token> [^`]*)`/.exec(readme)?.[1]
    expect(invitee).toBeDefined()
    const [, , ...args] = words(invitee!.replace("<token>", inviteToken!))
    const joined = await orgplane(args, { ORGPLANE_PASSWORD: "their long password" })
    expect(joined.code, joined.stderr).toBe(0)
    expect(joined.stdout).toContain("joined My Org")
    // Both sessions stay, each in its profile.
    const [inviter, colleague] = await Promise.all([orgplane(["whoami"], {}), orgplane(["whoami", "--profile", "colleague"], {})])
    expect(inviter.stdout).toMatch(/^Role +owner$/m)
    expect(colleague.stdout).toMatch(/^Role +admin$/m)
  })
})
