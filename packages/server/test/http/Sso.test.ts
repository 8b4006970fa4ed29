import { openApiDocument, SsoApi } from "@orgplane/schema"
import * as FakeDns from "../../../../packages/testkit/src/FakeDns.js"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
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

const { post } = Http.verbs(() => server.url)
const { apiKeys, audit, sso, teams } = calls(() => server.url)

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
-----END CERTIFICATE-----`
const oidc = (domains: ReadonlyArray<string>, name = "Okta") => ({
  kind: "oidc" as const,
  name,
  domains,
  oidc: { issuer: "https://login.example.com", clientId: "orgplane", clientSecret: "s3cret-value" }
})
let domains = 0
const newDomain = () => `corp${++domains}-${Math.random().toString(36).slice(2, 8)}.example`

const document = openApiDocument()
const methods = ["get", "put", "post", "patch", "delete"] as const
/** The value of the first documented example of a parameter or a media type (`examples`, which the spec's types do not name). */
const firstExample = (documented: object | undefined): unknown => {
  const examples: unknown = documented === undefined ? undefined : Reflect.get(documented, "examples")
  if (typeof examples !== "object" || examples === null) return undefined
  const first: unknown = Object.values(examples)[0]
  return typeof first === "object" && first !== null ? Reflect.get(first, "value") : undefined
}
/**
 * Every operation of the `sso` group (the management routes), read from the API itself so a new one is covered
 * without touching this list: its path with the documented examples of its parameters, and its first request body
 * example (the plan is checked after the request decodes, so the request must be valid).
 */
const routes: ReadonlyArray<readonly [string, string, unknown?]> = Object.values(SsoApi.endpoints).map((endpoint) => {
  const method = methods.find((name) => name === endpoint.method.toLowerCase())
  const operation = method === undefined ? undefined : document.paths[endpoint.path.replace(/:(\w+)/g, "{$1}")]?.[method]
  if (operation === undefined) throw new Error(`${endpoint.method} ${endpoint.path} is not in the OpenAPI document`)
  const parameters = operation.parameters ?? []
  const example = (name: string, where: string) => String(firstExample(parameters.find((p) => p.name === name && p.in === where)))
  const path = endpoint.path.replace(/:(\w+)/g, (_, name: string) => example(name, "path"))
  const query = parameters.filter((p) => p.in === "query").map((p) => `${p.name}=${example(p.name, "query")}`)
  const body = firstExample(operation.requestBody?.content["application/json"])
  return [endpoint.method, query.length === 0 ? path : `${path}?${query.join("&")}`, body] as const
})

describe("SSO", () => {
  it("answers 402 enterprise_plan_required with feature sso on every route without the enterprise plan", async () => {
    const org = await Http.staffed(free.url)
    expect(routes.map(([method, path]) => `${method} ${path.replace(/ssc_\w+/, "{id}")}`)).toEqual(expect.arrayContaining([
      "POST /v1/sso/connections/{id}/tests",
      "POST /v1/sso/connections/{id}/refresh-metadata",
      "GET /v1/sso/policy",
      "PUT /v1/sso/policy"
    ]))
    for (const [method, path, body] of routes) {
      for (const token of [org.owner.token, org.member.token]) {
        const response = await Http.request(free.url, method, path, { token, ...(body === undefined ? {} : { body }) })
        expect(response.status, `${method} ${path}`).toBe(402)
        expect(response.body).toMatchObject({ error: "enterprise_plan_required", feature: "sso" })
      }
    }
  })

  it("lets owners and admins create, list, read, change and delete connections; members get 403; the secret is never answered", async () => {
    const org = await Http.staffed(server.url)
    const domain = newDomain()
    const created = await sso.createConnection({ token: org.admin.token, payload: oidc([`  ${domain.toUpperCase()} `]) })
    expect(created.status).toBe(201)
    const connection = ok(created, 201).connection
    expect(connection).toMatchObject({
      organizationId: org.organizationId,
      kind: "oidc",
      name: "Okta",
      state: "draft",
      domains: [{ domain, verified: false }],
      jit: { enabled: true, defaultRole: "member", defaultTeamIds: [] },
      mapping: { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: "groups", groupRules: [] },
      oidc: {
        issuer: "https://login.example.com",
        endpoints: null,
        clientId: "orgplane",
        clientSecretSet: true,
        scopes: ["openid", "email", "profile"],
        tokenEndpointAuthMethod: "client_secret_basic"
      },
      saml: null,
      sp: { redirectUrl: `${server.url}/v1/sso/oidc/callback`, entityId: null, acsUrl: null, metadataUrl: null },
      configRevision: 1,
      lastTest: null
    })
    expect(connection.id).toMatch(/^ssc_[0-9a-z]{26}$/)
    expect(created.text).not.toContain("s3cret-value")
    const path = { connectionId: connection.id }
    const read = await sso.getConnection({ token: org.owner.token, path })
    expect(read.body).toEqual(created.body)
    expect(ok(await sso.listConnections({ token: org.owner.token }), 200).connections).toEqual([connection])
    expect(ok(await sso.listDomains({ token: org.owner.token }), 200).domains).toMatchObject([{ domain, verified: false, verifiedAt: null }])

    const saml = await sso.createConnection({
      token: org.owner.token,
      payload: { kind: "saml", name: "ADFS", domains: [domain], saml: { source: "manual", entityId: "urn:idp", ssoUrl: "https://idp.example.com/sso", certificates: [CERTIFICATE] } }
    })
    expect(saml.status).toBe(201)
    const samlConnection = ok(saml, 201).connection
    expect(samlConnection).toMatchObject({
      kind: "saml",
      oidc: null,
      saml: {
        source: "manual",
        entityId: "urn:idp",
        certificates: [{ pem: CERTIFICATE, subject: "CN=idp.test.example", notAfter: "2036-11-20T16:08:55.000Z" }],
        allowIdpInitiated: false,
        relayStateAllowList: []
      },
      sp: { redirectUrl: null }
    })
    expect(samlConnection.sp.acsUrl).toBe(`${server.url}/v1/sso/saml/${samlConnection.id}/acs`)

    // A name changes nothing to test; a settings change bumps the revision.
    const renamed = await sso.updateConnection({ token: org.admin.token, path, payload: { name: "Okta (prod)" } })
    expect(ok(renamed, 200).connection).toMatchObject({ name: "Okta (prod)", configRevision: 1 })
    const remapped = await sso.updateConnection({ token: org.admin.token, path, payload: { mapping: { email: "upn" } } })
    expect(ok(remapped, 200).connection).toMatchObject({ configRevision: 2, mapping: { email: "upn", name: "name" } })
    const wrongKind = await sso.updateConnection({
      token: org.admin.token,
      path,
      payload: { saml: { source: "metadataUrl", url: "https://idp.example.com/metadata" } }
    })
    expect(wrongKind.status).toBe(400)
    expect(invalid(wrongKind).details[0]?.path).toEqual(["saml"])

    for (const [method, route, body] of routes) {
      const response = await Http.request(server.url, method, route, { token: org.member.token, ...(body === undefined ? {} : { body }) })
      expect(response.status, `${method} ${route}`).toBe(403)
      expect(response.body).toMatchObject({ reason: "insufficient_role" })
    }

    expect((await sso.deleteConnection({ token: org.admin.token, path })).status).toBe(204)
    const gone = await sso.getConnection({ token: org.owner.token, path })
    expect([gone.status, gone.body]).toMatchObject([404, { error: "sso_connection_not_found" }])
    expect((await sso.deleteConnection({ token: org.admin.token, path })).status).toBe(404)
  })

  it("refuses a certificate that does not parse and teams of another organization with 400, and saves nothing", async () => {
    const org = await Http.owner(server.url)
    const other = await Http.owner(server.url, "Other")
    const team = ok(await teams.create({ token: other.token, payload: { name: "Theirs" } }), 201).team
    const bad = await sso.createConnection({
      token: org.token,
      payload: {
        kind: "saml",
        name: "Broken",
        saml: { source: "manual", entityId: "urn:idp", ssoUrl: "https://idp.example.com/sso", certificates: [CERTIFICATE, "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0FGRUJBQkU=\n-----END CERTIFICATE-----"] }
      }
    })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details).toEqual([{ path: ["saml", "certificates", 1], message: "Certificate 2 does not parse as an X.509 certificate. (certificate_invalid)" }])
    const foreign = await sso.createConnection({ token: org.token, payload: { ...oidc([newDomain()]), jit: { defaultTeamIds: [team.id] } } })
    expect(foreign.status).toBe(400)
    expect(invalid(foreign).details[0]?.path).toEqual(["jit", "defaultTeamIds", 0])
    expect(ok(await sso.listConnections({ token: org.token }), 200).connections).toEqual([])
    expect(ok(await sso.listDomains({ token: org.token }), 200).domains).toEqual([])
  })

  it("refuses activation without a successful test of the current revision, naming the way", async () => {
    const org = await Http.owner(server.url)
    const created = ok(await sso.createConnection({ token: org.token, payload: oidc([newDomain()]) }), 201).connection
    const path = { connectionId: created.id }
    const refused = await sso.activateConnection({ token: org.token, path })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: "sso_connection_untested", message: expect.stringContaining(`/v1/sso/connections/${created.id}/tests`) })
    // Deactivating a connection that is not active answers it as is.
    const deactivated = await sso.deactivateConnection({ token: org.token, path })
    expect(ok(deactivated, 200).connection.state).toBe("draft")
  })

  it("answers 400 on `domain` when the body-less domain operations cannot tell which domain, or verify-domain's names none of the organization's", async () => {
    const org = await Http.owner(server.url)
    for (const path of ["/v1/sso/request-domain-verification", "/v1/sso/verify-domain"]) {
      const response = await post(path, { token: org.token })
      expect([path, response.status, response.body]).toEqual([path, 400, {
        error: "invalid_request",
        details: [{
          path: ["domain"],
          message: "is required: the organization has no unverified domain (name the domain to verify, or request verification of a new one)",
          code: "sso_domain_required"
        }]
      }])
    }
    const [one, two] = [newDomain(), newDomain()]
    await sso.createConnection({ token: org.token, payload: oidc([one, two]) })
    for (const path of ["/v1/sso/request-domain-verification", "/v1/sso/verify-domain"]) {
      const several = await post(path, { token: org.token })
      expect([path, several.status]).toEqual([path, 400])
      expect([path, invalid(several).details]).toEqual([path, [{
        path: ["domain"],
        message: `is required: the organization has several unverified domains (${one}, ${two}): name one`,
        code: "sso_domain_required"
      }]])
    }
    const unknown = newDomain()
    const notOurs = await sso.verifyDomain({ token: org.token, query: { domain: unknown } })
    expect(notOurs.status).toBe(400)
    expect(invalid(notOurs).details).toEqual([{ path: ["domain"], message: `${unknown} is not a domain of this organization.`, code: "sso_domain_not_found" }])
  })

  it("verifies the domain when the TXT record is published, and says what it queried and expected when it is not", async () => {
    const org = await Http.owner(server.url)
    const domain = newDomain()
    const connection = ok(await sso.createConnection({ token: org.token, payload: oidc([domain]) }), 201).connection
    const domainsOf = async () => ok(await sso.getConnection({ token: org.token, path: { connectionId: connection.id } }), 200).connection.domains

    const early = await sso.verifyDomain({ token: org.token })
    expect([early.status, early.body]).toEqual([409, {
      reason: "domain_verification_not_requested",
      message: `No verification of ${domain} was requested: request a record with POST /v1/sso/request-domain-verification first.`
    }])

    const requested = await sso.requestDomainVerification({ token: org.token })
    expect(requested.status).toBe(200)
    const record = ok(requested, 200).verification
    expect(record).toMatchObject({ domain, recordType: "TXT", recordName: `_orgplane-verification.${domain}` })
    expect(record.recordValue).toMatch(/^orgplane-verification=opv_[A-Za-z0-9_-]{43}$/)
    expect(new Date(record.expiresAt).getTime()).toBeGreaterThan(Date.now())
    // Asking again before it expires answers the same record, with or without naming the domain.
    expect(ok(await sso.requestDomainVerification({ token: org.token }), 200).verification).toEqual(record)
    expect(ok(await sso.requestDomainVerification({ token: org.token, query: { domain } }), 200).verification).toEqual(record)

    const absent = await sso.verifyDomain({ token: org.token })
    expect(absent.status).toBe(409)
    expect(absent.body).toEqual({
      reason: "domain_verification_failed",
      message: expect.any(String),
      recordName: record.recordName,
      expectedValue: record.recordValue,
      foundValues: []
    })
    expect(absent.body).toMatchObject({ message: expect.stringContaining(record.recordName) })
    expect(absent.body).toMatchObject({ message: expect.stringContaining(record.recordValue) })

    dns.setTxt(record.recordName, ["v=spf1 -all", "orgplane-verification=opv_wrong"])
    const wrong = await sso.verifyDomain({ token: org.token })
    expect(wrong.status).toBe(409)
    expect(wrong.body).toEqual({
      reason: "domain_verification_failed",
      message: expect.any(String),
      recordName: record.recordName,
      expectedValue: record.recordValue,
      foundValues: ["v=spf1 -all", "orgplane-verification=opv_wrong"]
    })
    expect(await domainsOf()).toEqual([{ domain, verified: false }])

    dns.setTxt(record.recordName, ["v=spf1 -all", record.recordValue])
    const verified = await sso.verifyDomain({ token: org.token })
    expect(verified.status).toBe(200)
    expect(verified.body).toMatchObject({ verified: true, domain })
    expect(dns.queries).toContain(record.recordName)
    expect(await domainsOf()).toEqual([{ domain, verified: true }])
    const again = await sso.verifyDomain({ token: org.token, query: { domain } })
    expect(again.body).toEqual(verified.body)
    // The domain is the subject of both events, though only the query (or nothing) named it.
    const logged = ok(await audit.listEvents({ token: org.token, query: { targetId: domain, action: "sso.domain.*" } }), 200).items
    expect(logged.map((event) => [event.action, event.targets])).toEqual([
      ["sso.domain.verify", [{ type: "domain", id: domain }]],
      ["sso.domain.verify", [{ type: "domain", id: domain }]],
      ["sso.domain.verification.request", [{ type: "domain", id: domain }]],
      ["sso.domain.verification.request", [{ type: "domain", id: domain }]],
      ["sso.domain.verification.request", [{ type: "domain", id: domain }]]
    ])
  })

  it("answers 403 session_required to an API key on verify-domain", async () => {
    const org = await Http.owner(server.url)
    const { key } = ok(await apiKeys.create({ token: org.token, payload: { name: "k", scopes: ["sso.manage"] } }), 201)
    expect((await sso.requestDomainVerification({ apiKey: key, query: { domain: newDomain() } })).status).toBe(200)
    const byKey = await sso.verifyDomain({ apiKey: key })
    expect(byKey.status).toBe(403)
    expect(byKey.body).toMatchObject({ reason: "session_required" })
  })

  it("answers 409 with reason sso_domain_taken when another organization verified the domain first", async () => {
    const first = await Http.owner(server.url)
    const second = await Http.owner(server.url, "Second")
    const domain = newDomain()
    const one = ok(await sso.requestDomainVerification({ token: first.token, query: { domain } }), 200).verification
    const two = ok(await sso.requestDomainVerification({ token: second.token, query: { domain } }), 200).verification
    expect(two.recordValue).not.toBe(one.recordValue)
    dns.setTxt(one.recordName, [one.recordValue, two.recordValue])
    expect((await sso.verifyDomain({ token: first.token })).status).toBe(200)
    const taken = await sso.verifyDomain({ token: second.token })
    expect([taken.status, taken.body]).toEqual([409, { reason: "sso_domain_taken", message: `Another organization has already verified ${domain}.` }])
  })

  it("keeps each organization's connections and domains to itself", async () => {
    const mine = await Http.owner(server.url)
    const theirs = await Http.owner(server.url, "Theirs")
    const domain = newDomain()
    const connection = ok(await sso.createConnection({ token: mine.token, payload: oidc([domain]) }), 201).connection
    const path = { connectionId: connection.id }
    const record = ok(await sso.requestDomainVerification({ token: mine.token }), 200).verification
    dns.setTxt(record.recordName, [record.recordValue])
    expect((await sso.getConnection({ token: theirs.token, path })).status).toBe(404)
    expect((await sso.updateConnection({ token: theirs.token, path, payload: { name: "x" } })).status).toBe(404)
    expect((await sso.activateConnection({ token: theirs.token, path })).status).toBe(404)
    // verify-domain names a domain in its query: one the organization does not have is a bad request there.
    expect((await sso.verifyDomain({ token: theirs.token, query: { domain } })).status).toBe(400)
    expect((await sso.deleteDomain({ token: theirs.token, path: { domain } })).status).toBe(404)
    expect((await sso.deleteConnection({ token: theirs.token, path })).status).toBe(404)
    expect(ok(await sso.listConnections({ token: theirs.token }), 200).connections).toEqual([])
    expect(ok(await sso.getConnection({ token: mine.token, path }), 200).connection).toMatchObject({ name: "Okta", domains: [{ domain, verified: false }] })
  })

  it("answers 502 with reason dns_lookup_failed, not 500, when DNS servers are down or fail; asks the next server", async () => {
    for (const [url, failing] of [[down.url, dead.address], [server.url, dns.address]] as const) {
      const org = await Http.owner(url)
      const on = calls(url).sso
      const record = ok(await on.requestDomainVerification({ token: org.token, query: { domain: newDomain() } }), 200).verification
      if (url === server.url) dns.failWith("SERVFAIL")
      try {
        const failed = await on.verifyDomain({ token: org.token })
        expect(failed.status).toBe(502)
        expect(failed.body).toMatchObject({ reason: "dns_lookup_failed", message: expect.stringContaining(failing) })
        expect(failed.body).toMatchObject({ message: expect.stringContaining(record.recordName) })
      } finally {
        dns.failWith(undefined)
      }
    }
    const org = await Http.owner(fallback.url)
    const secondary = calls(fallback.url).sso
    const record = ok(await secondary.requestDomainVerification({ token: org.token, query: { domain: newDomain() } }), 200).verification
    dns.setTxt(record.recordName, [record.recordValue])
    expect((await secondary.verifyDomain({ token: org.token })).status).toBe(200)
  })

  it("answers 502 naming the timeout when the DNS server never answers", async () => {
    const silent = await FakeDns.start()
    silent.failWith("silent")
    const waiting = await TestServer.start({ defaultPlan: "enterprise", dnsServers: silent.address, dnsTimeout: "200 millis" })
    try {
      const org = await Http.owner(waiting.url)
      const on = calls(waiting.url).sso
      const record = ok(await on.requestDomainVerification({ token: org.token, query: { domain: newDomain() } }), 200).verification
      const failed = await on.verifyDomain({ token: org.token })
      expect(failed.status).toBe(502)
      expect(failed.body).toEqual({
        reason: "dns_lookup_failed",
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
      { kind: "oidc", name: "x", domains: ["not a domain"], oidc: { issuer: "https://x.example", clientId: "c", clientSecret: "s" } },
      { kind: "oidc", name: "x", oidc: { issuer: "ftp://x.example", clientId: "c", clientSecret: "s" } },
      { kind: "oidc", name: "x", oidc: { issuer: "https://x.example", clientId: "", clientSecret: "s" } },
      { kind: "oidc", name: "x" },
      { kind: "saml", name: "x", saml: { source: "manual", entityId: "e", ssoUrl: "https://x.example", certificates: ["nope"] } },
      { kind: "saml", name: "x", saml: { source: "metadataUrl", url: "https://x.example/m", allowIdpInitiated: true } },
      { kind: "ldap", name: "x" },
      { ...oidc(["example.com"]), extra: true }
    ]
    for (const body of cases) {
      const response = await post("/v1/sso/connections", { token: org.token, body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      const refused = invalid(response)
      expect(refused.error).toBe("invalid_request")
      expect(refused.details.length).toBeGreaterThan(0)
    }
    const domainPath = await sso.createConnection({ token: org.token, payload: oidc(["-bad-.example"]) })
    expect(invalid(domainPath).details.some((detail) => detail.path.includes("domains"))).toBe(true)
    expect(ok(await sso.listConnections({ token: org.token }), 200).connections).toEqual([])
  })
})
