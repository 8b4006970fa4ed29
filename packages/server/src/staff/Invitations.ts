/**
 * Invitations: owners and admins invite an email as a member or an admin; the invitee accepts with the token,
 * signed in as that email or by signing up in the same call.
 */
import {
  type Actor,
  Conflict,
  Forbidden,
  type InvitationId,
  type InvitationListQuery,
  InvalidRequest,
  type MembershipId,
  NotFound,
  type Role,
  type Session,
  type SessionId,
  Unauthorized,
  type User,
  type UserId
} from "@orgplane/schema"
import { Duration, Effect, Option } from "effect"
import { Accounts } from "../identity/Accounts.js"
import { OrganizationsRepository } from "../identity/OrganizationsRepository.js"
import { SessionsRepository } from "../identity/SessionsRepository.js"
import { toUser, UsersRepository } from "../identity/UsersRepository.js"
import { type MemberContext, requireRole } from "../platform/Auth.js"
import { Crypto } from "../platform/Crypto.js"
import * as Cursor from "../platform/Cursor.js"
import { makeId } from "../platform/Ids.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { InvitationsRepository } from "./InvitationsRepository.js"
import { MembersRepository } from "./MembersRepository.js"

export const INVITE_TOKEN_PREFIX = "opi"
export const INVITATION_TTL = Duration.days(7)

const invitationNotFound = (message = "Invitation not found.") => new NotFound({ error: "invitation_not_found", message })
const memberExists = () => new Conflict({ error: "member_exists", message: "This person is already a member of the organization." })

/** Who accepts an invitation: the signed-in person, or a new account made from `signUp`. */
type Joiner =
  | { readonly _tag: "SignedIn"; readonly userId: UserId; readonly sessionId: SessionId }
  | { readonly _tag: "SignUp"; readonly name: string; readonly passwordHash: string }

export class Invitations extends Effect.Service<Invitations>()("@orgplane/server/Invitations", {
  effect: Effect.gen(function*() {
    const crypto = yield* Crypto
    const invitations = yield* InvitationsRepository
    const members = yield* MembersRepository
    const organizations = yield* OrganizationsRepository
    const users = yield* UsersRepository
    const sessions = yield* SessionsRepository
    const accounts = yield* Accounts

    const create = (caller: MemberContext, input: { readonly email: string; readonly role: Exclude<Role, "owner"> }) =>
      Effect.zipRight(
        requireRole(caller, "admin"),
        transaction(
          Effect.gen(function*() {
            const organizationId = caller.organization.id
            yield* organizations.lockMemberships(organizationId)
            if (Option.isSome(yield* members.findActiveByEmail(organizationId, input.email))) return yield* memberExists()
            const at = yield* now
            const expiresAt = new Date(at.getTime() + Duration.toMillis(INVITATION_TTL))
            const inviteToken = yield* crypto.newToken(INVITE_TOKEN_PREFIX)
            const changes = {
              role: input.role,
              tokenHash: crypto.hashToken(inviteToken),
              createdByMembershipId: caller.membership.id,
              expiresAt
            }
            const pending = yield* invitations.lockPendingFor(organizationId, input.email, at)
            let id: InvitationId
            if (Option.isSome(pending)) {
              id = pending.value.id
              yield* invitations.refresh(id, changes, at)
            } else {
              id = yield* makeId<InvitationId>("inv")
              yield* invitations.insert({ id, organizationId, email: input.email, createdAt: at, ...changes })
            }
            const invitation = Option.getOrThrow(yield* invitations.lock(organizationId, id, at))
            return Option.isSome(pending)
              ? { invitation, inviteToken, refreshed: true as const }
              : { invitation, inviteToken, refreshed: false as const }
          })
        )
      )

    const list = (caller: MemberContext, query: InvitationListQuery) =>
      Effect.gen(function*() {
        yield* requireRole(caller, "admin")
        const page = yield* Cursor.request(query)
        const rows = yield* invitations.list(caller.organization.id, query.status, yield* now, page)
        return Cursor.page(rows, page.limit, (invitation) => [invitation.id])
      })

    const cancel = (caller: MemberContext, id: InvitationId) =>
      Effect.zipRight(
        requireRole(caller, "admin"),
        transaction(
          Effect.gen(function*() {
            const at = yield* now
            const found = yield* invitations.lock(caller.organization.id, id, at)
            if (Option.isNone(found)) return yield* invitationNotFound()
            if (found.value.status !== "pending") {
              return yield* new Conflict({
                error: "invitation_not_pending",
                message: `This invitation is ${found.value.status}; only pending invitations can be canceled.`
              })
            }
            yield* invitations.cancel(id, at)
            return { invitation: Option.getOrThrow(yield* invitations.lock(caller.organization.id, id, at)) }
          })
        )
      )

    /**
     * Accepts as the signed-in `actor` (a session whose account has the invited email) or, with `signUp`, creates
     * that account. Everything happens in one transaction: the membership, the invitation's status, the account.
     */
    const accept = (
      actor: Option.Option<Actor>,
      input: { readonly token: string; readonly signUp?: { readonly name: string; readonly password: string } | undefined }
    ) =>
      Effect.gen(function*() {
        // Who joins, decided before any storage work: the signed-in session's person, or a new account.
        let joiner: Joiner
        if (Option.isSome(actor)) {
          const { credential, userId } = actor.value
          if (credential._tag !== "Session") {
            return yield* new Forbidden({ reason: "session_required", message: "Accept an invitation with a session, not an API key." })
          }
          if (input.signUp !== undefined) {
            return yield* InvalidRequest.field(["signUp"], "must be omitted when signed in: the invitation joins the signed-in account")
          }
          joiner = { _tag: "SignedIn", userId, sessionId: credential.sessionId }
        } else if (input.signUp !== undefined) {
          joiner = { _tag: "SignUp", name: input.signUp.name, passwordHash: yield* crypto.hashPassword(input.signUp.password) }
        } else {
          return yield* new Unauthorized()
        }
        return yield* transaction(
          Effect.gen(function*() {
            const at = yield* now
            const tokenHash = crypto.hashToken(input.token)
            const unusable = () => invitationNotFound("This invitation is unknown, used, canceled or expired.")
            // Locks in the order every membership change takes them: the organization, then the invitation.
            const organizationId = yield* invitations.organizationOf(tokenHash)
            if (Option.isNone(organizationId)) return yield* unusable()
            yield* organizations.lockMemberships(organizationId.value)
            const found = yield* invitations.lockRedeemable(tokenHash, at)
            if (Option.isNone(found)) return yield* unusable()
            const invitation = found.value

            let user: User
            if (joiner._tag === "SignedIn") {
              user = toUser(Option.getOrThrow(yield* users.findById(joiner.userId)))
              if (user.email.toLowerCase() !== invitation.email.toLowerCase()) {
                return yield* new Forbidden({
                  reason: "invitation_email_mismatch",
                  message: "This invitation was sent to another email address: sign in with that account."
                })
              }
            } else {
              user = yield* users.insert({
                id: yield* makeId<UserId>("usr"),
                email: invitation.email,
                name: joiner.name,
                passwordHash: joiner.passwordHash,
                createdAt: at
              })
            }
            if (Option.isSome(yield* organizations.findMembership(invitation.organizationId, user.id))) return yield* memberExists()
            const membership = yield* organizations.insertMembership({
              id: yield* makeId<MembershipId>("om"),
              organizationId: invitation.organizationId,
              userId: user.id,
              role: invitation.role,
              createdAt: at
            })
            yield* invitations.markAccepted(invitation.id, membership.id, at)
            let session: Session | null = null
            if (joiner._tag === "SignedIn") {
              yield* sessions.setActiveOrganization(joiner.sessionId, invitation.organizationId)
            } else {
              session = yield* accounts.startSession(user.id, invitation.organizationId)
            }
            const organization = Option.getOrThrow(yield* organizations.findById(invitation.organizationId))
            return { organization, membership, user, session }
          })
        )
      })

    return { create, list, cancel, accept } as const
  }),
  dependencies: [
    InvitationsRepository.Default,
    MembersRepository.Default,
    OrganizationsRepository.Default,
    UsersRepository.Default,
    SessionsRepository.Default,
    Accounts.Default
  ]
}) {}
