/**
 * An account's whole life over HTTP (issue 45, item 2): a person deletes their own account (what goes, what stays
 * under a pseudonym, the last-owner rule), exports their data, changes their email; the instance's operator lists
 * accounts, disables and enables one, and deletes any. One server for the file, on a database the test shares (to
 * write what an OAuth flow would, and to look for what must be gone), with a clock it moves.
 */
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let operator: Awaited<ReturnType<typeof Http.operator>>

beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ clock, defaultPlan: "enterprise" })
  operator = await Http.operator(server.url)
})
afterAll(() => server?.close())

const { account, admin, apiKeys, audit, invitations, mcpConnections, members, memory, organizations, scimUsers, teams, users } = calls(() => server.url)
const signIn = (email: string, password: string) => users.signIn({ payload: { email, password } })

const PSEUDONYM = /^deleted-user-[0-9a-f]{12}$/

/** Every audit event of the organization its owner or admin reads (newest first, up to 100). */
const events = async (token: string, query: { readonly action?: string; readonly targetId?: string } = {}) =>
  ok(await audit.listEvents({ token, query: { limit: "100", ...query } }), 200).items

/** A fresh session of the operator: the operator's changes to accounts ask for a recent sign-in. */
const operatorToken = async () => ok(await signIn(operator.email, operator.password), 200).session.token

describe("a person deleting their own account", () => {
  it("with its password: sessions, keys, memberships, memories and delegated connections go; the log keeps its events under a pseudonym", async () => {
    const org = await Http.staffed(server.url, "Deletes")
    const person = org.admin
    const second = ok(await signIn(person.email, person.password), 200).session.token
    const key = ok(await apiKeys.create({ token: person.token, payload: { name: "ci" } }), 201).key
    ok(await memory.save({ token: person.token, payload: { content: "Staging resets on Sundays." } }), 201)
    ok(await users.updateMe({ token: person.token, payload: { name: "Admin Renamed" } }), 200)
    // What a member's OAuth flows write: their own credential of a per-member MCP connection, a mail suite connection.
    const mcp = ok(await mcpConnections.create({
      token: org.owner.token,
      payload: { name: "Per member", url: "https://93.184.215.14/mcp", authType: "oauth", credentialMode: "per_member" }
    }), 201).item
    await server.sql((sql) => sql`
      INSERT INTO mcp_member_credentials (organization_id, mcp_connection_id, membership_id, access_token_ciphertext, connected_at, credential_health, updated_at)
      VALUES (${org.organizationId}, ${mcp.id}, ${person.membership.id}, 'ciphertext', now(), 'ready', now())`)
    await server.sql((sql) => sql`
      INSERT INTO suite_clients (organization_id, suite, client_id, created_at, updated_at) VALUES (${org.organizationId}, 'suite-a', 'client', now(), now())`)
    await server.sql((sql) => sql`
      INSERT INTO suite_credentials (organization_id, suite, membership_id, access_token_ciphertext, connected_at, updated_at)
      VALUES (${org.organizationId}, 'suite-a', ${person.membership.id}, 'ciphertext', now(), now())`)

    const deleted = await account.delete({ token: person.token, payload: { password: person.password } })
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body).toEqual({
      userId: person.user.id,
      pseudonym: expect.stringMatching(PSEUDONYM),
      organizationsLeft: [org.organizationId],
      organizationsWithoutMembers: [],
      removed: { sessions: 2, apiKeys: 1, memories: 1, mcpCredentials: 1, suiteConnections: 1, ssoLinks: 0, scimUsers: 0 }
    })
    const pseudonym = ok(deleted, 200).pseudonym

    // Nothing of the person works any more, and their address is free.
    for (const token of [person.token, second]) expect((await users.me({ token })).status).toBe(401)
    expect((await teams.list({ apiKey: key })).status).toBe(401)
    expect((await signIn(person.email, person.password)).status).toBe(401)
    const again = ok(await users.signUp({ payload: { email: person.email, password: "another password", name: "Somebody New" } }), 201)
    expect(again.user.id).not.toBe(person.user.id)

    // The organization keeps a former member, named by the pseudonym; nothing of their own is left in its tables.
    const former = ok(await members.list({ token: org.owner.token, query: { includeRemoved: "true" } }), 200).items
    expect(former.find((member) => member.id === person.membership.id)).toMatchObject({
      name: pseudonym,
      email: pseudonym,
      removedAt: expect.any(String)
    })
    const left = await server.sql((sql) => sql`SELECT
        (SELECT count(*)::int FROM memories WHERE organization_id = ${org.organizationId} AND user_id = ${person.user.id}) AS memories,
        (SELECT count(*)::int FROM mcp_member_credentials WHERE organization_id = ${org.organizationId} AND membership_id = ${person.membership.id}) AS mcp,
        (SELECT count(*)::int FROM suite_credentials WHERE organization_id = ${org.organizationId} AND membership_id = ${person.membership.id}) AS suites,
        (SELECT count(*)::int FROM api_keys WHERE organization_id = ${org.organizationId} AND membership_id = ${person.membership.id}) AS keys`)
    expect(left).toEqual([{ memories: 0, mcp: 0, suites: 0, keys: 0 }])

    // The audit log keeps every event, the person in them by the pseudonym; their name change shows which field, not what.
    const log = await events(org.owner.token)
    const text = JSON.stringify(log)
    for (const trace of [person.email, "Admin Renamed", "Admin <"]) expect(text).not.toContain(trace)
    const theirs = log.filter((event) => event.actor.id === person.user.id || event.actor.membershipId === person.membership.id)
    expect(theirs.map((event) => event.action)).toEqual(expect.arrayContaining(["user.delete", "user.update", "memory.save", "api_key.create"]))
    for (const event of theirs) expect(event.actor.label).toBe(pseudonym)
    expect(theirs.find((event) => event.action === "user.update")?.changes).toEqual({
      before: { name: "[redacted]" },
      after: { name: "[redacted]" },
      changedFields: ["name"]
    })
    expect(theirs.find((event) => event.action === "user.delete")).toMatchObject({
      outcome: "succeeded",
      actor: { type: "user", id: person.user.id, membershipId: person.membership.id, label: pseudonym },
      targets: [{ type: "user", id: person.user.id }]
    })
  })

  it("needs the password or a recent sign-in; a wrong password, an API key or an old session change nothing", async () => {
    const owner = await Http.owner(server.url, "Confirms")
    const person = await Http.join(server.url, owner.token, "member", "Confirming")
    const wrong = await account.delete({ token: person.token, payload: { password: "not the password" } })
    expect([wrong.status, wrong.body]).toEqual([400, expect.objectContaining({ details: [{ path: ["password"], message: "is not the account's current password" }] })])
    const key = ok(await apiKeys.create({ token: owner.token, payload: { name: "k" } }), 201).key
    const byKey = await account.delete({ apiKey: key, payload: {} })
    expect([byKey.status, byKey.body]).toMatchObject([403, { reason: "session_required" }])

    clock.advance("3 hours")
    const stale = await account.delete({ token: person.token, payload: {} })
    expect([stale.status, stale.body]).toMatchObject([403, { reason: "recent_authentication_required" }])
    expect(stale.body).toMatchObject({ message: expect.stringContaining("send the account's password as `password`") })
    expect((await users.me({ token: person.token })).status).toBe(200)

    // Signing in again is a recent sign-in: `{}` is enough.
    const fresh = ok(await signIn(person.email, person.password), 200).session.token
    const deleted = await account.delete({ token: fresh, payload: {} })
    expect(deleted.status, deleted.text).toBe(200)
    expect(ok(deleted, 200).organizationsLeft).toEqual([owner.organization.id])
  })

  it("is refused while the person is the last owner of an organization with other members, until ownership moves", async () => {
    const org = await Http.staffed(server.url, "Owned Co")
    const alone = ok(await organizations.create({ token: org.owner.token, payload: { name: "Solo" } }), 201)
    ok(await users.switchOrganization({ token: org.owner.token, payload: { organizationId: org.organizationId } }), 200)
    const refused = await account.delete({ token: org.owner.token, payload: { password: org.owner.password } })
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ error: "last_owner_of_organizations" })
    expect(refused.body).toMatchObject({ message: expect.stringContaining(`Owned Co (${org.organizationId})`) })
    expect(refused.body).toMatchObject({ message: expect.not.stringContaining(alone.organization.id) })
    expect(refused.body).toMatchObject({ message: expect.stringContaining("POST /v1/members/{memberId}/transfer-ownership") })
    // Nothing changed: the owner still acts.
    expect((await members.list({ token: org.owner.token })).status).toBe(200)

    ok(await members.transferOwnership({ token: org.owner.token, path: { memberId: org.admin.membership.id } }), 200)
    const deletion = await account.delete({ token: org.owner.token, payload: { password: org.owner.password } })
    expect(deletion.status, deletion.text).toBe(200)
    const deleted = ok(deletion, 200)
    expect([...deleted.organizationsLeft].sort()).toEqual([org.organizationId, alone.organization.id].sort())
    // The organization only they were in is left without members, and deleted with the account: restorable by the
    // operator for the grace period, then purged.
    expect(deleted.organizationsWithoutMembers).toEqual([alone.organization.id])
    const deletedOnes = ok(await admin.listOrganizations({ token: await operatorToken(), query: { deleted: "true" } }), 200)
    expect(deletedOnes.items.filter((item) => item.id === alone.organization.id)).toEqual([
      expect.objectContaining({ id: alone.organization.id, deletedAt: expect.any(String), purgeAfter: expect.any(String) })
    ])
    // The organization they had members in goes on.
    const live = ok(await admin.listOrganizations({ token: await operatorToken(), query: { deleted: "false", q: "Owned Co" } }), 200)
    expect(live.items.map((item) => item.id)).toContain(org.organizationId)
    const owners = ok(await members.list({ token: org.admin.token, query: { role: "owner" } }), 200).items
    expect(owners.map((member) => member.id)).toEqual([org.admin.membership.id])
  })
})

describe("a person's export", () => {
  it("is one JSON attachment: profile, memberships, memories, sessions and keys' metadata, no secret", async () => {
    const org = await Http.staffed(server.url, "Exports")
    const person = org.admin
    const key = ok(await apiKeys.create({ token: person.token, payload: { name: "ci" } }), 201)
    ok(await memory.save({ token: person.token, payload: { content: "Remember the milk.", tags: ["home"] } }), 201)
    const other = ok(await organizations.create({ token: person.token, payload: { name: "Side" } }), 201)

    const exported = await account.export({ token: person.token })
    expect(exported.status, exported.text).toBe(200)
    expect(exported.headers.get("content-disposition")).toMatch(
      new RegExp(`^attachment; filename="orgplane-account-${person.user.id}-\\d{4}-\\d{2}-\\d{2}\\.json"$`)
    )
    const body = ok(exported, 200)
    expect(body.format).toBe("orgplane.account-export.v1")
    expect(body.user).toMatchObject({ id: person.user.id, email: person.email, emailVerified: false })
    expect(body.memberships.map((entry) => [entry.organization.name, entry.membership.role])).toEqual([
      ["Exports", "admin"],
      ["Side", "owner"]
    ])
    expect(body.memberships[1]?.organization.id).toBe(other.organization.id)
    expect(body.memories).toEqual([{
      organizationId: org.organizationId,
      memory: expect.objectContaining({ content: "Remember the milk.", tags: ["home"], contexts: [] })
    }])
    expect(body.sessions).toEqual([expect.objectContaining({ current: true, method: "password" })])
    expect(body.apiKeys).toEqual([expect.objectContaining({ id: key.apiKey.id, organizationId: org.organizationId, name: "ci" })])
    expect(exported.text).not.toContain(key.key)
    expect(exported.text).not.toContain(person.token)

    const byKey = await account.export({ apiKey: key.key })
    expect([byKey.status, byKey.body]).toMatchObject([403, { reason: "session_required" }])
  })
})

describe("changing one's email", () => {
  it("needs the password, leaves the new address unverified and the old one free; 409 for a taken one", async () => {
    const person = await Http.signUp(server.url, "Mover")
    const other = await Http.signUp(server.url, "Taken")
    const fresh = `mover.${Math.random().toString(36).slice(2, 8)}@example.net`

    const wrong = await users.changeEmail({ token: person.token, payload: { email: fresh, password: "wrong password" } })
    expect([wrong.status, invalid(wrong).details[0]?.path]).toEqual([400, ["password"]])
    const taken = await users.changeEmail({ token: person.token, payload: { email: other.email.toUpperCase(), password: person.password } })
    expect([taken.status, taken.body]).toEqual([409, { error: "email_taken", message: expect.any(String) }])

    const changed = await users.changeEmail({ token: person.token, payload: { email: fresh, password: person.password } })
    expect(changed.status, changed.text).toBe(200)
    expect(changed.body).toEqual({ user: expect.objectContaining({ id: person.user.id, email: fresh }), emailVerified: false })
    expect(ok(await users.me({ token: person.token }), 200).user.email).toBe(fresh)
    expect((await signIn(fresh, person.password)).status).toBe(200)
    expect((await signIn(person.email, person.password)).status).toBe(401)
    ok(await users.signUp({ payload: { email: person.email, password: "a password here", name: "New" } }), 201)

    const byKeyless = await users.changeEmail({ payload: { email: fresh, password: person.password } })
    expect(byKeyless.status).toBe(401)
  })

  it("is recorded, old and new address, in the person's organizations' audit log", async () => {
    const org = await Http.staffed(server.url, "Email Co")
    const fresh = `member.${Math.random().toString(36).slice(2, 8)}@example.net`
    ok(await users.changeEmail({ token: org.member.token, payload: { email: fresh, password: org.member.password } }), 200)
    const [event] = await events(org.owner.token, { action: "user.email.change" })
    expect(event).toMatchObject({
      action: "user.email.change",
      category: "security",
      actor: { id: org.member.user.id },
      targets: [{ type: "user", id: org.member.user.id }],
      changes: { before: { email: org.member.email }, after: { email: fresh }, changedFields: ["email"] }
    })
  })
})

describe("the operator's people", () => {
  it("lists accounts by keyset pages, filtered by email and state, with their organization count", async () => {
    const token = await operatorToken()
    const marker = `listed${Math.random().toString(36).slice(2, 8)}`
    const owner = await Http.owner(server.url, "Listed")
    const people = []
    for (let index = 0; index < 3; index++) {
      const person = ok(await users.signUp({ payload: { email: `${marker}.${index}@example.org`, password: "a long password", name: `Listed ${index}` } }), 201)
      people.push(person.user)
    }
    const first = ok(await admin.listUsers({ token, query: { email: marker, limit: "2" } }), 200)
    expect(first.items.map((user) => user.email)).toEqual([`${marker}.0@example.org`, `${marker}.1@example.org`])
    expect(first.items[0]).toEqual({
      id: people[0]?.id,
      email: `${marker}.0@example.org`,
      name: "Listed 0",
      createdAt: expect.any(String),
      emailVerified: false,
      disabledAt: null,
      organizationCount: 0
    })
    const cursor = first.nextCursor
    if (cursor === null) throw new Error("expected a next page")
    const second = ok(await admin.listUsers({ token, query: { email: marker, limit: "2", cursor } }), 200)
    expect([second.items.map((user) => user.id), second.nextCursor]).toEqual([[people[2]?.id], null])
    const foreign = await admin.listUsers({ token, query: { email: "other", cursor } })
    expect(foreign.status).toBe(400)

    const counted = ok(await admin.listUsers({ token, query: { email: owner.email } }), 200).items
    expect(counted).toEqual([expect.objectContaining({ id: owner.user.id, organizationCount: 1 })])

    const disabledPerson = people[1]
    if (disabledPerson === undefined) throw new Error("expected three people")
    ok(await admin.disableUser({ token, path: { userId: disabledPerson.id } }), 200)
    const disabled = ok(await admin.listUsers({ token, query: { email: marker, disabled: "true" } }), 200).items
    expect(disabled.map((user) => [user.id, typeof user.disabledAt])).toEqual([[disabledPerson.id, "string"]])
    const enabled = ok(await admin.listUsers({ token, query: { email: marker, disabled: "false" } }), 200).items
    expect(enabled.map((user) => user.id)).toEqual([people[0]?.id, people[2]?.id])

    // Only the operator organization's owners and admins.
    const refused = await admin.listUsers({ token: owner.token })
    expect([refused.status, refused.body]).toMatchObject([403, { reason: "operator_only" }])
  })

  it("disables an account at once and enables it again: sessions end for good, keys and sign-ins are refused meanwhile", async () => {
    const token = await operatorToken()
    const org = await Http.staffed(server.url, "Disabled Co")
    const person = org.admin
    const path = { userId: person.user.id }
    const key = ok(await apiKeys.create({ token: person.token, payload: { name: "ci" } }), 201).key
    expect((await teams.list({ apiKey: key })).status).toBe(200)

    const disabling = await admin.disableUser({ token, path })
    expect(disabling.status, disabling.text).toBe(200)
    const disabled = ok(disabling, 200)
    expect(disabled.user).toMatchObject({ id: person.user.id, disabledAt: expect.any(String), organizationCount: 1 })
    expect((await users.me({ token: person.token })).status).toBe(401)
    expect((await teams.list({ apiKey: key })).status).toBe(401)
    expect((await teams.create({ apiKey: key, payload: { name: "Nope" } })).status).toBe(401)
    const signedIn = await signIn(person.email, person.password)
    expect([signedIn.status, signedIn.body]).toMatchObject([403, { reason: "account_disabled" }])
    // A wrong password is the 401 any account gets: the state is told only to whoever knows the password.
    expect((await signIn(person.email, "not the password")).status).toBe(401)
    // Nor can they accept an invitation: their session no longer signs them in, and signing up again with the
    // address is refused (the account exists).
    const elsewhere = await Http.owner(server.url, "Elsewhere")
    const invited = ok(await invitations.create({ token: elsewhere.token, payload: { email: person.email, role: "member" } }), 201)
    const inviteToken = invited.inviteToken
    if (inviteToken === null || inviteToken === undefined) throw new Error("the invitation came without its token")
    const withSession = await invitations.accept({ token: person.token, payload: { token: inviteToken } })
    expect(withSession.status).toBe(401)
    const bySignUp = await invitations.accept({ payload: { token: inviteToken, signUp: { name: "Again", password: "a long password" } } })
    expect([bySignUp.status, bySignUp.body]).toMatchObject([409, { error: "account_exists" }])
    // Disabling again answers the account as it is.
    const twice = ok(await admin.disableUser({ token, path }), 200)
    expect(twice.user.disabledAt).toBe(disabled.user.disabledAt)

    const enabled = await admin.enableUser({ token, path })
    expect([enabled.status, ok(enabled, 200).user.disabledAt]).toEqual([200, null])
    expect((await users.me({ token: person.token })).status).toBe(401)
    expect((await teams.list({ apiKey: key })).status).toBe(200)
    expect((await signIn(person.email, person.password)).status).toBe(200)

    // Both recorded in the operator organization, with the state before and after.
    const log = await events(token, { targetId: person.user.id })
    expect(log.map((event) => event.action)).toEqual(["user.enable", "user.disable", "user.disable"])
    expect(log[2]).toMatchObject({
      actor: { id: operator.user.id },
      changes: { before: { disabledAt: null }, after: { disabledAt: disabled.user.disabledAt }, changedFields: ["disabledAt"] }
    })
  })

  it("refuses disabling one's own account, a missing one, and a session that did not sign in lately", async () => {
    const token = await operatorToken()
    const self = await admin.disableUser({ token, path: { userId: operator.user.id } })
    expect([self.status, self.body]).toMatchObject([409, { error: "cannot_disable_yourself" }])
    const missing = await admin.disableUser({ token, path: { userId: "usr_01jc0000000000000000000000" } })
    expect([missing.status, missing.body]).toMatchObject([404, { error: "user_not_found" }])
    const target = await Http.signUp(server.url, "Target")
    clock.advance("3 hours")
    const stale = await admin.disableUser({ token, path: { userId: target.user.id } })
    expect([stale.status, stale.body]).toMatchObject([403, { reason: "recent_authentication_required" }])
  })

  it("deletes any account: recorded where the person was and in the operator organization; refused for a last owner", async () => {
    const token = await operatorToken()
    const org = await Http.staffed(server.url, "Removed Co")
    const refused = await admin.deleteUser({ token, path: { userId: org.owner.user.id } })
    expect([refused.status, refused.body]).toMatchObject([409, { error: "last_owner_of_organizations" }])

    const deletion = await admin.deleteUser({ token, path: { userId: org.member.user.id } })
    expect(deletion.status, deletion.text).toBe(200)
    expect(deletion.body).toMatchObject({ userId: org.member.user.id, organizationsLeft: [org.organizationId], removed: { sessions: 1 } })
    const deleted = ok(deletion, 200)
    expect((await users.me({ token: org.member.token })).status).toBe(401)
    const again = await admin.deleteUser({ token, path: { userId: org.member.user.id } })
    expect([again.status, again.body]).toMatchObject([404, { error: "user_not_found" }])
    expect(ok(await admin.listUsers({ token, query: { email: org.member.email } }), 200).items).toEqual([])

    const there = await events(org.owner.token, { action: "user.delete" })
    expect(there).toEqual([expect.objectContaining({
      actor: expect.objectContaining({ id: operator.user.id, membershipId: null, label: expect.stringContaining(operator.email) }),
      targets: [{ type: "user", id: org.member.user.id }]
    })])
    const mine = await events(token, { action: "user.delete", targetId: org.member.user.id })
    expect(mine).toEqual([expect.objectContaining({ actor: expect.objectContaining({ id: operator.user.id, membershipId: operator.membership.id }) })])
    // In the organization's log the member's own events name them by the pseudonym now.
    const theirs = (await events(org.owner.token)).filter((event) => event.actor.id === org.member.user.id)
    expect(theirs.length).toBeGreaterThan(0)
    for (const event of theirs) expect(event.actor.label).toBe(deleted.pseudonym)
  })
})

describe("directory provisioning and a deleted account", () => {
  it("the directory's User answers 404 once the account is deleted; provisioned again, it is a new account", async () => {
    const owner = await Http.owner(server.url, "Directory Co")
    const directory = await Http.scimDirectory(server.url, owner.token)
    // As a directory sends them: SCIM's own media type.
    const scim = { token: directory.token, headers: { "content-type": "application/scim+json" } }
    const connection = { connectionId: directory.connection.id }
    const email = `provisioned.${Math.random().toString(36).slice(2, 8)}@example.com`
    const user = { schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"], userName: email, name: { givenName: "Pro", familyName: "Visioned" }, active: true }
    const created = await scimUsers.create({ ...scim, path: connection, payload: user })
    expect(created.status, created.text).toBe(201)
    const createdId = ok(created, 201).id
    const accountId = ok(await members.get({ token: owner.token, path: { memberId: createdId } }), 200).member.userId
    if (accountId === null || accountId === undefined) throw new Error("the provisioned member has no account")

    const token = await operatorToken()
    const deleted = ok(await admin.deleteUser({ token, path: { userId: accountId } }), 200)
    expect(deleted.removed.scimUsers).toBe(1)
    expect((await scimUsers.get({ ...scim, path: { ...connection, userId: createdId } })).status).toBe(404)
    const listed = await scimUsers.list({ ...scim, path: connection, query: { filter: `userName eq "${email}"` } })
    expect(listed.body).toMatchObject({ totalResults: 0 })

    const again = await scimUsers.create({ ...scim, path: connection, payload: user })
    expect(again.status, again.text).toBe(201)
    const member = ok(await members.get({ token: owner.token, path: { memberId: ok(again, 201).id } }), 200).member
    expect(member.userId).not.toBe(accountId)
    expect(member.email).toBe(email)
  })
})
