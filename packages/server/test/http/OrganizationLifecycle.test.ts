/**
 * An organization's life through HTTP (docs/lifecycle.md): read and changed by its members, deleted by an owner (its
 * name confirmed, a recent sign-in) or the instance's operator, stopping at once (sessions fall back, API keys, SCIM
 * and worker tokens and SSO routes stop answering, any request for it is 404), listed for its owners and the
 * operator, restored within the grace period and not after; unclaimed provisional workspaces expire.
 * The purge itself is OrganizationPurge.test.ts.
 */
import * as FakeAuditReceiver from "../support/AuditReceiver.js"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
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

const { del, patch } = Http.verbs(() => server.url)
const { admin, apiKeys, audit, auditStreams, organizations, scimUsers, sso, ssoSignIn, teams, users, workerRuntime, workers } = calls(() => server.url)
const DAY = 24 * 60 * 60 * 1000

/** A staffed organization and an API key of its owner. */
const organization = async (name = "Acme") => {
  const org = await Http.staffed(server.url, name)
  const key = ok(await apiKeys.create({ token: org.owner.token, payload: { name: "CI", scopes: ["teams.read", "organizations.read"] } }), 201).key
  return { ...org, key }
}

describe("reading and changing the organization", () => {
  it("any member reads it; owners and admins change its name, logo and metadata, with before and after in the log", async () => {
    const org = await organization("Readable")
    const read = ok(await organizations.get({ token: org.member.token }), 200).organization
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
    expect(ok(await organizations.get({ apiKey: org.key }), 200).organization.id).toBe(org.organizationId)

    const denied = await organizations.update({ token: org.member.token, payload: { name: "Mine now" } })
    expect([denied.status, denied.body]).toMatchObject([403, { reason: "insufficient_role" }])

    const changed = ok(await organizations.update({
      token: org.admin.token,
      payload: { name: "  Renamed  ", logoUrl: "https://cdn.example/logo.png", metadata: { costCenter: "R&D-42", "billing.account": "acct_1" } }
    }), 200).organization
    expect(changed).toMatchObject({ name: "Renamed", logoUrl: "https://cdn.example/logo.png", metadata: { costCenter: "R&D-42", "billing.account": "acct_1" } })
    expect(ok(await organizations.get({ token: org.member.token }), 200).organization).toEqual(changed)
    // The name is the organization's everywhere.
    expect(ok(await users.me({ token: org.member.token }), 200).organization?.name).toBe("Renamed")

    // Metadata is replaced whole; the logo may be a path on this server, or removed.
    const again = ok(await organizations.update({ token: org.owner.token, payload: { metadata: { team: "platform" }, logoUrl: null } }), 200)
    expect(again.organization).toMatchObject({ metadata: { team: "platform" }, logoUrl: null, name: "Renamed" })
    ok(await organizations.update({ token: org.owner.token, payload: { logoUrl: "/logos/acme.png" } }), 200)

    const events = ok(await audit.listEvents({ token: org.owner.token, query: { action: "organization.update" } }), 200).items
    expect(events.map((event) => event.outcome)).toEqual(["succeeded", "succeeded", "succeeded", "denied"])
    const first = events[2]
    expect([...(first?.changes?.changedFields ?? [])].sort()).toEqual(["logoUrl", "metadata", "name"])
    expect(first?.changes?.before).toEqual({ name: "Readable", logoUrl: null, metadata: {} })
    expect(first?.changes?.after).toEqual({ name: "Renamed", logoUrl: "https://cdn.example/logo.png", metadata: { costCenter: "R&D-42", "billing.account": "acct_1" } })
    expect(first?.targets).toEqual([{ type: "organization", id: org.organizationId }])
  })

  it("refuses what the rules do not take, as a 400 naming the member", async () => {
    const org = await organization("Strict")
    // Bodies the schema refuses: sent as they are, with Http.request's untyped body.
    const refused = async (body: unknown, path: ReadonlyArray<string | number>) => {
      const response = await patch("/v1/organization", { token: org.owner.token, body })
      expect(response.status, JSON.stringify(body)).toBe(400)
      const answered = invalid(response)
      expect(answered.error, JSON.stringify(body)).toBe("invalid_request")
      expect(answered.details.map((detail) => detail.path), JSON.stringify(body)).toContainEqual(path)
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
    expect(ok(await organizations.get({ token: org.owner.token }), 200).organization).toMatchObject({ name: "Strict", metadata: {} })
  })
})

describe("deleting an organization", () => {
  it("takes an owner, its name, and a recent sign-in", async () => {
    const org = await organization("Careful")
    const byAdmin = await organizations.delete({ token: org.admin.token, payload: { confirmName: "Careful" } })
    expect([byAdmin.status, byAdmin.body]).toMatchObject([403, { reason: "insufficient_role" }])
    const misnamed = invalid(await organizations.delete({ token: org.owner.token, payload: { confirmName: "careful" } }))
    expect([misnamed.error, misnamed.details[0]?.path]).toEqual(["invalid_request", ["confirmName"]])
    // A body without the name the schema asks for: sent as it is.
    const unconfirmed = await del("/v1/organization", { token: org.owner.token, body: {} })
    expect(unconfirmed.status).toBe(400)
    // A key made without the scope may not, whatever its maker's role.
    const key = ok(await apiKeys.create({ token: org.owner.token, payload: { name: "all" } }), 201).key
    const byKey = await organizations.delete({ apiKey: key, payload: { confirmName: "Careful" } })
    expect([byKey.status, byKey.body]).toMatchObject([403, { reason: "insufficient_scope" }])
    // An old session must sign in again.
    const was = clock.offsetMillis
    clock.advance("3 hours")
    try {
      const stale = await organizations.delete({ token: org.owner.token, payload: { confirmName: "Careful" } })
      expect([stale.status, stale.body]).toMatchObject([403, { reason: "recent_authentication_required" }])
    } finally {
      clock.offsetMillis = was
    }
    expect(ok(await organizations.get({ token: org.member.token }), 200).organization.name).toBe("Careful")
  })

  it("stops it serving at once: sessions fall back, keys and tokens stop, requests for it are 404; its owners list and restore it", async () => {
    const org = await organization("Doomed")
    const other = ok(await organizations.create({ token: org.owner.token, payload: { name: "Kept" } }), 201)
    ok(await users.switchOrganization({ token: org.owner.token, payload: { organizationId: org.organizationId } }), 200)
    const scim = await Http.scimDirectory(server.url, org.owner.token)
    const directory = { connectionId: scim.connection.id }
    const worker = ok(await workers.register({ token: org.owner.token, payload: { name: "Laptop", destination: "local" } }), 201)
    ok(await workerRuntime.heartbeat({ token: worker.token, payload: { openSessions: 0 } }), 200)
    ok(await scimUsers.list({ token: scim.token, path: directory }), 200)
    const team = ok(await teams.create({ token: org.owner.token, payload: { name: "Core" } }), 201).team

    const deleted = ok(await organizations.delete({ token: org.owner.token, payload: { confirmName: "Doomed" } }), 200).deletion
    expect(deleted.organization).toMatchObject({ id: org.organizationId, name: "Doomed" })
    expect(new Date(deleted.purgeAfter).getTime() - new Date(deleted.deletedAt).getTime()).toBe(7 * DAY)
    expect(deleted.rows).toMatchObject({ memberships: 3, teams: 1, api_keys: 1, scim_connections: 1, scim_tokens: 1, workers: 1 })
    expect(deleted.totalRows).toBe(Object.values(deleted.rows).reduce((a, b) => a + b, 0))

    // The owner's session acts in their other organization; the others', in none.
    expect(ok(await users.me({ token: org.owner.token }), 200).organization?.id).toBe(other.organization.id)
    expect(ok(await organizations.get({ token: org.owner.token }), 200).organization.name).toBe("Kept")
    const member = await organizations.get({ token: org.member.token })
    expect([member.status, member.body]).toMatchObject([404, { error: "organization_not_found" }])
    expect(ok(await users.me({ token: org.member.token }), 200).organization).toBe(null)
    const switched = await users.switchOrganization({ token: org.member.token, payload: { organizationId: org.organizationId } })
    expect([switched.status, switched.body]).toMatchObject([404, { error: "organization_not_found" }])
    expect((await teams.get({ token: org.admin.token, path: { teamId: team.id } })).status).toBe(404)
    // Its credentials stop.
    expect((await teams.list({ apiKey: org.key })).status).toBe(401)
    expect((await scimUsers.list({ token: scim.token, path: directory })).status).toBe(401)
    expect((await workerRuntime.heartbeat({ token: worker.token, payload: { openSessions: 0 } })).status).toBe(401)
    // It is not among its members' organizations; its owner finds it among those they may restore.
    const mine = ok(await users.listOrganizations({ token: org.owner.token }), 200)
    expect(mine.items.map((item) => item.organization.id)).toEqual([other.organization.id])
    const restorable = ok(await users.listOrganizations({ token: org.owner.token, query: { deleted: "true" } }), 200).items
    expect(restorable).toEqual([expect.objectContaining({ organization: expect.objectContaining({ id: org.organizationId }), deletedAt: deleted.deletedAt, purgeAfter: deleted.purgeAfter })])
    expect(ok(await users.listOrganizations({ token: org.admin.token, query: { deleted: "true" } }), 200).items).toEqual([])

    // Only an owner restores it: an admin is refused, a stranger finds nothing.
    const path = { organizationId: org.organizationId }
    const byAdmin = await organizations.restore({ token: org.admin.token, path })
    expect([byAdmin.status, byAdmin.body]).toMatchObject([403, { reason: "insufficient_role" }])
    const stranger = await Http.signUp(server.url, "Stranger")
    const byStranger = await organizations.restore({ token: stranger.token, path })
    expect([byStranger.status, byStranger.body]).toMatchObject([404, { error: "organization_not_found" }])
    const restored = ok(await organizations.restore({ token: org.owner.token, path }), 200)
    expect(restored.organization).toMatchObject({ id: org.organizationId, name: "Doomed" })
    const twice = await organizations.restore({ token: org.owner.token, path })
    expect([twice.status, twice.body]).toMatchObject([409, { error: "organization_not_deleted" }])

    // It serves again as it was, in the restoring session first.
    expect(ok(await organizations.get({ token: org.owner.token }), 200).organization).toMatchObject({ id: org.organizationId, memberCount: 3 })
    expect(ok(await organizations.get({ token: org.member.token }), 200).organization.id).toBe(org.organizationId)
    ok(await teams.list({ apiKey: org.key }), 200)
    ok(await scimUsers.list({ token: scim.token, path: directory }), 200)
    ok(await workerRuntime.heartbeat({ token: worker.token, payload: { openSessions: 0 } }), 200)
    const log = ok(await audit.listEvents({ token: org.owner.token, query: { action: "organization.*" } }), 200).items
    expect(log.map((event) => [event.action, event.outcome])).toEqual([
      ["organization.restore", "succeeded"],
      ["organization.restore", "denied"],
      ["organization.delete", "succeeded"],
      ["organization.create", "succeeded"]
    ])
    expect(log[2]?.reason).toMatch(/^restorable until .*; the purge will remove \d+ rows \(/)
  })

  it("stops its SSO routes and its audit streams until it is restored", async () => {
    const org = await organization("Streaming")
    const other = await organization("Canary")
    const connection = ok(await sso.createConnection({
      token: org.owner.token,
      payload: { kind: "saml", name: "IdP", saml: { source: "manual", entityId: idp.entityId, ssoUrl: idp.ssoUrl, certificates: idp.certificates() } }
    }), 201).connection
    const saml = { connectionId: connection.id }
    ok(await ssoSignIn.samlMetadata({ path: saml }), 200)
    const secrets: Array<string> = []
    for (const who of [org, other]) {
      secrets.push(ok(await auditStreams.create({ token: who.owner.token, payload: { url: `${receiver.url}/${who.organizationId}` } }), 201).secret)
      receiver.setSecrets(...secrets)
    }
    const delivered = (organizationId: string, action: string) =>
      receiver.deliveries.some((delivery) =>
        delivery.status === 200 && delivery.events.some((event) => event.organizationId === organizationId && event.action === action))
    await Wait.until(() => delivered(org.organizationId, "audit.stream.create"), "the stream's first delivery")

    ok(await organizations.delete({ token: org.owner.token, payload: { confirmName: "Streaming" } }), 200)
    const metadata = await ssoSignIn.samlMetadata({ path: saml })
    expect([metadata.status, metadata.body]).toMatchObject([404, { error: "sso_connection_not_found" }])
    // A form post, as a browser makes it: sent raw.
    const acs = await Http.request(server.url, "POST", `/v1/sso/saml/${connection.id}/acs`, {
      rawBody: new URLSearchParams({ SAMLResponse: Buffer.from("<x/>").toString("base64") }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
    expect([acs.status, acs.body]).toMatchObject([404, { error: "sso_connection_not_found" }])
    // Another organization's event, made after the deletion, is delivered: the loop ran past the deletion's event,
    // and did not send it.
    ok(await teams.create({ token: other.owner.token, payload: { name: "After" } }), 201)
    await Wait.until(() => delivered(other.organizationId, "team.create"), "the other organization's delivery")
    expect(delivered(org.organizationId, "organization.delete")).toBe(false)

    // Restored, it serves again: its SSO routes answer, and its stream takes up where it stopped.
    ok(await organizations.restore({ token: org.owner.token, path: { organizationId: org.organizationId } }), 200)
    ok(await ssoSignIn.samlMetadata({ path: saml }), 200)
    await Wait.until(() => delivered(org.organizationId, "organization.restore"), "the restored organization's delivery")
    expect(delivered(org.organizationId, "organization.delete")).toBe(true)
  })

  it("cannot be restored once its grace period is over", async () => {
    const org = await organization("Late")
    ok(await organizations.delete({ token: org.owner.token, payload: { confirmName: "Late" } }), 200)
    const was = clock.offsetMillis
    clock.advance(7 * DAY + 60_000)
    try {
      // A week later the owner signs in again (their session went idle).
      const token = ok(await users.signIn({ payload: { email: org.owner.email, password: org.owner.password } }), 200).session.token
      expect(ok(await users.listOrganizations({ token, query: { deleted: "true" } }), 200).items).toEqual([])
      const late = await organizations.restore({ token, path: { organizationId: org.organizationId } })
      expect([late.status, late.body]).toMatchObject([404, { error: "organization_not_found" }])
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
    const listed = ok(await admin.listOrganizations({ token: operator.token, query: { q: "tenant one" } }), 200).items
    expect(listed).toEqual([expect.objectContaining({ id: org.organizationId, name: "Tenant One", memberCount: 3, deletedAt: null, purgeAfter: null })])

    const denied = await admin.listOrganizations({ token: org.owner.token })
    expect([denied.status, denied.body]).toMatchObject([403, { reason: "operator_only" }])

    const own = await admin.deleteOrganization({ token: operator.token, path: { organizationId: operator.organization.id } })
    expect([own.status, own.body]).toMatchObject([409, { error: "organization_operates_instance" }])
    const ownAsOwner = await organizations.delete({ token: operator.token, payload: { confirmName: "Operations" } })
    expect([ownAsOwner.status, ownAsOwner.body]).toMatchObject([409, { error: "organization_operates_instance" }])

    const counted = async () => ok(await admin.metrics({ token: operator.token }), 200).summary.totalOrganizations
    const before = await counted()
    const path = { organizationId: org.organizationId }
    const deleted = ok(await admin.deleteOrganization({ token: operator.token, path }), 200).deletion
    expect(deleted.rows).toMatchObject({ memberships: 3 })
    // A deleted organization is not among the instance's organizations in its metrics.
    expect(await counted()).toBe(before - 1)
    expect((await organizations.get({ token: org.owner.token })).status).toBe(404)
    const gone = await admin.deleteOrganization({ token: operator.token, path })
    expect([gone.status, gone.body]).toMatchObject([404, { error: "organization_not_found" }])
    const plan = await admin.setPlan({ token: operator.token, path, payload: { plan: "team" } })
    expect([plan.status, plan.body]).toMatchObject([404, { error: "organization_not_found" }])

    const onlyDeleted = ok(await admin.listOrganizations({ token: operator.token, query: { deleted: "true" } }), 200).items
    expect(onlyDeleted.find((item) => item.id === org.organizationId)).toMatchObject({ deletedAt: deleted.deletedAt, purgeAfter: deleted.purgeAfter })
    expect(onlyDeleted.every((item) => item.deletedAt !== null)).toBe(true)
    const live = ok(await admin.listOrganizations({ token: operator.token, query: { deleted: "false", limit: "100" } }), 200).items
    expect(live.some((item) => item.id === org.organizationId)).toBe(false)

    ok(await admin.restoreOrganization({ token: operator.token, path }), 200)
    expect(ok(await organizations.get({ token: org.owner.token }), 200).organization.id).toBe(org.organizationId)
    const notDeleted = await admin.restoreOrganization({ token: operator.token, path })
    expect([notDeleted.status, notDeleted.body]).toMatchObject([409, { error: "organization_not_deleted" }])

    // The operator's log holds what it did.
    const log = ok(await audit.listEvents({ token: operator.token, query: { targetId: org.organizationId } }), 200).items
    expect(log.map((event) => event.action)).toEqual(["organization.restore", "organization.delete"])
  })

  it("restores what it deleted itself: the organization's own owners do not, nor find it among those they may restore", async () => {
    const operator = await theOperator()
    const org = await organization("Suspended Tenant")
    const path = { organizationId: org.organizationId }
    ok(await admin.deleteOrganization({ token: operator.token, path }), 200)
    const restorable = ok(await users.listOrganizations({ token: org.owner.token, query: { deleted: "true" } }), 200).items
    expect(restorable.some((item) => item.organization.id === org.organizationId)).toBe(false)
    const byOwner = await organizations.restore({ token: org.owner.token, path })
    expect([byOwner.status, byOwner.body], byOwner.text).toMatchObject([403, { reason: "operator_only" }])
    expect((await organizations.get({ token: org.owner.token })).status).toBe(404)
    // The operator restores it; deleted by its owner again, its owner restores it as before.
    ok(await admin.restoreOrganization({ token: operator.token, path }), 200)
    ok(await organizations.delete({ token: org.owner.token, payload: { confirmName: "Suspended Tenant" } }), 200)
    ok(await organizations.restore({ token: org.owner.token, path }), 200)
  })

  it("pages the list with keyset cursors bound to its filters", async () => {
    const operator = await theOperator()
    for (const n of [1, 2, 3]) await Http.owner(server.url, `Paged ${n}`)
    const first = ok(await admin.listOrganizations({ token: operator.token, query: { q: "paged", limit: "2" } }), 200)
    expect(first.items.map((item) => item.name)).toEqual(["Paged 1", "Paged 2"])
    const cursor = first.nextCursor
    if (cursor === null) throw new Error("expected a next page")
    const second = ok(await admin.listOrganizations({ token: operator.token, query: { q: "paged", limit: "2", cursor } }), 200)
    expect([second.items.map((item) => item.name), second.nextCursor]).toEqual([["Paged 3"], null])
    const foreign = await admin.listOrganizations({ token: operator.token, query: { q: "other", limit: "2", cursor } })
    expect(foreign.status).toBe(400)
  })
})
