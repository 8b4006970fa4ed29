/**
 * Quotas (issue 44 item 4, third bullet), through HTTP: organizations a person owns, unexpired API keys per member,
 * pending invitations per organization. Past one, 409 with a code naming the quota and a message naming the setting
 * that raises it; freeing room (revoking, cancelling) makes room again. The racing case is QuotasConcurrency.test.ts.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: TestServer.RunningServer
let defaults: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ clock, organizationsPerUser: 2, apiKeysPerMember: 2, pendingInvitationsPerOrganization: 2 })
  defaults = await TestServer.start()
})
afterAll(async () => {
  await server?.close()
  await defaults?.close()
})

const post = (token: string, path: string, body: unknown) => Http.request(server.url, "POST", path, { token, body })

describe("quotas", () => {
  it("a person owning 2 organizations (the quota) cannot create a third: 409 organization_quota_reached naming the setting; someone else still can", async () => {
    const person = await Http.owner(server.url, "First")
    Http.expectStatus("second", await post(person.token, "/v1/organizations", { name: "Second" }), 201)
    const refused = await post(person.token, "/v1/organizations", { name: "Third" })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ error: "organization_quota_reached", message: expect.stringContaining("ORGPLANE_ORGANIZATIONS_PER_USER") })
    expect(refused.body.message).toContain("You own 2 organizations")
    const listed = Http.expectStatus("list", await Http.request(server.url, "GET", "/v1/me/organizations", { token: person.token }), 200)
    expect(listed.items.map((item: { organization: { name: string } }) => item.organization.name).sort()).toEqual(["First", "Second"])
    Http.expectStatus("someone else", await post((await Http.signUp(server.url)).token, "/v1/organizations", { name: "Theirs" }), 201)
  })

  it("a member with 2 unexpired API keys (the quota) gets 409 api_key_quota_reached; revoking one, or one expiring, makes room; another admin has their own", async () => {
    const { admin, owner } = await Http.staffed(server.url, "Keys")
    const first = Http.expectStatus("first", await post(owner.token, "/v1/api-keys", { name: "one" }), 201)
    const soon = new Date(clock.currentTimeMillisUnsafe() + 60_000).toISOString()
    Http.expectStatus("second", await post(owner.token, "/v1/api-keys", { name: "two", expiresAt: soon }), 201)
    const refused = await post(owner.token, "/v1/api-keys", { name: "three" })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ error: "api_key_quota_reached", message: expect.stringContaining("ORGPLANE_API_KEYS_PER_MEMBER") })
    Http.expectStatus("the admin's own", await post(admin.token, "/v1/api-keys", { name: "admin's" }), 201)

    Http.expectStatus("revoke", await Http.request(server.url, "DELETE", `/v1/api-keys/${first.apiKey.id}`, { token: owner.token }), 204)
    Http.expectStatus("after revoking", await post(owner.token, "/v1/api-keys", { name: "three" }), 201)
    expect((await post(owner.token, "/v1/api-keys", { name: "four" })).status).toBe(409)
    clock.advance("2 minutes")
    Http.expectStatus("after one expired", await post(owner.token, "/v1/api-keys", { name: "four" }), 201)
  })

  it("an organization with 2 pending invitations (the quota) gets 409 invitation_quota_reached for a new email; refreshing one still works; cancelling makes room", async () => {
    const owner = await Http.owner(server.url, "Invites")
    const one = Http.expectStatus("one", await post(owner.token, "/v1/invitations", { email: "one@example.com", role: "member" }), 201)
    Http.expectStatus("two", await post(owner.token, "/v1/invitations", { email: "two@example.com", role: "member" }), 201)
    const refused = await post(owner.token, "/v1/invitations", { email: "three@example.com", role: "member" })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ error: "invitation_quota_reached", message: expect.stringContaining("ORGPLANE_PENDING_INVITATIONS_PER_ORGANIZATION") })
    Http.expectStatus("refresh", await post(owner.token, "/v1/invitations", { email: "two@example.com", role: "admin" }), 200)
    Http.expectStatus("cancel", await post(owner.token, `/v1/invitations/${one.invitation.id}/cancel`, {}), 200)
    Http.expectStatus("three", await post(owner.token, "/v1/invitations", { email: "three@example.com", role: "member" }), 201)
  })

  it("holds the organizations a person owns wherever they become an owner: a bootstrap claim, a restore, a transfer, a role change (issue 55, item 7)", async () => {
    const full = async (name: string) => {
      const person = await Http.owner(server.url, `${name} 1`)
      const second = Http.expectStatus("a second", await post(person.token, "/v1/organizations", { name: `${name} 2` }), 201)
      return { ...person, second: second.organization.id as string }
    }
    const reached = (response: Http.RawResponse, what: string) => {
      expect([response.status, response.body.error], `${what}: ${response.text}`).toEqual([409, "organization_quota_reached"])
      expect(response.body.message, what).toContain("ORGPLANE_ORGANIZATIONS_PER_USER")
    }

    // Claiming an anonymous agent's workspace as its owner.
    const claimer = await full("Claimer")
    const workspace = Http.expectStatus("a workspace", await Http.request(server.url, "POST", "/v1/bootstrap/workspace", { body: { workspaceName: "Agent Space" } }), 201)
    reached(await post(claimer.token, "/v1/bootstrap/claims/accept", { token: workspace.claimLinks[0].token }), "the claim")

    // Restoring one deleted to make room for another.
    const restorer = await full("Restorer")
    Http.expectStatus("deleting", await Http.request(server.url, "DELETE", "/v1/organization", { token: restorer.token, body: { confirmName: "Restorer 2" } }), 200)
    Http.expectStatus("a new one in its place", await post(restorer.token, "/v1/organizations", { name: "Restorer 3" }), 201)
    reached(await post(restorer.token, `/v1/organizations/${restorer.second}/restore`, {}), "the restore")

    // Being handed an organization, or made its owner.
    const heir = await full("Heir")
    const giver = await Http.owner(server.url, "Given")
    const invited = Http.expectStatus("an invitation", await post(giver.token, "/v1/invitations", { email: heir.email, role: "admin" }), 201)
    const joined = Http.expectStatus("joining", await post(heir.token, "/v1/invitations/accept", { token: invited.inviteToken }), 200)
    reached(await post(giver.token, `/v1/members/${joined.membership.id}/transfer-ownership`, {}), "the transfer")
    reached(await Http.request(server.url, "PATCH", `/v1/members/${joined.membership.id}`, { token: giver.token, body: { role: "owner" } }), "the role change")
    const members = Http.expectStatus("the giver's members", await Http.request(server.url, "GET", "/v1/members", { token: giver.token }), 200)
    expect(members.items.find((member: { id: string }) => member.id === joined.membership.id).role).toBe("admin")
  })

  it("the defaults: 10 organizations per person, 20 API keys per member", async () => {
    const person = await Http.owner(defaults.url, "Default 1")
    const organizations: Array<number> = []
    for (let i = 2; i <= 11; i++) {
      organizations.push((await Http.request(defaults.url, "POST", "/v1/organizations", { token: person.token, body: { name: `Default ${i}` } })).status)
    }
    expect(organizations).toEqual([...Array.from({ length: 9 }, () => 201), 409])
    const keys: Array<number> = []
    for (let i = 1; i <= 21; i++) {
      keys.push((await Http.request(defaults.url, "POST", "/v1/api-keys", { token: person.token, body: { name: `key ${i}` } })).status)
    }
    expect(keys).toEqual([...Array.from({ length: 20 }, () => 201), 409])
  })
})
