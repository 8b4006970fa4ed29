/**
 * members/ (Members, DirectoryRepository) and invitations/ (Invitations, InvitationsRepository) as services, on a
 * fresh migrated database (the embedded one, or Postgres with DATABASE_URL): what http/Members.test.ts,
 * MemberDirectory.test.ts and Invitations.test.ts check through HTTP that lives in the services. Roles and who may change
 * them, the last owner kept, ownership transferred to an admin only, removal soft; what a plain member sees of the
 * directory; invitations issued, refreshed, previewed, accepted (signed in or by signing up), canceled and expired;
 * another organization's member or invitation answering 404. The errors are held word for word, as the API answers
 * them.
 */
import { expect, layer } from "@effect/vitest"
import {
  type Actor,
  InvitationId,
  type InvitationListQuery,
  type MemberContext,
  type MemberListQuery,
  MembershipId
} from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Invitations } from "../src/invitations/Invitations.js"
import { Members } from "../src/members/Members.js"
import * as Config from "../src/platform/Config.js"
import { AuditRecorder } from "../src/platform/AuditRecorder.js"
import { Crypto } from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import { clockAt } from "./support/Clocks.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Seeded from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const settings = Config.layer({ dataDir: "memory", passwordCost: 10, pendingInvitationsPerOrganization: 4 }).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)

const TestLayer = Layer.mergeAll(Members.layer, Invitations.layer).pipe(
  Layer.provideMerge(AuditRecorder.layer),
  Layer.provideMerge(Layer.mergeAll(Crypto.layer, IdGenerator.layer)),
  Layer.provideMerge(settings),
  Layer.provideMerge(Db.layer)
)

/** An organization with an owner, an admin and a member, their rows written. */
const staffed = Effect.fn("MembersInvitations.staffed")(function*() {
  const organization = Seeded.organization("team")
  const owner = Seeded.member(organization, "owner")
  const admin = Seeded.member(organization, "admin")
  const member = Seeded.member(organization, "member")
  yield* Seeded.seed(owner, admin, member)
  return { organization, owner, admin, member }
})

/** One more member of the caller's organization. */
const join = Effect.fn("MembersInvitations.join")(function*(of: MemberContext, role: "owner" | "admin" | "member") {
  const joined = Seeded.member(of.organization, role)
  yield* Seeded.seed(joined)
  return joined
})

const idOf = (caller: MemberContext) => caller.membership.id
const members = (query: MemberListQuery = {}) => query
const invitationsQuery = (query: InvitationListQuery = {}) => query
const unknownMember = () => Schema.decodeUnknownSync(MembershipId)(Db.newId("om"))
const unknownInvitation = () => Schema.decodeUnknownSync(InvitationId)(Db.newId("inv"))

/** The error an effect fails with, as its plain members (`_tag` and the body: Effect 4 keeps `message` off the object's own). */
const plain = (error: object): object => ({ ...error, ..."message" in error ? { message: error.message } : {} })
const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), plain)

const insufficientRole = { _tag: "Forbidden", reason: "insufficient_role" }
const memberNotFound = { _tag: "NotFound", error: "member_not_found", message: "Member not found." }
const invitationNotFound = { _tag: "NotFound", error: "invitation_not_found", message: "Invitation not found." }
const unusable = { _tag: "NotFound", error: "invitation_not_found", message: "This invitation is unknown, used, canceled or expired." }

/** The signed-in person as the accepting request resolves them (a session, or an API key). */
const actorOf = (caller: MemberContext): Option.Option<Actor> =>
  Option.some({ user: caller.user, credential: caller.credential, organization: caller.organization, membership: caller.membership })

/**
 * An invitation made as `caller` whose token is shown (this instance has no mail settings): the answer with its
 * token, which the tests send on as an inviter would.
 */
const invite = (invitations: Invitations["Service"], caller: MemberContext, input: { readonly email: string; readonly role: "admin" | "member" }) =>
  Effect.flatMap(invitations.create(caller, input), (created) =>
    created.inviteToken === null
      ? Effect.die(new Error(`the invitation of ${input.email} was mailed: its token was not shown`))
      : Effect.succeed({ ...created, inviteToken: created.inviteToken }))

const newEmail = () => `invitee.${Math.random().toString(36).slice(2, 10)}@example.com`
const signUp = { name: "New Person", password: "correct horse battery" }

layer(TestLayer, { timeout: 300_000, excludeTestServices: true })(`members and invitations on ${TestDatabase.kind}`, (it) => {
  it.effect("lists members oldest first, filtered by role and text, paged; reads one; another organization's member is 404", () =>
    Effect.gen(function*() {
      const service = yield* Members
      const org = yield* staffed()
      const all = yield* service.list(org.owner, members())
      expect(all.nextCursor).toBeNull()
      expect(all.items.map((m) => [m.id, m.role, m.email, m.name])).toEqual([
        [idOf(org.owner), "owner", org.owner.user.email, org.owner.user.name],
        [idOf(org.admin), "admin", org.admin.user.email, org.admin.user.name],
        [idOf(org.member), "member", org.member.user.email, org.member.user.name]
      ])
      expect(all.items[0]).toMatchObject({ organizationId: org.organization.id, userId: org.owner.user.id, removedAt: null })
      expect((yield* service.list(org.member, members({ role: "admin" }))).items.map((m) => m.id)).toEqual([idOf(org.admin)])
      const byText = yield* service.list(org.owner, members({ q: org.member.user.email.slice(0, 12).toUpperCase() }))
      expect(byText.items.map((m) => m.id)).toEqual([idOf(org.member)])
      expect((yield* service.list(org.owner, members({ q: "%" }))).items).toEqual([])

      const seen: Array<string> = []
      let cursor: string | null = null
      do {
        const page: { readonly items: ReadonlyArray<{ readonly id: string }>; readonly nextCursor: string | null } = yield* service.list(
          org.owner,
          members(cursor === null ? { limit: 2 } : { limit: 2, cursor })
        )
        expect(page.items.length).toBeLessThanOrEqual(2)
        seen.push(...page.items.map((m) => m.id))
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(seen).toEqual([idOf(org.owner), idOf(org.admin), idOf(org.member)])

      expect((yield* service.get(org.owner, idOf(org.admin))).member).toMatchObject({ id: idOf(org.admin), role: "admin", email: org.admin.user.email })
      const other = yield* staffed()
      expect(yield* failure(service.get(other.owner, idOf(org.admin)))).toEqual(memberNotFound)
      expect(yield* failure(service.changeRole(other.owner, idOf(org.member), "admin"))).toEqual(memberNotFound)
      expect(yield* failure(service.remove(other.owner, idOf(org.member)))).toEqual(memberNotFound)
      expect(yield* failure(service.transferOwnership(other.owner, idOf(org.admin)))).toEqual(memberNotFound)
      expect((yield* service.list(other.owner, members())).items.map((m) => m.organizationId)).toEqual([
        other.organization.id,
        other.organization.id,
        other.organization.id
      ])
      expect((yield* service.get(org.owner, idOf(org.member))).member.role).toBe("member")
      expect(yield* failure(service.changeRole(org.owner, unknownMember(), "admin"))).toEqual(memberNotFound)
    }))

  it.effect("admins move people between member and admin; only owners touch the owner role, after a recent sign-in; the last owner stays", () =>
    Effect.gen(function*() {
      const service = yield* Members
      const org = yield* staffed()
      const extra = yield* join(org.owner, "member")
      expect((yield* service.changeRole(org.admin, idOf(extra), "admin")).member).toMatchObject({ id: idOf(extra), role: "admin" })
      expect((yield* service.changeRole(org.admin, idOf(extra), "member")).member.role).toBe("member")

      expect(yield* failure(service.changeRole(org.admin, idOf(extra), "owner"))).toMatchObject(insufficientRole)
      expect(yield* failure(service.changeRole(org.admin, idOf(org.owner), "member"))).toMatchObject(insufficientRole)
      expect(yield* failure(service.changeRole(org.member, idOf(extra), "admin"))).toMatchObject(insufficientRole)

      // An owner whose sign-in is old is sent to sign in again before touching the owner role.
      const stale = { ...org.owner, credential: { _tag: "Session" as const, sessionId: Seeded.sessionId(), ssoConnectionId: null, authenticatedAt: new Date(0) } }
      expect(yield* failure(service.changeRole(stale, idOf(extra), "owner"))).toMatchObject({
        _tag: "Forbidden",
        reason: "recent_authentication_required",
        message: "This action needs a recent sign-in (within 2h): sign in again, then retry."
      })

      expect((yield* service.changeRole(org.owner, idOf(extra), "owner")).member.role).toBe("owner")
      expect((yield* service.changeRole(org.owner, idOf(org.owner), "member")).member.role).toBe("member")
      // The caller's role is read as it is now: the former owner is a member.
      expect(yield* failure(service.changeRole(org.owner, idOf(org.admin), "member"))).toMatchObject(insufficientRole)
      expect(yield* failure(service.changeRole(extra, idOf(extra), "admin"))).toEqual({
        _tag: "Conflict",
        error: "last_owner",
        message: "An organization keeps at least one owner: make someone else an owner first."
      })
      expect((yield* service.list(org.member, members({ role: "owner" }))).items.map((m) => m.id)).toEqual([idOf(extra)])
      // The same role again changes nothing and answers the member.
      expect((yield* service.changeRole(extra, idOf(org.admin), "admin")).member).toMatchObject({ id: idOf(org.admin), role: "admin" })
    }))

  it.effect("transfers ownership to an admin only, and only by an owner", () =>
    Effect.gen(function*() {
      const service = yield* Members
      const org = yield* staffed()
      expect(yield* failure(service.transferOwnership(org.owner, idOf(org.member)))).toEqual({
        _tag: "Conflict",
        error: "member_not_admin",
        message: "Ownership can only be transferred to an admin: make them an admin first."
      })
      expect(yield* failure(service.transferOwnership(org.admin, idOf(org.admin)))).toMatchObject(insufficientRole)
      const transfer = yield* service.transferOwnership(org.owner, idOf(org.admin))
      expect(transfer.owner).toMatchObject({ id: idOf(org.admin), role: "owner" })
      expect(transfer.previousOwner).toMatchObject({ id: idOf(org.owner), role: "admin" })
      expect((yield* service.list(org.member, members({ role: "owner" }))).items.map((m) => m.id)).toEqual([idOf(org.admin)])
      expect(yield* failure(service.transferOwnership(org.owner, idOf(org.owner)))).toMatchObject(insufficientRole)
    }))

  it.effect("removal is soft; members may leave; only admins remove others, only owners remove owners; a caller who left is 404", () =>
    Effect.gen(function*() {
      const service = yield* Members
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed()
      expect(yield* failure(service.remove(org.member, idOf(org.admin)))).toMatchObject(insufficientRole)
      expect(yield* failure(service.remove(org.admin, idOf(org.owner)))).toMatchObject(insufficientRole)
      expect(yield* failure(service.remove(org.owner, idOf(org.owner)))).toMatchObject({ _tag: "Conflict", error: "last_owner" })

      yield* service.remove(org.owner, idOf(org.admin))
      const read = yield* service.get(org.owner, idOf(org.admin))
      expect(read.member.removedAt).toBeInstanceOf(Date)
      expect((yield* service.list(org.owner, members())).items.map((m) => m.id)).not.toContain(idOf(org.admin))
      expect((yield* service.list(org.owner, members({ includeRemoved: true }))).items.map((m) => m.id)).toContain(idOf(org.admin))
      expect(yield* sql`SELECT 1 FROM memberships WHERE id = ${idOf(org.admin)} AND removed_at IS NOT NULL`).toHaveLength(1)
      expect(yield* failure(service.remove(org.owner, idOf(org.admin)))).toEqual(memberNotFound)
      expect(yield* failure(service.changeRole(org.owner, idOf(org.admin), "member"))).toEqual(memberNotFound)
      // The removed admin acting on: their organization is not found.
      expect(yield* failure(service.changeRole(org.admin, idOf(org.member), "admin"))).toMatchObject({ _tag: "OrganizationNotFound", error: "organization_not_found" })

      yield* service.remove(org.member, idOf(org.member))
      expect(yield* failure(service.remove(org.member, idOf(org.owner)))).toMatchObject({ _tag: "OrganizationNotFound", error: "organization_not_found" })
    }))

  it.effect("the directory: a plain member sees names, roles and dates, emails only once allowed; owners and admins see it whole", () =>
    Effect.gen(function*() {
      const service = yield* Members
      const { admin, member, owner } = yield* staffed()
      const leaving = yield* join(owner, "member")
      yield* service.remove(owner, idOf(leaving))

      const listed = yield* service.list(member, members())
      expect(listed.items).toHaveLength(3)
      for (const item of listed.items) expect(Object.keys(item).sort()).toEqual(["createdAt", "id", "name", "organizationId", "removedAt", "role"])
      // The email's random part finds nobody; the name still finds the admin.
      expect((yield* service.list(member, members({ q: admin.user.email.split("@")[0]! }))).items).toEqual([])
      expect((yield* service.list(member, members({ q: admin.user.name! }))).items).toHaveLength(1)
      expect(yield* failure(service.list(member, members({ includeRemoved: true })))).toMatchObject(insufficientRole)
      const one = yield* service.get(member, idOf(admin))
      expect(one.member.email).toBeUndefined()
      expect(one.member.userId).toBeUndefined()
      expect(yield* failure(service.get(member, idOf(leaving)))).toEqual(memberNotFound)

      for (const caller of [owner, admin]) {
        const whole = yield* service.list(caller, members({ includeRemoved: true }))
        expect(whole.items).toHaveLength(4)
        expect(whole.items.find((item) => item.id === idOf(member))).toMatchObject({ email: member.user.email, userId: member.user.id, suspendedAt: null })
        expect(whole.items.find((item) => item.id === idOf(leaving))?.email).toBe(leaving.user.email)
        expect((yield* service.list(caller, members({ q: member.user.email }))).items).toHaveLength(1)
      }

      expect(yield* service.getDirectorySettings(member)).toEqual({ settings: { emailsVisibleToMembers: false } })
      expect(yield* failure(service.setDirectorySettings(member, { emailsVisibleToMembers: true }))).toMatchObject(insufficientRole)
      expect(yield* service.setDirectorySettings(admin, { emailsVisibleToMembers: true })).toEqual({ settings: { emailsVisibleToMembers: true } })
      const shown = yield* service.list(member, members())
      expect(shown.items.map((item) => item.email)).toEqual([owner.user.email, admin.user.email, member.user.email])
      expect(shown.items.every((item) => !("userId" in item) && !("suspendedAt" in item))).toBe(true)
      expect((yield* service.list(member, members({ q: admin.user.email }))).items).toHaveLength(1)
    }))

  it.effect("invites: a token once, pending for 7 days; the same email refreshes it (a new token, the old one dead); refusals", () =>
    Effect.gen(function*() {
      const invitations = yield* Invitations
      const org = yield* staffed()
      const email = newEmail()
      const created = yield* invite(invitations, org.admin, { email, role: "admin" })
      expect(created.refreshed).toBe(false)
      expect(created.inviteToken).toMatch(/^opi_[A-Za-z0-9_-]{43}$/)
      expect(created.invitation).toMatchObject({
        organizationId: org.organization.id,
        email,
        delivery: "shown",
        role: "admin",
        status: "pending",
        createdByOrgMembershipId: idOf(org.admin),
        acceptedByOrgMembershipId: null
      })
      expect(created.invitation.id).toMatch(/^inv_/)
      expect(created.invitation.expiresAt.getTime() - created.invitation.createdAt.getTime()).toBe(7 * 24 * 3600 * 1000)
      const listed = yield* invitations.list(org.owner, invitationsQuery({ status: "pending" }))
      expect(listed.items).toContainEqual(created.invitation)

      const second = yield* invite(invitations, org.owner, { email: email.toUpperCase(), role: "member" })
      expect(second.refreshed).toBe(true)
      expect(second.invitation).toMatchObject({ id: created.invitation.id, role: "member", email, createdByOrgMembershipId: idOf(org.owner) })
      expect(second.inviteToken).not.toBe(created.inviteToken)
      expect((yield* invitations.list(org.owner, invitationsQuery({ status: "pending" }))).items.filter((i) => i.email === email)).toHaveLength(1)
      expect(yield* failure(invitations.accept(Option.none(), { token: created.inviteToken, signUp }, "127.0.0.1"))).toEqual(unusable)

      expect(yield* failure(invitations.create(org.owner, { email: org.member.user.email.toUpperCase(), role: "member" }))).toEqual({
        _tag: "Conflict",
        error: "member_exists",
        message: "This person is already a member of the organization."
      })
      expect(yield* failure(invitations.create(org.member, { email: newEmail(), role: "member" }))).toMatchObject(insufficientRole)
      expect(yield* failure(invitations.list(org.member, invitationsQuery()))).toMatchObject(insufficientRole)

      // The instance's quota of pending invitations (4 here): the two above count as one.
      for (let i = 0; i < 3; i++) yield* invite(invitations, org.owner, { email: newEmail(), role: "member" })
      expect(yield* failure(invitations.create(org.owner, { email: newEmail(), role: "member" }))).toEqual({
        _tag: "Conflict",
        error: "invitation_quota_reached",
        message:
          "This organization has 4 pending invitations, the most this instance allows (ORGPLANE_PENDING_INVITATIONS_PER_ORGANIZATION): cancel some, or ask the instance's operator to raise the setting."
      })
      // A refresh takes no room.
      expect((yield* invitations.create(org.owner, { email, role: "admin" })).refreshed).toBe(true)
    }))

  it.effect("gets one in whatever status, previews by token, cancels pending ones only; another organization's is 404; newest first", () =>
    Effect.gen(function*() {
      const invitations = yield* Invitations
      const org = yield* staffed()
      const created = yield* invite(invitations, org.admin, { email: newEmail(), role: "admin" })
      const id = created.invitation.id
      expect(yield* invitations.get(org.admin, id)).toEqual({ invitation: created.invitation })
      expect(yield* failure(invitations.get(org.member, id))).toMatchObject(insufficientRole)
      const other = yield* staffed()
      expect(yield* failure(invitations.get(other.owner, id))).toEqual(invitationNotFound)
      expect(yield* failure(invitations.cancel(other.owner, id))).toEqual(invitationNotFound)
      expect(yield* failure(invitations.cancel(org.owner, unknownInvitation()))).toEqual(invitationNotFound)

      expect(yield* invitations.preview(created.inviteToken)).toEqual({
        organization: { name: org.organization.name },
        role: "admin",
        invitedBy: { name: org.admin.user.name },
        expiresAt: created.invitation.expiresAt
      })
      expect(yield* failure(invitations.preview("opi_not-a-real-token"))).toEqual(invitationNotFound)

      const canceled = yield* invitations.cancel(org.admin, id)
      expect(canceled.invitation).toMatchObject({ id, status: "canceled" })
      expect((yield* invitations.get(org.owner, id)).invitation.status).toBe("canceled")
      expect(yield* failure(invitations.cancel(org.admin, id))).toEqual({
        _tag: "Conflict",
        error: "invitation_not_pending",
        message: "This invitation is canceled; only pending invitations can be canceled."
      })
      expect(yield* failure(invitations.preview(created.inviteToken))).toEqual(invitationNotFound)
      expect(yield* failure(invitations.accept(Option.none(), { token: created.inviteToken, signUp }, "127.0.0.1"))).toEqual(unusable)
      expect((yield* invitations.list(org.owner, invitationsQuery({ status: "canceled" }))).items.map((i) => i.id)).toEqual([id])
      // A new invitation for the same email is a new one, not a refresh of the canceled one.
      expect((yield* invitations.create(org.owner, { email: created.invitation.email, role: "member" })).refreshed).toBe(false)

      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) ids.push((yield* invite(invitations, other.owner, { email: newEmail(), role: "member" })).invitation.id)
      const seen: Array<string> = []
      let cursor: string | null = null
      do {
        const page: { readonly items: ReadonlyArray<{ readonly id: string }>; readonly nextCursor: string | null } = yield* invitations.list(
          other.owner,
          invitationsQuery(cursor === null ? { limit: 2 } : { limit: 2, cursor })
        )
        seen.push(...page.items.map((i) => i.id))
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(seen).toEqual(ids.reverse())
    }))

  it.effect("accepts as the signed-in person with the invited email (joining, switching the session) or by signing up; refusals", () =>
    Effect.gen(function*() {
      const invitations = yield* Invitations
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed()
      const elsewhere = yield* staffed()
      const person = elsewhere.member
      const invited = yield* invite(invitations, org.owner, { email: person.user.email, role: "admin" })
      const accepted = yield* invitations.accept(actorOf(person), { token: invited.inviteToken }, "127.0.0.1")
      expect(accepted.session).toBeNull()
      expect(accepted.user.id).toBe(person.user.id)
      expect(accepted.organization.id).toBe(org.organization.id)
      expect(accepted.membership).toMatchObject({ organizationId: org.organization.id, userId: person.user.id, role: "admin" })
      const sessionId = person.credential._tag === "Session" ? person.credential.sessionId : ""
      expect(yield* sql<{ activeOrganizationId: string }>`SELECT active_organization_id FROM sessions WHERE id = ${sessionId}`).toEqual([
        { activeOrganizationId: org.organization.id }
      ])
      const accepts = yield* invitations.list(org.owner, invitationsQuery({ status: "accepted" }))
      expect(accepts.items).toMatchObject([{ id: invited.invitation.id, acceptedByOrgMembershipId: accepted.membership.id }])
      expect(yield* failure(invitations.accept(actorOf(person), { token: invited.inviteToken }, "127.0.0.1"))).toEqual(unusable)
      expect(yield* failure(invitations.create(org.owner, { email: person.user.email, role: "member" }))).toMatchObject({ error: "member_exists" })

      const email = newEmail()
      const token = (yield* invite(invitations, org.owner, { email, role: "member" })).inviteToken
      expect(yield* failure(invitations.accept(actorOf(elsewhere.admin), { token }, "127.0.0.1"))).toEqual({
        _tag: "Forbidden",
        reason: "invitation_email_mismatch",
        message: "This invitation was sent to another email address: sign in with that account."
      })
      const byKey = Seeded.member(elsewhere.organization, "member", { apiKey: { scopes: null } })
      expect(yield* failure(invitations.accept(actorOf(byKey), { token }, "127.0.0.1"))).toEqual({
        _tag: "Forbidden",
        reason: "session_required",
        message: "Accept an invitation with a session, not an API key."
      })
      expect(yield* failure(invitations.accept(actorOf(elsewhere.admin), { token, signUp }, "127.0.0.1"))).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: ["signUp"], message: "must be omitted when signed in: the invitation joins the signed-in account" }]
      })
      expect(yield* failure(invitations.accept(Option.none(), { token }, "127.0.0.1"))).toMatchObject({ _tag: "Unauthorized" })

      // Signing up with an email that has an account: not a bare email_taken, and nothing is used up.
      const taken = yield* invite(invitations, org.owner, { email: elsewhere.admin.user.email, role: "member" })
      const signUpTaken = yield* failure(invitations.accept(Option.none(), { token: taken.inviteToken, signUp }, "127.0.0.1"))
      expect(signUpTaken).toMatchObject({ _tag: "Conflict", error: "account_exists" })
      expect("message" in signUpTaken ? signUpTaken.message : "").toMatch(/sign in .* accept the invitation signed in, without signUp/)
      expect((yield* invitations.accept(actorOf(elsewhere.admin), { token: taken.inviteToken }, "127.0.0.1")).membership.role).toBe("member")

      const signedUp = yield* invitations.accept(Option.none(), { token, signUp }, "127.0.0.1")
      expect(signedUp.user).toMatchObject({ email, name: "New Person" })
      expect(signedUp.session?.token).toMatch(/^ops_/)
      expect(signedUp.membership).toMatchObject({ organizationId: org.organization.id, userId: signedUp.user.id, role: "member" })
      // A shown invitation proves nothing of the address, to the organization or the instance (issue 69, H1).
      expect(yield* sql`SELECT 1 FROM memberships WHERE id = ${signedUp.membership.id} AND email_verified_at IS NOT NULL`).toHaveLength(0)
      expect(yield* sql`SELECT 1 FROM users WHERE id = ${signedUp.user.id} AND email_verified_at IS NOT NULL`).toHaveLength(0)
    }))

  it.effect("lets a removed member back in with a new membership when invited again", () =>
    Effect.gen(function*() {
      const invitations = yield* Invitations
      const service = yield* Members
      const org = yield* staffed()
      yield* service.remove(org.owner, idOf(org.member))
      const invited = yield* invite(invitations, org.owner, { email: org.member.user.email, role: "member" })
      expect(invited.refreshed).toBe(false)
      const back = yield* invitations.accept(actorOf(org.member), { token: invited.inviteToken }, "127.0.0.1")
      expect(back.membership.id).not.toBe(idOf(org.member))
      expect((yield* service.get(org.owner, idOf(org.member))).member.removedAt).not.toBeNull()
    }))

  it.effect("after 7 days an invitation reads as expired, cannot be previewed, accepted or canceled, and a new one replaces it", () => {
    let time = Date.now()
    return Effect.gen(function*() {
      const invitations = yield* Invitations
      const org = yield* staffed()
      const email = newEmail()
      const created = yield* invite(invitations, org.owner, { email, role: "member" })
      time += 6 * 86_400_000
      expect((yield* invitations.list(org.owner, invitationsQuery({ status: "pending" }))).items).toHaveLength(1)
      time += 86_400_000
      const expired = yield* invitations.list(org.owner, invitationsQuery({ status: "expired" }))
      expect(expired.items.map((i) => [i.id, i.status])).toEqual([[created.invitation.id, "expired"]])
      expect((yield* invitations.list(org.owner, invitationsQuery({ status: "pending" }))).items).toEqual([])
      expect(yield* failure(invitations.preview(created.inviteToken))).toEqual(invitationNotFound)
      expect(yield* failure(invitations.accept(Option.none(), { token: created.inviteToken, signUp }, "127.0.0.1"))).toEqual(unusable)
      expect(yield* failure(invitations.cancel(org.owner, created.invitation.id))).toEqual({
        _tag: "Conflict",
        error: "invitation_not_pending",
        message: "This invitation is expired; only pending invitations can be canceled."
      })
      const again = yield* invite(invitations, org.owner, { email, role: "admin" })
      expect(again.refreshed).toBe(true)
      expect(again.invitation).toMatchObject({ id: created.invitation.id, status: "pending", role: "admin" })
      expect((yield* invitations.accept(Option.none(), { token: again.inviteToken, signUp }, "127.0.0.1")).membership.role).toBe("admin")
    }).pipe(Effect.provideService(Clock.Clock, clockAt(() => time)))
  })

  it.effect.runIf(TestDatabase.postgresUrl !== undefined)("concurrent role changes and removals never leave an organization without an owner (Postgres)", () =>
    Effect.gen(function*() {
      const service = yield* Members
      for (let round = 0; round < 4; round++) {
        const org = yield* staffed()
        const second = yield* join(org.owner, "admin")
        expect((yield* service.changeRole(org.owner, idOf(second), "owner")).member.role).toBe("owner")
        const a = org.owner
        const b = second
        // Each owner demotes or removes the other, and steps down or leaves, all at once.
        const results = yield* Effect.all([
          Effect.exit(service.changeRole(a, idOf(b), "member")),
          Effect.exit(service.changeRole(b, idOf(a), "member")),
          Effect.exit(round % 2 === 0 ? service.remove(a, idOf(a)) : service.remove(a, idOf(b))),
          Effect.exit(round % 2 === 0 ? service.remove(b, idOf(b)) : service.remove(b, idOf(a)))
        ], { concurrency: "unbounded" })
        for (const result of results) {
          if (result._tag === "Failure") {
            expect(Cause.hasDies(result.cause)).toBe(false)
            const error = Cause.findErrorOption(result.cause)
            expect(Option.map(error, (e) => e._tag)).toSatisfy((tag: Option.Option<string>) =>
              Option.isSome(tag) && ["Forbidden", "NotFound", "OrganizationNotFound", "Conflict"].includes(tag.value))
          }
        }
        expect((yield* service.list(org.member, members({ role: "owner" }))).items).toHaveLength(1)
      }
    }))

  it.effect.runIf(TestDatabase.postgresUrl !== undefined)("concurrently: one invitation per email, one acceptance per token (Postgres)", () =>
    Effect.gen(function*() {
      const invitations = yield* Invitations
      const service = yield* Members
      const org = yield* staffed()
      const email = newEmail()
      const created = yield* Effect.all(
        [org.owner, org.admin, org.owner].map((caller) => invitations.create(caller, { email, role: "member" })),
        { concurrency: "unbounded" }
      )
      expect(created.map((result) => result.refreshed).sort()).toEqual([false, true, true])
      expect(new Set(created.map((result) => result.invitation.id)).size).toBe(1)
      const latest = yield* invite(invitations, org.owner, { email, role: "member" })
      expect(latest.refreshed).toBe(true)
      const outcomes = yield* Effect.all([
        Effect.exit(invitations.accept(Option.none(), { token: latest.inviteToken, signUp }, "127.0.0.1")),
        Effect.exit(invitations.accept(Option.none(), { token: latest.inviteToken, signUp }, "127.0.0.1")),
        Effect.exit(invitations.cancel(org.admin, latest.invitation.id))
      ], { concurrency: "unbounded" })
      // Exactly one of the three wins: an acceptance (the other one and the cancel then fail), or the cancel.
      expect(outcomes.filter((outcome) => outcome._tag === "Success")).toHaveLength(1)
      for (const outcome of outcomes) {
        if (outcome._tag === "Failure") {
          expect(Cause.hasDies(outcome.cause)).toBe(false)
          expect(Option.map(Cause.findErrorOption(outcome.cause), (e) => e._tag)).toSatisfy((tag: Option.Option<string>) =>
            Option.isSome(tag) && ["NotFound", "Conflict"].includes(tag.value))
        }
      }
      const joined = (yield* service.list(org.owner, members({ q: email }))).items
      expect(joined).toHaveLength(outcomes[2]?._tag === "Success" ? 0 : 1)
    }))
})
