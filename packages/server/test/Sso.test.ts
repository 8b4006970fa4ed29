import { FakeDns, Http, TestServer } from "@orgplane/testkit"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let dns: FakeDns.FakeDns
let dead: FakeDns.FakeDns
let server: TestServer.RunningServer
let free: TestServer.RunningServer
let down: TestServer.RunningServer
let fallback: TestServer.RunningServer
beforeAll(async () => {
  dns = await FakeDns.start()
  dead = await FakeDns.start()
  await dead.stop()
  ;[server, free, down, fallback] = await Promise.all([
    TestServer.start({ defaultPlan: "enterprise", dnsServers: dns.address }),
    TestServer.start({ dnsServers: dns.address }),
    TestServer.start({ defaultPlan: "enterprise", dnsServers: dead.address }),
    // The first server is dead: the resolver asks the next.
    TestServer.start({ defaultPlan: "enterprise", dnsServers: [dead.address, dns.address] })
  ])
})
afterAll(async () => {
  await Promise.all([server, free, down, fallback].map((running) => running?.close()))
  await dns?.stop()
})

const { del, get, post } = Http.verbs(() => server.url)
const put = (path: string, options: Http.Options, url = server.url) => Http.request(url, "PUT", path, options)

const CERTIFICATE = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0FGRUJBQkU=\n-----END CERTIFICATE-----"
const oidc = (domain: string) => ({
  protocol: "oidc",
  domain,
  oidc: { issuer: "https://login.example.com", clientId: "orgplane", clientSecret: "s3cret-value" }
})
let domains = 0
const newDomain = () => `corp${++domains}-${Math.random().toString(36).slice(2, 8)}.example`

const routes: ReadonlyArray<readonly [string, string, unknown?]> = [
  ["PUT", "/v1/sso/connection", oidc("acme.example")],
  ["GET", "/v1/sso/connection"],
  ["DELETE", "/v1/sso/connection"],
  ["POST", "/v1/sso/request-domain-verification"],
  ["POST", "/v1/sso/verify-domain"]
]

describe("SSO", () => {
  it("answers 402 enterprise_plan_required with feature sso on every route without the enterprise plan", async () => {
    const org = await Http.staffed(free.url)
    for (const [method, path, body] of routes) {
      for (const token of [org.owner.token, org.member.token]) {
        const response = await Http.request(free.url, method, path, { token, ...(body === undefined ? {} : { body }) })
        expect(response.status, `${method} ${path}`).toBe(402)
        expect(response.body).toMatchObject({ error: "enterprise_plan_required", feature: "sso" })
      }
    }
  })

  it("lets owners and admins set, read and delete the connection; members get 403; the secret is never answered", async () => {
    const org = await Http.staffed(server.url)
    const domain = newDomain()
    const created = await put("/v1/sso/connection", { token: org.admin.token, body: oidc(`  ${domain.toUpperCase()} `) })
    expect(created.status).toBe(200)
    expect(created.body.ssoConnection).toMatchObject({
      organizationId: org.organizationId,
      protocol: "oidc",
      domain,
      oidc: { issuer: "https://login.example.com", clientId: "orgplane", clientSecretSet: true },
      saml: null,
      domainVerified: false,
      domainVerifiedAt: null
    })
    expect(created.text).not.toContain("s3cret-value")
    const read = await get("/v1/sso/connection", { token: org.owner.token })
    expect(read.body).toEqual(created.body)
    expect(read.text).not.toContain("s3cret-value")

    const saml = await put("/v1/sso/connection", {
      token: org.owner.token,
      body: { protocol: "saml", domain, saml: { entityId: "urn:idp", ssoUrl: "https://idp.example.com/sso", certificate: CERTIFICATE } }
    })
    expect(saml.status).toBe(200)
    expect(saml.body.ssoConnection).toMatchObject({ protocol: "saml", oidc: null, saml: { entityId: "urn:idp", certificate: CERTIFICATE } })

    for (const [method, path, body] of routes) {
      const response = await Http.request(server.url, method, path, { token: org.member.token, ...(body === undefined ? {} : { body }) })
      expect(response.status, `${method} ${path}`).toBe(403)
      expect(response.body.reason).toBe("insufficient_role")
    }

    expect((await del("/v1/sso/connection", { token: org.admin.token })).status).toBe(204)
    const gone = await get("/v1/sso/connection", { token: org.owner.token })
    expect(gone.status).toBe(404)
    expect(gone.body.error).toBe("sso_connection_not_found")
    expect((await del("/v1/sso/connection", { token: org.admin.token })).status).toBe(404)
  })

  it("answers 404 organization_not_found for domain verification without a connection", async () => {
    const org = await Http.owner(server.url)
    for (const path of ["/v1/sso/request-domain-verification", "/v1/sso/verify-domain"]) {
      const response = await post(path, { token: org.token })
      expect(response.status, path).toBe(404)
      expect(response.body).toEqual({ error: "organization_not_found" })
    }
  })

  it("verifies the domain when the TXT record is published, and says what it queried and expected when it is not", async () => {
    const org = await Http.owner(server.url)
    const domain = newDomain()
    await put("/v1/sso/connection", { token: org.token, body: oidc(domain) })

    const early = await post("/v1/sso/verify-domain", { token: org.token })
    expect(early.status).toBe(409)
    expect(early.body.error).toBe("domain_verification_not_requested")

    const requested = await post("/v1/sso/request-domain-verification", { token: org.token })
    expect(requested.status).toBe(200)
    const record = requested.body.verification
    expect(record).toMatchObject({ domain, recordType: "TXT", recordName: `_orgplane-verification.${domain}` })
    expect(record.recordValue).toMatch(/^orgplane-verification=opv_[A-Za-z0-9_-]{43}$/)
    expect(new Date(record.expiresAt).getTime()).toBeGreaterThan(Date.now())
    // Asking again before it expires answers the same record.
    expect((await post("/v1/sso/request-domain-verification", { token: org.token })).body.verification).toEqual(record)

    const absent = await post("/v1/sso/verify-domain", { token: org.token })
    expect(absent.status).toBe(409)
    expect(absent.body).toMatchObject({
      error: "domain_verification_failed",
      recordName: record.recordName,
      expectedValue: record.recordValue,
      foundValues: []
    })
    expect(absent.body.message).toContain(record.recordName)
    expect(absent.body.message).toContain(record.recordValue)

    dns.setTxt(record.recordName, ["v=spf1 -all", "orgplane-verification=opv_wrong"])
    const wrong = await post("/v1/sso/verify-domain", { token: org.token })
    expect(wrong.status).toBe(409)
    expect(wrong.body).toMatchObject({
      error: "domain_verification_failed",
      recordName: record.recordName,
      expectedValue: record.recordValue,
      foundValues: ["v=spf1 -all", "orgplane-verification=opv_wrong"]
    })
    expect((await get("/v1/sso/connection", { token: org.token })).body.ssoConnection.domainVerified).toBe(false)

    dns.setTxt(record.recordName, ["v=spf1 -all", record.recordValue])
    const verified = await post("/v1/sso/verify-domain", { token: org.token })
    expect(verified.status).toBe(200)
    expect(verified.body).toMatchObject({ verified: true, domain, ssoConnection: { domain, domainVerified: true } })
    expect(verified.body.ssoConnection.domainVerifiedAt).toBe(verified.body.verifiedAt)
    expect(dns.queries).toContain(record.recordName)

    // Replacing the settings with the same domain keeps the verification; a new domain drops it.
    const same = await put("/v1/sso/connection", { token: org.token, body: oidc(domain) })
    expect(same.body.ssoConnection.domainVerified).toBe(true)
    const moved = await put("/v1/sso/connection", { token: org.token, body: oidc(newDomain()) })
    expect(moved.body.ssoConnection).toMatchObject({ domainVerified: false, domainVerifiedAt: null })
  })

  it("answers 403 session_required to an API key on verify-domain", async () => {
    const org = await Http.owner(server.url)
    await put("/v1/sso/connection", { token: org.token, body: oidc(newDomain()) })
    const key = await post("/v1/api-keys", { token: org.token, body: { name: "k" } })
    expect((await post("/v1/sso/request-domain-verification", { apiKey: key.body.key })).status).toBe(200)
    const byKey = await post("/v1/sso/verify-domain", { apiKey: key.body.key })
    expect(byKey.status).toBe(403)
    expect(byKey.body.reason).toBe("session_required")
  })

  it("answers 409 sso_domain_taken when another organization verified the domain first", async () => {
    const first = await Http.owner(server.url)
    const second = await Http.owner(server.url, "Second")
    const domain = newDomain()
    for (const org of [first, second]) await put("/v1/sso/connection", { token: org.token, body: oidc(domain) })
    const one = (await post("/v1/sso/request-domain-verification", { token: first.token })).body.verification
    const two = (await post("/v1/sso/request-domain-verification", { token: second.token })).body.verification
    expect(two.recordValue).not.toBe(one.recordValue)
    dns.setTxt(one.recordName, [one.recordValue, two.recordValue])
    expect((await post("/v1/sso/verify-domain", { token: first.token })).status).toBe(200)
    const taken = await post("/v1/sso/verify-domain", { token: second.token })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toBe("sso_domain_taken")
  })

  it("keeps each organization's connection to itself", async () => {
    const mine = await Http.owner(server.url)
    const theirs = await Http.owner(server.url, "Theirs")
    const domain = newDomain()
    await put("/v1/sso/connection", { token: mine.token, body: oidc(domain) })
    const record = (await post("/v1/sso/request-domain-verification", { token: mine.token })).body.verification
    dns.setTxt(record.recordName, [record.recordValue])
    expect((await get("/v1/sso/connection", { token: theirs.token })).status).toBe(404)
    expect((await post("/v1/sso/verify-domain", { token: theirs.token })).status).toBe(404)
    expect((await del("/v1/sso/connection", { token: theirs.token })).status).toBe(404)
    expect((await get("/v1/sso/connection", { token: mine.token })).body.ssoConnection).toMatchObject({ domain, domainVerified: false })
  })

  it("answers 502 dns_lookup_failed, not 500, when DNS servers are down or fail; asks the next server", async () => {
    for (const [url, failing] of [[down.url, dead.address], [server.url, dns.address]] as const) {
      const org = await Http.owner(url)
      await put("/v1/sso/connection", { token: org.token, body: oidc(newDomain()) }, url)
      const record = (await Http.request(url, "POST", "/v1/sso/request-domain-verification", { token: org.token })).body.verification
      if (url === server.url) dns.failWith("SERVFAIL")
      try {
        const failed = await Http.request(url, "POST", "/v1/sso/verify-domain", { token: org.token })
        expect(failed.status).toBe(502)
        expect(failed.body.error).toBe("dns_lookup_failed")
        expect(failed.body.message).toContain(failing)
        expect(failed.body.message).toContain(record.recordName)
      } finally {
        dns.failWith(undefined)
      }
    }
    const org = await Http.owner(fallback.url)
    await put("/v1/sso/connection", { token: org.token, body: oidc(newDomain()) }, fallback.url)
    const record = (await Http.request(fallback.url, "POST", "/v1/sso/request-domain-verification", { token: org.token })).body.verification
    dns.setTxt(record.recordName, [record.recordValue])
    expect((await Http.request(fallback.url, "POST", "/v1/sso/verify-domain", { token: org.token })).status).toBe(200)
  })

  it("answers 502 naming the timeout when the DNS server never answers", async () => {
    const silent = await FakeDns.start()
    silent.failWith("silent")
    const waiting = await TestServer.start({ defaultPlan: "enterprise", dnsServers: silent.address, dnsTimeout: "200 millis" })
    try {
      const org = await Http.owner(waiting.url)
      await put("/v1/sso/connection", { token: org.token, body: oidc(newDomain()) }, waiting.url)
      const record = (await Http.request(waiting.url, "POST", "/v1/sso/request-domain-verification", { token: org.token })).body.verification
      const failed = await Http.request(waiting.url, "POST", "/v1/sso/verify-domain", { token: org.token })
      expect(failed.status).toBe(502)
      expect(failed.body).toEqual({
        error: "dns_lookup_failed",
        message: `No DNS server answered the TXT lookup of ${record.recordName}: ${silent.address} did not answer within 200ms.`
      })
      expect(silent.queries).toEqual([record.recordName])
    } finally {
      await waiting.close()
      await silent.stop()
    }
  })

  it("refuses DNS server settings that are not IP addresses with ports at start-up", async () => {
    for (const dnsServers of ["dns.example.com", "127.0.0.1:0", "127.0.0.1:99999", " , "]) {
      await expect(TestServer.start({ dnsServers }), dnsServers).rejects.toThrow(/ORGPLANE_DNS_SERVERS/)
    }
  })

  it("answers 400 invalid_request with paths for bad bodies", async () => {
    const org = await Http.owner(server.url)
    const cases: ReadonlyArray<unknown> = [
      {},
      { protocol: "oidc", domain: "not a domain", oidc: { issuer: "https://x.example", clientId: "c", clientSecret: "s" } },
      { protocol: "oidc", domain: "example.com", oidc: { issuer: "http://insecure.example", clientId: "c", clientSecret: "s" } },
      { protocol: "oidc", domain: "example.com", oidc: { issuer: "https://x.example", clientId: "", clientSecret: "s" } },
      { protocol: "oidc", domain: "example.com" },
      { protocol: "saml", domain: "example.com", saml: { entityId: "e", ssoUrl: "https://x.example", certificate: "nope" } },
      { protocol: "ldap", domain: "example.com" },
      { ...oidc("example.com"), extra: true }
    ]
    for (const body of cases) {
      const response = await put("/v1/sso/connection", { token: org.token, body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(response.body.error).toBe("invalid_request")
      expect(response.body.details.length).toBeGreaterThan(0)
    }
    const domainPath = await put("/v1/sso/connection", { token: org.token, body: oidc("-bad-.example") })
    expect(domainPath.body.details.some((detail: { path: ReadonlyArray<string> }) => detail.path.includes("domain"))).toBe(true)
    expect((await get("/v1/sso/connection", { token: org.token })).status).toBe(404)
  })
})
