/** `orgplane sso`: the CLI in-process (see Harness.ts) against a real server with a fake DNS server on loopback. */
import { FakeDns, Http, TestServer } from "@orgplane/testkit"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"

let dns: FakeDns.FakeDns
let server: TestServer.RunningServer
let free: TestServer.RunningServer

beforeAll(async () => {
  dns = await FakeDns.start()
  ;[server, free] = await Promise.all([
    TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address }),
    TestServer.start({ dnsServers: dns.address })
  ])
})
afterAll(async () => {
  await Promise.all([server?.close(), free?.close()])
  await dns?.stop()
  await cleanup()
})

const CERTIFICATE = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0FGRUJBQkU=\n-----END CERTIFICATE-----\n"

describe("orgplane sso", { timeout: 120_000 }, () => {
  it("sets an OIDC connection with the secret from the environment, verifies its domain, switches to SAML, deletes it", async () => {
    const owner = await Http.owner(server.url, "SSO Org")
    const { cli, home } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
    const domain = `cli-${Math.random().toString(36).slice(2, 8)}.example`

    const noSecret = await cli(["sso", "set", "--domain", domain, "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app"], env)
    expect(noSecret.code).toBe(2)
    expect(noSecret.stderr).toContain("ORGPLANE_SSO_CLIENT_SECRET")
    const badDomain = await cli(["sso", "set", "--domain", "not a domain", "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app"], env)
    expect(badDomain.code).toBe(2)
    expect(badDomain.stderr).toContain("--domain")

    const set = await cli(
      ["sso", "set", "--domain", domain, "--oidc-issuer", "https://login.example.com", "--oidc-client-id", "app", "--json"],
      { ...env, ORGPLANE_SSO_CLIENT_SECRET: "cli-secret-value" }
    )
    expect(set.code, set.stderr).toBe(0)
    expect(json(set).ssoConnection).toMatchObject({ protocol: "oidc", domain, oidc: { clientId: "app", clientSecretSet: true } })
    expect(set.stdout).not.toContain("cli-secret-value")

    const shown = await cli(["sso", "get"], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`SSO (oidc) for ${domain}: domain not verified.`)

    const requested = await cli(["sso", "request-verification", "--json"], env)
    expect(requested.code, requested.stderr).toBe(0)
    const record = json(requested).verification
    expect(record.recordName).toBe(`_orgplane-verification.${domain}`)
    const human = await cli(["sso", "request-verification"], env)
    expect(human.stdout).toContain(`${record.recordName} TXT "${record.recordValue}"`)

    const missing = await cli(["sso", "verify", "--json"], env)
    expect(missing.code).toBe(1)
    expect(missing.stderr + missing.stdout).toContain(record.recordName)
    expect(missing.stderr + missing.stdout).toContain(record.recordValue)

    dns.setTxt(record.recordName, [record.recordValue])
    const verified = await cli(["sso", "verify", "--json"], env)
    expect(verified.code, verified.stderr).toBe(0)
    expect(json(verified)).toMatchObject({ verified: true, domain, ssoConnection: { domainVerified: true } })

    const file = Path.join(home, "idp.pem")
    await Fs.writeFile(file, CERTIFICATE)
    const saml = await cli(
      ["sso", "set", "--domain", domain, "--saml-entity-id", "urn:idp", "--saml-sso-url", "https://idp.example.com/sso", "--saml-certificate-file", file, "--json"],
      env
    )
    expect(saml.code, saml.stderr).toBe(0)
    expect(json(saml).ssoConnection).toMatchObject({ protocol: "saml", oidc: null, domainVerified: true })
    const both = await cli(["sso", "set", "--domain", domain, "--oidc-issuer", "https://x.example", "--saml-entity-id", "urn:idp"], env)
    expect(both.code).toBe(2)

    const deleted = await cli(["sso", "delete", "--json"], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(json(deleted)).toEqual({ ok: true })
    const gone = await cli(["sso", "get", "--json"], env)
    expect(gone.code).toBe(4)
    expect(gone.stderr + gone.stdout).toContain("sso_connection_not_found")
  })

  it("reports the enterprise plan requirement", async () => {
    const owner = await Http.owner(free.url)
    const { cli } = await fresh()
    const result = await cli(["sso", "get", "--json"], { ORGPLANE_URL: free.url, ORGPLANE_TOKEN: owner.token })
    expect(result.code).toBe(1)
    expect(result.stderr + result.stdout).toContain("enterprise_plan_required")
  })
})
