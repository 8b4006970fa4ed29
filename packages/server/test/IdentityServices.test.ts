/**
 * The identity area's services on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL),
 * called as the handlers call them, without HTTP: the instance's operator (configured, or claimed with the setup
 * token), organizations (creation under the quota, the profile, the operator's plan changes and list), API keys
 * (scopes within the role and the making key, lifetimes, the quota, revocation of the keys a key made) and the
 * agent's workspace bootstrap (claim links, the rate limit, taking the workspace over). Errors and messages are held
 * word for word, as the API answers them.
 */
import { expect, layer } from "@effect/vitest"
import { type MemberContext, type OrganizationId, SessionId, type UserId } from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { ApiKeys } from "../src/identity/ApiKeys.js"
import { Bootstrap } from "../src/identity/Bootstrap.js"
import { BootstrapRepository } from "../src/identity/BootstrapRepository.js"
import { Memberships } from "../src/identity/Memberships.js"
import { toCaller } from "../src/identity/MembershipsRepository.js"
import { Operator } from "../src/identity/Operator.js"
import { OwnershipQuota } from "../src/identity/OwnershipQuota.js"
import { RateLimiter } from "../src/platform/RateLimiter.js"
import { OperatorRepository } from "../src/identity/OperatorRepository.js"
import { Organizations } from "../src/identity/Organizations.js"
import { OrganizationsRepository } from "../src/identity/OrganizationsRepository.js"
import { SessionsRepository } from "../src/identity/SessionsRepository.js"
import * as Config from "../src/platform/Config.js"
import { ServerConfig } from "../src/platform/Config.js"
import { Crypto } from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const day = 24 * 3_600_000

/** The settings of an empty environment, with the limits these tests reach. */
const settings = Config.layer({ dataDir: "memory", organizationsPerUser: 2, apiKeysPerMember: 3, bootstrapPerHour: 2, publicUrl: "https://orgplane.test" }).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)

const platform = Layer.mergeAll(IdGenerator.layer, Crypto.layer.pipe(Layer.provideMerge(settings)))

const services = Layer.mergeAll(Organizations.layer, ApiKeys.layer, Bootstrap.layer, Operator.layer, Memberships.layer, SessionsRepository.layer)

/** A person signed in (a fresh session): their id, session and a function giving their member context. */
const signedIn = Effect.fn("test.signedIn")(function*(email: string) {
  const sessions = yield* SessionsRepository
  const crypto = yield* Crypto
  const userId = yield* Db.insertUser(email)
  const sessionId = Schema.decodeUnknownSync(SessionId)(Db.newId("ses"))
  const token = yield* crypto.newToken("ops")
  const createdAt = new Date()
  yield* sessions.insert({
    id: sessionId,
    userId,
    tokenHash: crypto.hashToken(token),
    activeOrganizationId: null,
    createdAt,
    expiresAt: new Date(createdAt.getTime() + day),
    ipAddress: null,
    userAgent: null
  })
  /** The person as a member of the organization their session acts in, as authentication resolves it. */
  const member = Effect.gen(function*() {
    const at = new Date()
    const found = Option.getOrThrow(yield* sessions.resolve({ tokenHash: crypto.hashToken(token), at, idleSince: new Date(at.getTime() - day) }))
    const caller = toCaller(found)
    if (caller.organization === null || caller.membership === null) return yield* Effect.die("no membership")
    const context: MemberContext = {
      ...caller,
      _tag: "Member",
      organization: caller.organization,
      membership: caller.membership,
      credential: { _tag: "Session", sessionId, ssoConnectionId: null, authenticatedAt: createdAt }
    }
    return context
  })
  return { userId, sessionId, member }
})

/** `caller` acting through an API key it made (with these scopes). */
const throughKey = (caller: MemberContext, credential: Extract<MemberContext["credential"], { readonly _tag: "ApiKey" }>): MemberContext => ({
  ...caller,
  credential
})

/** An organization of `userId` made by the service: its id. */
const organizationOf = Effect.fn("test.organizationOf")(function*(person: { readonly userId: UserId; readonly sessionId: SessionId }, name: string) {
  const organizations = yield* Organizations
  const created = yield* organizations.create({ name, userId: person.userId, sessionId: person.sessionId })
  return created.organization.id
})

layer(services.pipe(Layer.provideMerge(Layer.mergeAll(Db.layer, platform))), {
  timeout: 300_000,
  excludeTestServices: true
})(`identity services on ${TestDatabase.kind}`, (it) => {
  it.effect("Organizations: creation makes its creator owner and acts in it, under the quota; the profile; refusals", () =>
    Effect.gen(function*() {
      const organizations = yield* Organizations
      const memberships = yield* Memberships
      const ada = yield* signedIn("org-ada@acme.test")
      const created = yield* organizations.create({ name: "Acme", userId: ada.userId, sessionId: ada.sessionId })
      expect(created.organization).toMatchObject({ name: "Acme", plan: "free", provisional: false })
      expect(created.membership).toMatchObject({ organizationId: created.organization.id, userId: ada.userId, role: "owner" })
      expect(yield* memberships.emailProven({ organizationId: created.organization.id, userId: ada.userId })).toBe(true)
      const owner = yield* ada.member
      expect(owner.organization.id).toBe(created.organization.id)
      yield* organizations.create({ name: "Acme Two", userId: ada.userId, sessionId: ada.sessionId })
      const refused = yield* Effect.flip(organizations.create({ name: "Acme Three", userId: ada.userId, sessionId: ada.sessionId }))
      expect(refused).toMatchObject({
        error: "organization_quota_reached",
        message:
          "You own 2 organizations, the most this instance allows (ORGPLANE_ORGANIZATIONS_PER_USER): delete or hand over one, or ask the instance's operator to raise the setting."
      })
      // The session acts in the newest; back to the first for the profile.
      yield* memberships.activate(ada.sessionId, created.organization.id)
      const caller = yield* ada.member
      expect((yield* organizations.details(caller)).organization).toMatchObject({ id: created.organization.id, name: "Acme", memberCount: 1 })
      const updated = yield* organizations.update(caller, { name: "Acme Corp", metadata: { region: "eu" } })
      expect(updated.organization).toMatchObject({ name: "Acme Corp", metadata: { region: "eu" } })
      expect(Option.getOrThrow(yield* organizations.find(created.organization.id))).toMatchObject({ name: "Acme Corp" })
      // A member may read the profile, not change it.
      const bob = yield* signedIn("org-bob@acme.test")
      yield* memberships.join({ organizationId: created.organization.id, userId: bob.userId, role: "member" })
      const member = yield* bob.member
      expect((yield* organizations.details(member)).organization.memberCount).toBe(2)
      expect(yield* Effect.flip(organizations.update(member, { name: "Mine" }))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_role" })
      // Not the operator: neither plans nor the instance's list.
      const operatorOnly = { _tag: "Forbidden", reason: "operator_only", message: "Only owners and admins of the operator organization may do this." }
      expect(yield* Effect.flip(organizations.setPlan(caller, created.organization.id, "enterprise"))).toMatchObject(operatorOnly)
      expect(yield* Effect.flip(organizations.listForAdmin(caller, { limit: 10 }))).toMatchObject(operatorOnly)
    }))

  it.effect("Operator: the configured organization's owners and admins, nobody else; plans and the list through it", () =>
    Effect.gen(function*() {
      const base = yield* ServerConfig
      const ops = yield* signedIn("op-owner@ops.test")
      const opsId = yield* organizationOf(ops, "Ops")
      const other = yield* signedIn("op-other@else.test")
      const otherId = yield* organizationOf(other, "Elsewhere")
      const configured = { ...base, operatorOrganizationId: opsId }
      const repositories = Layer.mergeAll(OperatorRepository.layer, OrganizationsRepository.layer, BootstrapRepository.layer, RateLimiter.layer)
      const operator = yield* Operator.make.pipe(Effect.provide(repositories), Effect.provideService(ServerConfig, configured))
      expect(yield* operator.organizationId).toEqual(Option.some(opsId))
      const owner = yield* ops.member
      yield* operator.require(owner, "organizations.setPlan")
      const operatorOnly = { _tag: "Forbidden", reason: "operator_only", message: "Only owners and admins of the operator organization may do this." }
      expect(yield* Effect.flip(operator.require(yield* other.member, "organizations.setPlan"))).toMatchObject(operatorOnly)
      // A member of the operator organization is not enough.
      const memberships = yield* Memberships
      const staff = yield* signedIn("op-staff@ops.test")
      yield* memberships.join({ organizationId: opsId, userId: staff.userId, role: "member" })
      expect(yield* Effect.flip(operator.require(yield* staff.member, "organizations.setPlan"))).toMatchObject(operatorOnly)
      // Configured: nothing to claim, no setup token.
      expect(yield* Effect.flip(operator.claim(owner, "anything", "127.0.0.1"))).toMatchObject({ _tag: "Conflict", error: "operator_exists" })
      expect(yield* operator.issueSetupToken).toEqual(Option.none())
      // Organizations through this operator.
      const organizations = yield* Organizations.make.pipe(
        Effect.provide(Layer.mergeAll(OrganizationsRepository.layer, OwnershipQuota.layer)),
        Effect.provideService(Operator, operator),
        Effect.provideService(ServerConfig, configured)
      )
      expect(yield* organizations.setPlan(owner, otherId, "enterprise")).toMatchObject({ id: otherId, plan: "enterprise" })
      expect(yield* Effect.flip(organizations.setPlan(owner, Db.organizationId(), "team"))).toMatchObject({
        _tag: "NotFound",
        error: "organization_not_found",
        message: "Organization not found."
      })
      const listed = yield* organizations.listForAdmin(owner, { limit: 100 })
      expect(listed.items.map((item) => item.id)).toEqual(expect.arrayContaining([opsId, otherId]))
    }))

  it.effect("Operator: claimed once with the setup token the server logged, by a real organization's owner", () =>
    Effect.gen(function*() {
      const operator = yield* Operator
      const bootstrap = yield* Bootstrap
      expect(yield* operator.organizationId).toEqual(Option.none())
      const token = Option.getOrThrow(yield* operator.issueSetupToken)
      expect(token.startsWith("opsetup_")).toBe(true)
      const ada = yield* signedIn("claim-ada@acme.test")
      yield* organizationOf(ada, "Claimers")
      const owner = yield* ada.member
      expect(yield* Effect.flip(operator.claim(owner, "opsetup_wrong", "127.0.0.1"))).toMatchObject({
        _tag: "Forbidden",
        reason: "setup_token_invalid",
        message: "This is not the instance's setup token (ORGPLANE_SETUP_TOKEN, or the one the server logged at its last start, valid 24 hours)."
      })
      // An admin may not claim (owners only).
      const memberships = yield* Memberships
      const admin = yield* signedIn("claim-admin@acme.test")
      yield* memberships.join({ organizationId: owner.organization.id, userId: admin.userId, role: "admin" })
      expect(yield* Effect.flip(operator.claim(yield* admin.member, token, "127.0.0.1"))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_role" })
      // A bootstrapped workspace is not eligible.
      const workspace = yield* bootstrap.createWorkspace("192.0.2.50", { workspaceName: "Agent space" })
      const claimer = yield* signedIn("claim-agent@agent.test")
      yield* bootstrap.acceptClaim({ token: workspace.claimLinks[0]!.token, userId: claimer.userId, sessionId: claimer.sessionId })
      expect(yield* Effect.flip(operator.claim(yield* claimer.member, token, "127.0.0.1"))).toMatchObject({
        _tag: "Conflict",
        error: "operator_not_eligible",
        message:
          "A workspace made by POST /v1/bootstrap/workspace cannot operate the instance (its claim links were an anonymous agent's to hand out): create an organization with POST /v1/organizations and claim with it."
      })
      const claimed = yield* operator.claim(owner, token, "127.0.0.1")
      expect(claimed.organization).toMatchObject({ id: owner.organization.id, name: "Claimers" })
      expect(yield* operator.organizationId).toEqual(Option.some(owner.organization.id))
      yield* operator.require(owner, "admin.readOrganizations")
      expect(yield* Effect.flip(operator.claim(owner, token, "127.0.0.1"))).toMatchObject({
        _tag: "Conflict",
        error: "operator_exists",
        message: "An organization already operates this instance: its owners and admins change plans and read the metrics."
      })
      expect(yield* operator.issueSetupToken).toEqual(Option.none())
    }))

  it.effect("ApiKeys: scopes within the role and the making key, lifetimes, the quota, revocation of what a key made", () =>
    Effect.gen(function*() {
      const apiKeys = yield* ApiKeys
      const memberships = yield* Memberships
      const ada = yield* signedIn("keys-ada@acme.test")
      const organizationId: OrganizationId = yield* organizationOf(ada, "Keys")
      const owner = yield* ada.member
      const made = yield* apiKeys.create(owner, { name: "CI", scopes: ["teams.*", "members.read", "apiKeys.manage"] })
      expect(made.key.startsWith("opk_")).toBe(true)
      expect(made.apiKey).toMatchObject({ name: "CI", prefix: made.key.slice(0, 12), createdByOrgMembershipId: owner.membership.id, parentApiKeyId: null })
      expect([...(made.apiKey.scopes ?? [])].sort()).toEqual(["apiKeys.manage", "members.read", "teams.manage", "teams.read"])
      // 90 days at most by default.
      const lifetime = (made.apiKey.expiresAt?.getTime() ?? 0) - made.apiKey.createdAt.getTime()
      expect(lifetime).toBe(90 * day)
      expect(yield* Effect.flip(apiKeys.create(owner, { name: "past", expiresAt: new Date(Date.now() - 1000) }))).toMatchObject({
        _tag: "InvalidRequest"
      })
      const tooLate = yield* Effect.flip(apiKeys.create(owner, { name: "late", expiresAt: new Date(Date.now() + 91 * day) }))
      expect(JSON.stringify(tooLate)).toContain("(ORGPLANE_API_KEY_MAX_LIFETIME)")
      // A key makes keys within its own scopes, recorded as their parent.
      const viaKey = throughKey(owner, { _tag: "ApiKey", apiKeyId: made.apiKey.id, scopes: made.apiKey.scopes })
      const beyondKey = yield* Effect.flip(apiKeys.create(viaKey, { name: "wider", scopes: ["audit.read"] }))
      expect(JSON.stringify(beyondKey)).toContain("audit.read is beyond the scopes of the API key making this one")
      const child = yield* apiKeys.create(viaKey, { name: "child", scopes: ["teams.read"] })
      expect(child.apiKey).toMatchObject({ parentApiKeyId: made.apiKey.id, scopes: ["teams.read"] })
      // The quota: 3 unexpired keys per member here.
      yield* apiKeys.create(owner, { name: "third" })
      expect(yield* Effect.flip(apiKeys.create(owner, { name: "fourth" }))).toMatchObject({
        _tag: "Conflict",
        error: "api_key_quota_reached",
        message:
          "You have 3 API keys in this organization, the most this instance allows per member (ORGPLANE_API_KEYS_PER_MEMBER): revoke one, or ask the instance's operator to raise the setting."
      })
      expect((yield* apiKeys.list(owner, { limit: 10 })).items).toHaveLength(3)
      // Revoking the parent takes the child; another organization's key, or none, is 404.
      yield* apiKeys.revoke(owner, made.apiKey.id)
      expect((yield* apiKeys.list(owner, { limit: 10 })).items.map((key) => key.name)).toEqual(["third"])
      const notFound = { _tag: "NotFound", error: "api_key_not_found", message: "API key not found." }
      expect(yield* Effect.flip(apiKeys.revoke(owner, made.apiKey.id))).toMatchObject(notFound)
      const bob = yield* signedIn("keys-bob@else.test")
      yield* organizationOf(bob, "Elsewhere keys")
      const stranger = yield* bob.member
      const theirs = yield* apiKeys.create(stranger, { name: "theirs" })
      expect(yield* Effect.flip(apiKeys.revoke(owner, theirs.apiKey.id))).toMatchObject(notFound)
      expect((yield* apiKeys.list(owner, { limit: 10 })).items.map((key) => key.name)).toEqual(["third"])
      // A member may not manage keys; an admin's scopes stay within the admin role.
      const carol = yield* signedIn("keys-carol@acme.test")
      yield* memberships.join({ organizationId, userId: carol.userId, role: "member" })
      expect(yield* Effect.flip(apiKeys.create(yield* carol.member, { name: "nope" }))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_role" })
      const dan = yield* signedIn("keys-dan@acme.test")
      yield* memberships.join({ organizationId, userId: dan.userId, role: "admin" })
      const beyondRole = yield* Effect.flip(apiKeys.create(yield* dan.member, { name: "owner things", scopes: ["members.transferOwnership"] }))
      expect(JSON.stringify(beyondRole)).toContain("members.transferOwnership is beyond your role (admin)")
      // An old session must sign in again to make a key.
      const stale: MemberContext = { ...owner, credential: { _tag: "Session", sessionId: ada.sessionId, ssoConnectionId: null, authenticatedAt: new Date(Date.now() - day) } }
      expect(yield* Effect.flip(apiKeys.create(stale, { name: "stale" }))).toMatchObject({ _tag: "Forbidden", reason: "recent_authentication_required" })
    }))

  it.effect("Bootstrap: a provisional workspace with claim links; claiming takes it over; links are one-time; the rate limit", () =>
    Effect.gen(function*() {
      const bootstrap = yield* Bootstrap
      const memberships = yield* Memberships
      const sql = yield* SqlClient.SqlClient
      const made = yield* bootstrap.createWorkspace("192.0.2.7", { workspaceName: "Agent HQ", claimRoles: ["member", "owner"], ownerEmail: "boss@agent.test" })
      expect(made).toMatchObject({ ok: true, organization: { name: "Agent HQ", provisional: true } })
      expect(made.claimLinks.map((link) => link.role)).toEqual(["member", "owner"])
      const [memberLink, ownerLink] = made.claimLinks
      expect(memberLink!.token.startsWith("opc_")).toBe(true)
      expect(memberLink!.url).toBe(`https://orgplane.test/workspace-claim?token=${memberLink!.token}`)
      expect(ownerLink!.url).toBe(`https://orgplane.test/workspace-claim?token=${ownerLink!.token}&email=boss%40agent.test`)
      expect(Math.abs(made.setup.expiresAt.getTime() - made.organization.createdAt.getTime() - day)).toBeLessThan(60_000)
      const placeholder = (yield* memberships.list(made.organization.id, { limit: 10 })).items
      expect(placeholder).toMatchObject([{ role: "owner", userId: null }])
      // A member link: a member, the workspace still provisional.
      const mia = yield* signedIn("boot-mia@agent.test")
      const asMember = yield* bootstrap.acceptClaim({ token: memberLink!.token, userId: mia.userId, sessionId: mia.sessionId })
      expect(asMember).toMatchObject({ ok: true, organization: { provisional: true }, membership: { role: "member", userId: mia.userId } })
      const claimNotFound = { _tag: "NotFound", error: "claim_not_found", message: "This claim link is unknown, used or expired." }
      expect(yield* Effect.flip(bootstrap.acceptClaim({ token: memberLink!.token, userId: mia.userId, sessionId: mia.sessionId }))).toMatchObject(claimNotFound)
      expect(yield* Effect.flip(bootstrap.acceptClaim({ token: "opc_unknown", userId: mia.userId, sessionId: mia.sessionId }))).toMatchObject(claimNotFound)
      // The owner link, redeemed by the member: raised to owner, the placeholder gone, the workspace real.
      const asOwner = yield* bootstrap.acceptClaim({ token: ownerLink!.token, userId: mia.userId, sessionId: mia.sessionId })
      expect(asOwner).toMatchObject({ organization: { provisional: false }, membership: { id: asMember.membership.id, role: "owner" } })
      const members = (yield* memberships.list(made.organization.id, { limit: 10 })).items
      expect(members.map((member) => [member.userId, member.role])).toEqual([[mia.userId, "owner"]])
      expect((yield* mia.member).organization.id).toBe(made.organization.id)
      const [row] = yield* sql<{ status: string }>`SELECT status FROM workspace_bootstraps WHERE organization_id = ${made.organization.id}`
      expect(row?.status).toBe("claimed")
      // Two workspaces an hour from one address here; the third is refused.
      yield* bootstrap.createWorkspace("192.0.2.8", { workspaceName: "One" })
      yield* bootstrap.createWorkspace("192.0.2.8", { workspaceName: "Two" })
      const limited = yield* Effect.flip(bootstrap.createWorkspace("192.0.2.8", { workspaceName: "Three" }))
      expect(limited).toMatchObject({ _tag: "RateLimited" })
      expect(JSON.stringify(limited)).toContain("Too many workspaces from this address; retry in")
      // A removed member's claim link is refused.
      const other = yield* bootstrap.createWorkspace("192.0.2.9", { workspaceName: "Again", claimRoles: ["member", "member"] })
      const ned = yield* signedIn("boot-ned@agent.test")
      const joined = yield* bootstrap.acceptClaim({ token: other.claimLinks[0]!.token, userId: ned.userId, sessionId: ned.sessionId })
      yield* memberships.remove(other.organization.id, joined.membership.id)
      expect(yield* Effect.flip(bootstrap.acceptClaim({ token: other.claimLinks[1]!.token, userId: ned.userId, sessionId: ned.sessionId }))).toMatchObject({
        _tag: "Forbidden",
        reason: "membership_removed",
        message: "You were removed from this organization."
      })
    }))

  it.effect("Redacted setup token configured: only it claims", () =>
    Effect.gen(function*() {
      const base = yield* ServerConfig
      const sql = yield* SqlClient.SqlClient
      const repositories = Layer.mergeAll(OperatorRepository.layer, OrganizationsRepository.layer, BootstrapRepository.layer, RateLimiter.layer)
      const configured = { ...base, setupToken: Redacted.make("  opsetup_configured-token-0123456789abcdef  ") }
      const operator = yield* Operator.make.pipe(Effect.provide(repositories), Effect.provideService(ServerConfig, configured))
      expect(yield* operator.issueSetupToken).toEqual(Option.none())
      const eve = yield* signedIn("setup-eve@acme.test")
      yield* organizationOf(eve, "Configured")
      const owner = yield* eve.member
      // Another test's claim may have made an operator already: start from none.
      yield* sql`DELETE FROM instance_settings WHERE key = 'operator_organization_id'`
      expect(yield* Effect.flip(operator.claim(owner, "opsetup_other", "127.0.0.1"))).toMatchObject({ reason: "setup_token_invalid" })
      expect((yield* operator.claim(owner, "opsetup_configured-token-0123456789abcdef", "127.0.0.1")).organization.id).toBe(owner.organization.id)
    }))
})
