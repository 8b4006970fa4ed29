/**
 * API key scopes through HTTP: the default set (no key management, ownership or audit retention), scopes within the
 * maker's role and the making key's scopes, 403 `insufficient_scope`, a demotion still narrowing a key, the parent
 * recorded and its revocation taking the keys it made, and the scopes in `GET /v1/api-keys` and the audit log.
 */
import { Actions, Api, type CreatedApiKey, type CreatedInvitation, operationsOf } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(async () => {
  await server?.close()
})

const { del, get, patch, post } = Http.verbs(() => server.url)
const put = (path: string, options: Http.Options) => Http.request(server.url, "PUT", path, options)
const api = calls(() => server.url)

/** Makes a key with `credential` (a session token or a key): the created body. */
const makeKey = async (credential: { token: string } | { apiKey: string }, body: Record<string, unknown>) =>
  Http.expectStatus<typeof CreatedApiKey.Encoded>(
    "key",
    await post("/v1/api-keys", { ...credential, body: { name: "k", ...body } }),
    201
  )

describe("API key scopes", { timeout: 60_000 }, () => {
  it("gives a key made without scopes its maker's role except key management, ownership and audit retention", async () => {
    const org = await Http.staffed(server.url)
    const { apiKey, key } = await makeKey({ token: org.owner.token }, {})
    expect(apiKey.scopes).toContain("teams.manage")
    for (const guarded of ["apiKeys.manage", "members.manageOwners", "members.transferOwnership", "audit.manage", "organizations.setPlan"]) {
      expect(apiKey.scopes, guarded).not.toContain(guarded)
    }
    expect(apiKey.parentApiKeyId).toBeNull()
    // Ordinary work goes on.
    expect((await post("/v1/teams", { apiKey: key, body: { name: "CI" } })).status).toBe(201)
    // What the owner CI key did: make keys, make owners, hand over ownership, cut audit retention.
    const refusals = [
      await post("/v1/api-keys", { apiKey: key, body: { name: "child" } }),
      await patch(`/v1/members/${org.admin.membership.id}`, { apiKey: key, body: { role: "owner" } }),
      await post(`/v1/members/${org.admin.membership.id}/transfer-ownership`, { apiKey: key }),
      await put("/v1/audit/settings", { apiKey: key, body: { retentionDays: 7 } })
    ]
    for (const refused of refusals) {
      expect([refused.status, Json.at(refused.body, "reason")], refused.text).toEqual([403, "insufficient_scope"])
    }
    // An admin's default key has no owner's action.
    const adminKey = await makeKey({ token: org.admin.token }, {})
    expect(adminKey.apiKey.scopes).toContain("members.remove")
    expect(adminKey.apiKey.scopes).not.toContain("members.manageOwners")
  })

  it("keeps scopes within the maker's role, refuses what they leave out, and narrows a key when its maker is demoted", async () => {
    const org = await Http.staffed(server.url)
    const beyond = await post("/v1/api-keys", { token: org.admin.token, body: { name: "k", scopes: ["teams.read", "audit.manage"] } })
    const beyondBody = invalid(beyond)
    expect([beyond.status, beyondBody.error, beyondBody.details[0]?.path]).toEqual([400, "invalid_request", ["scopes", 1]])
    const unknown = await post("/v1/api-keys", { token: org.admin.token, body: { name: "k", scopes: ["teams.everything"] } })
    expect(unknown.status).toBe(400)

    const reader = await makeKey({ token: org.admin.token }, { scopes: ["members.read"] })
    expect(reader.apiKey.scopes).toEqual(["members.read"])
    expect((await get("/v1/members", { apiKey: reader.key })).status).toBe(200)
    const write = await post("/v1/teams", { apiKey: reader.key, body: { name: "Nope" } })
    expect([write.status, Json.at(write.body, "reason")]).toEqual([403, "insufficient_scope"])

    // An area's `.*`: every action of it.
    const teams = await makeKey({ token: org.admin.token }, { scopes: ["teams.*"] })
    expect(teams.apiKey.scopes).toEqual(["teams.read", "teams.manage"])
    expect((await post("/v1/teams", { apiKey: teams.key, body: { name: "Ops" } })).status).toBe(201)
    // The maker's demotion narrows the key, as it narrows the maker.
    expect((await patch(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token, body: { role: "member" } })).status).toBe(200)
    const demoted = await post("/v1/teams", { apiKey: teams.key, body: { name: "Ops 2" } })
    expect([demoted.status, Json.at(demoted.body, "reason")]).toEqual([403, "insufficient_role"])
  })

  it("lets a key make keys only with a scope naming it and within its own scopes, and revokes what a key made with it", async () => {
    const org = await Http.staffed(server.url)
    const parent = await makeKey({ token: org.owner.token }, { scopes: ["apiKeys.manage", "teams.*"] })
    const child = await makeKey({ apiKey: parent.key }, { scopes: ["teams.read", "apiKeys.manage"] })
    expect(child.apiKey.parentApiKeyId).toBe(parent.apiKey.id)
    // Not beyond the making key's scopes, even within the maker's role; the default is cut to them too.
    const wider = await post("/v1/api-keys", { apiKey: parent.key, body: { name: "wider", scopes: ["members.read"] } })
    expect([wider.status, invalid(wider).details[0]?.message]).toEqual([400, "members.read is beyond the scopes of the API key making this one"])
    const defaulted = await makeKey({ apiKey: parent.key }, {})
    expect(defaulted.apiKey.scopes).toEqual(["teams.read", "teams.manage"])
    const grandchild = await makeKey({ apiKey: child.key }, { scopes: ["teams.read"] })
    expect(grandchild.apiKey.parentApiKeyId).toBe(child.apiKey.id)

    // The list shows scopes and parents.
    const listed = ok(await api.apiKeys.list({ token: org.owner.token }), 200).items
    expect(listed.find((key) => key.id === grandchild.apiKey.id)).toMatchObject({ scopes: ["teams.read"], parentApiKeyId: child.apiKey.id })
    // The audit log records a key's scopes when it is made.
    const logged = await api.audit.listEvents({ token: org.owner.token, query: { action: "api_key.create", targetId: grandchild.apiKey.id } })
    const [event] = ok(logged, 200).items
    if (event === undefined) throw new Error(`the audit log has no api_key.create of the grandchild: ${logged.text}`)
    expect(event.actor).toMatchObject({ type: "api_key", id: child.apiKey.id })
    expect(JSON.stringify(event.changes)).toContain("teams.read")

    // Revoking the parent revokes every key made with it, and theirs; another key of the owner stays.
    const other = await makeKey({ token: org.owner.token }, { scopes: ["teams.read"] })
    expect((await del(`/v1/api-keys/${parent.apiKey.id}`, { token: org.owner.token })).status).toBe(204)
    for (const revoked of [parent, child, defaulted, grandchild]) {
      expect((await get("/v1/teams", { apiKey: revoked.key })).status).toBe(401)
    }
    expect((await get("/v1/teams", { apiKey: other.key })).status).toBe(200)
  })

  it("lets a key revoke the key that made it, with itself (decided in the revoking transaction)", async () => {
    const org = await Http.staffed(server.url)
    const parent = await makeKey({ token: org.owner.token }, { scopes: ["apiKeys.manage"] })
    const child = await makeKey({ apiKey: parent.key }, { scopes: ["apiKeys.manage"] })
    expect((await del(`/v1/api-keys/${parent.apiKey.id}`, { apiKey: child.key })).status).toBe(204)
    expect((await get("/v1/api-keys", { apiKey: child.key })).status).toBe(401)
  })
})

/** An invitation made with `credential`: its id and token. */
const invite = async (credential: { token: string } | { apiKey: string }, role: "admin" | "member") => {
  const email = `invitee.${Math.random().toString(36).slice(2, 10)}@example.com`
  const created = Http.expectStatus<typeof CreatedInvitation.Encoded>(
    "invitation",
    await post("/v1/invitations", { ...credential, body: { email, role } }),
    201
  )
  if (created.inviteToken === null) throw new Error(`the invitation answered no inviteToken: ${JSON.stringify(created)}`)
  return { id: created.invitation.id, token: created.inviteToken, email }
}

describe("operations only a session may call", { timeout: 60_000 }, () => {
  it("refuses every API key, whatever its scopes, with 403 session_required (before reading the request); the document marks each and says so", async () => {
    const org = await Http.staffed(server.url)
    // A key that may take every action its maker's role allows.
    const { key } = await makeKey({ token: org.owner.token }, { scopes: [...Actions] })
    const marked = operationsOf(Api).filter((operation) => operation.sessionOnly)
    expect(marked.length).toBeGreaterThanOrEqual(18)
    for (const operation of marked) {
      // Any path argument and no body: the refusal comes before the request is read, but where the operation also
      // serves anonymous callers (an invitation's acceptance), which reads its body first.
      const path = operation.path.replace(/:[A-Za-z]+/g, "x")
      const body = operation.id === "invitations.accept" ? { token: "inv_unknown" } : {}
      const answer = await Http.request(server.url, operation.method, path, { apiKey: key, ...(operation.readOnly ? {} : { body }) })
      expect([operation.id, answer.status, Json.at(answer.body, "reason")], answer.text).toEqual([operation.id, 403, "session_required"])
    }
    // The words of each operation say it too, and only of these (the document and the mark cannot drift apart).
    const worded = operationsOf(Api).filter((operation) => /403 `session_required` with an API key/.test(operation.description)).map((operation) => operation.id)
    expect(worded.sort()).toEqual(marked.map((operation) => operation.id).filter((id) => worded.includes(id)).sort())
    expect(marked.filter((operation) => !/session_required/.test(operation.description)).map((operation) => operation.id)).toEqual([])
  })
})

describe("API key scopes over people (issue 55, item 5)", { timeout: 60_000 }, () => {
  it("invites admins and changes roles only with a scope naming it: a key made without scopes invites members", async () => {
    const org = await Http.staffed(server.url)
    const { apiKey, key } = await makeKey({ token: org.owner.token }, {})
    expect(apiKey.scopes).toContain("invitations.manage")
    for (const guarded of ["invitations.inviteAdmins", "members.changeRole"]) expect(apiKey.scopes, guarded).not.toContain(guarded)
    // What a leaked default key did: invite an admin of the holder's choosing, and raise a member to admin.
    const refusals = [
      await post("/v1/invitations", { apiKey: key, body: { email: "someone@example.com", role: "admin" } }),
      await patch(`/v1/members/${org.member.membership.id}`, { apiKey: key, body: { role: "admin" } }),
      await patch(`/v1/members/${org.admin.membership.id}`, { apiKey: key, body: { role: "member" } })
    ]
    for (const refused of refusals) expect([refused.status, Json.at(refused.body, "reason")], refused.text).toEqual([403, "insufficient_scope"])
    expect(ok(await api.members.get({ token: org.owner.token, path: { memberId: org.member.membership.id } }), 200).member.role).toBe("member")
    // Members it still invites, and the admin invitations the refusal left out do not exist.
    await invite({ apiKey: key }, "member")
    const pending = ok(await api.invitations.list({ token: org.owner.token, query: { status: "pending" } }), 200).items
    expect(pending.map((invitation) => invitation.role)).toEqual(["member"])

    // Named, they are the key's: the action itself, or its area's `.*`.
    const inviter = await makeKey({ token: org.owner.token }, { scopes: ["invitations.*"] })
    expect(inviter.apiKey.scopes).toEqual(["invitations.manage", "invitations.inviteAdmins"])
    await invite({ apiKey: inviter.key }, "admin")
    const roles = await makeKey({ token: org.owner.token }, { scopes: ["members.changeRole"] })
    expect((await patch(`/v1/members/${org.member.membership.id}`, { apiKey: roles.key, body: { role: "admin" } })).status).toBe(200)
    // An admin's default key has neither; a session keeps both.
    const adminKey = await makeKey({ token: org.admin.token }, {})
    expect(adminKey.apiKey.scopes).not.toContain("members.changeRole")
    await invite({ token: org.admin.token }, "admin")
  })

  it("cancels the pending invitations a key made when the key goes, whichever way it goes", async () => {
    const org = await Http.staffed(server.url)
    const statusOf = async (id: string) => ok(await api.invitations.get({ token: org.owner.token, path: { invitationId: id } }), 200).invitation.status
    const accept = (token: string) => post("/v1/invitations/accept", { body: { token, signUp: { name: "Invitee", password: "correct horse battery" } } })

    // Revoked: its pending admin invitation is canceled; its token neither previews nor joins. One accepted before
    // stays accepted; the session's own invitation stays pending.
    const leaked = await makeKey({ token: org.owner.token }, { scopes: ["invitations.*"] })
    const pendingAdmin = await invite({ apiKey: leaked.key }, "admin")
    const acceptedBefore = await invite({ apiKey: leaked.key }, "member")
    expect((await accept(acceptedBefore.token)).status).toBe(200)
    const bySession = await invite({ token: org.owner.token }, "member")
    expect((await del(`/v1/api-keys/${leaked.apiKey.id}`, { token: org.owner.token })).status).toBe(204)
    expect(await statusOf(pendingAdmin.id)).toBe("canceled")
    expect(await statusOf(acceptedBefore.id)).toBe("accepted")
    expect(await statusOf(bySession.id)).toBe("pending")
    expect((await post("/v1/invitations/preview", { body: { token: pendingAdmin.token } })).status).toBe(404)
    expect((await accept(pendingAdmin.token)).status).toBe(404)

    // A key revoked with the key that made it.
    const parent = await makeKey({ token: org.owner.token }, { scopes: ["apiKeys.manage", "invitations.*"] })
    const child = await makeKey({ apiKey: parent.key }, { scopes: ["invitations.manage"] })
    const byChild = await invite({ apiKey: child.key }, "member")
    expect((await del(`/v1/api-keys/${parent.apiKey.id}`, { token: org.owner.token })).status).toBe(204)
    expect(await statusOf(byChild.id)).toBe("canceled")

    // The keys of a maker who is removed.
    const adminKey = await makeKey({ token: org.admin.token }, { scopes: ["invitations.*"] })
    const byAdminKey = await invite({ apiKey: adminKey.key }, "admin")
    const byAdminSession = await invite({ token: org.admin.token }, "member")
    expect((await del(`/v1/members/${org.admin.membership.id}`, { token: org.owner.token })).status).toBe(204)
    expect(await statusOf(byAdminKey.id)).toBe("canceled")
    expect(await statusOf(byAdminSession.id)).toBe("pending")

    // An invitation a key made and a session refreshed is the session's: it outlives the key.
    const refresher = await makeKey({ token: org.owner.token }, { scopes: ["invitations.manage"] })
    const refreshed = await invite({ apiKey: refresher.key }, "member")
    expect((await post("/v1/invitations", { token: org.owner.token, body: { email: refreshed.email, role: "member" } })).status).toBe(200)
    expect((await del(`/v1/api-keys/${refresher.apiKey.id}`, { token: org.owner.token })).status).toBe(204)
    expect(await statusOf(refreshed.id)).toBe("pending")
  })
})
