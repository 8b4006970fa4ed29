/**
 * SSO from the CLI alone: `sso connections create | test | activate` and `auth login --sso`, in-process (Harness.ts)
 * against a real server, a real OpenID Provider (oidc-provider, testkit IdpOidc) and a fake DNS server on loopback.
 * The browser is the test: it reads the URL the CLI prints with --no-browser, lets the IdP sign in headlessly, and
 * follows the server's answer (JSON for a test, a 302 to the CLI's loopback listener for a sign-in). The server is
 * RealServer.ts's.
 */
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as IdpOidc from "../../../packages/testkit/src/IdpOidc.js"
import * as RealServer from "./RealServer.js"
import * as Wait from "../../../packages/testkit/src/Wait.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Output, PASSWORD } from "./Harness.js"

const SECRET = "cli-oidc-client-secret"
let dns: FakeDns.FakeDns
let server: RealServer.RealServer
let idp: IdpOidc.IdpOidc

beforeAll(async () => {
  dns = await FakeDns.start()
  server = await RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise", ORGPLANE_DNS_SERVERS: dns.address, ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
  idp = await IdpOidc.start({
    clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }]
  })
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
  await cleanup()
})

let subjects = 0
const account = (email: string, name: string) => {
  idp.addAccount(email, { sub: `cli-sub-${++subjects}`, email, email_verified: true, name })
  return email
}

/** The URL a running command printed on stderr after "…this URL…" (the provider's sign-in page). */
const printedUrl = async (output: Output) => {
  await Wait.until(() => /this URL[^\n]*\n {2}\S+/.test(output.stderr.join("")), "the CLI's sign-in URL")
  return /this URL[^\n]*\n {2}(\S+)/.exec(output.stderr.join(""))![1]!
}

/** The JSON error a command printed last on stderr (notes for people come before it). */
const jsonError = (stderr: string) => JSON.parse(stderr.split("\n").filter((line) => line.startsWith("{")).at(-1)!)

/** The browser at the IdP, then at the server's callback: the 302 the server answers a sign-in with. */
const signInAtIdp = async (url: string, options: IdpOidc.SignInOptions) => {
  const callback = await idp.signIn(url, options)
  const answered = await fetch(callback.url, { redirect: "manual" })
  expect(answered.status, await answered.clone().text()).toBe(302)
  return new URL(answered.headers.get("location")!)
}

/**
 * From the CLI alone: an admin signs up, creates an organization and an OIDC connection, verifies its domain, tests
 * it and activates it. Answers the admin's CLI and environment, the domain and the connection id.
 */
const activeConnection = async () => {
  const domain = `cli-${Math.random().toString(36).slice(2, 8)}.test`
  const admin = account(`admin@${domain}`, "Admin")
  const { cli } = await fresh()
  const env = { ORGPLANE_URL: server.url }
  const signedUp = await cli(["auth", "signup", "--email", admin, "--name", "Admin"], { ...env, ORGPLANE_PASSWORD: PASSWORD })
  expect(signedUp.code, signedUp.stderr).toBe(0)
  expect((await cli(["orgs", "create", `Org ${domain}`], env)).code).toBe(0)

  const created = await cli(
    ["sso", "connections", "create", "Loopback IdP", "--domain", domain, "--oidc-issuer", idp.issuer, "--oidc-client-id", "orgplane", "--json"],
    { ...env, ORGPLANE_SSO_CLIENT_SECRET: SECRET }
  )
  expect(created.code, created.stderr).toBe(0)
  const connectionId: string = json(created).connection.id
  const record = json(await cli(["sso", "request-verification", "--domain", domain, "--json"], env)).verification
  dns.setTxt(record.recordName, [record.recordValue])
  const verified = await cli(["sso", "verify", "--domain", domain], env)
  expect(verified.code, verified.stderr).toBe(0)

  // The test: the CLI prints the provider's URL, the admin signs in there, the server records the report.
  const output: Output = { stdout: [], stderr: [] }
  const testing = cli(["sso", "connections", "test", connectionId, "--no-browser"], env, {}, output)
  const callback = await idp.signIn(await printedUrl(output), { as: admin })
  const landed = await fetch(callback.url)
  expect(landed.status).toBe(200)
  const tested = await testing
  expect(tested.code, tested.stderr).toBe(0)
  expect(tested.stderr).toContain("Open this URL in a browser to sign in at the identity provider as yourself (valid 5 minutes):")
  expect(tested.stdout).toMatch(new RegExp(`^Test ssi_\\w+ of ${connectionId} \\(revision 1\\): succeeded at `))
  expect(tested.stdout).toContain(`  profile: ${admin}, name Admin, subject cli-sub-`)
  expect(tested.stdout).toContain(`    iss: ${idp.issuer}`)

  const activated = await cli(["sso", "connections", "activate", connectionId, "--json"], env)
  expect(activated.code, activated.stderr).toBe(0)
  expect(json(activated).connection.state).toBe("active")
  return { cli, env, domain, admin, connectionId }
}

describe("SSO from the CLI", { timeout: 120_000 }, () => {
  it("creates, verifies, tests and activates a connection, then signs a new person in through the loopback redirect", async () => {
    const { domain } = await activeConnection()
    const email = account(`ada@${domain}`, "Ada Lovelace")
    const { cli, configDir } = await fresh()
    const env = { ORGPLANE_URL: server.url }

    const output: Output = { stdout: [], stderr: [] }
    const login = cli(["auth", "login", "--sso", "--email", email, "--no-browser"], env, {}, output)
    const location = await signInAtIdp(await printedUrl(output), { as: email })
    expect(location.hostname).toBe("127.0.0.1")
    expect(location.searchParams.get("code")).toMatch(/^ssx_/)

    // Only the CLI's own path, once, by GET: another path, another method, are 404 and change nothing.
    expect((await fetch(`${location.origin}/callback${location.search}`)).status).toBe(404)
    expect((await fetch(location, { method: "POST" })).status).toBe(404)
    const page = await fetch(location)
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    expect(await page.text()).toContain(`You are signed in to orgplane as ${email}`)

    const result = await login
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^Logged in through SSO as Ada Lovelace <${email.replace(".", "\\.")}> \\(usr_\\w+\\) at `))
    expect(result.stdout).toContain(`Session saved to profile 'default' in ${configDir}/config.json`)

    // The saved session works for the commands that need one: Ada is a JIT member of the organization.
    const me = await cli(["whoami", "--json"], env)
    expect(me.code, me.stderr).toBe(0)
    expect(json(me)).toMatchObject({ user: { email, name: "Ada Lovelace" }, membership: { role: "member" } })
    expect(json(me).organization.name).toBe(`Org ${domain}`)
  })

  it("exits with the refusal's code when the provider says no, and tells the browser", async () => {
    const { domain } = await activeConnection()
    const email = account(`grace@${domain}`, "Grace Hopper")
    const { cli } = await fresh()
    const output: Output = { stdout: [], stderr: [] }
    const login = cli(["auth", "login", "--sso", "--email", email, "--no-browser"], { ORGPLANE_URL: server.url }, {}, output)
    const location = await signInAtIdp(await printedUrl(output), { as: email, error: "access_denied" })
    expect(location.searchParams.get("error")).toBe("idp_error")
    const page = await fetch(location)
    expect(page.status).toBe(400)
    expect(await page.text()).toContain("orgplane could not sign you in (idp_error)")

    const result = await login
    expect(result.code).toBe(3)
    expect(result.stderr).toContain("error: sso_sign_in_failed (401): idp_error: ")
    expect(result.stderr).toContain("orgplane auth login --sso")
    // Nothing was saved.
    const whoami = await cli(["whoami"], { ORGPLANE_URL: server.url })
    expect(whoami.code).toBe(3)
  })

  it("reports a failed sign-in with --json, and a domain no connection serves", async () => {
    const { domain } = await activeConnection()
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url }
    const outside = await cli(["auth", "login", "--sso", "--email", "someone@elsewhere.test", "--no-browser", "--json"], env)
    expect(outside.code).toBe(3)
    expect(JSON.parse(outside.stderr)).toMatchObject({ error: "sso_sign_in_failed", code: "email_domain_not_verified" })

    // A code the server does not know (the loopback redirect forged by hand): the exchange refuses it.
    const email = account(`alan@${domain}`, "Alan Turing")
    const output: Output = { stdout: [], stderr: [] }
    const login = cli(["auth", "login", "--sso", "--email", email, "--no-browser", "--json"], env, {}, output)
    const location = await signInAtIdp(await printedUrl(output), { as: email })
    location.searchParams.set("code", "ssx_forged")
    expect((await fetch(location)).status).toBe(400)
    const result = await login
    expect(result.code).toBe(3)
    expect(jsonError(result.stderr)).toMatchObject({ error: "sso_sign_in_failed", code: "replayed" })
    expect(result.stdout).toBe("")
  })

  it("under SSO enforcement, says why a key made outside SSO stopped working; keys made with --scope say their scopes", async () => {
    const { cli, domain, env } = await activeConnection()
    // An admin of the domain joins with a password and makes a key for a script (scoped, from the CLI).
    const dev = account(`dev@${domain}`, "Dev")
    const invited = json(await cli(["invitations", "create", dev, "--role", "admin", "--json"], env))
    const joined = Http.expectStatus<{ session: { token: string } }>("accept", await Http.request(server.url, "POST", "/v1/invitations/accept", {
      body: { token: invited.inviteToken, signUp: { name: "Dev", password: PASSWORD } }
    }), 200)
    const devEnv = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: joined.session.token }
    const made = await cli(["api-keys", "create", "script", "--scope", "members.read", "--scope", "teams.*"], devEnv)
    expect(made.code, made.stderr).toBe(0)
    expect(made.stdout).toContain("Scopes: members.read teams.*.")
    const key = made.stdout.trim().split("\n").at(-1)!.trim()
    const keyEnv = { ORGPLANE_URL: server.url, ORGPLANE_API_KEY: key }
    expect((await cli(["members", "list"], keyEnv)).code).toBe(0)

    // The owner (the break-glass keeps their password session) requires SSO: the key made with a password stops.
    const required = await cli(["sso", "policy", "set", "on"], env)
    expect(required.code, required.stderr).toBe(0)
    const suspended = await cli(["members", "list"], keyEnv)
    expect(suspended.code).toBe(1)
    expect(suspended.stderr).toMatch(/^error: sso_session_required \(403\)/)
    expect(suspended.stderr).toContain("API key is suspended")
    // Nor may it make keys: under enforcement only an SSO session makes them.
    const breeding = await cli(["api-keys", "create", "child"], keyEnv)
    expect(breeding.code).toBe(1)
    expect(breeding.stderr).toMatch(/^error: sso_session_required \(403\)/)
  })

  it("prints a failed test's report and exits 1 with its code", async () => {
    const { cli, env, connectionId, domain } = await activeConnection()
    // Another person completes the admin's test: identity_mismatch.
    const other = account(`mallory@${domain}`, "Mallory")
    const output: Output = { stdout: [], stderr: [] }
    const testing = cli(["sso", "connections", "test", connectionId, "--no-browser", "--json"], env, {}, output)
    const callback = await idp.signIn(await printedUrl(output), { as: other })
    expect((await fetch(callback.url)).status).toBe(200)
    const tested = await testing
    expect(tested.code).toBe(1)
    expect(json(tested).test).toMatchObject({ connectionId, status: "failed", failure: { code: "identity_mismatch" } })
    expect(jsonError(tested.stderr)).toMatchObject({
      error: "sso_test_failed",
      message: expect.stringContaining("identity_mismatch")
    })

    const bad = await cli(["auth", "login", "--email", "x@example.com", "--no-browser"], env)
    expect(bad.code).toBe(2)
  })
})
