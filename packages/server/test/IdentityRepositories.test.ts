/**
 * The identity area's data layer on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * rows written and read back through each repository, lists paged with cursors, another organization's rows never
 * found (tenancy), and SSO enforcement's rule: who is admitted, whose API keys work, who may make one, and what a
 * refusal says.
 */
import { expect, layer } from "@effect/vitest"
import { ApiKeyId, BootstrapId, MembershipId, OrganizationId, type SessionId, SsoConnectionId, WorkspaceClaimId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { BootstrapRepository } from "../src/identity/BootstrapRepository.js"
import { AccountTokensRepository } from "../src/identity/AccountTokensRepository.js"
import { MembershipsRepository } from "../src/identity/MembershipsRepository.js"
import { OperatorRepository } from "../src/identity/OperatorRepository.js"
import { OrganizationsRepository } from "../src/identity/OrganizationsRepository.js"
import { SignInAddressesRepository } from "../src/identity/SignInAddressesRepository.js"
import { UsersRepository } from "../src/identity/UsersRepository.js"
import * as Sso from "../src/identity/SsoEnforcement.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)

layer(Db.layer, { timeout: 120_000, excludeTestServices: true })(`identity repositories on ${TestDatabase.kind}`, (it) => {
  it.effect("OrganizationsRepository: insert, find, details, update; another organization's id finds nothing", () =>
    Effect.gen(function*() {
      const repository = yield* OrganizationsRepository.make
      const id = Db.organizationId()
      const inserted = yield* repository.insert({ id, name: "Initech", plan: "team", provisional: false, createdAt: Db.at, updatedAt: Db.at })
      expect(inserted).toMatchObject({ id, name: "Initech", plan: "team", provisional: false, createdAt: Db.at })
      expect(Option.getOrThrow(yield* repository.find(id))).toEqual(inserted)
      expect(yield* repository.find(Db.organizationId())).toEqual(Option.none())
      const owner = yield* Db.insertUser("owner@initech.test")
      yield* Db.insertMembership(id, owner, "owner")
      yield* Db.insertMembership(id, null, "member")
      const details = Option.getOrThrow(yield* repository.details(id))
      expect(details).toMatchObject({ id, name: "Initech", memberCount: 2, logoUrl: null, metadata: {} })
      const updated = yield* repository.update(id, { name: "Initech Corp", metadata: { region: "eu" }, logoUrl: "https://logo.test/a.png" }, later(1000))
      expect(Option.getOrThrow(updated)).toMatchObject({ name: "Initech Corp" })
      expect(Option.getOrThrow(yield* repository.details(id))).toMatchObject({ name: "Initech Corp", metadata: { region: "eu" }, logoUrl: "https://logo.test/a.png", updatedAt: later(1000) })
      expect(yield* repository.update(Db.organizationId(), { name: "Nobody" }, later(1000))).toEqual(Option.none())
      expect(yield* repository.countOwnedBy(owner)).toBe(1)
      expect(yield* repository.lock(id)).toBe(true)
      expect(yield* repository.lock(Db.organizationId())).toBe(false)
    }))

  it.effect("OrganizationsRepository: deletion, purge bookkeeping, restoration and removal", () =>
    Effect.gen(function*() {
      const repository = yield* OrganizationsRepository.make
      const id = yield* Db.insertOrganization({ name: "Doomed" })
      const owner = yield* Db.insertUser("owner@doomed.test")
      yield* Db.insertMembership(id, owner, "owner")
      yield* repository.markDeleted({ id, at: later(1), purgeAfter: later(10_000), deletedBy: "usr_x" })
      expect(yield* repository.find(id)).toEqual(Option.none())
      expect(yield* repository.details(id)).toEqual(Option.none())
      expect(yield* repository.countOwnedBy(owner)).toBe(0)
      expect(Option.getOrThrow(yield* repository.lockLifecycle(id))).toMatchObject({ id, deletedAt: later(1), purgeAfter: later(10_000), deletedBy: "usr_x" })
      expect(yield* repository.lockDue({ id, at: later(9_999) })).toEqual(Option.none())
      expect(yield* repository.dueForPurge({ at: later(9_999), limit: 10 })).not.toContain(id)
      expect(yield* repository.dueForPurge({ at: later(10_000), limit: 10 })).toContain(id)
      expect(Option.getOrThrow(yield* repository.lockDue({ id, at: later(10_000) })).purgedRows).toEqual({})
      yield* repository.addPurged({ id, table: "memberships", count: 2 })
      yield* repository.addPurged({ id, table: "memberships", count: 3 })
      yield* repository.addPurged({ id, table: "teams", count: 1 })
      expect(Option.getOrThrow(yield* repository.lockDue({ id, at: later(10_000) })).purgedRows).toEqual({ memberships: 5, teams: 1 })
      yield* repository.markRestored({ id, at: later(2) })
      expect(Option.getOrThrow(yield* repository.find(id))).toMatchObject({ id, name: "Doomed" })
      expect(yield* repository.lockDue({ id, at: later(10_000) })).toEqual(Option.none())
      // Only a deleted organization's row is removed.
      expect(yield* repository.remove(id)).toBe(false)
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM memberships WHERE organization_id = ${id}`
      yield* repository.markDeleted({ id, at: later(3), purgeAfter: later(3), deletedBy: "usr_x" })
      expect(yield* repository.remove(id)).toBe(true)
      expect(yield* repository.lockLifecycle(id)).toEqual(Option.none())
    }))

  it.effect("OrganizationsRepository: unclaimed provisional workspaces expire; the operator's list pages with cursors", () =>
    Effect.gen(function*() {
      const repository = yield* OrganizationsRepository.make
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM memberships`
      yield* sql`DELETE FROM organizations`
      const unclaimed = yield* Db.insertOrganization({ name: "Sandbox one", provisional: true })
      yield* Db.insertMembership(unclaimed, null, "owner")
      const claimed = yield* Db.insertOrganization({ name: "Sandbox two", provisional: true })
      yield* Db.insertMembership(claimed, yield* Db.insertUser("claimer@sandbox.test"), "owner")
      const young = yield* Db.insertOrganization({ name: "Sandbox three", provisional: true, createdAt: later(60_000) })
      const listed = yield* repository.listForAdmin({ limit: 50 }, 3_600_000)
      expect(listed.items.find((item) => item.id === unclaimed)).toMatchObject({ purgeAfter: later(3_600_000), memberCount: 1 })
      expect(listed.items.find((item) => item.id === claimed)).toMatchObject({ purgeAfter: null, memberCount: 1 })
      expect(yield* repository.expireUnclaimed({ madeBefore: later(1), at: later(2), limit: 10 })).toEqual([unclaimed])
      expect(yield* repository.find(unclaimed)).toEqual(Option.none())
      expect(Option.isSome(yield* repository.find(young))).toBe(true)
      // Three organizations, two a page, oldest id first.
      const first = yield* repository.listForAdmin({ limit: 2 }, 3_600_000)
      expect(first.items).toHaveLength(2)
      expect(first.nextCursor).toEqual(expect.any(String))
      const second = yield* repository.listForAdmin({ limit: 2, cursor: first.nextCursor ?? "" }, 3_600_000)
      expect(second.items).toHaveLength(1)
      expect(second.nextCursor).toBeNull()
      expect([...first.items, ...second.items].map((item) => item.id)).toEqual([unclaimed, claimed, young].sort())
      expect((yield* repository.listForAdmin({ limit: 50, deleted: true }, 0)).items.map((item) => item.id)).toEqual([unclaimed])
      expect((yield* repository.listForAdmin({ limit: 50, q: "two" }, 0)).items.map((item) => item.id)).toEqual([claimed])
      // A cursor of other filters is refused.
      const refused = yield* Effect.flip(repository.listForAdmin({ limit: 2, q: "Sandbox", cursor: first.nextCursor ?? "" }, 0))
      expect(refused).toMatchObject({ _tag: "InvalidRequest" })
    }))

  it.effect("SsoEnforcement: the enforcing organization of a domain, of a session and of an API key", () =>
    Effect.gen(function*() {
      const enforcement = yield* Sso.SsoEnforcement.make
      const sql = yield* SqlClient.SqlClient
      const acme = yield* Db.insertOrganization({ name: "Acme" })
      const connection = yield* Db.insertSso({ organizationId: acme, domain: "acme.test", policy: { requireSso: true, ownersPasswordFallback: false } })
      const relaxed = yield* Db.insertOrganization({ name: "Relaxed" })
      yield* Db.insertSso({ organizationId: relaxed, domain: "relaxed.test", policy: { requireSso: false, ownersPasswordFallback: true } })
      expect(Option.getOrThrow(yield* enforcement.forEmail("Jane@ACME.test"))).toEqual({ organizationId: acme, connectionId: connection, ownersPasswordFallback: false })
      expect(yield* enforcement.forEmail("jane@relaxed.test")).toEqual(Option.none())
      expect(yield* enforcement.forEmail("no-domain")).toEqual(Option.none())
      expect(yield* enforcement.forDomain("elsewhere.test")).toEqual(Option.none())

      const jane = yield* Db.insertUser("jane@acme.test")
      const membership = yield* Db.insertMembership(acme, jane, "member")
      const session = Db.newId("ses") as SessionId
      yield* sql`INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at) VALUES (${session}, ${jane}, ${Db.newId("h")}, ${Db.at}, ${later(3_600_000)})`
      const assurance = Option.getOrThrow(yield* enforcement.forSession({ sessionId: session, organizationId: acme }))
      expect(assurance).toEqual({ ssoConnectionId: null, authenticatedOrganizationId: null, requireSso: true, ownersPasswordFallback: false, managedBy: connection })
      // Acting in an organization without a policy, the same session is governed by nothing.
      expect(Option.getOrThrow(yield* enforcement.forSession({ sessionId: session, organizationId: relaxed }))).toMatchObject({ requireSso: false, managedBy: null })

      const key = Schema.decodeUnknownSync(ApiKeyId)(Db.newId("apk"))
      yield* sql`INSERT INTO api_keys (id, organization_id, membership_id, name, prefix, key_hash, created_at, sso_connection_id, authenticated_organization_id)
        VALUES (${key}, ${acme}, ${membership}, 'ci', 'op_', ${Db.newId("h")}, ${Db.at}, ${connection}, ${acme})`
      expect(Option.getOrThrow(yield* enforcement.forApiKey({ apiKeyId: key, organizationId: acme }))).toEqual({
        ssoConnectionId: connection, authenticatedOrganizationId: acme, requireSso: true, ownersPasswordFallback: false, managedBy: connection
      })
      // Tenancy: the key is not found in another organization.
      expect(yield* enforcement.forApiKey({ apiKeyId: key, organizationId: relaxed })).toEqual(Option.none())

      // A deleted organization's domains no longer refuse passwords.
      yield* sql`UPDATE organizations SET deleted_at = ${Db.at}, purge_after = ${Db.at}, deleted_by = 'x' WHERE id = ${acme}`
      expect(yield* enforcement.forEmail("jane@acme.test")).toEqual(Option.none())
    }))
})

/** The rule's cases, on fixed ids. */
const acme = { id: Schema.decodeUnknownSync(OrganizationId)("org_01j0000000000000000000acme"), name: "Acme" }
const other = Schema.decodeUnknownSync(OrganizationId)("org_01j00000000000000000000thr")
const connection = Schema.decodeUnknownSync(SsoConnectionId)("ssc_01j00000000000000000000ssc")

const policy = (requireSso: boolean | null, ownersPasswordFallback: boolean | null = false) => ({ requireSso, ownersPasswordFallback })
/**
 * Each case: whether a session is admitted, whether an API key its member made works (`keyAdmitted`), and whether
 * an API key of that member may make another (`keyMaking`).
 */
const cases: ReadonlyArray<{
  readonly name: string
  readonly role: "owner" | "admin" | "member"
  readonly assurance: Sso.SessionAssurance
  readonly admitted: boolean
  readonly keyAdmitted: boolean
  readonly keyMaking: boolean
}> = [
  { name: "no policy", role: "member", assurance: { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(null, null), managedBy: connection }, admitted: true, keyAdmitted: true, keyMaking: true },
  { name: "policy off", role: "member", assurance: { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(false), managedBy: connection }, admitted: true, keyAdmitted: true, keyMaking: true },
  { name: "own SSO", role: "member", assurance: { ssoConnectionId: connection, authenticatedOrganizationId: acme.id, ...policy(true), managedBy: connection }, admitted: true, keyAdmitted: true, keyMaking: false },
  { name: "another organization's SSO", role: "member", assurance: { ssoConnectionId: connection, authenticatedOrganizationId: other, ...policy(true), managedBy: connection }, admitted: false, keyAdmitted: false, keyMaking: false },
  { name: "another organization's SSO, email outside the domains", role: "owner", assurance: { ssoConnectionId: connection, authenticatedOrganizationId: other, ...policy(true, true), managedBy: null }, admitted: false, keyAdmitted: false, keyMaking: true },
  { name: "password, email outside the domains", role: "member", assurance: { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(true), managedBy: null }, admitted: true, keyAdmitted: true, keyMaking: true },
  { name: "password, member of the domain", role: "member", assurance: { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(true), managedBy: connection }, admitted: false, keyAdmitted: false, keyMaking: false },
  { name: "password, break-glass owner", role: "owner", assurance: { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(true, true), managedBy: connection }, admitted: true, keyAdmitted: true, keyMaking: true },
  { name: "password, owner without fallback", role: "owner", assurance: { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(true, false), managedBy: connection }, admitted: false, keyAdmitted: false, keyMaking: false },
  { name: "password, admin with owners' fallback", role: "admin", assurance: { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(true, true), managedBy: connection }, admitted: false, keyAdmitted: false, keyMaking: false }
]

const plain = (answer: Option.Option<{ readonly reason: string; readonly message: string }>) =>
  Option.match(answer, { onNone: () => null, onSome: (forbidden) => ({ reason: forbidden.reason, message: forbidden.message }) })

layer(Db.layer, { excludeTestServices: true })("SSO enforcement's rule", (it) => {
  for (const { admitted, assurance, keyAdmitted, keyMaking, name, role } of cases) {
    it(`${name}: ${admitted ? "admitted" : "refused"}, its keys ${keyAdmitted ? "working" : "suspended"}, ${keyMaking ? "making keys" : "making none"}`, () => {
      const answers = [Sso.admission(acme, role, assurance), Sso.keyAdmission(acme, role, assurance), Sso.keyMakingRefusal(acme, role, assurance)].map(plain)
      expect(answers.map((answer) => answer === null)).toEqual([admitted, keyAdmitted, keyMaking])
      for (const answer of answers) if (answer !== null) expect(answer.reason).toBe("sso_session_required")
    })
  }

  it("says what to do: sign in through the organization's SSO, with its connection, or switch organization", () => {
    const member = cases.find(({ name }) => name === "password, member of the domain")!
    const elsewhere = cases.find(({ name }) => name === "another organization's SSO")!
    const connectionWords = "connection ssc_01j00000000000000000000ssc"
    expect(plain(Sso.admission(acme, member.role, member.assurance))?.message).toBe(
      `Acme requires SSO for your email's domain: sign in through its SSO (POST /v1/sso/sign-in with your email; ${connectionWords}), or switch to another organization (POST /v1/me/active-organization).`
    )
    expect(plain(Sso.admission(acme, elsewhere.role, elsewhere.assurance))?.message).toBe(
      `Acme requires SSO and accepts only sessions its own SSO authenticated, not another organization's: sign in through its SSO (POST /v1/sso/sign-in with your email; ${connectionWords}), or switch to another organization (POST /v1/me/active-organization).`
    )
    expect(plain(Sso.keyAdmission(acme, member.role, member.assurance))?.message).toBe(
      `This API key is suspended: Acme requires SSO for the member who made it, and the key was made outside its SSO (from a password session). It works again if enforcement stops covering them; otherwise sign in through its SSO (POST /v1/sso/sign-in, ${connectionWords}), make a new key (POST /v1/api-keys) and revoke this one.`
    )
    expect(plain(Sso.keyMakingRefusal(acme, member.role, member.assurance))?.message).toBe(
      `Acme requires SSO for your email's domain: only a session its SSO signed in makes API keys for you, not an API key (POST /v1/sso/sign-in, ${connectionWords}, then POST /v1/api-keys with that session).`
    )
  })

  it("a policy about to be set overrides the stored one; an email's domain; the sign-in refusal's words", () => {
    const assurance: Sso.SessionAssurance = { ssoConnectionId: null, authenticatedOrganizationId: null, ...policy(null, null), managedBy: connection }
    expect(Option.isSome(Sso.admission(acme, "member", assurance, { requireSso: true, ownersPasswordFallback: true }))).toBe(true)
    expect(Sso.domainOf("Jane@Sub.ACME.test ")).toBe("sub.acme.test")
    expect(Sso.domainOf("@acme.test")).toBeUndefined()
    expect(Sso.domainOf("a@b@Acme.Test")).toBe("acme.test")
    const required = (login: string) =>
      `This email's organization requires SSO: sign in through it with \`orgplane auth login --sso --email ${login}\`, or POST /v1/sso/sign-in (connection ${connection}).`
    expect(Sso.ssoRequired(connection, "jane@acme.test").message).toBe(required("jane@acme.test"))
    // An email a shell would split is not written into the command.
    expect(Sso.ssoRequired(connection, "jane doe@acme.test").message).toBe(required("<your email>"))
    expect(Sso.assuranceOrNone(Option.none())).toEqual({ ssoConnectionId: null, authenticatedOrganizationId: null, requireSso: null, ownersPasswordFallback: null, managedBy: null })
  })
})

layer(Db.layer, { timeout: 120_000, excludeTestServices: true })(`instance-wide and account repositories on ${TestDatabase.kind}`, (it) => {
  it.effect("OperatorRepository: the first claim wins; setup tokens kept, expired ones forgotten, all spent at once", () =>
    Effect.gen(function*() {
      const repository = yield* OperatorRepository.make
      expect(yield* repository.claimed).toEqual(Option.none())
      const first = yield* Db.insertOrganization()
      const second = yield* Db.insertOrganization()
      expect(yield* repository.claim(first)).toBe(true)
      expect(yield* repository.claim(second)).toBe(false)
      expect(yield* repository.claimed).toEqual(Option.some(first))
      yield* repository.insertSetupToken({ tokenHash: "old", createdAt: Db.at, expiresAt: later(1000) })
      expect(yield* repository.isSetupToken("old", later(999))).toBe(true)
      expect(yield* repository.isSetupToken("old", later(1000))).toBe(false)
      yield* repository.insertSetupToken({ tokenHash: "new", createdAt: later(1000), expiresAt: later(5000) })
      const sql = yield* SqlClient.SqlClient
      expect((yield* sql<{ tokenHash: string }>`SELECT token_hash FROM instance_setup_tokens`).map((row) => row.tokenHash)).toEqual(["new"])
      expect(yield* repository.isSetupToken("new", later(1000))).toBe(true)
      yield* repository.spendSetupTokens
      expect(yield* repository.isSetupToken("new", later(1000))).toBe(false)
    }))

  it.effect("SignInAddressesRepository: remembers the latest sign-in of an address, moves with the email, forgets", () =>
    Effect.gen(function*() {
      const repository = yield* SignInAddressesRepository.make
      yield* repository.remember("jane@acme.test", "203.0.113.7", later(2000))
      yield* repository.remember("jane@acme.test", "203.0.113.7", later(1000))
      expect(yield* repository.signedInSince("jane@acme.test", "203.0.113.7", later(1999))).toBe(true)
      expect(yield* repository.signedInSince("jane@acme.test", "203.0.113.7", later(2000))).toBe(false)
      expect(yield* repository.signedInSince("jane@acme.test", "203.0.113.8", Db.at)).toBe(false)
      yield* repository.remember("jane@new.test", "203.0.113.7", later(500))
      yield* repository.move("jane@acme.test", "jane@new.test")
      expect(yield* repository.signedInSince("jane@acme.test", "203.0.113.7", Db.at)).toBe(false)
      expect(yield* repository.signedInSince("jane@new.test", "203.0.113.7", later(1999))).toBe(true)
      yield* repository.forget("jane@new.test")
      expect(yield* repository.signedInSince("jane@new.test", "203.0.113.7", Db.at)).toBe(false)
    }))

  it.effect("AccountTokensRepository: one token a purpose, replaced by the next, taken once, discarded", () =>
    Effect.gen(function*() {
      const repository = yield* AccountTokensRepository.make
      const user = yield* Db.insertUser("reset@acme.test")
      const organization = yield* Db.insertOrganization()
      const row = {
        userId: user,
        purpose: "password_reset" as const,
        tokenHash: "hash-1",
        email: "reset@acme.test",
        passwordDigest: "digest",
        issuedBy: "member" as const,
        delivery: "shown" as const,
        issuerLabel: "Owner",
        issuerOrganizationId: organization,
        allowedRole: "admin" as const,
        createdAt: Db.at,
        expiresAt: later(3_600_000)
      }
      yield* repository.replace(row)
      yield* repository.replace({ ...row, tokenHash: "hash-2" })
      expect(yield* repository.take({ tokenHash: "hash-1", purpose: "password_reset" })).toEqual(Option.none())
      expect(yield* repository.take({ tokenHash: "hash-2", purpose: "email_verification" })).toEqual(Option.none())
      expect(Option.getOrThrow(yield* repository.take({ tokenHash: "hash-2", purpose: "password_reset" }))).toMatchObject({ ...row, tokenHash: "hash-2" })
      expect(yield* repository.take({ tokenHash: "hash-2", purpose: "password_reset" })).toEqual(Option.none())
      yield* repository.replace({ ...row, purpose: "email_verification", tokenHash: "hash-3", passwordDigest: null, issuedBy: "self", delivery: "mailed", issuerLabel: null, issuerOrganizationId: null, allowedRole: null })
      yield* repository.discard({ userId: user, purpose: "email_verification" })
      expect(yield* repository.take({ tokenHash: "hash-3", purpose: "email_verification" })).toEqual(Option.none())
    }))
})

layer(Db.layer, { timeout: 120_000, excludeTestServices: true })(`BootstrapRepository on ${TestDatabase.kind}`, (it) => {
  it.effect("a workspace's claim: pending until redeemed once, unexpired, not of a deleted organization", () =>
    Effect.gen(function*() {
      const repository = yield* BootstrapRepository.make
      const organizationId = yield* Db.insertOrganization({ provisional: true })
      const setupMembershipId = Schema.decodeUnknownSync(MembershipId)(yield* Db.insertMembership(organizationId, null, "owner"))
      const bootstrapId = Schema.decodeUnknownSync(BootstrapId)(Db.newId("wbt"))
      expect(yield* repository.isBootstrapped(organizationId)).toBe(false)
      yield* repository.insertBootstrap({ id: bootstrapId, organizationId, setupMembershipId, status: "provisional", createdAt: Db.at, expiresAt: later(86_400_000) })
      expect(yield* repository.isBootstrapped(organizationId)).toBe(true)
      const claimId = Schema.decodeUnknownSync(WorkspaceClaimId)(Db.newId("wcl"))
      yield* repository.insertClaim({ id: claimId, organizationId, bootstrapId, role: "owner", tokenHash: "claim-hash", createdAt: Db.at, expiresAt: later(1000) })
      expect(yield* repository.lockPendingClaim({ tokenHash: "claim-hash", at: later(1000) })).toEqual(Option.none())
      const claim = Option.getOrThrow(yield* repository.lockPendingClaim({ tokenHash: "claim-hash", at: later(999) }))
      expect(claim).toMatchObject({ id: claimId, organizationId, bootstrapId, role: "owner", status: "pending", claimedByUserId: null })
      const user = yield* Db.insertUser("claimer@acme.test")
      expect(yield* repository.markClaimed(claim, user, later(10))).toBe(setupMembershipId)
      expect(yield* repository.lockPendingClaim({ tokenHash: "claim-hash", at: later(10) })).toEqual(Option.none())
      // A deleted organization's pending claims open nothing.
      const otherClaim = Schema.decodeUnknownSync(WorkspaceClaimId)(Db.newId("wcl"))
      yield* repository.insertClaim({ id: otherClaim, organizationId, bootstrapId, role: "admin", tokenHash: "other-hash", createdAt: Db.at, expiresAt: later(1000) })
      expect(Option.isSome(yield* repository.lockPendingClaim({ tokenHash: "other-hash", at: later(10) }))).toBe(true)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE organizations SET deleted_at = ${Db.at}, purge_after = ${Db.at}, deleted_by = 'x' WHERE id = ${organizationId}`
      expect(yield* repository.lockPendingClaim({ tokenHash: "other-hash", at: later(10) })).toEqual(Option.none())
    }))
})

layer(Db.layer, { timeout: 120_000, excludeTestServices: true })(`UsersRepository on ${TestDatabase.kind}`, (it) => {
  it.effect("accounts written and read back; a taken email is 409; proofs, resets, disabling, tombstones; the operator's list paged", () =>
    Effect.gen(function*() {
      const repository = yield* UsersRepository.make
      const row = (email: string) => ({ id: Db.userId(), email, name: email.split("@")[0] ?? "x", passwordHash: "hash-a", hasPassword: true, createdAt: Db.at, updatedAt: Db.at })
      const jane = yield* repository.insert(row("Jane@acme.test"))
      expect(yield* Effect.flip(repository.insert(row("jane@ACME.test")))).toMatchObject({ _tag: "Conflict", error: "email_taken" })
      expect(Option.getOrThrow(yield* repository.findByEmail("JANE@acme.test"))).toMatchObject({ id: jane.id, email: "Jane@acme.test", disabledAt: null, deletedAt: null })
      expect(repository.admitted(yield* repository.findById(jane.id))).toBe(true)
      expect(repository.admitted(yield* repository.findById(Db.userId()))).toBe(false)
      yield* repository.update({ id: jane.id, name: "Jane Doe", updatedAt: later(1) })
      expect(Option.getOrThrow(yield* repository.findById(jane.id))).toMatchObject({ name: "Jane Doe", passwordHash: "hash-a", updatedAt: later(1) })
      expect(yield* repository.emailVerified(jane.id)).toBe(false)
      yield* repository.markEmailVerified({ id: jane.id, at: later(2) })
      expect(yield* repository.emailVerified(jane.id)).toBe(true)
      yield* repository.changeEmail({ id: jane.id, email: "jane@acme.test", sameAddress: true, at: later(3) })
      expect(yield* repository.emailVerified(jane.id)).toBe(true)
      yield* repository.changeEmail({ id: jane.id, email: "jane@new.test", sameAddress: false, at: later(3) })
      expect(yield* repository.emailVerified(jane.id)).toBe(false)
      expect(Option.getOrThrow(yield* repository.proveEmail({ id: jane.id, email: "JANE@new.test", at: later(4) })).emailVerifiedAt).toEqual(later(4))
      expect(yield* repository.proveEmail({ id: jane.id, email: "jane@acme.test", at: later(4) })).toEqual(Option.none())
      const sql = yield* SqlClient.SqlClient
      const [digest] = yield* sql<{ digest: string }>`SELECT encode(sha256(convert_to('hash-a', 'UTF8')), 'hex') AS digest`
      expect(yield* repository.resetPassword({ id: jane.id, email: "jane@new.test", passwordDigest: "stale", passwordHash: "hash-b", boundOrganizationId: null, at: later(5) })).toEqual(Option.none())
      expect(Option.getOrThrow(yield* repository.resetPassword({ id: jane.id, email: "jane@new.test", passwordDigest: digest?.digest ?? "", passwordHash: "hash-b", boundOrganizationId: null, at: later(5) }))).toMatchObject({ passwordHash: "hash-b", hasPassword: true, passwordChangeRequired: false })
      yield* repository.setDisabled({ id: jane.id, at: later(6) })
      yield* repository.setDisabled({ id: jane.id, at: later(7) })
      expect(Option.getOrThrow(yield* repository.findById(jane.id)).disabledAt).toEqual(later(6))
      expect(repository.admitted(yield* repository.findById(jane.id))).toBe(false)
      expect(Option.getOrThrow(yield* repository.findForOperator(jane.id))).toMatchObject({ id: jane.id, emailVerified: true, organizationCount: 0 })
      yield* repository.setDisabled({ id: jane.id, at: null })
      const bob = yield* repository.insert(row("bob@acme.test"))
      const eve = yield* repository.insert(row("eve@acme.test"))
      const first = yield* repository.listForOperator({ limit: 2 })
      const second = yield* repository.listForOperator({ limit: 2, cursor: first.nextCursor ?? "" })
      expect([...first.items, ...second.items].map((user) => user.id)).toEqual([jane.id, bob.id, eve.id].sort())
      expect(second.nextCursor).toBeNull()
      expect((yield* repository.listForOperator({ email: "bob" })).items.map((user) => user.id)).toEqual([bob.id])
      yield* repository.tombstone({ id: eve.id, pseudonym: "deleted-eve", unusableHash: "!", at: later(8) })
      expect(repository.admitted(yield* repository.findById(eve.id))).toBe(false)
      expect(yield* repository.findForOperator(eve.id)).toEqual(Option.none())
      expect(yield* repository.lockLive(eve.id)).toEqual(Option.none())
      expect(yield* repository.count).toBe(3)
      // The address is free again.
      yield* repository.insert(row("eve@acme.test"))
    }))
})

layer(Db.layer, { timeout: 120_000, excludeTestServices: true })(`MembershipsRepository on ${TestDatabase.kind}`, (it) => {
  it.effect("a membership written and found by id, person and email; not in another organization; role changed, removed", () =>
    Effect.gen(function*() {
      const repository = yield* MembershipsRepository.make
      const acme = yield* Db.insertOrganization({ name: "Acme" })
      const other = yield* Db.insertOrganization({ name: "Other" })
      const jane = yield* Db.insertUser("Jane@acme.test")
      const id = Schema.decodeUnknownSync(MembershipId)(Db.newId("om"))
      const inserted = yield* repository.insert({ id, organizationId: acme, userId: jane, role: "admin", createdAt: Db.at })
      expect(inserted).toMatchObject({ id, organizationId: acme, userId: jane, role: "admin" })
      expect(Option.getOrThrow(yield* repository.find({ organizationId: acme, id }))).toMatchObject({ id, role: "admin", email: "Jane@acme.test" })
      expect(yield* repository.find({ organizationId: other, id })).toEqual(Option.none())
      expect(Option.isSome(yield* repository.findActive(acme, { userId: jane }))).toBe(true)
      expect(Option.isSome(yield* repository.findActive(acme, { email: "jane@ACME.test" }))).toBe(true)
      expect(yield* repository.findActive(other, { id })).toEqual(Option.none())
      yield* repository.changeRole({ organizationId: acme, id, role: "member", updatedAt: later(1) })
      expect(Option.getOrThrow(yield* repository.findActive(acme, { id }))).toMatchObject({ role: "member" })
      yield* repository.remove({ organizationId: acme, id, removedAt: later(2) })
      expect(yield* repository.findActive(acme, { id })).toEqual(Option.none())
    }))
})
