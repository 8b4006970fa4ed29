/**
 * Invitations: owners and admins invite an email as a member or an admin; the invitee accepts with the token,
 * signed in as that email or by signing up in the same call. The token is mailed to the address (which accepting
 * it then proves) or shown to the inviter (which proves nothing of the address): identity's Ownership decides.
 */
import {
  type Actor,
  Conflict,
  Forbidden,
  type InvitationDelivery,
  type InvitationId,
  type InvitationListQuery,
  InvalidRequest,
  type MemberContext,
  NotFound,
  type Role,
  type Session,
  type SessionId,
  Unauthorized,
  type User
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Accounts } from "../identity/Accounts.js"
import { Memberships } from "../identity/Memberships.js"
import { Organizations } from "../identity/Organizations.js"
import { Ownership } from "../identity/Ownership.js"
import { SignUpThrottle } from "../identity/SignUpThrottle.js"
import { sendLater } from "../integrations/mail/LinkMail.js"
import { Mailer } from "../integrations/mail/Mailer.js"
import * as AuditRecorder from "../platform/AuditRecorder.js"
import { publicUrl, ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { authorize } from "../platform/Principal.js"
import { isSqlError, orUnavailable, pgCode, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { invitationMail } from "./InvitationMail.js"
import { InvitationsRepository } from "./InvitationsRepository.js"

export const INVITE_TOKEN_PREFIX = "opi"
export const INVITATION_TTL = Duration.days(7)

const invitationNotFound = (message = "Invitation not found.") => new NotFound({ error: "invitation_not_found", message })
const memberDeprovisioned = () =>
  new Conflict({
    error: "member_deprovisioned",
    message: "The organization's directory deactivated this person: only the directory can bring them back."
  })
const mailNotConfigured = () =>
  new Conflict({
    error: "mail_not_configured",
    message:
      "This server sends no mail (ORGPLANE_SMTP_URL and ORGPLANE_MAIL_FROM are not set): invite with delivery \"shown\" (the default here) and send the token to the invitee yourself."
  })
const memberExists = () => new Conflict({ error: "member_exists", message: "This person is already a member of the organization." })

/** Who accepts an invitation: the signed-in person, or a new account made from `signUp`. */
type Joiner =
  | { readonly _tag: "SignedIn"; readonly user: User; readonly sessionId: SessionId }
  | { readonly _tag: "SignUp"; readonly name: string; readonly passwordHash: string }

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const invitations = yield* InvitationsRepository
  const memberships = yield* Memberships
  const organizations = yield* Organizations
  const accounts = yield* Accounts
  const signUps = yield* SignUpThrottle
  /** The base of the mailed link's URLs: `ORGPLANE_PUBLIC_URL`, else the configured host and port; never a request's Host. */
  const baseUrl = publicUrl(settings)
  const ownership = yield* Ownership
  const mailer = yield* Mailer

  /** The key making the invitation was revoked (deleted) after this request found it: 401, as the check at commit would say. */
  const keyRevoked = <A, E, R>(write: Effect.Effect<A, E, R>) =>
    Effect.catchIf(write, (error) => isSqlError(error) && pgCode(error) === "23503", () => Effect.fail(Unauthorized.because("credential_revoked")))

  /**
   * Invites an email, or refreshes its pending invitation. An admin takes `invitations.inviteAdmins` besides (a key
   * only when a scope names it). The invitation records the API key it was made with, if any: the key's deletion,
   * whatever its cause, cancels it (migration 0043). A mailed invitation's token leaves in a mail once the
   * transaction has committed, and the answer holds none.
   */
  const create = Effect.fn("Invitations.create")(function*(
    caller: MemberContext,
    input: { readonly email: string; readonly role: Exclude<Role, "owner">; readonly delivery?: InvitationDelivery | undefined }
  ) {
    yield* authorize(caller, "invitations.manage")
    if (input.role === "admin") yield* authorize(caller, "invitations.inviteAdmins")
    const delivery = input.delivery ?? (mailer.configured ? "mailed" : "shown")
    if (delivery === "mailed" && !mailer.configured) return yield* mailNotConfigured()
    const created = yield* transaction(
      Effect.gen(function*() {
        const organizationId = caller.organization.id
        yield* memberships.lock(organizationId)
        if (Option.isSome(yield* memberships.findActive(organizationId, { email: input.email }))) return yield* memberExists()
        const at = yield* now
        const inviteToken = yield* crypto.newToken(INVITE_TOKEN_PREFIX)
        const changes = {
          role: input.role,
          tokenHash: crypto.hashToken(inviteToken),
          delivery,
          createdByMembershipId: caller.membership.id,
          createdByApiKeyId: caller.credential._tag === "ApiKey" ? caller.credential.apiKeyId : null,
          expiresAt: new Date(at.getTime() + Duration.toMillis(INVITATION_TTL))
        }
        const pending = yield* invitations.lockPendingFor({ organizationId, email: input.email, at })
        let id: InvitationId
        if (Option.isSome(pending)) {
          id = pending.value.id
          yield* keyRevoked(invitations.refresh({ organizationId, id, changes, at }))
        } else {
          // Counted under the membership lock taken above, which every invitation's creation takes first: two
          // creations cannot both count room under the quota.
          const quota = settings.pendingInvitationsPerOrganization
          if ((yield* invitations.countPending({ organizationId, at })) >= quota) {
            return yield* new Conflict({
              error: "invitation_quota_reached",
              message: `This organization has ${quota} pending invitations, the most this instance allows (ORGPLANE_PENDING_INVITATIONS_PER_ORGANIZATION): cancel some, or ask the instance's operator to raise the setting.`
            })
          }
          id = yield* makeId("inv")
          yield* keyRevoked(invitations.insert({ id, organizationId, email: input.email, createdAt: at, ...changes }))
        }
        const invitation = Option.getOrThrow(yield* invitations.lock({ organizationId, id, at }))
        return { invitation, inviteToken, refreshed: Option.isSome(pending) }
      })
    )
    const { invitation, inviteToken } = created
    if (delivery === "mailed") {
      yield* sendLater(mailer, invitationMail({ to: invitation.email, baseUrl, token: inviteToken, expiresAt: invitation.expiresAt }, {
        inviter: caller.user.name,
        organization: caller.organization.name,
        role: invitation.role
      }))
    }
    const shown = delivery === "shown" ? inviteToken : null
    return created.refreshed
      ? { invitation, inviteToken: shown, refreshed: true as const }
      : { invitation, inviteToken: shown, refreshed: false as const }
  })

  const list = Effect.fn("Invitations.list")(function*(caller: MemberContext, query: InvitationListQuery) {
    yield* authorize(caller, "invitations.manage")
    return yield* Effect.flatMap(now, (at) => orUnavailable(invitations.list(caller.organization.id, query, at)))
  })

  const cancel = Effect.fn("Invitations.cancel")(function*(caller: MemberContext, id: InvitationId) {
    yield* authorize(caller, "invitations.manage")
    return yield* transaction(
      Effect.gen(function*() {
        const at = yield* now
        const organizationId = caller.organization.id
        const found = yield* invitations.lock({ organizationId, id, at })
        if (Option.isNone(found)) return yield* invitationNotFound()
        if (found.value.status !== "pending") {
          return yield* new Conflict({
            error: "invitation_not_pending",
            message: `This invitation is ${found.value.status}; only pending invitations can be canceled.`
          })
        }
        yield* invitations.cancel({ organizationId, id, at })
        return { invitation: Option.getOrThrow(yield* invitations.lock({ organizationId, id, at })) }
      })
    )
  })

  /**
   * Accepts as the signed-in `actor` (a session whose account has the invited email) or, with `signUp`, creates
   * that account: a sign-up from the client `address`, counted as `POST /v1/auth/sign-up` is, before anything is
   * looked at (SignUpThrottle), or inviting addresses to one's own organization would make accounts in bulk and tell
   * which addresses have one (`account_exists`). Everything happens in one transaction: the membership, the
   * invitation's status, the account.
   */
  const accept = Effect.fn("Invitations.accept")(function*(
    actor: Option.Option<Actor>,
    input: { readonly token: string; readonly signUp?: { readonly name: string; readonly password: string } | undefined },
    address: string,
    /** The credential the request sent and authentication refused, if any: the answer without `signUp`. */
    refused: Option.Option<Unauthorized | Forbidden> = Option.none()
  ) {
    // A credential the request narrowed to reads (`Orgplane-Read-Only: true`): nothing is accepted, not even a sign-up.
    if (Option.isSome(refused) && refused.value instanceof Forbidden) return yield* refused.value
    // Who joins, decided before any storage work: the signed-in session's person, or a new account.
    let joiner: Joiner
    if (Option.isSome(actor)) {
      const { credential, user } = actor.value
      if (credential._tag !== "Session") {
        return yield* new Forbidden({ reason: "session_required", message: "Accept an invitation with a session, not an API key." })
      }
      if (input.signUp !== undefined) {
        return yield* InvalidRequest.field(["signUp"], "must be omitted when signed in: the invitation joins the signed-in account")
      }
      joiner = { _tag: "SignedIn", user, sessionId: credential.sessionId }
    } else if (input.signUp !== undefined) {
      yield* signUps.count(address)
      joiner = { _tag: "SignUp", name: input.signUp.name, passwordHash: yield* crypto.hashPassword(input.signUp.password) }
    } else {
      if (Option.isSome(refused)) return yield* refused.value
      return yield* Unauthorized.because(
        "credentials_missing",
        "Accepting an invitation needs a session (`Authorization: Bearer <token>`) or `signUp` with a name and a password for a new account."
      )
    }
    return yield* transaction(
      Effect.gen(function*() {
        const at = yield* now
        const tokenHash = crypto.hashToken(input.token)
        const unusable = () => invitationNotFound("This invitation is unknown, used, canceled or expired.")
        // Locks in the order every membership change takes them: the organization, then the invitation.
        const organizationId = yield* invitations.organizationOf(tokenHash)
        if (Option.isNone(organizationId)) return yield* unusable()
        yield* memberships.lock(organizationId.value)
        const found = yield* invitations.lockRedeemable({ organizationId: organizationId.value, tokenHash, at })
        if (Option.isNone(found)) return yield* unusable()
        const invitation = found.value

        let user: User
        if (joiner._tag === "SignedIn") {
          user = joiner.user
          if (user.email.toLowerCase() !== invitation.email.toLowerCase()) {
            return yield* new Forbidden({
              reason: "invitation_email_mismatch",
              message: "This invitation was sent to another email address: sign in with that account."
            })
          }
          if (Option.isSome(yield* memberships.findActive(invitation.organizationId, { userId: user.id }))) {
            return yield* memberExists()
          }
          if (yield* memberships.isDeprovisioned(invitation.organizationId, user.id)) return yield* memberDeprovisioned()
        } else {
          user = yield* accounts.createUser({ email: invitation.email, name: joiner.name, passwordHash: joiner.passwordHash }, at).pipe(
            Effect.catchIf((error) => error instanceof Conflict && error.error === "email_taken", () =>
              new Conflict({
                error: "account_exists",
                message: "An account with this email already exists. If it is yours, sign in (with its password, or through your organization's SSO) and accept the invitation signed in, without signUp. If you did not make it, someone else did with your address: sign in through your organization's SSO, which takes the account back for you, or ask an administrator."
              }))
          )
        }
        const membership = yield* memberships.join({ organizationId: invitation.organizationId, userId: user.id, role: invitation.role })
        yield* ownership.linkUsed(user.id, invitation.delivery, at)
        // Recorded in the organization joined, by the member the person became there.
        yield* AuditRecorder.describe({ organizationId: invitation.organizationId, membershipId: membership.id })
        yield* invitations.markAccepted({ organizationId: invitation.organizationId, id: invitation.id, membershipId: membership.id, at })
        let session: Session | null = null
        if (joiner._tag === "SignedIn") {
          yield* memberships.activate(joiner.sessionId, invitation.organizationId)
        } else {
          session = yield* accounts.startSession(user, invitation.organizationId)
        }
        const organization = Option.getOrThrow(yield* organizations.find(invitation.organizationId))
        return { organization, membership, user, session }
      })
    )
  })

  const get = Effect.fn("Invitations.get")(function*(caller: MemberContext, id: InvitationId) {
    yield* authorize(caller, "invitations.manage")
    const found = yield* orUnavailable(invitations.find({ organizationId: caller.organization.id, id, at: yield* now }))
    if (Option.isNone(found)) return yield* invitationNotFound()
    return { invitation: found.value }
  })

  /** What the token's invitation shows before it is accepted; 404 for any token that `accept` would refuse as unknown. */
  const preview = Effect.fn("Invitations.preview")(function*(token: string) {
    const found = yield* orUnavailable(invitations.preview({ tokenHash: crypto.hashToken(token), at: yield* now }))
    if (Option.isNone(found)) return yield* invitationNotFound()
    const { expiresAt, inviterName, organizationName, role } = found.value
    return { organization: { name: organizationName }, role, invitedBy: inviterName === null ? null : { name: inviterName }, expiresAt }
  })

  return { create, list, get, cancel, accept, preview } as const
})

export class Invitations extends Context.Service<Invitations>()("@orgplane/server/invitations/Invitations", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      InvitationsRepository.layer,
      Memberships.layer,
      Organizations.layer,
      Accounts.layer,
      SignUpThrottle.layer,
      Ownership.layer,
      Mailer.layer
    ])
  )
}
