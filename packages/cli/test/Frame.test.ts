/**
 * The frame every command shares, in-process: help built from the command tree, typos answered at their own level
 * with a suggestion, usage errors (as JSON with --json) that quote the API's schema and name the flag, and sessions
 * that never replace another account's without --force. Against a real server
 * (RealServer.ts); the package's README has the table that names every command.
 */
import { CreatedApiKey, CreatedInvitation, OrganizationWithMembership } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as Commands from "../src/Commands.js"
import { make, suggest } from "../src/Cli.js"
import { VERSION } from "../src/Version.js"
import { cleanup, fresh, invoke, json, PASSWORD } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer

beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

const leaves = Commands.leaves(await Effect.runPromise(make({ serveEnvironment: [] })))
const TEAM = "tem_01h455vb4pex5vsknk084sn02q"

describe("the command tree", () => {
  it("gives every command a summary and every argument and flag a description", () => {
    const missing = leaves.flatMap(([path, leaf]) => [
      ...(leaf.summary.trim() === "" ? [`${path.join(" ")}: summary`] : []),
      ...leaf.docs.filter((doc) => doc.description.trim() === "").map((doc) => `${path.join(" ")}: ${doc.name}`)
    ])
    expect(missing).toEqual([])
    // Descriptions are prose, not the schema library's fallback texts.
    const fallbacks = leaves.flatMap(([path, leaf]) =>
      leaf.docs.filter((doc) => /a string at|user-defined/.test(doc.description)).map((doc) => `${path.join(" ")}: ${doc.name}`)
    )
    expect(fallbacks).toEqual([])
  })

  it("names every command in the README's table", async () => {
    const readme = await Fs.readFile(Path.join(import.meta.dirname, "../README.md"), "utf8")
    const missing = leaves.map(([path]) => path.join(" ")).filter((command) => !readme.includes(`| \`${command}`))
    expect(missing).toEqual([])
  })

  it("lists every command under the root in the overview, and every command in its group's page", async () => {
    const overview = await invoke(["--help"], {})
    expect(overview.code).toBe(0)
    expect(overview.stdout.startsWith(`orgplane ${VERSION}: `)).toBe(true)
    for (const name of new Set(leaves.map(([path]) => path[1]!))) expect(overview.stdout).toMatch(new RegExp(`\\n {2}${name} `))
    expect(overview.stdout).not.toContain("\u001b[")
    const teams = await invoke(["teams", "--help"], {})
    expect(teams.stdout).toMatch(/\n {2}add +Add members/)
    for (const [path] of leaves.filter(([path]) => path[1] === "teams")) expect(teams.stdout).toMatch(new RegExp(`\\n {2}${path[2]} `))
  })

  it("shows a command's help with the program in its usage line, and optional repeated flags as optional", async () => {
    const help = await invoke(["teams", "create", "--help"], {})
    expect(help.code).toBe(0)
    expect(help.stdout).toContain("USAGE\n  orgplane teams create <name> [flags]")
    expect(help.stdout).toMatch(/--member <memberId>\.\.\. +A member \(om_…\) to put in the team\. Repeatable\./)
    expect(help.stdout).toMatch(/<name> +Team name, 1 to 255 characters\./)
    expect(help.stdout).toMatch(/--url <url> +Server URL/)
    expect(help.stdout).not.toContain("user-defined")
    const group = await invoke(["teams"], {})
    expect(group.code).toBe(0)
    expect(group.stdout).toMatch(/COMMANDS\n {2}create +Create a team/)
  })

  it("colours the help only when asked to", async () => {
    const [plain, coloured] = await Promise.all([
      invoke(["teams", "--help"], {}),
      invoke(["teams", "--help"], {}, { color: { stdout: true, stderr: true } })
    ])
    expect(plain.stdout).not.toContain("\u001b[")
    expect(coloured.stdout).toContain("\u001b[1mCOMMANDS\u001b[0m")
  })
})

describe("usage errors", () => {
  it("reports an unknown command at its own level with the closest one, exit 2", async () => {
    const [teams, members, nothing, json] = await Promise.all([
      invoke(["teams", "lst"], {}),
      invoke(["memebrs", "list"], {}),
      invoke(["teams", "frobnicate"], {}),
      invoke(["teams", "lst", "--json"], {})
    ])
    expect(teams.code).toBe(2)
    expect(teams.stderr.trim()).toBe(
      "error: unknown command 'lst' for 'orgplane teams' — did you mean 'list'? Run 'orgplane teams --help' for its commands."
    )
    expect(members.code).toBe(2)
    expect(members.stderr).toContain("unknown command 'memebrs' for 'orgplane' — did you mean 'members'?")
    expect(nothing.stderr.trim()).toBe("error: unknown command 'frobnicate' for 'orgplane teams'. Run 'orgplane teams --help' for its commands.")
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stderr)).toEqual({ error: "usage", message: expect.stringContaining("did you mean 'list'?") })
  })

  it("reports an unknown flag with the closest one", async () => {
    const result = await invoke(["teams", "create", "--membr", "x", "Platform"], {})
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("unknown flag '--membr' for 'orgplane teams create' — did you mean '--member'?")
  })

  it("quotes the schema and names the flag, as JSON with --json, before anything is sent", async () => {
    // No server at this address: a request would exit 5.
    const env = { ORGPLANE_URL: "http://127.0.0.1:9", ORGPLANE_TOKEN: "unused" }
    const [prefix, limit, limitJson, missing] = await Promise.all([
      invoke(["teams", "delete", "om_01h455vb4pex5vsknk084sn02q"], env),
      invoke(["teams", "list", "--limit", "1000"], env),
      invoke(["teams", "list", "--limit", "1000", "--json"], env),
      invoke(["teams", "add", TEAM, "--json"], env)
    ])
    expect(prefix.code).toBe(2)
    expect(prefix.stderr).toContain("error: teamId: TypeID must start with 'tem_' (team id); 'om_…' is an organization membership id")
    expect(limit.code).toBe(2)
    expect(limit.stderr).toContain("error: --limit: must be an integer from 1 to 100")
    expect(limitJson.code).toBe(2)
    expect(JSON.parse(limitJson.stderr)).toEqual({ error: "usage", message: expect.stringContaining("--limit: must be an integer from 1 to 100") })
    expect(limitJson.stdout).toBe("")
    expect(missing.code).toBe(2)
    expect(JSON.parse(missing.stderr)).toMatchObject({ error: "usage", message: expect.stringContaining("<memberId>") })
  })

  it("takes at most the API's number of members, counting each once", async () => {
    const env = { ORGPLANE_URL: "http://127.0.0.1:9", ORGPLANE_TOKEN: "unused" }
    const ids = Array.from({ length: 501 }, (_, i) => `om_01h455vb4pex5vsknk084s${String(i).padStart(4, "0").replace(/[ilou]/g, "0")}`)
    const tooMany = await invoke(["teams", "add", TEAM, ...ids], env)
    expect(tooMany.code).toBe(2)
    expect(tooMany.stderr).toContain("memberId: ")
    // The same id 501 times is one member: sent (and here refused for want of a server, exit 5).
    const repeated = await invoke(["teams", "add", TEAM, ...Array.from({ length: 501 }, () => ids[0]!)], env)
    expect(repeated.code).toBe(5)
  })

  it("prints the version of the package, and suggests nothing for --version", async () => {
    const packageJson = JSON.parse(await Fs.readFile(Path.join(import.meta.dirname, "../package.json"), "utf8"))
    const version = await invoke(["--version"], {})
    expect(version.stdout.trim()).toBe(packageJson.version)
    expect(VERSION).toBe(packageJson.version)
  })
})

describe("against a server", () => {
  it("lists your organizations, so that 'orgs switch' has ids", async () => {
    const owner = await Http.owner(server.url, "Listed First")
    const other = Http.expectStatus<typeof OrganizationWithMembership.Encoded>(
      "the second organization",
      await Http.request(server.url, "POST", "/v1/organizations", { token: owner.token, body: { name: "Listed Second" } }),
      201
    )
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
    const [table, page] = await Promise.all([
      (await fresh()).cli(["orgs", "list"], env),
      (await fresh()).cli(["orgs", "list", "--json", "--limit", "1"], env)
    ])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+NAME\s+ROLE\s+PLAN\s+JOINED\s+PURGED AFTER$/m)
    expect(table.stdout).toMatch(new RegExp(`^${owner.organization.id}\\s+Listed First\\s+owner\\s+free\\s`, "m"))
    expect(table.stdout).toContain(other.organization.id)
    expect(json(page).items).toHaveLength(1)
    expect(json(page).nextCursor).toEqual(expect.any(String))
  })

  it("hints at the credential that was refused: an API key is not fixed by logging in", async () => {
    const owner = await Http.owner(server.url)
    const key = Http.expectStatus<typeof CreatedApiKey.Encoded>("API key", await Http.request(server.url, "POST", "/v1/api-keys", { token: owner.token, body: { name: "gone" } }), 201)
    await Http.request(server.url, "DELETE", `/v1/api-keys/${key.apiKey.id}`, { token: owner.token })
    const result = await invoke(["whoami"], { ORGPLANE_URL: server.url, ORGPLANE_API_KEY: key.key })
    expect(result.code).toBe(3)
    expect(result.stderr).toContain("the API key from ORGPLANE_API_KEY was revoked or never existed: create a new one")
    expect(result.stderr).not.toContain("auth login")
  })

  it("never replaces another account's session in a profile without --force", async () => {
    const owner = await Http.owner(server.url)
    const { cli, configDir } = await fresh()
    const signup = await cli(["auth", "signup", "--url", server.url, "--email", "first.frame@example.com", "--name", "First", "--password", PASSWORD])
    expect(signup.code).toBe(0)
    const invited = await Http.request(server.url, "POST", "/v1/invitations", {
      token: owner.token,
      body: { email: "second.frame@example.com", role: "member" }
    })
    expect(invited.status, JSON.stringify(invited.body)).toBe(201)
    const token = Http.expectStatus<typeof CreatedInvitation.Encoded>("invitation", invited, 201).inviteToken
    if (token === null) throw new Error("the invitation was mailed: no token shown to accept it with")

    const refused = await cli(["invitations", "accept", token, "--sign-up", "--name", "Second", "--password", PASSWORD])
    expect(refused.code, refused.stderr).toBe(2)
    expect(refused.stderr).toContain("profile 'default' already holds the session of first.frame@example.com")
    expect(refused.stderr).toContain("--force")
    // Nothing was sent: the invitation is still there to accept.
    const file = Path.join(configDir, "config.json")
    expect(JSON.parse(await Fs.readFile(file, "utf8")).profiles.default.email).toBe("first.frame@example.com")

    const forced = await cli(["invitations", "accept", token, "--sign-up", "--name", "Second", "--password", PASSWORD, "--force"])
    expect(forced.code).toBe(0)
    expect(JSON.parse(await Fs.readFile(file, "utf8")).profiles.default.email).toBe("second.frame@example.com")

    // Logging in again as the same account needs no --force.
    const again = await cli(["auth", "login", "--email", "second.frame@example.com", "--password", PASSWORD])
    expect(again.code).toBe(0)
    const other = await cli(["auth", "login", "--email", "first.frame@example.com", "--password", PASSWORD])
    expect(other.code).toBe(2)
  })
})

describe("suggest", () => {
  it("finds a swapped, missing or extra letter, and a unique prefix", () => {
    const names = ["list", "create", "delete", "members", "invitations"]
    expect(suggest("lst", names)).toEqual(["list"])
    expect(suggest("memebrs", names)).toEqual(["members"])
    expect(suggest("inv", names)).toEqual(["invitations"])
    expect(suggest("craete", names)).toEqual(["create"])
    expect(suggest("zzz", names)).toEqual([])
  })
})
