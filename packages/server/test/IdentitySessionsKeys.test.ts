/**
 * Sessions, API keys and the membership lifecycle on a fresh migrated database (the embedded one, or Postgres with
 * DATABASE_URL): rows written and read back through SessionsRepository and ApiKeysRepository, authentication's one
 * statement for each, lists paged with cursors, another organization's rows never found (tenancy), and the
 * Memberships service's operations.
 */
import { expect, layer } from "@effect/vitest"
import { ApiKeyId, MembershipId, type OrganizationId, SessionId, type UserId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { ApiKeysRepository, parseScopes, ScopesColumn } from "../src/identity/ApiKeysRepository.js"
import { memberNotFound, Memberships } from "../src/identity/Memberships.js"
import { SessionsRepository } from "../src/identity/SessionsRepository.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)
const sessionId = () => Schema.decodeUnknownSync(SessionId)(Db.newId("ses"))
const apiKeyId = () => Schema.decodeUnknownSync(ApiKeyId)(Db.newId("apk"))
const membershipId = (id: string) => Schema.decodeUnknownSync(MembershipId)(id)
const day = 24 * 3_600_000

/** An organization with one member: its ids. */
const memberOf = Effect.fn("test.memberOf")(function*(email: string, role: "owner" | "admin" | "member" = "owner", name = "Acme") {
  const organizationId = yield* Db.insertOrganization({ name })
  const userId = yield* Db.insertUser(email)
  const membership = membershipId(yield* Db.insertMembership(organizationId, userId, role))
  return { organizationId, userId, membershipId: membership }
})

const newSession = (
  sessions: SessionsRepository["Service"],
  userId: UserId,
  options: { readonly activeOrganizationId?: OrganizationId; readonly createdAt?: Date; readonly expiresAt?: Date } = {}
) => {
  const id = sessionId()
  const tokenHash = `hash-${id}`
  return Effect.as(
    sessions.insert({
      id,
      userId,
      tokenHash,
      activeOrganizationId: options.activeOrganizationId ?? null,
      createdAt: options.createdAt ?? Db.at,
      expiresAt: options.expiresAt ?? later(30 * day),
      ipAddress: "192.0.2.1",
      userAgent: "test"
    }),
    { id, tokenHash }
  )
}

layer(Layer.merge(Db.layer, IdGenerator.layer), { timeout: 120_000, excludeTestServices: true })(
  `identity sessions, API keys and memberships on ${TestDatabase.kind}`,
  (it) => {
    it.effect("SessionsRepository: resolve acts in the active organization, else the oldest; dead sessions resolve to nothing", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionsRepository.make
        const first = yield* memberOf("ses-resolve@acme.test", "owner", "First")
        const second = yield* Db.insertOrganization({ name: "Second" })
        const secondMembership = yield* Db.insertMembership(second, first.userId, "member")
        const session = yield* newSession(sessions, first.userId)
        const window = { at: later(1000), idleSince: later(-day) }
        const resolved = Option.getOrThrow(yield* sessions.resolve({ tokenHash: session.tokenHash, ...window }))
        expect(resolved).toMatchObject({
          sessionId: session.id,
          sessionLastUsedAt: null,
          userId: first.userId,
          userEmail: "ses-resolve@acme.test",
          membershipId: first.membershipId,
          organizationId: first.organizationId,
          organizationName: "First",
          role: "owner",
          ssoConnectionId: null,
          requireSso: null
        })
        yield* sessions.setActiveOrganization({ id: session.id, organizationId: second })
        expect(Option.getOrThrow(yield* sessions.resolve({ tokenHash: session.tokenHash, ...window }))).toMatchObject({
          organizationId: second,
          membershipId: secondMembership,
          role: "member"
        })
        // The organization gone from the session, it falls back to the oldest membership.
        yield* sessions.leaveOrganization(second)
        expect(Option.getOrThrow(yield* sessions.resolve({ tokenHash: session.tokenHash, ...window }))).toMatchObject({
          organizationId: first.organizationId
        })
        // A used session is live until idle; touched, it lives on.
        yield* sessions.touch({ id: session.id, at: later(2 * day) })
        expect(Option.getOrThrow(yield* sessions.resolve({ tokenHash: session.tokenHash, at: later(3 * day), idleSince: later(day) })))
          .toMatchObject({ sessionLastUsedAt: later(2 * day) })
        expect(yield* sessions.resolve({ tokenHash: session.tokenHash, at: later(3 * day), idleSince: later(2 * day) })).toEqual(Option.none())
        // Expired, unknown, revoked, or its account disabled: nothing.
        expect(yield* sessions.resolve({ tokenHash: session.tokenHash, at: later(31 * day), idleSince: later(-day) })).toEqual(Option.none())
        expect(yield* sessions.resolve({ tokenHash: "no such hash", ...window })).toEqual(Option.none())
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE users SET disabled_at = ${Db.at} WHERE id = ${first.userId}`
        expect(yield* sessions.resolve({ tokenHash: session.tokenHash, ...window })).toEqual(Option.none())
        yield* sql`UPDATE users SET disabled_at = NULL WHERE id = ${first.userId}`
        yield* sessions.revoke({ id: session.id, at: later(1) })
        expect(yield* sessions.resolve({ tokenHash: session.tokenHash, ...window })).toEqual(Option.none())
      }))

    it.effect("SessionsRepository: a person without a membership resolves with none; a suspended membership counts as none", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionsRepository.make
        const lonely = yield* Db.insertUser("ses-lonely@acme.test")
        const session = yield* newSession(sessions, lonely)
        const window = { at: later(1000), idleSince: later(-day) }
        expect(Option.getOrThrow(yield* sessions.resolve({ tokenHash: session.tokenHash, ...window }))).toMatchObject({
          userId: lonely,
          membershipId: null,
          organizationId: null,
          role: null
        })
        const suspended = yield* memberOf("ses-suspended@acme.test")
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE memberships SET suspended_at = ${Db.at} WHERE organization_id = ${suspended.organizationId} AND id = ${suspended.membershipId}`
        const its = yield* newSession(sessions, suspended.userId, { activeOrganizationId: suspended.organizationId })
        expect(Option.getOrThrow(yield* sessions.resolve({ tokenHash: its.tokenHash, ...window }))).toMatchObject({
          membershipId: null,
          organizationId: null
        })
      }))

    it.effect("SessionsRepository: a person's live sessions, paged newest first; revoking one, the others, all", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionsRepository.make
        const person = yield* memberOf("ses-list@acme.test")
        const stranger = yield* memberOf("ses-stranger@acme.test")
        const made = []
        for (let i = 0; i < 3; i++) made.push(yield* newSession(sessions, person.userId))
        const expired = yield* newSession(sessions, person.userId, { expiresAt: later(1) })
        const theirs = yield* newSession(sessions, stranger.userId)
        const window = { userId: person.userId, at: later(1000), idleSince: later(-day) }
        const current = made[1]!.id
        const first = yield* sessions.listLive({ ...window, current }, { limit: 2 })
        expect(first.items.map((item) => item.id)).toEqual([made[2]!.id, made[1]!.id])
        expect(first.items[1]).toMatchObject({ current: true, method: "password", ssoConnectionId: null, lastUsedAt: Db.at, ipAddress: "192.0.2.1", userAgent: "test" })
        expect(first.items[0]!.current).toBe(false)
        const second = yield* sessions.listLive({ ...window, current }, { limit: 2, cursor: first.nextCursor ?? "" })
        expect(second.items.map((item) => item.id)).toEqual([made[0]!.id])
        expect(second.nextCursor).toBeNull()
        expect((yield* sessions.allLive({ ...window, current })).map((item) => item.id)).toEqual([made[2]!.id, made[1]!.id, made[0]!.id])
        // Another person's session is not one of theirs to end.
        expect(yield* sessions.revokeLive({ ...window, id: theirs.id })).toBe(false)
        expect(yield* sessions.revokeLive({ ...window, id: made[0]!.id })).toBe(true)
        expect(yield* sessions.revokeLive({ ...window, id: made[0]!.id })).toBe(false)
        // The expired one is revoked but not counted.
        expect(yield* sessions.revokeOthers({ userId: person.userId, keep: current, at: later(1000) })).toBe(1)
        expect((yield* sessions.allLive({ ...window, current })).map((item) => item.id)).toEqual([current])
        expect(yield* sessions.revokeAll({ userId: person.userId, at: later(1000) })).toBe(1)
        expect(yield* sessions.allLive({ ...window, current })).toEqual([])
        expect(expired.id).not.toEqual(current)
        expect(Option.isSome(yield* sessions.resolve({ tokenHash: theirs.tokenHash, at: later(1000), idleSince: later(-day) }))).toBe(true)
      }))

    it.effect("SessionsRepository: a purged organization's SSO sessions are deleted, the others leave it", () =>
      Effect.gen(function*() {
        const sessions = yield* SessionsRepository.make
        const person = yield* memberOf("ses-purge@acme.test")
        const connection = yield* Db.insertSso({ organizationId: person.organizationId, domain: "ses-purge.test" })
        const other = yield* Db.insertOrganization({ name: "Other" })
        yield* Db.insertMembership(other, person.userId, "member")
        const sso = sessionId()
        yield* sessions.insert({
          id: sso,
          userId: person.userId,
          tokenHash: "hash-sso",
          activeOrganizationId: person.organizationId,
          createdAt: Db.at,
          expiresAt: later(day),
          ipAddress: null,
          userAgent: null,
          sso: { connectionId: connection, organizationId: person.organizationId }
        })
        const password = yield* newSession(sessions, person.userId, { activeOrganizationId: person.organizationId })
        const listed = yield* sessions.allLive({ userId: person.userId, current: sso, at: later(1), idleSince: later(-day) })
        expect(listed.find((item) => item.id === sso)).toMatchObject({ method: "sso", ssoConnectionId: connection, current: true })
        expect(yield* sessions.forgetOrganization(person.organizationId)).toBe(1)
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ id: string; activeOrganizationId: string | null }>`SELECT id, active_organization_id FROM sessions WHERE user_id = ${person.userId}`
        expect(rows).toEqual([{ id: password.id, activeOrganizationId: null }])
      }))

    it.effect("ApiKeysRepository: insert, resolve, touch, list; another organization's keys are never found", () =>
      Effect.gen(function*() {
        const keys = yield* ApiKeysRepository.make
        const acme = yield* memberOf("key-acme@acme.test", "admin", "Acme")
        const globex = yield* memberOf("key-globex@globex.test", "owner", "Globex")
        const id = apiKeyId()
        const key = yield* keys.insert({
          id,
          organizationId: acme.organizationId,
          membershipId: acme.membershipId,
          name: "CI",
          prefix: "opk_abcdefgh",
          keyHash: "key-hash-1",
          createdAt: Db.at,
          expiresAt: later(day),
          ssoConnectionId: null,
          authenticatedOrganizationId: null,
          scopes: ["members.read", "teams.manage"],
          parentApiKeyId: null
        })
        expect(key).toMatchObject({ id, name: "CI", createdByOrgMembershipId: acme.membershipId, scopes: ["members.read", "teams.manage"], lastUsedAt: null })
        const resolved = Option.getOrThrow(yield* keys.resolve({ keyHash: "key-hash-1", at: later(1) }))
        expect(resolved).toMatchObject({
          apiKeyId: id,
          keyOrganizationId: acme.organizationId,
          lastUsedAt: null,
          scopes: "members.read teams.manage",
          userId: acme.userId,
          membershipId: acme.membershipId,
          organizationId: acme.organizationId,
          role: "admin",
          ssoConnectionId: null
        })
        expect(yield* keys.resolve({ keyHash: "key-hash-1", at: later(day) })).toEqual(Option.none())
        expect(yield* keys.resolve({ keyHash: "other", at: later(1) })).toEqual(Option.none())
        // Touching it in another organization changes nothing.
        yield* keys.touch({ organizationId: globex.organizationId, id, at: later(5) })
        expect(Option.getOrThrow(yield* keys.resolve({ keyHash: "key-hash-1", at: later(1) })).lastUsedAt).toBeNull()
        yield* keys.touch({ organizationId: acme.organizationId, id, at: later(5) })
        expect(Option.getOrThrow(yield* keys.resolve({ keyHash: "key-hash-1", at: later(6) })).lastUsedAt).toEqual(later(5))
        const listed = yield* keys.list(acme.organizationId, { limit: 10 })
        expect(listed.items).toEqual([expect.objectContaining({ id, lastUsedAt: later(5) })])
        expect((yield* keys.list(globex.organizationId, { limit: 10 })).items).toEqual([])
        // Revoking it from another organization finds nothing.
        expect(yield* keys.revoke({ organizationId: globex.organizationId, id })).toEqual([])
        expect(yield* keys.countUnexpired({ organizationId: acme.organizationId, membershipId: acme.membershipId, at: later(1) })).toBe(1)
        expect(yield* keys.countUnexpired({ organizationId: acme.organizationId, membershipId: acme.membershipId, at: later(day) })).toBe(0)
        expect(yield* keys.countUnexpired({ organizationId: globex.organizationId, membershipId: acme.membershipId, at: later(1) })).toBe(0)
        // A removed member's, suspended member's or disabled account's key resolves to nothing.
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE memberships SET suspended_at = ${Db.at} WHERE organization_id = ${acme.organizationId} AND id = ${acme.membershipId}`
        expect(yield* keys.resolve({ keyHash: "key-hash-1", at: later(1) })).toEqual(Option.none())
        yield* sql`UPDATE memberships SET suspended_at = NULL WHERE organization_id = ${acme.organizationId} AND id = ${acme.membershipId}`
        yield* sql`UPDATE users SET disabled_at = ${Db.at} WHERE id = ${acme.userId}`
        expect(yield* keys.resolve({ keyHash: "key-hash-1", at: later(1) })).toEqual(Option.none())
        yield* sql`UPDATE users SET disabled_at = NULL WHERE id = ${acme.userId}`
        yield* sql`UPDATE organizations SET deleted_at = ${Db.at}, purge_after = ${later(day)}, deleted_by = 'usr_x' WHERE id = ${acme.organizationId}`
        expect(yield* keys.resolve({ keyHash: "key-hash-1", at: later(1) })).toEqual(Option.none())
        yield* sql`UPDATE organizations SET deleted_at = NULL, purge_after = NULL, deleted_by = NULL WHERE id = ${acme.organizationId}`
        expect(Option.isSome(yield* keys.resolve({ keyHash: "key-hash-1", at: later(1) }))).toBe(true)
      }))

    it.effect("ApiKeysRepository: revoking a key revokes the keys made with it; a person's keys; what a session records", () =>
      Effect.gen(function*() {
        const keys = yield* ApiKeysRepository.make
        const sessions = yield* SessionsRepository.make
        const acme = yield* memberOf("key-tree@acme.test")
        const connection = yield* Db.insertSso({ organizationId: acme.organizationId, domain: "key-tree.test" })
        const row = (id: ApiKeyId, parent: ApiKeyId | null, createdAt: Date) => ({
          id,
          organizationId: acme.organizationId,
          membershipId: acme.membershipId,
          name: `key ${id}`,
          prefix: "opk_12345678",
          keyHash: `hash-${id}`,
          createdAt,
          expiresAt: null,
          ssoConnectionId: null,
          authenticatedOrganizationId: null,
          scopes: null,
          parentApiKeyId: parent
        })
        const root = apiKeyId()
        const child = apiKeyId()
        const grandchild = apiKeyId()
        const aside = apiKeyId()
        yield* keys.insert(row(root, null, Db.at))
        yield* keys.insert(row(child, root, later(1)))
        yield* keys.insert(row(grandchild, child, later(2)))
        yield* keys.insert(row(aside, null, later(3)))
        expect(Option.getOrThrow(yield* keys.resolve({ keyHash: `hash-${root}`, at: later(1) })).scopes).toBeNull()
        const page = yield* keys.list(acme.organizationId, { limit: 3 })
        expect(page.items.map((key) => key.id)).toEqual([aside, grandchild, child])
        const rest = yield* keys.list(acme.organizationId, { limit: 3, cursor: page.nextCursor ?? "" })
        expect(rest.items.map((key) => key.id)).toEqual([root])
        expect((yield* keys.listForAccount(acme.userId)).map((key) => key.id)).toEqual([aside, grandchild, child, root])
        expect((yield* keys.revoke({ organizationId: acme.organizationId, id: root })).map((key) => key.id).sort()).toEqual([root, child, grandchild].sort())
        expect((yield* keys.list(acme.organizationId, { limit: 10 })).items.map((key) => key.id)).toEqual([aside])
        expect(yield* keys.revokeForPerson({ organizationId: acme.organizationId, userId: acme.userId })).toEqual([aside])
        // What a key made in a session records of it.
        const password = yield* newSession(sessions, acme.userId)
        expect(Option.getOrThrow(yield* keys.sessionAssurance(password.id))).toEqual({ ssoConnectionId: null, authenticatedOrganizationId: null })
        const sso = sessionId()
        yield* sessions.insert({
          id: sso,
          userId: acme.userId,
          tokenHash: "hash-key-sso",
          activeOrganizationId: null,
          createdAt: Db.at,
          expiresAt: later(day),
          ipAddress: null,
          userAgent: null,
          sso: { connectionId: connection, organizationId: acme.organizationId }
        })
        expect(Option.getOrThrow(yield* keys.sessionAssurance(sso))).toEqual({ ssoConnectionId: connection, authenticatedOrganizationId: acme.organizationId })
        expect(yield* keys.sessionAssurance(sessionId())).toEqual(Option.none())
      }))

    it.effect("ApiKeysRepository: keys made through a purged organization's SSO forget it; stored scopes", () =>
      Effect.gen(function*() {
        const keys = yield* ApiKeysRepository.make
        const purged = yield* memberOf("key-purged@purged.test")
        const connection = yield* Db.insertSso({ organizationId: purged.organizationId, domain: "key-purged.test" })
        const other = yield* Db.insertOrganization({ name: "Keeps keys" })
        const member = membershipId(yield* Db.insertMembership(other, purged.userId, "member"))
        const id = apiKeyId()
        yield* keys.insert({
          id,
          organizationId: other,
          membershipId: member,
          name: "made in purged SSO",
          prefix: "opk_abcdefgh",
          keyHash: "hash-forget",
          createdAt: Db.at,
          expiresAt: null,
          ssoConnectionId: connection,
          authenticatedOrganizationId: purged.organizationId,
          scopes: ["members.read"],
          parentApiKeyId: null
        })
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE api_keys SET scopes = 'members.read no.such.action' WHERE organization_id = ${other} AND id = ${id}`
        expect(yield* keys.forgetAuthenticatingOrganization(purged.organizationId)).toBe(1)
        expect(yield* keys.forgetAuthenticatingOrganization(purged.organizationId)).toBe(0)
        const resolved = Option.getOrThrow(yield* keys.resolve({ keyHash: "hash-forget", at: later(1) }))
        expect(resolved).toMatchObject({ ssoConnectionId: null, authenticatedOrganizationId: null })
        // An action the table no longer has is dropped on reading.
        expect(parseScopes(resolved.scopes ?? "")).toEqual(["members.read"])
        expect(Schema.decodeUnknownSync(ScopesColumn)("teams.read bogus members.read")).toEqual(["teams.read", "members.read"])
        expect(Schema.encodeSync(ScopesColumn)(["teams.read", "members.read"])).toBe("teams.read members.read")
        expect(parseScopes("")).toEqual([])
      }))

    it.effect("Memberships: join, lock and read, role changes, removal; another organization's id finds nothing", () =>
      Effect.gen(function*() {
        const memberships = yield* Memberships
        const organizationId = yield* Db.insertOrganization({ name: "Lifecycle" })
        const other = yield* Db.insertOrganization({ name: "Elsewhere" })
        const owner = yield* Db.insertUser("life-owner@acme.test")
        const joiner = yield* Db.insertUser("life-joiner@acme.test")
        const ownerMembership = yield* memberships.join({ organizationId, userId: owner, role: "owner" })
        expect(ownerMembership).toMatchObject({ organizationId, userId: owner, role: "owner" })
        expect(ownerMembership.id.startsWith("om_")).toBe(true)
        const joined = yield* memberships.join({ organizationId, userId: joiner, role: "member" })
        const placeholder = yield* memberships.join({ organizationId, userId: null, role: "owner" })
        expect(placeholder.userId).toBeNull()
        const sql = yield* SqlClient.SqlClient
        const read = yield* sql.withTransaction(memberships.lockAndRead(organizationId, { userId: joiner }))
        expect(Option.getOrThrow(read)).toEqual(joined)
        expect(yield* sql.withTransaction(memberships.lockAndRead(other, { userId: joiner }))).toEqual(Option.none())
        const state = yield* sql.withTransaction(memberships.lockForChange(organizationId, { callerId: ownerMembership.id, targetId: joined.id }))
        expect(Option.getOrThrow(state.caller)).toMatchObject({ id: ownerMembership.id, role: "owner", email: "life-owner@acme.test" })
        expect(Option.getOrThrow(state.target)).toMatchObject({ id: joined.id, role: "member" })
        expect(state.owners).toBe(2)
        const elsewhere = yield* memberships.lockForChange(other, { callerId: ownerMembership.id, targetId: joined.id })
        expect(elsewhere).toEqual({ caller: Option.none(), target: Option.none(), owners: 0 })
        yield* memberships.changeRole(organizationId, joined.id, "admin")
        expect(Option.getOrThrow(yield* memberships.find({ organizationId, id: joined.id }))).toMatchObject({ role: "admin" })
        // A role change in another organization touches nothing.
        yield* memberships.changeRole(other, joined.id, "owner")
        expect(Option.getOrThrow(yield* memberships.findActive(organizationId, { id: joined.id }))).toMatchObject({ role: "admin" })
        expect(yield* memberships.find({ organizationId: other, id: joined.id })).toEqual(Option.none())
        expect((yield* memberships.listForUser(joiner, { limit: 10 })).items.map((entry) => entry.organization.id)).toEqual([organizationId])
        expect(yield* memberships.oldestOrganizationOf(joiner)).toEqual(Option.some(organizationId))
        expect(yield* memberships.activeOrganizationsOf(joiner)).toEqual([organizationId])
        expect(yield* memberships.missingActive(organizationId, [joined.id, placeholder.id])).toEqual([])
        expect(yield* memberships.missingActive(other, [joined.id])).toEqual([joined.id])
        yield* memberships.remove(organizationId, joined.id)
        expect(yield* memberships.findActive(organizationId, { userId: joiner })).toEqual(Option.none())
        expect(Option.getOrThrow(yield* memberships.find({ organizationId, id: joined.id })).removedAt).toBeInstanceOf(Date)
        expect(yield* memberships.wasRemoved(organizationId, joiner)).toBe(true)
        expect(yield* memberships.wasRemoved(other, joiner)).toBe(false)
        expect(yield* memberships.oldestOrganizationOf(joiner)).toEqual(Option.none())
        expect((yield* memberships.allOf(organizationId, joiner)).map((row) => row.id)).toEqual([joined.id])
        expect(yield* memberships.allOf(other, joiner)).toEqual([])
        const listed = yield* memberships.list(organizationId, { limit: 10 })
        expect(listed.items.map((member) => member.id)).toEqual([ownerMembership.id, placeholder.id])
      }).pipe(Effect.provide(Memberships.layer)))

    it.effect("Memberships: the directory suspends, restores and removes; sessions activate an organization", () =>
      Effect.gen(function*() {
        const memberships = yield* Memberships
        const sessions = yield* SessionsRepository.make
        const keys = yield* ApiKeysRepository.make
        const person = yield* memberOf("life-scim@acme.test", "member", "Directory")
        const other = yield* Db.insertOrganization({ name: "Other directory" })
        const otherMembership = yield* memberships.join({ organizationId: other, userId: person.userId, role: "member" })
        const acting = yield* newSession(sessions, person.userId, { activeOrganizationId: person.organizationId })
        const elsewhere = yield* newSession(sessions, person.userId)
        yield* memberships.activate(elsewhere.id, other)
        const window = { at: later(1), idleSince: later(-day) }
        expect(Option.getOrThrow(yield* sessions.resolve({ tokenHash: elsewhere.tokenHash, ...window }))).toMatchObject({ organizationId: other })
        const key = apiKeyId()
        yield* keys.insert({
          id: key,
          organizationId: person.organizationId,
          membershipId: person.membershipId,
          name: "scim",
          prefix: "opk_abcdefgh",
          keyHash: "hash-scim",
          createdAt: Db.at,
          expiresAt: null,
          ssoConnectionId: null,
          authenticatedOrganizationId: null,
          scopes: null,
          parentApiKeyId: null
        })
        // Suspending in another organization finds no such membership.
        expect(yield* memberships.suspend(other, person.membershipId)).toBe(false)
        expect(yield* memberships.suspend(person.organizationId, person.membershipId)).toBe(true)
        expect(yield* memberships.isDeprovisioned(person.organizationId, person.userId)).toBe(true)
        expect(yield* memberships.isDeprovisioned(other, person.userId)).toBe(false)
        expect(yield* sessions.resolve({ tokenHash: acting.tokenHash, ...window })).toEqual(Option.none())
        expect(Option.isSome(yield* sessions.resolve({ tokenHash: elsewhere.tokenHash, ...window }))).toBe(true)
        expect(yield* keys.resolve({ keyHash: "hash-scim", at: later(1) })).toEqual(Option.none())
        expect((yield* keys.list(person.organizationId, { limit: 10 })).items).toEqual([])
        expect(yield* memberships.restore(other, person.membershipId)).toBe(false)
        expect(yield* memberships.restore(person.organizationId, person.membershipId)).toBe(true)
        expect(yield* memberships.isDeprovisioned(person.organizationId, person.userId)).toBe(false)
        expect(yield* memberships.removeByDirectory(other, person.membershipId)).toBe(false)
        expect(yield* memberships.removeByDirectory(person.organizationId, person.membershipId)).toBe(true)
        expect(yield* memberships.removeByDirectory(person.organizationId, person.membershipId)).toBe(false)
        expect(yield* memberships.isDeprovisioned(person.organizationId, person.userId)).toBe(true)
        expect(yield* memberships.findActive(person.organizationId, { userId: person.userId })).toEqual(Option.none())
        expect(Option.isSome(yield* memberships.findActive(other, { id: otherMembership.id }))).toBe(true)
      }).pipe(Effect.provide(Memberships.layer)))

    it.effect("Memberships: memberNotFound's messages", () =>
      Effect.sync(() => {
        expect(memberNotFound()).toMatchObject({ error: "member_not_found", message: "Member not found." })
        expect(memberNotFound("om_x")).toMatchObject({ error: "member_not_found", message: "om_x is not a member of this organization." })
      }))
  }
)
