import { type AddressInfo, createServer } from "node:net"
import { Conflict, MembersApi, NotFound, RolesApi, Unauthorized } from "@orgplane/schema"
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest"
import {
  type ClientOptions,
  type Closable,
  createClient,
  createClientFor,
  type OrgplanePromiseClient,
  OrgplaneConnectionError,
  OrgplaneError,
  OrgplaneValidationError,
  paginate
} from "../src/index.js"
import { password, rejection, shown, uniqueEmail } from "./Helpers.js"
import * as RealServer from "./RealServer.js"

// The server (the CLI's `serve`), out of process: the client on the wire.
let server: RealServer.RealServer
const clients: Array<Closable> = []
beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()))
  await server.close()
})

const client = (options: Partial<ClientOptions> = {}) => {
  const created = createClient({ baseUrl: server.url, ...options })
  clients.push(created)
  return created
}


const owner = async () => {
  const email = uniqueEmail("owner")
  const { session, user } = await client().users.signUp({ payload: { email, password, name: "Owner" } })
  const asOwner = client({ token: session.token })
  const { organization } = await asOwner.organizations.create({ payload: { name: "Acme" } })
  return { email, token: session.token, user, organization, asOwner }
}

describe("Promise client", () => {
  it("signs up, signs in, reads the caller and signs out", async () => {
    const email = uniqueEmail("grace")
    const signedUp = await client().users.signUp({ payload: { email, password, name: "Grace" } })
    expect(signedUp.user).toMatchObject({ email, name: "Grace" })

    const signedIn = await client().users.signIn({ payload: { email, password } })
    const asGrace = client({ token: signedIn.session.token })
    const me = await asGrace.users.me()
    expect(me.user.id).toBe(signedUp.user.id)
    expect(me.organization).toBeNull()

    await expect(asGrace.users.signOut()).resolves.toBeUndefined()
    const after = await rejection(asGrace.users.me())
    expect(after).toBeInstanceOf(OrgplaneError)
    expect(after).toMatchObject({ status: 401 })
  })

  it("lists the caller's sessions, ends another and the rest, and reports the API keys a password change leaves working", async () => {
    const { asOwner, email } = await owner()
    const elsewhere = await client().users.signIn({ payload: { email, password } })
    const third = await client().users.signIn({ payload: { email, password } })
    const listed = await asOwner.users.listSessions({ urlParams: {} })
    expect(listed.items.map((session) => session.id).sort()).toEqual([elsewhere.session.id, third.session.id, listed.items.find((session) => session.current)!.id].sort())
    expect(listed.items.filter((session) => session.current)).toHaveLength(1)
    expect(listed.items.every((session) => session.method === "password")).toBe(true)

    await asOwner.users.endSession({ path: { sessionId: elsewhere.session.id } })
    expect(await rejection(client({ token: elsewhere.session.token }).users.me())).toMatchObject({ status: 401 })
    const missing = await rejection(asOwner.users.endSession({ path: { sessionId: elsewhere.session.id } }))
    expect(missing).toMatchObject({ status: 404, code: "session_not_found" })
    expect(await asOwner.users.endOtherSessions()).toEqual({ ended: 1 })
    expect(await rejection(client({ token: third.session.token }).users.me())).toMatchObject({ status: 401 })

    const { apiKey } = await asOwner.apiKeys.create({ payload: { name: "ci" } })
    const changed = await asOwner.users.changePassword({ payload: { currentPassword: password, newPassword: `${password} again`, revokeApiKeys: true } })
    expect(changed).toMatchObject({ otherSessionsEnded: 0, apiKeysRevoked: true, apiKeys: [{ id: apiKey.id, name: "ci" }] })
    expect((await asOwner.apiKeys.list({ urlParams: {} })).items).toEqual([])
  })

  it("exports the account, changes its email, refuses a last owner's deletion with its code, and deletes accounts", async () => {
    const { asOwner, organization, user } = await owner()
    const exported = await asOwner.account.export()
    expect(exported).toMatchObject({ format: "orgplane.account-export.v1", user: { id: user.id, emailVerified: false }, memories: [], apiKeys: [] })
    expect(exported.exportedAt).toBeInstanceOf(Date)
    expect(exported.memberships.map(({ membership, organization }) => [organization.name, membership.role, membership.removedAt])).toEqual([["Acme", "owner", null]])

    const moved = uniqueEmail("moved")
    expect(await asOwner.users.changeEmail({ payload: { email: moved, password } })).toMatchObject({ user: { id: user.id, email: moved }, emailVerified: false })

    const { inviteToken } = await asOwner.invitations.create({ payload: { email: uniqueEmail("member"), role: "member" } })
    const accepted = await client().invitations.accept({ payload: { token: shown(inviteToken), signUp: { name: "Member", password } } })
    const refused = await rejection(asOwner.account.delete({ payload: { password } }))
    expect(refused).toMatchObject({ status: 409, code: "last_owner_of_organizations" })

    // The member just signed in: a recent sign-in is enough, and nothing needs to be sent.
    const asMember = client({ token: accepted.session!.token })
    const left = await asMember.account.delete()
    expect(left).toMatchObject({ userId: accepted.user.id, organizationsLeft: [organization.id], pseudonym: expect.stringMatching(/^deleted-user-/) })
    expect(await rejection(asMember.users.me())).toMatchObject({ status: 401 })
    const gone = await asOwner.account.delete({ payload: { password } })
    expect(gone).toMatchObject({ organizationsLeft: [organization.id], organizationsWithoutMembers: [organization.id] })
  })

  it("creates an organization, then creates, lists and revokes API keys", async () => {
    const { asOwner, organization, user } = await owner()
    expect((await asOwner.users.me()).organization?.id).toBe(organization.id)

    const created = await asOwner.apiKeys.create({ payload: { name: "deploy" } })
    const listed = await asOwner.apiKeys.list({ urlParams: {} })
    expect(listed.items.map((key) => key.name)).toEqual(["deploy"])
    // Scopes: asked as an area, shown as its actions; the default leaves out key management.
    const scoped = await asOwner.apiKeys.create({ payload: { name: "teams", scopes: ["teams.*"] } })
    expect([scoped.apiKey.scopes, scoped.apiKey.parentApiKeyId]).toEqual([["teams.read", "teams.manage"], null])
    expect(created.apiKey.scopes).not.toContain("apiKeys.manage")
    await asOwner.apiKeys.revoke({ path: { apiKeyId: scoped.apiKey.id } })

    const asKey = client({ apiKey: created.key })
    const me = await asKey.users.me()
    expect(me.user.id).toBe(user.id)
    expect(me.organization?.id).toBe(organization.id)

    // Ids are plain strings here: no brand to satisfy.
    const id: string = created.apiKey.id
    await asOwner.apiKeys.revoke({ path: { apiKeyId: id } })
    expect((await asOwner.apiKeys.list({ urlParams: {} })).items).toEqual([])
    const revoked = await rejection(asKey.users.me())
    expect(revoked).toMatchObject({ status: 401, body: { error: "unauthorized" }, code: "unauthorized", tag: "Unauthorized" })
  })

  it("rejects with OrgplaneError carrying the status, the exact body and the code", async () => {
    const { asOwner, email } = await owner()

    const anonymous = await rejection(client().users.me())
    expect(anonymous).toBeInstanceOf(OrgplaneError)
    expect(anonymous).toBeInstanceOf(Error)
    expect(anonymous).toMatchObject({ status: 401, body: { error: "unauthorized" }, code: "unauthorized", tag: "Unauthorized" })
    expect((anonymous as OrgplaneError).cause).toBeInstanceOf(Unauthorized)

    const taken = (await rejection(client().users.signUp({ payload: { email, password, name: "Again" } }))) as OrgplaneError
    expect(taken.status).toBe(409)
    expect(taken.code).toBe("email_taken")
    expect(taken.tag).toBe("Conflict")
    expect(taken.body).toEqual({ error: "email_taken", message: expect.any(String) })
    expect(taken.cause).toBeInstanceOf(Conflict)

    const missing = (await rejection(
      asOwner.apiKeys.revoke({ path: { apiKeyId: "apk_01h2xcejqtf2nbrexx3vqjhp41" } })
    )) as OrgplaneError
    expect(missing).toMatchObject({ status: 404, code: "api_key_not_found", tag: "NotFound" })
    expect(Object.keys(missing.body as object).sort()).toEqual(["error", "message"])
    expect(missing.cause).toBeInstanceOf(NotFound)
    expect(missing.message).toContain("404 api_key_not_found")

    const { key } = await asOwner.apiKeys.create({ payload: { name: "script" } })
    const forbidden = (await rejection(client({ apiKey: key }).organizations.create({ payload: { name: "Other" } }))) as OrgplaneError
    expect(forbidden).toMatchObject({ status: 403, code: "session_required", tag: "Forbidden" })
    expect(forbidden.body).toEqual({ reason: "session_required", message: expect.any(String) })
  })

  it("rejects an invalid request before sending it, with the details the server's 400 gives", async () => {
    const { asOwner, token } = await owner()
    /** The server's answer to the same request, sent as raw HTTP. */
    const serverDetails = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      expect(response.status).toBe(400)
      const answer = (await response.json()) as { error: string; details: unknown }
      expect(answer.error).toBe("invalid_request")
      return answer.details
    }

    const tooMany = (await rejection(asOwner.apiKeys.list({ urlParams: { limit: 1000 } }))) as OrgplaneValidationError
    expect(tooMany).toBeInstanceOf(OrgplaneValidationError)
    expect(tooMany.details).toEqual([{ path: ["limit"], message: "must be an integer from 1 to 100" }])
    expect(tooMany.details).toEqual(await serverDetails("GET", "/v1/api-keys?limit=1000"))
    expect(tooMany.message).toBe("invalid request: limit: must be an integer from 1 to 100")

    // A number among the ids, as plain JavaScript may send.
    const memberIds: Array<string> = JSON.parse(`["om_nope", 3]`)
    const payload = { name: "", memberIds }
    const unnamed = (await rejection(asOwner.teams.create({ payload }))) as OrgplaneValidationError
    // The server's details, word for word: the number is "Expected MembershipId" on both sides.
    expect(unnamed.details).toEqual(await serverDetails("POST", "/v1/teams", payload))
    expect(unnamed.details[2]).toEqual({ path: ["memberIds", 1], message: "Expected MembershipId" })
    expect(unnamed.details.map((detail) => detail.path)).toEqual([["name"], ["memberIds", 0], ["memberIds", 1]])
    // One line: the first problems, then how many more.
    expect(unnamed.message).toBe(
      `invalid request: name: ${unnamed.details[0]!.message}; memberIds[0]: ${unnamed.details[1]!.message}; memberIds[1]: ${unnamed.details[2]!.message}`
    )
    expect(unnamed.message).not.toContain("\n")
    expect(unnamed.message).not.toContain("<declaration schema>")

    const fourProblems = { ...payload, memberIds: ["om_nope", "om_nada", "om_zilch"] }
    const more = (await rejection(asOwner.teams.create({ payload: fourProblems }))) as OrgplaneValidationError
    expect(more.details).toHaveLength(4)
    expect(more.message).toMatch(/^invalid request: name: .+; memberIds\[0\]: .+; memberIds\[1\]: .+ \(and 1 more problem\)$/)
  })

  it("calls without arguments the methods whose requests need nothing", async () => {
    const { asOwner } = await owner()
    await asOwner.apiKeys.create({ payload: { name: "first" } })
    const owners = ["Owner"]
    expect((await asOwner.members.list()).items.map((member) => member.name)).toEqual(owners)
    expect((await asOwner.members.list({})).items.map((member) => member.name)).toEqual(owners)
    expect((await asOwner.members.list({ urlParams: {} })).items.map((member) => member.name)).toEqual(owners)
    expect((await asOwner.apiKeys.list()).items.map((key) => key.name)).toEqual(["first"])
    const walked = []
    for await (const member of paginate(asOwner.members.list)) walked.push(member.name)
    expect(walked).toEqual(owners)

    // A part with required members left out (as plain JavaScript may) names them, and nothing is sent.
    const { team } = await asOwner.teams.create({ payload: { name: "Core" } })
    const noPath = (await rejection((asOwner.teams.get as (request?: unknown) => Promise<unknown>)({}))) as OrgplaneValidationError
    expect(noPath).toBeInstanceOf(OrgplaneValidationError)
    // A missing key's wording, the same as the server's 400.
    expect(noPath.details).toEqual([{ path: ["teamId"], message: "Missing key" }])
    // The Effect client's names of the parts are none of the Promise client's: `params` is not read as `path`.
    const effectShape = (await rejection((asOwner.teams.get as (request?: unknown) => Promise<unknown>)({ params: { teamId: team.id } }))) as OrgplaneValidationError
    expect(effectShape.details).toEqual(noPath.details)
    expect((await asOwner.teams.get({ path: { teamId: team.id } })).team.name).toBe("Core")
  })

  it("a client of some groups only has their namespaces, typed, and the API-wide errors", async () => {
    const { token } = await owner()
    const members = createClientFor([MembersApi, RolesApi], { baseUrl: server.url, token })
    clients.push(members)
    expect(Object.keys(members).sort()).toEqual(["close", "members", "roles"])
    // Not a group of this client.
    expectTypeOf(members).not.toHaveProperty("teams")
    expect("teams" in members).toBe(false)
    expectTypeOf(members.members.list).toEqualTypeOf<OrgplanePromiseClient["members"]["list"]>()
    expect((await members.members.list()).items.map((member) => member.name)).toEqual(["Owner"])
    const invalid = (await rejection(members.members.list({ urlParams: { cursor: "not-a-cursor" } }))) as OrgplaneError
    expect(invalid).toMatchObject({ status: 400, code: "invalid_request", tag: "InvalidRequest" })
    expect(invalid.message).toBe(`400 invalid_request: cursor: ${(invalid.body as { details: Array<{ message: string }> }).details[0]!.message}`)
  })

  it("gives every error the server's request id", async () => {
    const anonymous = (await rejection(client().users.me())) as OrgplaneError
    expect(anonymous.requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(anonymous.requestId).toBe(anonymous.headers["x-request-id"])

    // The server keeps a well-formed id the client sends.
    const tagged = (await rejection(client({ headers: { "X-Request-Id": "trace-42" } }).users.me())) as OrgplaneError
    expect(tagged.requestId).toBe("trace-42")
  })

  it("rejects with OrgplaneConnectionError when nothing answers", async () => {
    // A port that was free a moment ago: the connection is refused.
    const probe = createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    const { port } = probe.address() as AddressInfo
    await new Promise((resolve) => probe.close(resolve))
    const error = await rejection(client({ baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 }).system.health())
    expect(error).toBeInstanceOf(OrgplaneConnectionError)
    expect(error).toMatchObject({ timedOut: false })
    // One line saying where, why and what to do, not the transport's "Transport error" with the reason causes deep.
    expect((error as Error).message).toBe(
      `cannot reach the server at http://127.0.0.1:${port} (connection refused): is it running? start one with \`orgplane serve\``
    )
  })

  it("rejects calls once closed", async () => {
    const closing = createClient({ baseUrl: server.url })
    expect(await closing.system.health()).toMatchObject({ ok: true })
    await closing.close()
    const error = await rejection(closing.system.health())
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toContain("closed")
  })

  it("walks every page of a list", async () => {
    const { asOwner } = await owner()
    const names = ["a", "b", "c", "d", "e"]
    for (const name of names) await asOwner.apiKeys.create({ payload: { name } })

    const cursors: Array<string | undefined> = []
    const list: typeof asOwner.apiKeys.list = (request, options) => {
      cursors.push(request?.urlParams?.cursor)
      return asOwner.apiKeys.list(request, options)
    }
    const seen: Array<string> = []
    for await (const key of paginate(list, { urlParams: { limit: 2 } })) seen.push(key.name)
    expect(seen).toEqual(["e", "d", "c", "b", "a"])
    expect(cursors).toHaveLength(3)
    expect(cursors[0]).toBeUndefined()
    expect(new Set(cursors.slice(1)).size).toBe(2)

    // Stopping early fetches no further page.
    cursors.length = 0
    for await (const key of paginate(list, { urlParams: { limit: 2 } })) {
      if (key.name === "d") break
    }
    expect(cursors).toHaveLength(1)
  })

  it("is typed from the Effect client", () => {
    const typed = client()
    expectTypeOf(typed.apiKeys.list).parameter(0).toEqualTypeOf<{ readonly urlParams?: { readonly cursor?: string; readonly limit?: number } } | undefined>()
    expectTypeOf(typed.teams.get).parameter(0).toEqualTypeOf<{ readonly path: { readonly teamId: string } }>()
    expectTypeOf(typed.users.me).parameter(0).toEqualTypeOf<{} | undefined>()
    expectTypeOf(typed.users.me).returns.resolves.toHaveProperty("user")
    expectTypeOf(typed.apiKeys.revoke).returns.resolves.toEqualTypeOf<void>()
    // Not an endpoint of the API.
    expectTypeOf(typed.apiKeys).not.toHaveProperty("rotate")
    expect("rotate" in typed.apiKeys).toBe(false)
    expect(Object.keys(typed).sort()).toEqual([
      "account",
      "admin",
      "apiKeys",
      "audit",
      "auditStreams",
      "bootstrap",
      "capabilities",
      "close",
      "configObjects",
      "connectorAccounts",
      "connectorInstances",
      "connectorMappings",
      "connectorSyncEvents",
      "connectorTargets",
      "desktopPolicies",
      "invitations",
      "llmProviders",
      "marketplaces",
      "mcpAuthorization",
      "mcpConnections",
      "mcpDiscovery",
      "mcpTools",
      "members",
      "memory",
      "organizationDocument",
      "organizations",
      "plugins",
      "recovery",
      "roles",
      "scimConnections",
      "scimDiscovery",
      "scimGroups",
      "scimUsers",
      "sso",
      "ssoSignIn",
      "suiteClients",
      "suiteConnections",
      "system",
      "teams",
      "telemetry",
      "templates",
      "users",
      "webhooks",
      "workerActivity",
      "workerRuntime",
      "workers"
    ])
  })

  it("staffs an organization: invitation, acceptance by sign-up, a team, a role change", async () => {
    const { asOwner, organization } = await owner()
    const email = uniqueEmail("ada")
    const invited = await asOwner.invitations.create({ payload: { email, role: "member" } })
    expect(invited.refreshed).toBe(false)
    const again = await asOwner.invitations.create({ payload: { email, role: "admin" } })
    expect(again.refreshed).toBe(true)
    expect(again.invitation.id).toBe(invited.invitation.id)
    expect(await asOwner.invitations.get({ path: { invitationId: again.invitation.id } })).toEqual({ invitation: again.invitation })
    expect(await client().invitations.preview({ payload: { token: shown(again.inviteToken) } })).toEqual({
      organization: { name: "Acme" },
      role: "admin",
      invitedBy: { name: "Owner" },
      expiresAt: again.invitation.expiresAt
    })

    const accepted = await client().invitations.accept({
      payload: { token: shown(again.inviteToken), signUp: { name: "Ada", password } }
    })
    expect(accepted.organization.id).toBe(organization.id)
    expect(accepted.session?.token).toBeTypeOf("string")
    const asAda = client({ token: accepted.session!.token })

    const { team } = await asAda.teams.create({ payload: { name: "Analytics", memberIds: [accepted.membership.id] } })
    expect(team.memberIds).toEqual([accepted.membership.id])
    const duplicate = await rejection(asAda.teams.create({ payload: { name: "analytics" } }))
    expect(duplicate).toBeInstanceOf(OrgplaneError)
    expect(duplicate).toMatchObject({ status: 409, code: "team_exists" })

    const { member } = await asOwner.members.changeRole({ path: { memberId: accepted.membership.id }, payload: { role: "member" } })
    expect(member).toMatchObject({ name: "Ada", email, role: "member" })
    const forbidden = await rejection(asAda.teams.delete({ path: { teamId: team.id } }))
    expect(forbidden).toMatchObject({ status: 403, body: { reason: "insufficient_role" } })
    const names = []
    for await (const item of paginate(asAda.members.list, { urlParams: { limit: 1 } })) names.push(item.name)
    expect(names).toEqual(["Owner", "Ada"])
  })

  it("reads, changes, deletes and restores the active organization", async () => {
    const { asOwner, organization } = await owner()
    expect((await asOwner.organizations.get()).organization).toMatchObject({ id: organization.id, name: "Acme", metadata: {}, logoUrl: null, memberCount: 1 })
    const { organization: changed } = await asOwner.organizations.update({ payload: { name: "Acme Labs", metadata: { region: "eu" } } })
    expect(changed).toMatchObject({ name: "Acme Labs", metadata: { region: "eu" } })
    const misnamed = await rejection(asOwner.organizations.delete({ payload: { confirmName: "Acme" } }))
    expect(misnamed).toMatchObject({ status: 400, code: "invalid_request" })
    const { deletion } = await asOwner.organizations.delete({ payload: { confirmName: "Acme Labs" } })
    expect(deletion.organization.id).toBe(organization.id)
    expect(deletion.purgeAfter.getTime() - deletion.deletedAt.getTime()).toBe(7 * 24 * 60 * 60 * 1000)
    expect(await rejection(asOwner.organizations.get())).toMatchObject({ status: 404, code: "organization_not_found" })
    const restorable = await asOwner.users.listOrganizations({ urlParams: { deleted: true } })
    expect(restorable.items.map((item) => [item.organization.id, item.purgeAfter])).toEqual([[organization.id, deletion.purgeAfter]])
    const restored = await asOwner.organizations.restore({ path: { organizationId: organization.id } })
    expect(restored.organization.name).toBe("Acme Labs")
    expect((await asOwner.organizations.get()).organization.id).toBe(organization.id)
  })
})
