/**
 * SAML from the CLI alone: `sso connections create --saml-metadata-url | test | activate` and `auth login --sso`,
 * in-process (Harness.ts) against a real server, a samlify IdP (testkit IdpSaml) and a fake DNS server on loopback.
 * The browser is the test: it reads the URL the CLI prints with --no-browser (the IdP's SSO URL with the
 * AuthnRequest), lets the IdP sign in headlessly, posts the IdP's form to the ACS as the browser's auto-post would,
 * and follows the server's answer (JSON for a test, a 302 to the CLI's loopback listener for a sign-in). The server
 * is RealServer.ts's.
 */
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import * as IdpSaml from "../../../packages/testkit/src/IdpSaml.js"
import * as Wait from "../../../packages/testkit/src/Wait.js"
import * as RealServer from "./RealServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, type Output, PASSWORD } from "./Harness.js"

let dns: FakeDns.FakeDns
let server: RealServer.RealServer
let idp: IdpSaml.IdpSaml

beforeAll(async () => {
  dns = await FakeDns.start()
  server = await RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise", ORGPLANE_DNS_SERVERS: dns.address, ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
  idp = await IdpSaml.start()
})
afterAll(async () => {
  await server?.close()
  await idp?.close()
  await dns?.stop()
  await cleanup()
})

/** A person at the IdP, keyed by their email (the login hint `as` names). */
const person = (email: string, name: string) => {
  idp.addUser(email, { email, name })
  return email
}

/** The URL a running command printed on stderr after "…this URL…" (the IdP's SSO URL with the AuthnRequest). */
const printedUrl = async (output: Output) => {
  await Wait.until(() => /this URL[^\n]*\n {2}\S+/.test(output.stderr.join("")), "the CLI's sign-in URL")
  return /this URL[^\n]*\n {2}(\S+)/.exec(output.stderr.join(""))![1]!
}

/** The browser's auto-posted form at the ACS: the server's answer, not followed. */
const postAcs = (post: IdpSaml.AcsPost) => fetch(post.acsUrl, { method: "POST", body: new URLSearchParams(post.form), redirect: "manual" })

/** The browser at the IdP, then at the ACS: where the server's 302 sends it (the CLI's loopback listener). */
const signInAtIdp = async (url: string, options: IdpSaml.ResponseOptions) => {
  const answered = await postAcs(await idp.signIn(url, options))
  expect(answered.status, await answered.clone().text()).toBe(302)
  return new URL(answered.headers.get("location")!)
}

/**
 * From the CLI alone: an admin signs up, creates an organization and a SAML connection from the IdP's metadata URL,
 * registers orgplane at the IdP by the connection's SP metadata, verifies the domain, tests the connection through
 * the ACS and activates it.
 */
const activeConnection = async () => {
  const domain = `cli-saml-${Math.random().toString(36).slice(2, 8)}.test`
  const admin = person(`admin@${domain}`, "Admin")
  const { cli } = await fresh()
  const env = { ORGPLANE_URL: server.url }
  const signedUp = await cli(["auth", "signup", "--email", admin, "--name", "Admin"], { ...env, ORGPLANE_PASSWORD: PASSWORD })
  expect(signedUp.code, signedUp.stderr).toBe(0)
  expect((await cli(["orgs", "create", `Org ${domain}`], env)).code).toBe(0)

  const created = await cli(["sso", "connections", "create", "Loopback SAML", "--domain", domain, "--saml-metadata-url", idp.metadataUrl], env)
  expect(created.code, created.stderr).toBe(0)
  const connectionId = /\((ssc_\w+)\): saml, draft, revision 1/.exec(created.stdout)?.[1]
  expect(connectionId, created.stdout).toBeDefined()
  expect(created.stdout).toContain(`  IdP: metadataUrl ${idp.entityId}`)
  expect(created.stdout).toContain(`  ACS URL: ${server.url}/v1/sso/saml/${connectionId}/acs`)
  expect(created.stdout).toContain(`  IdP-initiated sign-in: off`)
  // The IdP administrator imports orgplane's SP metadata (its URL is on the connection).
  const shown = json(await cli(["sso", "connections", "get", connectionId!, "--json"], env)).connection
  const metadata = await fetch(shown.sp.metadataUrl)
  expect(metadata.status).toBe(200)
  idp.addServiceProvider({ metadata: await metadata.text() })

  const record = json(await cli(["sso", "request-verification", "--domain", domain, "--json"], env)).verification
  dns.setTxt(record.recordName, [record.recordValue])
  const verified = await cli(["sso", "verify", "--domain", domain], env)
  expect(verified.code, verified.stderr).toBe(0)

  // The test: the CLI prints the IdP's URL, the admin signs in there, the IdP's form posts to the ACS.
  const output: Output = { stdout: [], stderr: [] }
  const testing = cli(["sso", "connections", "test", connectionId!, "--no-browser"], env, {}, output)
  const landed = await postAcs(await idp.signIn(await printedUrl(output), { as: admin }))
  expect(landed.status, await landed.clone().text()).toBe(200)
  expect(await landed.json()).toMatchObject({ purpose: "test", ok: true })
  const tested = await testing
  expect(tested.code, tested.stderr).toBe(0)
  expect(tested.stdout).toMatch(new RegExp(`^Test ssi_\\w+ of ${connectionId} \\(revision 1\\): succeeded at `))
  expect(tested.stdout).toContain(`  profile: ${admin}, name Admin, subject ${admin}`)

  const activated = await cli(["sso", "connections", "activate", connectionId!, "--json"], env)
  expect(activated.code, activated.stderr).toBe(0)
  expect(json(activated).connection.state).toBe("active")
  return { cli, env, domain, admin, connectionId: connectionId! }
}

describe("SAML from the CLI", { timeout: 120_000 }, () => {
  it("creates, verifies, tests and activates a SAML connection, then signs a new person in through the ACS and the loopback redirect", async () => {
    const { domain } = await activeConnection()
    const email = person(`ada@${domain}`, "Ada Lovelace")
    const { cli, configDir } = await fresh()
    const env = { ORGPLANE_URL: server.url }

    const output: Output = { stdout: [], stderr: [] }
    const login = cli(["auth", "login", "--sso", "--email", email, "--no-browser"], env, {}, output)
    const location = await signInAtIdp(await printedUrl(output), { as: email })
    expect(location.hostname).toBe("127.0.0.1")
    expect(location.searchParams.get("code")).toMatch(/^ssx_/)
    const page = await fetch(location)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain(`You are signed in to orgplane as ${email}`)

    const result = await login
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(new RegExp(`^Logged in through SSO as Ada Lovelace <${email.replace(".", "\\.")}> \\(usr_\\w+\\) at `))
    expect(result.stdout).toContain(`Session saved to profile 'default' in ${configDir}/config.json`)

    const me = await cli(["whoami", "--json"], env)
    expect(me.code, me.stderr).toBe(0)
    expect(json(me)).toMatchObject({ user: { email, name: "Ada Lovelace" }, membership: { role: "member" } })
    expect(json(me).organization.name).toBe(`Org ${domain}`)
  })

  it("exits with the refusal's code when the IdP's Response was tampered with, and saves nothing", async () => {
    const { domain } = await activeConnection()
    const email = person(`grace@${domain}`, "Grace Hopper")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url }
    const output: Output = { stdout: [], stderr: [] }
    const login = cli(["auth", "login", "--sso", "--email", email, "--no-browser"], env, {}, output)
    const location = await signInAtIdp(await printedUrl(output), { as: email, tamper: { _tag: "alteredAfterSigning" } })
    expect(location.searchParams.get("error")).toBe("signature_invalid")
    const page = await fetch(location)
    expect(page.status).toBe(400)
    expect(await page.text()).toContain("orgplane could not sign you in (signature_invalid)")

    const result = await login
    expect(result.code).toBe(3)
    expect(result.stderr).toContain("error: sso_sign_in_failed (401): signature_invalid: ")
    expect((await cli(["whoami"], env)).code).toBe(3)
  })

  it("prints a failed test's report and exits 1 with its code (an unsigned assertion)", async () => {
    const { cli, env, connectionId, admin } = await activeConnection()
    const output: Output = { stdout: [], stderr: [] }
    const testing = cli(["sso", "connections", "test", connectionId, "--no-browser", "--json"], env, {}, output)
    const landed = await postAcs(await idp.signIn(await printedUrl(output), { as: admin, tamper: { _tag: "unsigned" } }))
    expect(landed.status).toBe(200)
    const tested = await testing
    expect(tested.code).toBe(1)
    expect(json(tested).test).toMatchObject({ connectionId, status: "failed", failure: { code: "signature_invalid" } })
  })

  it("sets IdP-initiated sign-in and its RelayState allow-list on create and update, and shows them", async () => {
    const { cli, env, domain } = await activeConnection()
    const args = ["sso", "connections", "create", "IdP-initiated", "--domain", domain, "--saml-metadata-url", idp.metadataUrl]
    // On without a RelayState: the server's rule, its field named.
    const bare = await cli([...args, "--saml-idp-initiated", "on", "--json"], env)
    expect(bare.code).not.toBe(0)
    expect(bare.stderr).toContain("relayStateAllowList")
    const oidcToo = await cli(["sso", "connections", "create", "x", "--oidc-issuer", idp.url, "--oidc-client-id", "x", "--saml-relay-state", "/app"], env)
    expect(oidcToo.code).toBe(2)

    const created = await cli([...args, "--saml-idp-initiated", "on", "--saml-relay-state", "/app/welcome", "--saml-relay-state", "http://127.0.0.1:8976/cb"], env)
    expect(created.code, created.stderr).toBe(0)
    expect(created.stdout).toContain("  IdP-initiated sign-in: on, RelayState allowed: /app/welcome, http://127.0.0.1:8976/cb")
    const id = /\((ssc_\w+)\)/.exec(created.stdout)![1]!
    const shown = json(await cli(["sso", "connections", "get", id, "--json"], env)).connection
    expect(shown.saml).toMatchObject({ source: "metadataUrl", allowIdpInitiated: true, relayStateAllowList: ["/app/welcome", "http://127.0.0.1:8976/cb"] })

    // Update: the IdP sent again as stored, the list replaced; a settings change, so a new revision to test.
    const listed = await cli(["sso", "connections", "update", id, "--saml-relay-state", "/app/home", "--json"], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(json(listed).connection).toMatchObject({
      configRevision: 2,
      saml: { source: "metadataUrl", entityId: idp.entityId, allowIdpInitiated: true, relayStateAllowList: ["/app/home"] }
    })
    const bad = await cli(["sso", "connections", "update", id, "--saml-relay-state", "https://evil.example/"], env)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("must be a loopback http URL (http://127.0.0.1:<port>/…) or a path on this server starting with a single /")
    const off = await cli(["sso", "connections", "update", id, "--saml-idp-initiated", "off"], env)
    expect(off.code, off.stderr).toBe(0)
    expect(off.stdout).toContain("  IdP-initiated sign-in: off")
    expect(off.stdout).toContain("revision 3")
  })
})
