/**
 * Quotas (issue 44 item 4, third bullet), through HTTP: organizations a person owns, unexpired API keys per member,
 * pending invitations per organization. Past one, 409 with a code naming the quota and a message naming the setting
 * that raises it; freeing room (revoking, cancelling) makes room again. The racing case is QuotasConcurrency.test.ts.
 */
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
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

const { apiKeys, bootstrap, invitations, members, organizations, users } = calls(() => server.url)

describe("quotas", () => {
  it("a person owning 2 organizations (the quota) cannot create a third: 409 organization_quota_reached naming the setting; someone else still can", async () => {
    const person = await Http.owner(server.url, "First")
    ok(await organizations.create({ token: person.token, payload: { name: "Second" } }), 201)
    const refused = await organizations.create({ token: person.token, payload: { name: "Third" } })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ error: "organization_quota_reached", message: expect.stringContaining("ORGPLANE_ORGANIZATIONS_PER_USER") })
    expect(refusal(refused, 409)).toMatchObject({ message: expect.stringContaining("You own 2 organizations") })
    const listed = ok(await users.listOrganizations({ token: person.token }), 200)
    expect(listed.items.map((item) => item.organization.name).sort()).toEqual(["First", "Second"])
    ok(await organizations.create({ token: (await Http.signUp(server.url)).token, payload: { name: "Theirs" } }), 201)
  })

  it("a member with 2 unexpired API keys (the quota) gets 409 api_key_quota_reached; revoking one, or one expiring, makes room; another admin has their own", async () => {
    const { admin, owner } = await Http.staffed(server.url, "Keys")
    const first = ok(await apiKeys.create({ token: owner.token, payload: { name: "one" } }), 201)
    const soon = new Date(clock.currentTimeMillisUnsafe() + 60_000).toISOString()
    ok(await apiKeys.create({ token: owner.token, payload: { name: "two", expiresAt: soon } }), 201)
    const refused = await apiKeys.create({ token: owner.token, payload: { name: "three" } })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ error: "api_key_quota_reached", message: expect.stringContaining("ORGPLANE_API_KEYS_PER_MEMBER") })
    ok(await apiKeys.create({ token: admin.token, payload: { name: "admin's" } }), 201)

    ok(await apiKeys.revoke({ token: owner.token, path: { apiKeyId: first.apiKey.id } }), 204)
    ok(await apiKeys.create({ token: owner.token, payload: { name: "three" } }), 201)
    expect((await apiKeys.create({ token: owner.token, payload: { name: "four" } })).status).toBe(409)
    clock.advance("2 minutes")
    ok(await apiKeys.create({ token: owner.token, payload: { name: "four" } }), 201)
  })

  it("an organization with 2 pending invitations (the quota) gets 409 invitation_quota_reached for a new email; refreshing one still works; cancelling makes room", async () => {
    const owner = await Http.owner(server.url, "Invites")
    const one = ok(await invitations.create({ token: owner.token, payload: { email: "one@example.com", role: "member" } }), 201)
    ok(await invitations.create({ token: owner.token, payload: { email: "two@example.com", role: "member" } }), 201)
    const refused = await invitations.create({ token: owner.token, payload: { email: "three@example.com", role: "member" } })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({ error: "invitation_quota_reached", message: expect.stringContaining("ORGPLANE_PENDING_INVITATIONS_PER_ORGANIZATION") })
    ok(await invitations.create({ token: owner.token, payload: { email: "two@example.com", role: "admin" } }), 200)
    ok(await invitations.cancel({ token: owner.token, path: { invitationId: one.invitation.id } }), 200)
    ok(await invitations.create({ token: owner.token, payload: { email: "three@example.com", role: "member" } }), 201)
  })

  it("holds the organizations a person owns wherever they become an owner: a bootstrap claim, a restore, a transfer, a role change (issue 55, item 7)", async () => {
    const full = async (name: string) => {
      const person = await Http.owner(server.url, `${name} 1`)
      const second = ok(await organizations.create({ token: person.token, payload: { name: `${name} 2` } }), 201)
      return { ...person, second: second.organization.id }
    }
    const reached = (response: Pick<Http.RawResponse, "status" | "text"> & { readonly body: unknown }, what: string) => {
      expect([response.status, Json.at(response.body, "error")], `${what}: ${response.text}`).toEqual([409, "organization_quota_reached"])
      expect(Json.at(response.body, "message"), what).toContain("ORGPLANE_ORGANIZATIONS_PER_USER")
    }

    // Claiming an anonymous agent's workspace as its owner.
    const claimer = await full("Claimer")
    const workspace = ok(await bootstrap.workspace({ payload: { workspaceName: "Agent Space" } }), 201)
    const [ownerLink] = workspace.claimLinks
    if (ownerLink === undefined) throw new Error(`the bootstrap answered no claim link: ${JSON.stringify(workspace)}`)
    reached(await bootstrap.acceptClaim({ token: claimer.token, payload: { token: ownerLink.token } }), "the claim")

    // Restoring one deleted to make room for another.
    const restorer = await full("Restorer")
    ok(await organizations.delete({ token: restorer.token, payload: { confirmName: "Restorer 2" } }), 200)
    ok(await organizations.create({ token: restorer.token, payload: { name: "Restorer 3" } }), 201)
    reached(await organizations.restore({ token: restorer.token, path: { organizationId: restorer.second } }), "the restore")

    // Being handed an organization, or made its owner.
    const heir = await full("Heir")
    const giver = await Http.owner(server.url, "Given")
    const invited = ok(await invitations.create({ token: giver.token, payload: { email: heir.email, role: "admin" } }), 201)
    if (invited.inviteToken === null) throw new Error(`the invitation answered no inviteToken: ${JSON.stringify(invited)}`)
    const joined = ok(await invitations.accept({ token: heir.token, payload: { token: invited.inviteToken } }), 200)
    const path = { memberId: joined.membership.id }
    reached(await members.transferOwnership({ token: giver.token, path }), "the transfer")
    reached(await members.changeRole({ token: giver.token, path, payload: { role: "owner" } }), "the role change")
    const listed = ok(await members.list({ token: giver.token }), 200)
    expect(listed.items.find((member) => member.id === joined.membership.id)?.role).toBe("admin")
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
