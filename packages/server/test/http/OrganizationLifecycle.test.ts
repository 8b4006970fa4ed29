/**
 * An organization's life through HTTP (docs/lifecycle.md): read and changed by its members, deleted by an owner (its
 * name confirmed, a recent sign-in) or the instance's operator, stopping at once (sessions fall back, API keys, SCIM
 * and worker tokens and SSO routes stop answering, any request for it is 404), listed for its owners and the
 * operator, restored within the grace period and not after; unclaimed provisional workspaces expire.
 * The purge itself is OrganizationPurge.test.ts.
 */
import * as FakeAuditReceiver from "../support/AuditReceiver.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as IdpSaml from "../../../../packages/testkit/src/IdpSaml.js"
import * as TestServer from "../support/HttpServer.js"
import * as Wait from "../../../../packages/testkit/src/Wait.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: TestServer.RunningServer
let receiver: FakeAuditReceiver.FakeAuditReceiver
let idp: IdpSaml.IdpSaml
beforeAll(async () => {
  receiver = await FakeAuditReceiver.start()
  idp = await IdpSaml.start()
  // The purge's loop is left to its hour: these tests read what deletion and restoration do, not the purge. Audit
  // streams reach the receiver on loopback, and are looked at often.
  server = await TestServer.start({
    clock,
    defaultPlan: "enterprise",
    outboundAllowPrivate: true,
    auditStreamPollInterval: "200 millis",
    auditStreamSettle: "200 millis"
  })
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
  await idp?.close()
})

const { del, get, patch, post } = Http.verbs(() => server.url)
const ok = Http.expectStatus
const DAY = 24 * 60 * 60 * 1000

/** A staffed organization and an API key of its owner. */
const organization = async (name = "Acme") => {
  const org = await Http.staffed(server.url, name)
  const key = ok<any>("an API key", await post("/v1/api-keys", { token: org.owner.token, body: { name: "CI", scopes: ["teams.read", "organizations.read"] } }), 201).key
  return { ...org, key: key as string }
}

describe("reading and changing the organization", () => {
  it("any member reads it; owners and admins change its name, logo and metadata, with before and after in the log", async () => {
    const org = await organization("Readable")
    const read = ok<any>("reading", await get("/v1/organization", { token: org.member.token }), 200).organization
    expect(read).toMatchObject({
      id: org.organizationId,
      name: "Readable",
      plan: "enterprise",
      provisional: false,
      logoUrl: null,
      metadata: {},
      memberCount: 3
    })
    expect(Object.keys(read).sort()).toEqual(["createdAt", "id", "logoUrl", "memberCount", "metadata", "name", "plan", "provisional", "updatedAt"])
    expect(ok<any>("reading with a key", await get("/v1/organization", { headers: { "x-api-key": org.key } }), 200).organization.id).toBe(org.organizationId)

    const denied = await patch("/v1/organization", { token: org.member.token, body: { name: "Mine now" } })
    expect([denied.status, denied.body.reason]).toEqual([403, "insufficient_role"])

    const changed = ok<any>("changing", await patch("/v1/organization", {
      token: org.admin.token,
      body: { name: "  Renamed  ", logoUrl: "https://cdn.example/logo.png", metadata: { costCenter: "R&D-42", "billing.account": "acct_1" } }
    }), 200).organization
    expect(changed).toMatchObject({ name: "Renamed", logoUrl: "https://cdn.example/logo.png", metadata: { costCenter: "R&D-42", "billing.account": "acct_1" } })
    expect(ok<any>("reading again", await get("/v1/organization", { token: org.member.token }), 200).organization).toEqual(changed)
    // The name is the organization's everywhere.
    expect(ok<any>("me", await get("/v1/me", { token: org.member.token }), 200).organization.name).toBe("Renamed")

    // Metadata is replaced whole; the logo may be a path on this server, or removed.
    const again = ok<any>("changing again", await patch("/v1/organization", { token: org.owner.token, body: { metadata: { team: "platform" }, logoUrl: null } }), 200)
    expect(again.organization).toMatchObject({ metadata: { team: "platform" }, logoUrl: null, name: "Renamed" })
    ok("a logo path", await patch("/v1/organization", { token: org.owner.token, body: { logoUrl: "/logos/acme.png" } }), 200)

    const events = ok<any>("the log", await get("/v1/audit/events?action=organization.update", { token: org.owner.token }), 200).items
    expect(events.map((event: any) => event.outcome)).toEqual(["succeeded", "succeeded", "succeeded", "denied"])
    const first = events[2]
    expect(first.changes.changedFields.sort()).toEqual(["logoUrl", "metadata", "name"])
    expect(first.changes.before).toEqual({ name: "Readable", logoUrl: null, metadata: {} })
    expect(first.changes.after).toEqual({ name: "Renamed", logoUrl: "https://cdn.example/logo.png", metadata: { costCenter: "R&D-42", "billing.account": "acct_1" } })
    expect(first.targets).toEqual([{ type: "organization", id: org.organizationId }])
  })

  it("refuses what the rules do not take, as a 400 naming the member", async () => {
    const org = await organization("Strict")
    const refused = async (body: unknown, path: ReadonlyArray<string | number>) => {
      const response = await patch("/v1/organization", { token: org.owner.token, body })
      expect([response.status, response.body.error], JSON.stringify(body)).toEqual([400, "invalid_request"])
      expect(response.body.details.map((detail: any) => detail.path), JSON.stringify(body)).toContainEqual(path)
    }
    await refused({}, [])
    await refused({ name: "x" }, ["name"])
    await refused({ logoUrl: "javascript:alert(1)" }, ["logoUrl"])
    await refused({ logoUrl: "//evil.example/logo.png" }, ["logoUrl"])
    await refused({ logoUrl: "http://cdn.example/logo.png" }, ["logoUrl"])
    await refused({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, "v"])) }, ["metadata"])
    await refused({ metadata: { "not a key": "v" } }, ["metadata", "not a key"])
    await refused({ metadata: { long: "x".repeat(501) } }, ["metadata", "long"])
    await refused({ metadata: { nested: { a: 1 } } }, ["metadata", "nested"])
    await refused({ slug: "acme" }, ["slug"])
    expect(ok<any>("unchanged", await get("/v1/organization", { token: org.owner.token }), 200).organization).toMatchObject({ name: "Strict", metadata: {} })
  })
})

describe("deleting an organization", () => {
  it("takes an owner, its name, and a recent sign-in", async () => {
    const org = await organization("Careful")
    const byAdmin = await del("/v1/organization", { token: org.admin.token, body: { confirmName: "Careful" } })
    expect([byAdmin.status, byAdmin.body.reason]).toEqual([403, "insufficient_role"])
    const misnamed = await del("/v1/organization", { token: org.owner.token, body: { confirmName: "careful" } })
    expect([misnamed.status, misnamed.body.error, misnamed.body.details[0].path]).toEqual([400, "invalid_request", ["confirmName"]])
    const unconfirmed = await del("/v1/organization", { token: org.owner.token, body: {} })
    expect(unconfirmed.status).toBe(400)
    // A key made without the scope may not, whatever its maker's role.
    const key = ok<any>("a full key", await post("/v1/api-keys", { token: org.owner.token, body: { name: "all" } }), 201).key
    const byKey = await del("/v1/organization", { headers: { "x-api-key": key }, body: { confirmName: "Careful" } })
    expect([byKey.status, byKey.body.reason]).toEqual([403, "insufficient_scope"])
    // An old session must sign in again.
    const was = clock.offsetMillis
    clock.advance("3 hours")
    try {
      const stale = await del("/v1/organization", { token: org.owner.token, body: { confirmName: "Careful" } })
      expect([stale.status, stale.body.reason]).toEqual([403, "recent_authentication_required"])
    } finally {
      clock.offsetMillis = was
    }
    expect(ok<any>("still there", await get("/v1/organization", { token: org.member.token }), 200).organization.name).toBe("Careful")
  })

  it("stops it serving at once: sessions fall back, keys and tokens stop, requests for it are 404; its owners list and restore it", async () => {
    const org = await organization("Doomed")
    const other = ok<any>("a second organization of the owner's", await post("/v1/organizations", { token: org.owner.token, body: { name: "Kept" } }), 201)
    ok("back to the first", await post("/v1/me/active-organization", { token: org.owner.token, body: { organizationId: org.organizationId } }), 200)
    const scim = await Http.scimDirectory(server.url, org.owner.token)
    const worker = ok<any>("a worker", await post("/v1/workers", { token: org.owner.token, body: { name: "Laptop", destination: "local" } }), 201)
    ok("a heartbeat", await post("/v1/worker-runtime/heartbeat", { token: worker.token, body: { openSessions: 0 } }), 200)
    ok("the directory", await get(`${scim.base}/Users`, { token: scim.token }), 200)
    const team = ok<any>("a team", await post("/v1/teams", { token: org.owner.token, body: { name: "Core" } }), 201).team

    const deleted = ok<any>("deleting", await del("/v1/organization", { token: org.owner.token, body: { confirmName: "Doomed" } }), 200).deletion
    expect(deleted.organization).toMatchObject({ id: org.organizationId, name: "Doomed" })
    expect(new Date(deleted.purgeAfter).getTime() - new Date(deleted.deletedAt).getTime()).toBe(7 * DAY)
    expect(deleted.rows).toMatchObject({ memberships: 3, teams: 1, api_keys: 1, scim_connections: 1, scim_tokens: 1, workers: 1 })
    expect(deleted.totalRows).toBe(Object.values<number>(deleted.rows).reduce((a, b) => a + b, 0))

    // The owner's session acts in their other organization; the others', in none.
    expect(ok<any>("the owner", await get("/v1/me", { token: org.owner.token }), 200).organization.id).toBe(other.organization.id)
    expect(ok<any>("the owner's organization", await get("/v1/organization", { token: org.owner.token }), 200).organization.name).toBe("Kept")
    const member = await get("/v1/organization", { token: org.member.token })
    expect([member.status, member.body.error]).toEqual([404, "organization_not_found"])
    expect(ok<any>("the member", await get("/v1/me", { token: org.member.token }), 200).organization).toBe(null)
    const switched = await post("/v1/me/active-organization", { token: org.member.token, body: { organizationId: org.organizationId } })
    expect([switched.status, switched.body.error]).toEqual([404, "organization_not_found"])
    expect((await get(`/v1/teams/${team.id}`, { token: org.admin.token })).status).toBe(404)
    // Its credentials stop.
    expect((await get("/v1/teams", { headers: { "x-api-key": org.key } })).status).toBe(401)
    expect((await get(`${scim.base}/Users`, { token: scim.token })).status).toBe(401)
    expect((await post("/v1/worker-runtime/heartbeat", { token: worker.token, body: { openSessions: 0 } })).status).toBe(401)
    // It is not among its members' organizations; its owner finds it among those they may restore.
    const mine = ok<any>("the owner's organizations", await get("/v1/me/organizations", { token: org.owner.token }), 200)
    expect(mine.items.map((item: any) => item.organization.id)).toEqual([other.organization.id])
    const restorable = ok<any>("restorable", await get("/v1/me/organizations?deleted=true", { token: org.owner.token }), 200).items
    expect(restorable).toEqual([expect.objectContaining({ organization: expect.objectContaining({ id: org.organizationId }), deletedAt: deleted.deletedAt, purgeAfter: deleted.purgeAfter })])
    expect(ok<any>("the admin's", await get("/v1/me/organizations?deleted=true", { token: org.admin.token }), 200).items).toEqual([])

    // Only an owner restores it: an admin is refused, a stranger finds nothing.
    const byAdmin = await post(`/v1/organizations/${org.organizationId}/restore`, { token: org.admin.token })
    expect([byAdmin.status, byAdmin.body.reason]).toEqual([403, "insufficient_role"])
    const stranger = await Http.signUp(server.url, "Stranger")
    const byStranger = await post(`/v1/organizations/${org.organizationId}/restore`, { token: stranger.token })
    expect([byStranger.status, byStranger.body.error]).toEqual([404, "organization_not_found"])
    const restored = ok<any>("restoring", await post(`/v1/organizations/${org.organizationId}/restore`, { token: org.owner.token }), 200)
    expect(restored.organization).toMatchObject({ id: org.organizationId, name: "Doomed" })
    const twice = await post(`/v1/organizations/${org.organizationId}/restore`, { token: org.owner.token })
    expect([twice.status, twice.body.error]).toEqual([409, "organization_not_deleted"])

    // It serves again as it was, in the restoring session first.
    expect(ok<any>("restored", await get("/v1/organization", { token: org.owner.token }), 200).organization).toMatchObject({ id: org.organizationId, memberCount: 3 })
    expect(ok<any>("the member again", await get("/v1/organization", { token: org.member.token }), 200).organization.id).toBe(org.organizationId)
    ok("the key again", await get("/v1/teams", { headers: { "x-api-key": org.key } }), 200)
    ok("the directory again", await get(`${scim.base}/Users`, { token: scim.token }), 200)
    ok("the worker again", await post("/v1/worker-runtime/heartbeat", { token: worker.token, body: { openSessions: 0 } }), 200)
    const log = ok<any>("its log", await get("/v1/audit/events?action=organization.*", { token: org.owner.token }), 200).items
    expect(log.map((event: any) => [event.action, event.outcome])).toEqual([
      ["organization.restore", "succeeded"],
      ["organization.restore", "denied"],
      ["organization.delete", "succeeded"],
      ["organization.create", "succeeded"]
    ])
    expect(log[2].reason).toMatch(/^restorable until .*; the purge will remove \d+ rows \(/)
  })

  it("stops its SSO routes and its audit streams until it is restored", async () => {
    const org = await organization("Streaming")
    const other = await organization("Canary")
    const connection = ok<any>("a SAML connection", await post("/v1/sso/connections", {
      token: org.owner.token,
      body: { kind: "saml", name: "IdP", saml: { source: "manual", entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: idp.certificates() } }
    }), 201).connection
    ok("its SP metadata", await get(`/v1/sso/saml/${connection.id}/metadata`), 200)
    const secrets: Array<string> = []
    for (const who of [org, other]) {
      secrets.push(ok<any>("a stream", await post("/v1/audit/streams", { token: who.owner.token, body: { url: `${receiver.url}/${who.organizationId}` } }), 201).secret)
      receiver.setSecrets(...secrets)
    }
    const delivered = (organizationId: string, action: string) =>
      receiver.deliveries.some((delivery) =>
        delivery.status === 200 && delivery.events.some((event) => event.organizationId === organizationId && event.action === action))
    await Wait.until(() => delivered(org.organizationId, "audit.stream.create"), "the stream's first delivery")

    ok("deleting", await del("/v1/organization", { token: org.owner.token, body: { confirmName: "Streaming" } }), 200)
    const metadata = await get(`/v1/sso/saml/${connection.id}/metadata`)
    expect([metadata.status, metadata.body.error]).toEqual([404, "sso_connection_not_found"])
    const acs = await Http.request(server.url, "POST", `/v1/sso/saml/${connection.id}/acs`, {
      rawBody: new URLSearchParams({ SAMLResponse: Buffer.from("<x/>").toString("base64") }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect([acs.status, acs.body.error]).toEqual([404, "sso_connection_not_found"])
    // Another organization's event, made after the deletion, is delivered: the loop ran past the deletion's event,
    // and did not send it.
    ok("the canary's change", await post("/v1/teams", { token: other.owner.token, body: { name: "After" } }), 201)
    await Wait.until(() => delivered(other.organizationId, "team.create"), "the other organization's delivery")
    expect(delivered(org.organizationId, "organization.delete")).toBe(false)

    // Restored, it serves again: its SSO routes answer, and its stream takes up where it stopped.
    ok("restoring", await post(`/v1/organizations/${org.organizationId}/restore`, { token: org.owner.token }), 200)
    ok("its SP metadata again", await get(`/v1/sso/saml/${connection.id}/metadata`), 200)
    await Wait.until(() => delivered(org.organizationId, "organization.restore"), "the restored organization's delivery")
    expect(delivered(org.organizationId, "organization.delete")).toBe(true)
  })

  it("cannot be restored once its grace period is over", async () => {
    const org = await organization("Late")
    ok("deleting", await del("/v1/organization", { token: org.owner.token, body: { confirmName: "Late" } }), 200)
    const was = clock.offsetMillis
    clock.advance(7 * DAY + 60_000)
    try {
      // A week later the owner signs in again (their session went idle).
      const token = ok<any>("signing in", await post("/v1/auth/sign-in", { body: { email: org.owner.email, password: org.owner.password } }), 200).session.token
      expect(ok<any>("no longer restorable", await get("/v1/me/organizations?deleted=true", { token }), 200).items).toEqual([])
      const late = await post(`/v1/organizations/${org.organizationId}/restore`, { token })
      expect([late.status, late.body.error]).toEqual([404, "organization_not_found"])
    } finally {
      clock.offsetMillis = was
    }
  })
})

/** The instance's operator, made once: an instance has one. */
let operating: ReturnType<typeof Http.operator> | undefined
const theOperator = () => (operating ??= Http.operator(server.url, "Operations"))

describe("the instance's operator", () => {
  it("lists every organization, deletes and restores any, and cannot delete its own", async () => {
    const operator = await theOperator()
    const org = await organization("Tenant One")
    const listed = ok<any>("listing", await get("/v1/admin/organizations?q=tenant%20one", { token: operator.token }), 200).items
    expect(listed).toEqual([expect.objectContaining({ id: org.organizationId, name: "Tenant One", memberCount: 3, deletedAt: null, purgeAfter: null })])

    const denied = await get("/v1/admin/organizations", { token: org.owner.token })
    expect([denied.status, denied.body.reason]).toEqual([403, "operator_only"])

    const own = await del(`/v1/admin/organizations/${operator.organization.id}`, { token: operator.token })
    expect([own.status, own.body.error]).toEqual([409, "organization_operates_instance"])
    const ownAsOwner = await del("/v1/organization", { token: operator.token, body: { confirmName: "Operations" } })
    expect([ownAsOwner.status, ownAsOwner.body.error]).toEqual([409, "organization_operates_instance"])

    const counted = async () => ok<any>("the metrics", await get("/v1/admin/metrics", { token: operator.token }), 200).summary.totalOrganizations
    const before = await counted()
    const deleted = ok<any>("deleting", await del(`/v1/admin/organizations/${org.organizationId}`, { token: operator.token }), 200).deletion
    expect(deleted.rows).toMatchObject({ memberships: 3 })
    // A deleted organization is not among the instance's organizations in its metrics.
    expect(await counted()).toBe(before - 1)
    expect((await get("/v1/organization", { token: org.owner.token })).status).toBe(404)
    const gone = await del(`/v1/admin/organizations/${org.organizationId}`, { token: operator.token })
    expect([gone.status, gone.body.error]).toEqual([404, "organization_not_found"])
    const plan = await patch(`/v1/admin/organizations/${org.organizationId}/plan`, { token: operator.token, body: { plan: "team" } })
    expect([plan.status, plan.body.error]).toEqual([404, "organization_not_found"])

    const onlyDeleted = ok<any>("deleted ones", await get("/v1/admin/organizations?deleted=true", { token: operator.token }), 200).items
    expect(onlyDeleted.find((item: any) => item.id === org.organizationId)).toMatchObject({ deletedAt: deleted.deletedAt, purgeAfter: deleted.purgeAfter })
    expect(onlyDeleted.every((item: any) => item.deletedAt !== null)).toBe(true)
    const live = ok<any>("live ones", await get("/v1/admin/organizations?deleted=false&limit=100", { token: operator.token }), 200).items
    expect(live.some((item: any) => item.id === org.organizationId)).toBe(false)

    ok("restoring", await post(`/v1/admin/organizations/${org.organizationId}/restore`, { token: operator.token }), 200)
    expect(ok<any>("back", await get("/v1/organization", { token: org.owner.token }), 200).organization.id).toBe(org.organizationId)
    const notDeleted = await post(`/v1/admin/organizations/${org.organizationId}/restore`, { token: operator.token })
    expect([notDeleted.status, notDeleted.body.error]).toEqual([409, "organization_not_deleted"])

    // The operator's log holds what it did.
    const log = ok<any>("the operator's log", await get(`/v1/audit/events?targetId=${org.organizationId}`, { token: operator.token }), 200).items
    expect(log.map((event: any) => event.action)).toEqual(["organization.restore", "organization.delete"])
  })

  it("restores what it deleted itself: the organization's own owners do not, nor find it among those they may restore", async () => {
    const operator = await theOperator()
    const org = await organization("Suspended Tenant")
    ok("deleting", await del(`/v1/admin/organizations/${org.organizationId}`, { token: operator.token }), 200)
    const restorable = ok<any>("what the owner may restore", await get("/v1/me/organizations?deleted=true", { token: org.owner.token }), 200).items
    expect(restorable.some((item: any) => item.organization.id === org.organizationId)).toBe(false)
    const byOwner = await post(`/v1/organizations/${org.organizationId}/restore`, { token: org.owner.token })
    expect([byOwner.status, byOwner.body.reason], byOwner.text).toEqual([403, "operator_only"])
    expect((await get("/v1/organization", { token: org.owner.token })).status).toBe(404)
    // The operator restores it; deleted by its owner again, its owner restores it as before.
    ok("restoring", await post(`/v1/admin/organizations/${org.organizationId}/restore`, { token: operator.token }), 200)
    ok("the owner's deletion", await del("/v1/organization", { token: org.owner.token, body: { confirmName: "Suspended Tenant" } }), 200)
    ok("the owner's restore", await post(`/v1/organizations/${org.organizationId}/restore`, { token: org.owner.token }), 200)
  })

  it("pages the list with keyset cursors bound to its filters", async () => {
    const operator = await theOperator()
    for (const n of [1, 2, 3]) await Http.owner(server.url, `Paged ${n}`)
    const first = ok<any>("a page", await get("/v1/admin/organizations?q=paged&limit=2", { token: operator.token }), 200)
    expect(first.items.map((item: any) => item.name)).toEqual(["Paged 1", "Paged 2"])
    const second = ok<any>("the next", await get(`/v1/admin/organizations?q=paged&limit=2&cursor=${first.nextCursor}`, { token: operator.token }), 200)
    expect([second.items.map((item: any) => item.name), second.nextCursor]).toEqual([["Paged 3"], null])
    const foreign = await get(`/v1/admin/organizations?q=other&limit=2&cursor=${first.nextCursor}`, { token: operator.token })
    expect(foreign.status).toBe(400)
  })
})
