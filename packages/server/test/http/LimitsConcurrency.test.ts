/**
 * Per-organization limits that are checked by counting and then inserting ("at most 50 SSO connections", "at most 50
 * SSO domains", "at most 5 audit streams") hold when the additions race, on Postgres across two servers: the test
 * holds the organization's row lock, which every insert waits on (its foreign key), so all the racing requests have
 * counted before any of them inserts unless something serializes them. And the lists show every row an organization
 * holds, on both databases, also one pushed past a limit before the limit held.
 */
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SharedPostgres from "../support/SharedPostgres.js"

const oidc = (name: string, domains: ReadonlyArray<string> = []) => ({
  kind: "oidc",
  name,
  domains,
  oidc: { issuer: "https://login.example.com", clientId: "orgplane", clientSecret: "s3cret-value" }
})
const statuses = (answers: ReadonlyArray<Http.RawResponse>) => answers.map((answer) => answer.status).sort()

describe.skipIf(!TestDatabase.onPostgres)("limits under concurrent additions, two servers (Postgres)", () => {
  let shared: SharedPostgres.Shared
  beforeAll(async () => {
    shared = await SharedPostgres.start(2, { defaultPlan: "enterprise", outboundAllowPrivate: true })
  }, 120_000)
  afterAll(() => shared?.close(), 60_000)

  const server = (i: number) => shared.servers[i % 2]!.url

  /**
   * Fires `requests` at once, alternating between the servers, while the organization's row is locked so that each
   * insert waits; releases it once every request waits for a lock (on the row, or on the limit's own lock).
   */
  const race = async (organizationId: string, requests: ReadonlyArray<(url: string) => Promise<Http.RawResponse>>) => {
    const held = await shared.hold("SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [organizationId])
    const answers = Promise.all(requests.map((send, i) => send(server(i))))
    await held.waiters(requests.length)
    await held.release()
    return answers
  }

  it("ten SSO connections created at once with 49 in place: one more is made, nine are refused, the list shows 50", async () => {
    const owner = await Http.owner(server(0), "Connections")
    for (let i = 0; i < 49; i++) {
      Http.expectStatus("connection", await Http.request(server(i), "POST", "/v1/sso/connections", { token: owner.token, body: oidc(`Existing ${i}`) }), 201)
    }
    const answers = await race(owner.organization.id, Array.from({ length: 10 }, (_, i) => (url: string) =>
      Http.request(url, "POST", "/v1/sso/connections", { token: owner.token, body: oidc(`Racing ${i}`) })))
    expect(statuses(answers)).toEqual([201, ...Array.from({ length: 9 }, () => 400)])
    expect(invalid(answers.find((answer) => answer.status === 400)!).details[0]?.message).toBe("An organization has at most 50 SSO connections.")
    const [stored] = await shared.query<{ n: number }>("SELECT count(*)::int AS n FROM sso_connections WHERE organization_id = $1", [owner.organization.id])
    expect(stored!.n).toBe(50)
    for (const url of shared.servers.map((running) => running.url)) {
      const listed = ok(await calls(url).sso.listConnections({ token: owner.token }), 200).connections
      expect(listed.length).toBe(50)
    }
  }, 120_000)

  it("ten new SSO domains at once with 49 in place: one is added, nine are refused, the list shows 50", async () => {
    const owner = await Http.owner(server(0), "Domains")
    for (let i = 0; i < 49; i++) {
      const path = `/v1/sso/request-domain-verification?domain=existing${i}.example.com`
      Http.expectStatus("domain", await Http.request(server(i), "POST", path, { token: owner.token }), 200)
    }
    const answers = await race(owner.organization.id, Array.from({ length: 10 }, (_, i) => (url: string) =>
      Http.request(url, "POST", `/v1/sso/request-domain-verification?domain=racing${i}.example.com`, { token: owner.token })))
    expect(statuses(answers)).toEqual([200, ...Array.from({ length: 9 }, () => 400)])
    // And through a connection's domains: a connection naming two new domains does not fit either.
    const connection = await race(owner.organization.id, [(url) =>
      Http.request(url, "POST", "/v1/sso/connections", { token: owner.token, body: oidc("Two more", ["one.example.org", "two.example.org"]) })])
    expect(statuses(connection)).toEqual([400])
    const [stored] = await shared.query<{ n: number }>("SELECT count(*)::int AS n FROM sso_domains WHERE organization_id = $1", [owner.organization.id])
    expect(stored!.n).toBe(50)
    for (const url of shared.servers.map((running) => running.url)) {
      const listed = ok(await calls(url).sso.listDomains({ token: owner.token }), 200).domains
      expect(listed.length).toBe(50)
    }
  }, 120_000)

  it("six audit streams created at once with none in place: five are made, one is refused", async () => {
    const owner = await Http.owner(server(0), "Streams")
    const answers = await race(owner.organization.id, Array.from({ length: 6 }, (_, i) => (url: string) =>
      Http.request(url, "POST", "/v1/audit/streams", { token: owner.token, body: { url: `http://127.0.0.1:9/stream-${i}` } })))
    expect(statuses(answers)).toEqual([...Array.from({ length: 5 }, () => 201), 409])
    const [stored] = await shared.query<{ n: number }>("SELECT count(*)::int AS n FROM audit_streams WHERE organization_id = $1", [owner.organization.id])
    expect(stored!.n).toBe(5)
  }, 120_000)
})

describe("the SSO lists show everything an organization holds", () => {
  let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
  beforeAll(async () => {
    server = await TestServer.startSharingDatabase({ defaultPlan: "enterprise" })
  })
  afterAll(() => server?.close())

  it("answers every connection and domain, also past the limit of 50 (an organization raced past it before it held)", async () => {
    const owner = await Http.owner(server.url, "Past the limit")
    Http.expectStatus("connection", await Http.request(server.url, "POST", "/v1/sso/connections", { token: owner.token, body: oidc("First", ["first.example.com"]) }), 201)
    // 55 more of each, as the race above left them before the limit held (no endpoint makes them any more).
    const organizationId = owner.organization.id
    await server.sql((sql) =>
      sql`INSERT INTO sso_domains (organization_id, domain, created_at, updated_at)
          SELECT ${organizationId}, 'extra' || n || '.example.com', now(), now() FROM generate_series(1, 55) n`)
    await server.sql((sql) =>
      sql`INSERT INTO sso_connections (organization_id, id, kind, name, state, jit, mapping, oidc, config_revision, created_at, updated_at)
          SELECT c.organization_id, 'ssc_' || lpad(to_hex(n), 26, '0'), c.kind, c.name || ' ' || n, c.state, c.jit, c.mapping, c.oidc,
                 c.config_revision, c.created_at, c.updated_at
          FROM sso_connections c, generate_series(1, 55) n WHERE c.organization_id = ${organizationId}`)
    const { sso } = calls(server.url)
    const connections = ok(await sso.listConnections({ token: owner.token }), 200).connections
    expect(connections.length).toBe(56)
    const domains = ok(await sso.listDomains({ token: owner.token }), 200).domains
    expect(domains.length).toBe(56)
    // Full: no more, whatever the request.
    const refused = await Http.request(server.url, "POST", "/v1/sso/connections", { token: owner.token, body: oidc("One more") })
    expect(refused.status).toBe(400)
  })
})

describe.skipIf(!TestDatabase.onPostgres)("a closed instance's first account, under concurrent sign-ups (Postgres, two servers)", () => {
  let shared: SharedPostgres.Shared
  beforeAll(async () => {
    shared = await SharedPostgres.start(2, { signupEnabled: false })
  }, 120_000)
  afterAll(() => shared?.close(), 60_000)

  it("lets exactly one of several racing sign-ups in (the rest 403 signup_disabled)", async () => {
    // SHARE on users lets the sign-ups count (none yet) but holds their inserts: without a lock taken before the
    // count, every one of them has counted none before any inserts.
    const held = await shared.hold("LOCK TABLE users IN SHARE MODE")
    const answers = Promise.all(Array.from({ length: 6 }, (_, i) =>
      Http.request(shared.servers[i % 2]!.url, "POST", "/v1/auth/sign-up", {
        body: { email: `first.${i}.${Math.random().toString(36).slice(2, 8)}@example.com`, password: "long enough password", name: `First ${i}` }
      })))
    await held.waiters(6)
    await held.release()
    const settled = await answers
    expect(settled.map((answer) => answer.status).sort()).toEqual([201, 403, 403, 403, 403, 403])
    expect(settled.filter((answer) => answer.status === 403).map((answer) => answer.body)).toEqual(Array(5).fill(expect.objectContaining({ reason: "signup_disabled" })))
    const [row] = await shared.query<{ n: number }>("SELECT count(*)::int AS n FROM users")
    expect(row!.n).toBe(1)
  }, 120_000)
})
