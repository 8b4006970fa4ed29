/**
 * accounts/ (AccountDeletion, AccountExport) as services, on a fresh migrated database (the embedded one, or Postgres
 * with DATABASE_URL): what http/AccountLifecycle.test.ts and Account.test.ts check through HTTP that lives in these
 * services. A person deleting their own account (what goes: sessions, keys, memberships, memories, delegated MCP and
 * suite credentials, SCIM Users; what stays under a pseudonym), confirmed by the password or a recent sign-in; the
 * last-owner rule and an organization left without members deleted with the account; the operator deleting any
 * account; a person's export. The errors are held word for word, as the API answers them.
 */
import { expect, layer } from "@effect/vitest"
import { type Actor, type MemberContext, MemoryId, type OrganizationId } from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { AccountDeletion } from "../src/accounts/AccountDeletion.js"
import { AccountExport } from "../src/accounts/AccountExport.js"
import * as Partitions from "../src/audit/Partitions.js"
import { Members } from "../src/members/Members.js"
import { MemoryRepository } from "../src/memory/MemoryRepository.js"
import { AuditRecorder } from "../src/platform/AuditRecorder.js"
import * as Config from "../src/platform/Config.js"
import { Crypto } from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Seeded from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const settings = Config.layer({ dataDir: "memory", passwordCost: 10 }).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)

const TestLayer = Layer.mergeAll(AccountDeletion.layer, AccountExport.layer, Members.layer, MemoryRepository.layer).pipe(
  Layer.provideMerge(AuditRecorder.layer),
  Layer.provideMerge(Layer.mergeAll(Crypto.layer, IdGenerator.layer)),
  Layer.provideMerge(settings),
  Layer.provideMerge(Db.layer)
)

const PASSWORD = "correct horse battery"
const PSEUDONYM = /^deleted-user-[0-9a-f]{12}$/

/** The error an effect fails with, as its plain members (`_tag` and the body: Effect 4 keeps `message` off the object's own). */
const plain = (error: object): object => ({ ...error, ..."message" in error ? { message: error.message } : {} })
const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), plain)

/** An organization with an owner, an admin and a member, their rows written; each person's password is PASSWORD. */
const staffed = Effect.fn("AccountsLifecycle.staffed")(function*(name: string) {
  const organization = Seeded.organization("team")
  const named = { ...organization, name }
  const owner = Seeded.member(organization, "owner")
  const admin = Seeded.member(organization, "admin")
  const member = Seeded.member(organization, "member")
  const sql = yield* SqlClient.SqlClient
  yield* Seeded.seed(owner, admin, member)
  yield* sql`UPDATE organizations SET name = ${name} WHERE id = ${organization.id}`
  const crypto = yield* Crypto
  const hash = yield* crypto.hashPassword(PASSWORD)
  for (const caller of [owner, admin, member]) yield* sql`UPDATE users SET password_hash = ${hash} WHERE id = ${caller.user.id}`
  return { organization: named, owner, admin, member }
})

/** The person behind a member, as a signed-in request resolves them. */
const actorOf = (caller: MemberContext): Actor => ({
  user: caller.user,
  credential: caller.credential,
  organization: caller.organization,
  membership: caller.membership
})
const sessionOf = (caller: MemberContext) => caller.credential._tag === "Session" ? caller.credential.sessionId : Seeded.sessionId()
/** The same member whose session signed in three hours ago. */
const stale = (caller: MemberContext): MemberContext => ({
  ...caller,
  credential: { _tag: "Session", sessionId: sessionOf(caller), ssoConnectionId: null, authenticatedAt: new Date(Date.now() - 3 * 3_600_000) }
})

/** The operator organization (claimed once per database) and its owner. */
const operatorOrganization = Seeded.organization("team")
const operatorOwner = Seeded.member(operatorOrganization, "owner")
const ensureOperator = Effect.fn("AccountsLifecycle.ensureOperator")(function*() {
  const sql = yield* SqlClient.SqlClient
  if ((yield* sql`SELECT 1 FROM organizations WHERE id = ${operatorOrganization.id}`).length > 0) return
  yield* Seeded.seed(operatorOwner)
  yield* sql`INSERT INTO instance_settings (key, value) VALUES ('operator_organization_id', ${operatorOrganization.id})`
})

/** A memory of the member's, as the memory area saves one. */
const saveMemory = Effect.fn("AccountsLifecycle.saveMemory")(function*(caller: MemberContext, content: string, tags: ReadonlyArray<string>) {
  const memories = yield* MemoryRepository
  const at = new Date()
  yield* memories.insert({
    id: Schema.decodeUnknownSync(MemoryId)(Db.newId("mem")),
    organizationId: caller.organization.id,
    userId: caller.user.id,
    membershipId: caller.membership.id,
    content,
    tags,
    source: "chat",
    scope: "user",
    createdAt: at,
    updatedAt: at
  })
})

/** An API key the member made; its id. */
const insertApiKey = Effect.fn("AccountsLifecycle.insertApiKey")(function*(caller: MemberContext, name: string) {
  const sql = yield* SqlClient.SqlClient
  const id = Db.newId("apk")
  yield* sql`INSERT INTO api_keys (id, organization_id, membership_id, name, prefix, key_hash, created_at)
             VALUES (${id}, ${caller.organization.id}, ${caller.membership.id}, ${name}, 'opk_abcdefgh', ${`hash-${id}`}, ${Seeded.at})`
  return id
})

layer(TestLayer, { timeout: 300_000, excludeTestServices: true })(`account deletion and export on ${TestDatabase.kind}`, (it) => {
  it.effect("deleting one's own account with its password: what the person kept goes; the organization keeps a former member under a pseudonym", () =>
    Effect.gen(function*() {
      const deletion = yield* AccountDeletion
      const members = yield* Members
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed("Deletes")
      const person = org.admin
      const organizationId = org.organization.id
      const membershipId = person.membership.id
      yield* sql`INSERT INTO sessions (id, user_id, token_hash, active_organization_id, created_at, expires_at)
                 VALUES (${Db.newId("ses")}, ${person.user.id}, ${Db.newId("hash")}, ${organizationId}, ${Seeded.at}, ${new Date(Date.now() + 86_400_000)})`
      yield* insertApiKey(person, "ci")
      yield* saveMemory(person, "Staging resets on Sundays.", [])
      // What a member's OAuth flows write: their own credential of a per-member MCP connection, a mail suite connection.
      const mcp = Db.newId("mcp")
      yield* sql`INSERT INTO mcp_connections (id, organization_id, name, url, auth_type, credential_mode, created_at, updated_at)
                 VALUES (${mcp}, ${organizationId}, 'Per member', 'https://93.184.215.14/mcp', 'oauth', 'per_member', now(), now())`
      yield* sql`INSERT INTO mcp_member_credentials (organization_id, mcp_connection_id, membership_id, access_token_ciphertext, connected_at, credential_health, updated_at)
                 VALUES (${organizationId}, ${mcp}, ${membershipId}, 'ciphertext', now(), 'ready', now())`
      yield* sql`INSERT INTO suite_clients (organization_id, suite, client_id, created_at, updated_at) VALUES (${organizationId}, 'suite-a', 'client', now(), now())`
      yield* sql`INSERT INTO suite_credentials (organization_id, suite, membership_id, access_token_ciphertext, connected_at, updated_at)
                 VALUES (${organizationId}, 'suite-a', ${membershipId}, 'ciphertext', now(), now())`
      // The organization's directory provisioned them.
      const connection = Db.newId("scc")
      yield* sql`INSERT INTO scim_connections (id, organization_id, name, group_mapping_mode, default_role, created_at, updated_at)
                 VALUES (${connection}, ${organizationId}, 'Okta', 'create_teams', 'member', ${Seeded.at}, ${Seeded.at})`
      yield* sql`INSERT INTO scim_users (organization_id, membership_id, connection_id, user_id, user_name, active, emails, resource, created_at, updated_at)
                 VALUES (${organizationId}, ${membershipId}, ${connection}, ${person.user.id}, ${person.user.email}, true,
                         ${JSON.stringify([{ value: person.user.email }])}::jsonb, ${JSON.stringify({ userName: person.user.email })}::jsonb, ${Seeded.at}, ${Seeded.at})`

      const deleted = yield* deletion.deleteOwn(actorOf(person), { password: PASSWORD })
      expect(deleted).toEqual({
        userId: person.user.id,
        pseudonym: expect.stringMatching(PSEUDONYM),
        organizationsLeft: [organizationId],
        organizationsWithoutMembers: [],
        removed: { sessions: 2, apiKeys: 1, memories: 1, mcpCredentials: 1, suiteConnections: 1, ssoLinks: 0, scimUsers: 1 }
      })
      const pseudonym = deleted.pseudonym

      // The organization keeps a former member, named by the pseudonym; nothing of their own is left in its tables.
      const former = (yield* members.list(org.owner, { includeRemoved: true })).items.find((member) => member.id === membershipId)
      expect(former).toMatchObject({ name: pseudonym, email: pseudonym, removedAt: expect.any(Date) })
      const left = yield* sql`SELECT
          (SELECT count(*)::int FROM memories WHERE organization_id = ${organizationId} AND user_id = ${person.user.id}) AS memories,
          (SELECT count(*)::int FROM mcp_member_credentials WHERE organization_id = ${organizationId} AND membership_id = ${membershipId}) AS mcp,
          (SELECT count(*)::int FROM suite_credentials WHERE organization_id = ${organizationId} AND membership_id = ${membershipId}) AS suites,
          (SELECT count(*)::int FROM api_keys WHERE organization_id = ${organizationId} AND membership_id = ${membershipId}) AS keys,
          (SELECT count(*)::int FROM sessions WHERE user_id = ${person.user.id} AND revoked_at IS NULL) AS sessions`
      expect(left).toEqual([{ memories: 0, mcp: 0, suites: 0, keys: 0, sessions: 0 }])
      expect(yield* sql`SELECT user_name, active, emails, deleted_at IS NOT NULL AS deleted FROM scim_users
                          WHERE organization_id = ${organizationId} AND membership_id = ${membershipId}`).toEqual([
        { userName: pseudonym, active: false, emails: [], deleted: true }
      ])
      expect(yield* sql`SELECT name, email, deleted_at IS NOT NULL AS deleted FROM users WHERE id = ${person.user.id}`).toEqual([
        { name: pseudonym, email: pseudonym, deleted: true }
      ])
      // Deleted meanwhile (a recent session, so no password to check): the caller's credentials went with it.
      expect(yield* failure(deletion.deleteOwn(actorOf(person), {}))).toMatchObject({ _tag: "Unauthorized" })
      // The others of the organization are untouched.
      expect((yield* members.list(org.owner, {})).items.map((member) => member.id)).toEqual([org.owner.membership.id, org.member.membership.id])
    }))

  it.effect("needs the password or a recent sign-in; a wrong password or an old session change nothing", () =>
    Effect.gen(function*() {
      const deletion = yield* AccountDeletion
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed("Confirms")
      const person = org.member
      expect(yield* failure(deletion.deleteOwn(actorOf(person), { password: "not the password" }))).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: ["password"], message: "is not the account's current password" }]
      })
      const refused = yield* failure(deletion.deleteOwn(actorOf(stale(person)), {}))
      expect(refused).toMatchObject({ _tag: "Forbidden", reason: "recent_authentication_required" })
      expect("message" in refused ? refused.message : "").toContain("send the account's password as `password`")
      expect(yield* sql`SELECT 1 FROM users WHERE id = ${person.user.id} AND deleted_at IS NULL`).toHaveLength(1)
      // A recent sign-in: `{}` is enough.
      expect((yield* deletion.deleteOwn(actorOf(person), {})).organizationsLeft).toEqual([org.organization.id])
    }))

  it.effect("is refused while the person is the last owner of an organization with other members; one only they were in is deleted with them", () =>
    Effect.gen(function*() {
      const deletion = yield* AccountDeletion
      const members = yield* Members
      const sql = yield* SqlClient.SqlClient
      yield* ensureOperator()
      const org = yield* staffed("Owned Co")
      const alone = yield* Db.insertOrganization({ name: "Solo" })
      yield* Db.insertMembership(alone, org.owner.user.id, "owner")

      const refused = yield* failure(deletion.deleteOwn(actorOf(org.owner), { password: PASSWORD }))
      expect(refused).toMatchObject({ _tag: "Conflict", error: "last_owner_of_organizations" })
      const message = "message" in refused ? String(refused.message) : ""
      expect(message).toContain(`Owned Co (${org.organization.id})`)
      expect(message).not.toContain(alone)
      expect(message).toContain("POST /v1/members/{memberId}/transfer-ownership")
      // Nothing changed: the owner still acts.
      expect((yield* members.list(org.owner, {})).items).toHaveLength(3)

      yield* members.transferOwnership(org.owner, org.admin.membership.id)
      // The audit log's partitions, as the server makes them at start: the deletion of the organization left empty is
      // recorded in its own log.
      yield* Effect.orDie(Partitions.ensureAhead)
      const deleted = yield* deletion.deleteOwn(actorOf(org.owner), { password: PASSWORD })
      expect([...deleted.organizationsLeft].sort()).toEqual([org.organization.id, alone].sort())
      // The organization only they were in is left without members, and deleted with the account (restorable for the
      // grace period, then purged); the one with members goes on.
      expect(deleted.organizationsWithoutMembers).toEqual([alone])
      const states = yield* sql<{ id: OrganizationId; deleted: boolean }>`
        SELECT id, deleted_at IS NOT NULL AS deleted FROM organizations WHERE id IN (${alone}, ${org.organization.id}) ORDER BY name`
      expect(states).toEqual([{ id: org.organization.id, deleted: false }, { id: alone, deleted: true }])
      expect((yield* members.list(org.admin, { role: "owner" })).items.map((member) => member.id)).toEqual([org.admin.membership.id])
      expect(yield* sql`SELECT action, actor_type FROM audit_events WHERE organization_id = ${alone}`).toEqual([
        { action: "organization.delete", actorType: "system" }
      ])
    }))

  it.effect("the operator deletes any account after a recent sign-in, not their own by API key; nobody else may; refused for a last owner", () =>
    Effect.gen(function*() {
      const deletion = yield* AccountDeletion
      yield* ensureOperator()
      const org = yield* staffed("Removed Co")
      expect(yield* failure(deletion.deleteByOperator(org.owner, org.member.user.id))).toEqual({
        _tag: "Forbidden",
        reason: "operator_only",
        message: "Only owners and admins of the operator organization may do this."
      })
      const key = Seeded.member(operatorOrganization, "admin", { apiKey: { scopes: null } })
      yield* Seeded.seed(key)
      expect(yield* failure(deletion.deleteByOperator(key, key.user.id))).toEqual({
        _tag: "Forbidden",
        reason: "session_required",
        message: "An API key cannot delete the account that made it: delete your own account from a session (DELETE /v1/me)."
      })
      expect(yield* failure(deletion.deleteByOperator(stale(operatorOwner), org.member.user.id))).toMatchObject({
        _tag: "Forbidden",
        reason: "recent_authentication_required"
      })
      expect(yield* failure(deletion.deleteByOperator(operatorOwner, org.owner.user.id))).toMatchObject({
        _tag: "Conflict",
        error: "last_owner_of_organizations"
      })

      const deleted = yield* deletion.deleteByOperator(operatorOwner, org.member.user.id)
      expect(deleted).toMatchObject({
        userId: org.member.user.id,
        pseudonym: expect.stringMatching(PSEUDONYM),
        organizationsLeft: [org.organization.id],
        removed: { sessions: 1 }
      })
      expect(yield* failure(deletion.deleteByOperator(operatorOwner, org.member.user.id))).toMatchObject({ _tag: "NotFound", error: "user_not_found" })
      // An API key deletes other accounts.
      expect((yield* deletion.deleteByOperator(key, org.admin.user.id)).userId).toBe(org.admin.user.id)
    }))

  it.effect("a person's export: profile, memberships, memories, sessions and keys' metadata, no secret", () =>
    Effect.gen(function*() {
      const exports = yield* AccountExport
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed("Exports")
      const person = org.admin
      const keyId = yield* insertApiKey(person, "ci")
      yield* saveMemory(person, "Remember the milk.", ["home"])
      const side = yield* Db.insertOrganization({ name: "Side" })
      yield* Db.insertMembership(side, person.user.id, "owner")

      // Used just now: a live session (the seeded one is older than the idle timeout).
      yield* sql`UPDATE sessions SET last_used_at = ${new Date()} WHERE id = ${sessionOf(person)}`
      const exported = yield* exports.of({ userId: person.user.id, sessionId: sessionOf(person) })
      expect(exported.format).toBe("orgplane.account-export.v1")
      expect(exported.exportedAt).toBeInstanceOf(Date)
      expect(exported.user).toMatchObject({ id: person.user.id, email: person.user.email, emailVerified: false })
      expect(exported.memberships.map((entry) => [entry.organization.name, entry.membership.role])).toEqual([
        ["Exports", "admin"],
        ["Side", "owner"]
      ])
      expect(exported.memberships[1]?.organization.id).toBe(side)
      expect(exported.memories).toEqual([{
        organizationId: org.organization.id,
        memory: expect.objectContaining({ content: "Remember the milk.", tags: ["home"], contexts: [] })
      }])
      expect(exported.sessions).toEqual([expect.objectContaining({ id: sessionOf(person), current: true })])
      expect(exported.apiKeys).toEqual([expect.objectContaining({ id: keyId, organizationId: org.organization.id, name: "ci" })])
      expect(JSON.stringify(exported)).not.toContain(`hash-${keyId}`)
      // Nobody else's: the owner's export has none of it.
      const owners = yield* exports.of({ userId: org.owner.user.id, sessionId: sessionOf(org.owner) })
      expect(owners.memories).toEqual([])
      expect(owners.apiKeys).toEqual([])
      expect(owners.memberships.map((entry) => entry.organization.id)).toEqual([org.organization.id])
    }))
})
