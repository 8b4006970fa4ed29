/**
 * `orgplane sso`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts) with a fake DNS server on
 * loopback.
 */
import * as FakeDns from "../../../packages/testkit/src/FakeDns.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"

let dns: FakeDns.FakeDns
let server: RealServer.RealServer
let free: RealServer.RealServer

beforeAll(async () => {
  dns = await FakeDns.start()
  ;[server, free] = await Promise.all([
    RealServer.start({ ORGPLANE_DEFAULT_PLAN: "enterprise", ORGPLANE_DNS_SERVERS: dns.address }),
    RealServer.start({ ORGPLANE_DNS_SERVERS: dns.address })
  ])
})
afterAll(async () => {
  await Promise.all([server?.close(), free?.close()])
  await dns?.stop()
  await cleanup()
})

/** A real self-signed certificate (P-256, CN=idp.test.example, valid until 2036-11-20 16:08:55 UTC). */
const CERTIFICATE = `-----BEGIN CERTIFICATE-----
MIIBjDCCATGgAwIBAgIUBw1u0wg9up7yADNwRn72EWf7KWwwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQaWRwLnRlc3QuZXhhbXBsZTAeFw0yNjExMjMxNjA4NTVaFw0z
NjExMjAxNjA4NTVaMBsxGTAXBgNVBAMMEGlkcC50ZXN0LmV4YW1wbGUwWTATBgcq
hkjOPQIBBggqhkjOPQMBBwNCAAQxuD7PXcfyjloNcu/Yze3XPMIimU+JuwMe94NJ
h1FUSLIRr2Mr4gTaVMiVgRM1PamzvkkbXT93Gf3eA0+8vR/xo1MwUTAdBgNVHQ4E
FgQUFtOPPGg0fq4DvnGmUVlaCSwkQt4wHwYDVR0jBBgwFoAUFtOPPGg0fq4DvnGm
UVlaCSwkQt4wDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEA1g5x
GDS2Os1hV8+GbRMFszUVjzxTq8/sJr1/p6jd2BECIQCbG1hCTQm9eRm5R1WRiasK
83Ecs1zec56Vd1aG5YixmQ==
-----END CERTIFICATE-----
`

describe("orgplane sso", { timeout: 120_000 }, () => {
  it("creates an OIDC connection with the secret from the environment, verifies its domain, adds a SAML one, deletes it", async () => {
    const owner = await Http.owner(server.url, "SSO Org")
    const { cli, home } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
    const domain = `cli-${Math.random().toString(36).slice(2, 8)}.example`
    const create = ["sso", "connections", "create", "Okta", "--domain", domain, "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app"]

    const noSecret = await cli(create, env)
    expect(noSecret.code).toBe(2)
    expect(noSecret.stderr).toContain("ORGPLANE_SSO_CLIENT_SECRET")
    const badDomain = await cli(["sso", "connections", "create", "Okta", "--domain", "not a domain", "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app"], env)
    expect(badDomain.code).toBe(2)
    expect(badDomain.stderr).toContain("--domain")

    const created = await cli([...create, "--json"], { ...env, ORGPLANE_SSO_CLIENT_SECRET: "cli-secret-value" })
    expect(created.code, created.stderr).toBe(0)
    const connection = json(created).connection
    expect(connection).toMatchObject({ kind: "oidc", state: "draft", domains: [{ domain, verified: false }], oidc: { clientId: "app", clientSecretSet: true } })
    expect(created.stdout).not.toContain("cli-secret-value")

    const shown = await cli(["sso", "connections", "get", connection.id], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`Okta (${connection.id}): oidc, draft, revision 1`)
    expect(shown.stdout).toContain(`${domain} (not verified)`)

    const requested = await cli(["sso", "request-verification", "--json"], env)
    expect(requested.code, requested.stderr).toBe(0)
    const record = json(requested).verification
    expect(record.recordName).toBe(`_orgplane-verification.${domain}`)
    const human = await cli(["sso", "request-verification", "--domain", domain], env)
    expect(human.stdout).toContain(`${record.recordName} TXT "${record.recordValue}"`)

    const missing = await cli(["sso", "verify", "--json"], env)
    expect(missing.code).toBe(1)
    expect(missing.stderr + missing.stdout).toContain(record.recordName)
    expect(missing.stderr + missing.stdout).toContain(record.recordValue)

    dns.setTxt(record.recordName, [record.recordValue])
    const verified = await cli(["sso", "verify", "--json"], env)
    expect(verified.code, verified.stderr).toBe(0)
    expect(json(verified)).toMatchObject({ verified: true, domain })
    expect(json(await cli(["sso", "domains", "--json"], env)).domains).toMatchObject([{ domain, verified: true }])

    const untested = await cli(["sso", "connections", "activate", connection.id], env)
    expect(untested.code).toBe(1)
    expect(untested.stderr + untested.stdout).toContain("sso_connection_untested")

    const file = Path.join(home, "idp.pem")
    await Fs.writeFile(file, CERTIFICATE)
    const saml = await cli(
      ["sso", "connections", "create", "ADFS", "--domain", domain, "--saml-entity-id", "urn:idp", "--saml-sso-url", "https://idp.example.com/sso", "--saml-certificate-file", file, "--json"],
      env
    )
    expect(saml.code, saml.stderr).toBe(0)
    expect(json(saml).connection).toMatchObject({
      kind: "saml",
      oidc: null,
      domains: [{ domain, verified: true }],
      saml: { certificates: [{ subject: "CN=idp.test.example", notAfter: "2036-11-20T16:08:55.000Z" }] }
    })
    const both = await cli(["sso", "connections", "create", "X", "--oidc-issuer", "https://x.example", "--saml-entity-id", "urn:idp"], env)
    expect(both.code).toBe(2)

    const renamed = await cli(["sso", "connections", "update", connection.id, "--name", "Okta (prod)", "--jit-role", "admin", "--json"], env)
    expect(renamed.code, renamed.stderr).toBe(0)
    expect(json(renamed).connection).toMatchObject({ name: "Okta (prod)", jit: { defaultRole: "admin" }, configRevision: 1 })
    const listed = await cli(["sso", "connections", "list", "--json"], env)
    expect(json(listed).connections.map((c: { name: string }) => c.name)).toEqual(["Okta (prod)", "ADFS"])

    const deleted = await cli(["sso", "connections", "delete", connection.id, "--json"], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(json(deleted)).toEqual({ ok: true })
    const gone = await cli(["sso", "connections", "get", connection.id, "--json"], env)
    expect(gone.code).toBe(4)
    expect(gone.stderr + gone.stdout).toContain("sso_connection_not_found")
  })

  it("reports the enterprise plan requirement", async () => {
    const owner = await Http.owner(free.url)
    const { cli } = await fresh()
    const result = await cli(["sso", "connections", "list", "--json"], { ORGPLANE_URL: free.url, ORGPLANE_TOKEN: owner.token })
    expect(result.code).toBe(1)
    expect(result.stderr + result.stdout).toContain("enterprise_plan_required")
  })
})
