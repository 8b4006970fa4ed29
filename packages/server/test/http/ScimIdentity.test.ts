/**
 * What directory provisioning (SCIM) does to identity: a suspended member stays listed with `suspendedAt`, is not
 * admitted (their session and API key answer as a removed member's), and an invitation does not bring them back.
 *
 * No SCIM endpoint exists on this branch yet: the tests set `memberships.suspended_at` with SQL on the test database
 * ONLY as the trigger (what `Memberships.suspend` / `removeByDirectory` write), and assert every outcome through HTTP.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
})
afterAll(() => server.close())

const { del, get, post } = Http.verbs(() => server.url)

/** The trigger only: what the directory's deactivation (or deletion, with `removed`) writes on the membership. */
const suspendWithSql = (organizationId: string, membershipId: string, removed = false) =>
  server.sql((sql) =>
    removed
      ? sql`UPDATE memberships SET suspended_at = now(), removed_at = now()
            WHERE organization_id = ${organizationId} AND id = ${membershipId}`
      : sql`UPDATE memberships SET suspended_at = now() WHERE organization_id = ${organizationId} AND id = ${membershipId}`
  )

describe("a suspended member", () => {
  it("is listed with suspendedAt, and their session and API key answer as a removed member's", async () => {
    const org = await Http.staffed(server.url)
    const removed = await Http.staffed(server.url)
    // API keys are created by owners and admins: the admin is the one the directory deactivates.
    const memberKey = await post("/v1/api-keys", { token: org.admin.token, body: { name: "admin key" } })
    expect(memberKey.status).toBe(201)
    expect((await get("/v1/members", { apiKey: memberKey.body.key })).status).toBe(200)

    const before = await get(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token })
    expect(before.body.member.suspendedAt).toBeNull()

    await suspendWithSql(org.organizationId, org.admin.membership.id)
    const listed = await get("/v1/members", { token: org.owner.token })
    expect(listed.status).toBe(200)
    const suspended = listed.body.items.find((m: any) => m.id === org.admin.membership.id)
    expect(suspended.suspendedAt).toEqual(expect.any(String))
    expect(suspended.removedAt).toBeNull()
    expect(listed.body.items.find((m: any) => m.id === org.owner.membership.id).suspendedAt).toBeNull()

    // A removed member of another organization, for the answer a suspended one must match.
    expect((await del(`/v1/members/${removed.member.membership.id}`, { token: removed.owner.token })).status).toBe(204)
    const asRemoved = await get("/v1/members", { token: removed.member.token })
    const asSuspended = await get("/v1/members", { token: org.admin.token })
    expect(asRemoved.status).not.toBe(200)
    expect([asSuspended.status, asSuspended.body.error]).toEqual([asRemoved.status, asRemoved.body.error])

    const byKey = await get("/v1/members", { apiKey: memberKey.body.key })
    expect(byKey.status).toBe(401)

    // The others are untouched.
    expect((await get("/v1/members", { token: org.member.token })).status).toBe(200)
  })

  it("cannot come back through an invitation: 409 member_deprovisioned, also after the directory deleted them", async () => {
    const org = await Http.staffed(server.url)
    await suspendWithSql(org.organizationId, org.member.membership.id, true)
    const invited = await post("/v1/invitations", { token: org.owner.token, body: { email: org.member.email, role: "member" } })
    expect(invited.status).toBe(201)
    const refused = await post("/v1/invitations/accept", { token: org.member.token, body: { token: invited.body.inviteToken } })
    expect(refused.status).toBe(409)
    expect(refused.body.error).toBe("member_deprovisioned")

    // A person the directory never touched accepts as before.
    const other = await Http.staffed(server.url)
    expect((await del(`/v1/members/${other.member.membership.id}`, { token: other.owner.token })).status).toBe(204)
    const again = await post("/v1/invitations", { token: other.owner.token, body: { email: other.member.email, role: "member" } })
    const accepted = await post("/v1/invitations/accept", { token: other.member.token, body: { token: again.body.inviteToken } })
    expect(accepted.status).toBe(200)
  })
})
