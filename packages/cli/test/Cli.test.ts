/**
 * `orgplane`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts): signing up and in, profiles
 * and credentials from the environment, `whoami`, `orgs` (paging through `orgs list` too), `api-keys` and
 * `bootstrap`, and the exit codes and messages of a wrong token, a throttled sign-in, a server that cannot be reached,
 * a URL that is not orgplane and an orgplane of another version.
 */
import * as Fs from "node:fs/promises"
import * as NodeHttp from "node:http"
import * as Net from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, freePort, fresh, json, PASSWORD } from "./Harness.js"
import * as Http from "./Http.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer

beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

describe.concurrent("orgplane", () => {
  it("signs up, saves the session in an owner-only profile, and works as that user", async () => {
    const { cli, configDir } = await fresh()
    const email = `ada.${Date.now()}@example.com`

    const signup = await cli(["auth", "signup", "--url", server.url, "--email", email, "--name", "Ada", "--password", PASSWORD])
    expect(signup.stderr).not.toContain("error")
    expect(signup.code).toBe(0)
    expect(signup.stdout).toContain(`Signed up as Ada <${email}>`)
    expect(signup.stdout).not.toContain("ops_") // the token is only printed with --json
    expect(signup.stderr).toContain("Next: create an organization with 'orgplane orgs create <name>'.")

    const file = Path.join(configDir, "config.json")
    expect((await Fs.stat(file)).mode & 0o777).toBe(0o600)
    expect((await Fs.stat(configDir)).mode & 0o777).toBe(0o700)
    const profile = JSON.parse(await Fs.readFile(file, "utf8")).profiles.default
    expect(profile).toMatchObject({ url: server.url, email })
    expect(profile.token).toEqual(expect.any(String))

    // No --url from here on: the profile knows the server.
    const before = await cli(["whoami"])
    expect(before.code).toBe(0)
    expect(before.stdout).toMatch(/User\s+Ada <.+>\s+usr_/)
    expect(before.stdout).toMatch(/Organization\s+none/)

    const created = await cli(["orgs", "create", "Acme Labs", "--json"])
    expect(created.code).toBe(0)
    const { membership, organization } = json(created)
    expect(organization).toMatchObject({ name: "Acme Labs", plan: "free", provisional: false })
    expect(membership.role).toBe("owner")
    expect(organization.createdAt).toMatch(/^\d{4}-\d\d-\d\dT.*Z$/)

    const [table, me, listed] = await Promise.all([cli(["whoami"]), cli(["whoami", "--json"]), cli(["orgs", "list"])])
    expect(table.stdout).toMatch(new RegExp(`Organization\\s+Acme Labs\\s+${organization.id}`))
    expect(table.stdout).toMatch(/Role\s+owner/)
    expect(table.stdout).toContain("session token from profile 'default'")
    expect(json(me)).toMatchObject({ user: { email }, organization: { id: organization.id }, membership: { role: "owner" } })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+ROLE\s+PLAN\s+JOINED\s+PURGED AFTER$/)
    expect(listed.stdout).toMatch(new RegExp(`^${organization.id}\\s+Acme Labs\\s+owner\\s+free\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+-$`, "m"))

    // A second profile: a new session never silently replaces another account's.
    const again = await cli(["auth", "signup", "--email", `other.${Date.now()}@example.com`, "--name", "Other", "--password", PASSWORD])
    expect(again.code).toBe(2)
    expect(again.stderr.trim()).toBe(
      `error: profile 'default' already holds the session of ${email} (${server.url}): pass --force to replace it, or --profile <name> to save this one under another name`
    )
  })

  it("pages through organizations with --limit, --cursor and --all", async () => {
    const owner = await Http.owner(server.url, "First")
    for (const name of ["Second", "Third"]) {
      expect((await Http.request(server.url, "POST", "/v1/organizations", { token: owner.token, body: { name } })).status).toBe(201)
    }
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
    const [first, all] = await Promise.all([cli(["orgs", "list", "--limit", "2"], env), cli(["orgs", "list", "--limit", "1", "--all", "--json"], env)])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout.trim().split("\n")).toHaveLength(3)
    const hint = /^More organizations: orgplane orgs list --cursor (\S+) \(or --all\)$/m.exec(first.stderr)
    expect(hint).not.toBeNull()
    const rest = await cli(["orgs", "list", "--limit", "2", "--cursor", hint![1]!], env)
    expect(rest.code, rest.stderr).toBe(0)
    expect(rest.stdout.trim().split("\n")).toHaveLength(2)
    expect(rest.stderr).toBe("")
    expect(json(all).items.map((item: { organization: { name: string } }) => item.organization.name).sort()).toEqual(["First", "Second", "Third"])
    expect(json(all).nextCursor).toBeNull()
  })

  it("creates, lists and revokes API keys, with --json and tables, using credentials from the environment", async () => {
    const owner = await Http.owner(server.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }

    // Within the server's longest key lifetime (90 days by default).
    const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + 30 * 24 * 60 * 60 * 1000).toISOString()
    const [first, second] = await Promise.all([
      cli(["api-keys", "create", "deploy", "--expires-at", expiresAt, "--json"], env),
      cli(["api-keys", "create", "backup"], env)
    ])
    expect(first.code, first.stderr).toBe(0)
    const created = json(first)
    expect(created.apiKey).toMatchObject({ name: "deploy", expiresAt, lastUsedAt: null })
    expect(created.key).toEqual(expect.any(String))
    expect(second.code).toBe(0)
    expect(second.stdout).toContain("Created API key 'backup'")
    expect(second.stdout).toContain("shown only this once")
    const backupKey = second.stdout.trim().split("\n").at(-1)!.trim()
    expect(backupKey.length).toBeGreaterThan(20)

    const [table, all, byKey] = await Promise.all([
      cli(["api-keys", "list", "--limit", "1"], env),
      // One key per page: --all follows the cursors.
      cli(["api-keys", "list", "--limit", "1", "--all", "--json"], env),
      // An API key from the environment works too (and a session token from a flag beats it).
      cli(["whoami"], { ORGPLANE_URL: server.url, ORGPLANE_API_KEY: backupKey })
    ])
    expect(table.code).toBe(0)
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+NAME\s+PREFIX\s+CREATED\s+EXPIRES\s+SCOPES\s+LAST USED$/)
    expect(table.stdout.trim().split("\n")).toHaveLength(2)
    // A key made without scopes takes its maker's role but a few actions: too many to show in a column.
    expect(table.stdout).toMatch(/\s\d+ actions \(--json lists them\)\s/)
    expect(table.stdout).toMatch(/^apk_\w+\s+(deploy|backup)\s+\S+\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s/m)
    expect(table.stdout).not.toContain(created.key)
    expect(table.stderr).toMatch(/^More keys: orgplane api-keys list --cursor \S+ \(or --all\)$/m)
    expect(json(all).items.map((key: { name: string }) => key.name).sort()).toEqual(["backup", "deploy"])
    expect(json(all).nextCursor).toBeNull()
    expect(byKey.code).toBe(0)
    expect(byKey.stdout).toContain("API key from the environment")

    const revoked = await cli(["api-keys", "revoke", created.apiKey.id], env)
    expect(revoked.code).toBe(0)
    expect(revoked.stdout).toContain(`Revoked API key ${created.apiKey.id}`)

    const [again, after] = await Promise.all([
      cli(["api-keys", "revoke", created.apiKey.id], env),
      cli(["api-keys", "list"], env)
    ])
    expect(again.code).toBe(4)
    expect(again.stderr.trim()).toBe("error: api_key_not_found (404): API key not found.")
    expect(after.stdout).not.toContain(created.apiKey.id)
    expect(after.stdout).toMatch(/\sbackup\s/)
  })

  it("logs in from a script, logs out, and the session stops working", async () => {
    const user = await Http.signUp(server.url, "Grace")
    const { cli, configDir } = await fresh()

    const login = await cli(["auth", "login", "--url", server.url, "--email", user.email, "--json"], { ORGPLANE_PASSWORD: PASSWORD })
    expect(login.code, login.stderr).toBe(0)
    const token = json(login).session.token
    const file = Path.join(configDir, "config.json")
    expect(JSON.parse(await Fs.readFile(file, "utf8")).profiles.default.token).toBe(token)

    const logout = await cli(["auth", "logout"])
    expect(logout.code).toBe(0)
    expect(logout.stdout).toContain(`Logged out of ${server.url}`)
    expect((await Http.request(server.url, "GET", "/v1/me", { token })).status).toBe(401)
    const profile = JSON.parse(await Fs.readFile(file, "utf8")).profiles.default
    expect(profile).toEqual({ url: server.url })
  })

  it("says how long to wait when sign-in is throttled", async () => {
    const user = await Http.signUp(server.url, "Throttled")
    for (let i = 0; i < 10; i++) {
      expect((await Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: user.email, password: "wrong password guess" } })).status).toBe(401)
    }
    const { cli } = await fresh()
    const login = await cli(["auth", "login", "--url", server.url, "--email", user.email], { ORGPLANE_PASSWORD: PASSWORD })
    expect(login.code).toBe(1)
    expect(login.stderr.trim()).toMatch(/^error: rate_limited \(429\): Too many failed sign-ins; retry in \d+ seconds\. — retry in 1[45] min$/)
  })

  it("switches the active organization", async () => {
    const owner = await Http.owner(server.url, "First Org")
    const second = await Http.request(server.url, "POST", "/v1/organizations", { token: owner.token, body: { name: "Second Org" } })
    expect(second.status).toBe(201)
    const { cli } = await fresh()
    const switched = await cli(["orgs", "switch", owner.organization.id], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token })
    expect(switched.code).toBe(0)
    expect(switched.stdout.trim()).toBe(`Switched to First Org (${owner.organization.id}) as owner.`)
    const me = await Http.request(server.url, "GET", "/v1/me", { token: owner.token })
    expect(Http.at(me.body, "organization", "id")).toBe(owner.organization.id)
  })

  it("tells a person in no organization what to do, in the server's words, once", async () => {
    const { cli } = await fresh()
    const person = await Http.signUp(server.url, "Newcomer")
    const listed = await cli(["teams", "list"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: person.token })
    expect([listed.code, listed.stderr.trim()]).toEqual([
      4,
      "error: organization_not_found (404): You are not a member of any organization: create one with POST /v1/organizations (orgplane orgs create <name>), or accept an invitation with POST /v1/invitations/accept (orgplane invitations accept <token>)."
    ])
  })

  it("reports a wrong token with exit code 3 and a clear message (the API body with --json)", async () => {
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: "ops_not-a-real-token" }
    const wrongLogin = ["auth", "login", "--url", server.url, "--email", "nobody@example.com", "--password", "wrong password"]
    const [text, body, login, loginJson, refused] = await Promise.all([
      cli(["whoami"], env),
      cli(["orgs", "list", "--json"], env),
      cli(wrongLogin),
      cli([...wrongLogin, "--json"]),
      Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: "nobody@example.com", password: "wrong password" } })
    ])
    expect(text.code).toBe(3)
    expect(text.stdout).toBe("")
    expect(text.stderr.trim()).toBe(
      "error: unauthorized (401) — the session token from ORGPLANE_TOKEN is not a session this server issued: log in again with 'orgplane auth login'"
    )
    expect(body.code).toBe(3)
    expect(JSON.parse(body.stderr)).toEqual({
      error: "unauthorized",
      reason: "session_unknown",
      message: "The bearer token is not a session of this server: sign in (POST /v1/auth/sign-in) for a new one."
    })
    expect(login.code).toBe(3)
    expect(login.stderr).toContain("wrong email or password")
    // With --json, the server's own refusal, its reason with it.
    expect(refused.status).toBe(401)
    expect([loginJson.code, JSON.parse(loginJson.stderr)]).toEqual([3, refused.body])
    expect(refused.body).toMatchObject({ error: "unauthorized", reason: expect.any(String) })
    // A token that existed and was signed out is told apart from one that never did.
    const person = await Http.signUp(server.url, "Signed Out")
    await Http.request(server.url, "POST", "/v1/auth/sign-out", { token: person.token })
    const signedOut = await cli(["whoami"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: person.token })
    expect([signedOut.code, signedOut.stderr.trim()]).toEqual([
      3,
      "error: unauthorized (401) — the session token from ORGPLANE_TOKEN was signed out or revoked: log in again with 'orgplane auth login'"
    ])
  })

  it("exits 5 when the server cannot be reached, and 3 without any credential", async () => {
    const { cli } = await fresh()
    const port = await freePort()
    const [down, anonymous] = await Promise.all([
      cli(["whoami", "--url", `http://127.0.0.1:${port}`, "--token", "x"]),
      cli(["whoami", "--url", server.url])
    ])
    expect(down.code).toBe(5)
    expect(down.stderr.trim()).toBe(`error: cannot reach the server at http://127.0.0.1:${port} (connection refused): is it running? start one with \`orgplane serve\``)
    expect(anonymous.code).toBe(3)
    expect(anonymous.stderr.trim()).toBe(
      `error: not logged in to ${server.url} (profile 'default') — run 'orgplane auth login', or set ORGPLANE_TOKEN or ORGPLANE_API_KEY`
    )
  })

  it("takes a new --profile's server from the profile in use; at the default address, a refusal says why it went there", async () => {
    const { cli, configDir } = await fresh()
    const email = `profiles.${Date.now()}@example.com`
    const signup = await cli(["auth", "signup", "--url", server.url, "--email", email, "--name", "Grace", "--password", PASSWORD])
    expect(signup.code, signup.stderr).toBe(0)
    // No --url: the new profile signs in where the default profile points, and saves that server.
    const login = await cli(["auth", "login", "--profile", "work", "--email", email, "--password", PASSWORD])
    expect(login.code, login.stderr).toBe(0)
    const saved = JSON.parse(await Fs.readFile(Path.join(configDir, "config.json"), "utf8")).profiles
    expect(saved.work).toMatchObject({ url: server.url, email })
    expect(saved.work.token).not.toBe(saved.default.token)

    // No flag, variable or profile names a server: the CLI's default address, and its refusal says so.
    const { cli: newcomer } = await fresh()
    const defaultFree = await new Promise<boolean>((resolve) => {
      const socket = Net.connect(8787, "127.0.0.1")
      socket.once("connect", () => (socket.destroy(), resolve(false)))
      socket.once("error", () => resolve(true))
    })
    if (!defaultFree) return void console.warn("something listens on 127.0.0.1:8787: the default address's refusal is not checked")
    const down = await newcomer(["whoami", "--profile", "work", "--token", "x"])
    expect(down.code).toBe(5)
    expect(down.stderr.trim()).toBe(
      "error: cannot reach the server at http://127.0.0.1:8787 (connection refused): is it running? start one with `orgplane serve` — this is the CLI's default address: no --url, ORGPLANE_URL or profile 'work' names a server (pass --url, or set ORGPLANE_URL)"
    )
  })

  it("tells a server that is down, a URL that is not orgplane, and an orgplane of another version apart", async () => {
    // Something else answering HTTP: a web server with a 404 page for every path but /.
    const other = NodeHttp.createServer((request, response) => {
      response.writeHead(request.url === "/" ? 200 : 404, { "content-type": "text/html" }).end("<h1>not here</h1>")
    })
    // An orgplane of another version, whose /v1/me this CLI cannot read.
    const newer = NodeHttp.createServer((request, response) => {
      const body = request.url === "/health" ? { ok: true, version: "9.9.9" } : { me: "in a shape of the future" }
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body))
    })
    const listen = (server: NodeHttp.Server) =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () => {
          const address = server.address()
          resolve(`http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`)
        })
      )
    const [otherUrl, newerUrl] = await Promise.all([listen(other), listen(newer)])
    try {
      const { cli } = await fresh()
      const down = `http://127.0.0.1:${await freePort()}`
      const [downAnonymous, wrong, wrongAnonymous, wrongJson, skewed] = await Promise.all([
        cli(["whoami", "--url", down]),
        cli(["whoami", "--url", otherUrl, "--token", "x"]),
        cli(["auth", "login", "--url", otherUrl, "--email", "a@example.com", "--password", PASSWORD]),
        cli(["orgs", "list", "--url", otherUrl, "--token", "x", "--json"]),
        cli(["whoami", "--url", newerUrl, "--token", "x"])
      ])
      // Down, and no session for it: unreachable first, not "not logged in".
      expect(downAnonymous.code).toBe(5)
      expect(downAnonymous.stderr.trim()).toBe(`error: cannot reach the server at ${down} (connection refused): is it running? start one with \`orgplane serve\``)
      const notOrgplane = `${otherUrl} is not an orgplane server (GET /health answered 404) — check --url, ORGPLANE_URL or the profile's URL`
      expect(wrong.code).toBe(5)
      expect(wrong.stderr.trim()).toBe(`error: ${notOrgplane}`)
      expect(wrongAnonymous.code).toBe(5)
      expect(wrongAnonymous.stderr.trim()).toBe(`error: ${notOrgplane}`)
      expect(wrongJson.code).toBe(5)
      expect(JSON.parse(wrongJson.stderr)).toEqual({ error: "not_orgplane", message: notOrgplane })
      expect(skewed.code).toBe(1)
      expect(skewed.stderr).toContain(`error: the orgplane server at ${newerUrl} is version 9.9.9 and sent an answer this CLI (version `)
      expect(skewed.stderr).toContain("npm install -g @orgplane/cli@9.9.9")
    } finally {
      other.close()
      newer.close()
    }
  })

  it("bootstraps a workspace and claims it", async () => {
    const user = await Http.signUp(server.url, "Claimer")
    const { cli } = await fresh()
    const created = await cli(["bootstrap", "create", "--url", server.url, "--workspace-name", "Agents Inc", "--role", "owner", "--role", "member", "--json"])
    expect(created.code, created.stderr).toBe(0)
    const result = json(created)
    expect(result.organization).toMatchObject({ name: "Agents Inc", provisional: true })
    expect(result.claimLinks.map((link: { role: string }) => link.role)).toEqual(["owner", "member"])

    const claimed = await cli(["bootstrap", "claim", result.claimLinks[0].token], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: user.token })
    expect(claimed.code, claimed.stderr).toBe(0)
    expect(claimed.stdout).toContain(`Joined Agents Inc (${result.organization.id}) as owner`)
  })
})
