/**
 * What directory provisioning (SCIM) does to identity: a suspended member stays listed with `suspendedAt`, is not
 * admitted (their session and API key answer as a removed member's), and an invitation does not bring them back.
 *
 * No SCIM endpoint exists on this branch yet: the tests set `memberships.suspended_at` with SQL on the test database
 * ONLY as the trigger (what `Memberships.suspend` / `removeByDirectory` write), and assert every outcome through HTTP.
 */
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
})
afterAll(() => server.close())

const { del } = Http.verbs(() => server.url)
const { apiKeys, invitations, members } = calls(() => server.url)

/** The trigger only: what the directory's deactivation (or deletion, with `removed`) writes on the membership. */
const suspendWithSql = (organizationId: string, membershipId: string, removed = false) =>
  server.sql((sql) =>
    removed
      ? sql`UPDATE memberships SET suspended_at = now(), removed_at = now()
            WHERE organization_id = ${organizationId} AND id = ${membershipId}`
      : sql`UPDATE memberships SET suspended_at = now() WHERE organization_id = ${organizationId} AND id = ${membershipId}`
  )

/** The `error` code of an answer's body (undefined when it has none). */
const errorCode = (body: unknown): unknown => (typeof body === "object" && body !== null && "error" in body ? body.error : undefined)

/** The token of a new invitation (fails the test unless 201 with one). */
const inviteToken = (answer: Awaited<ReturnType<typeof invitations.create>>): string => {
  const { inviteToken } = ok(answer, 201)
  if (inviteToken === null) throw new Error(`the invitation answered no token: ${answer.text}`)
  return inviteToken
}

describe("a suspended member", () => {
  it("is listed with suspendedAt, and their session and API key answer as a removed member's", async () => {
    const org = await Http.staffed(server.url)
    const removed = await Http.staffed(server.url)
    // API keys are created by owners and admins: the admin is the one the directory deactivates.
    const memberKey = await apiKeys.create({ token: org.admin.token, payload: { name: "admin key" } })
    expect(memberKey.status).toBe(201)
    const { key } = ok(memberKey, 201)
    expect((await members.list({ apiKey: key })).status).toBe(200)

    const before = await members.get({ token: org.owner.token, path: { memberId: org.admin.membership.id } })
    expect(ok(before, 200).member.suspendedAt).toBeNull()

    await suspendWithSql(org.organizationId, org.admin.membership.id)
    const listed = await members.list({ token: org.owner.token })
    expect(listed.status).toBe(200)
    const { items } = ok(listed, 200)
    const suspended = items.find((m) => m.id === org.admin.membership.id)
    expect(suspended?.suspendedAt).toEqual(expect.any(String))
    expect(suspended?.removedAt).toBeNull()
    expect(items.find((m) => m.id === org.owner.membership.id)?.suspendedAt).toBeNull()

    // A removed member of another organization, for the answer a suspended one must match.
    expect((await del(`/v1/members/${removed.member.membership.id}`, { token: removed.owner.token })).status).toBe(204)
    const asRemoved = await members.list({ token: removed.member.token })
    const asSuspended = await members.list({ token: org.admin.token })
    expect(asRemoved.status).not.toBe(200)
    expect([asSuspended.status, errorCode(asSuspended.body)]).toEqual([asRemoved.status, errorCode(asRemoved.body)])

    const byKey = await members.list({ apiKey: key })
    expect(byKey.status).toBe(401)

    // The others are untouched.
    expect((await members.list({ token: org.member.token })).status).toBe(200)
  })

  it("cannot come back through an invitation: 409 member_deprovisioned, also after the directory deleted them", async () => {
    const org = await Http.staffed(server.url)
    await suspendWithSql(org.organizationId, org.member.membership.id, true)
    const invited = await invitations.create({ token: org.owner.token, payload: { email: org.member.email, role: "member" } })
    expect(invited.status).toBe(201)
    const refused = await invitations.accept({ token: org.member.token, payload: { token: inviteToken(invited) } })
    expect(refused.status).toBe(409)
    expect(refusal(refused, 409)).toMatchObject({ error: "member_deprovisioned" })

    // A person the directory never touched accepts as before.
    const other = await Http.staffed(server.url)
    expect((await del(`/v1/members/${other.member.membership.id}`, { token: other.owner.token })).status).toBe(204)
    const again = await invitations.create({ token: other.owner.token, payload: { email: other.member.email, role: "member" } })
    const accepted = await invitations.accept({ token: other.member.token, payload: { token: inviteToken(again) } })
    expect(accepted.status).toBe(200)
  })
})
