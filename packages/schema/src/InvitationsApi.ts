/** Invitations: bringing a person into the organization by email. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  ConflictResponse,
  ForbiddenResponse,
  NotFoundResponse,
  RateLimitedResponse,
  ServiceUnavailableResponse,
  UnauthorizedResponse
} from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication, memberAuthenticationErrors, OptionalAuthentication, sessionOnly } from "./Security.js"
import {
  AcceptedInvitation,
  AcceptInvitationRequest,
  CreatedInvitation,
  CreateInvitationRequest,
  InvitationListQuery,
  InvitationPage,
  InvitationPath,
  InvitationPreview,
  InvitationResponse,
  PreviewInvitationRequest,
  RefreshedInvitation
} from "./Invitations.js"
import { audits, notAudited } from "./AuditCatalog.js"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

/**
 * Those of the endpoints behind `MemberAuthentication` too, listed after their own errors
 * (`memberAuthenticationErrors` says why they are declared).
 */
const authenticatedErrors = [...groupErrors, ...memberAuthenticationErrors] as const

export class InvitationsApi extends HttpApiGroup.make("invitations")
  .add(
    HttpApiEndpoint.post("create", "/v1/invitations", { payload: CreateInvitationRequest, success: [CreatedInvitation.pipe(HttpApiSchema.status(201)), RefreshedInvitation], error: [ConflictResponse, ...authenticatedErrors] }).pipe(audits("invitation.create"), requires("invitations.manage", "invitations.inviteAdmins"))
      .annotate(OpenApi.Summary, "Invite a person")
      .annotate(
        OpenApi.Description,
        "Invites an email address as a member or an admin (201); inviting an admin also takes `invitations.inviteAdmins`, which an API key takes only when a scope names it (403 `insufficient_scope`). An invitation made with an API key is canceled, while pending, when that key is revoked, whichever way (its own revocation, the revocation of the key that made it, its maker's removal). The token expires after 7 days. `delivery` decides who sees it: `mailed` (the default when the instance has mail settings) mails it to the address once the invitation is committed and answers `inviteToken: null`, so accepting it proves the address; `shown` answers it here, only here, for the inviter to deliver, and accepting it proves nothing of the address: an account that joins with it is taken back, not linked, by the address's first sign-in through the organization's SSO or its directory (docs/security.md, \"Who owns an account\"). When the email already has a pending or expired invitation, that invitation is refreshed instead (200, `refreshed: true`): new token, role, delivery and expiry, and the earlier token stops working.\n\nErrors: 409 `member_exists` when the email belongs to a member of the organization, `invitation_quota_reached` when a new invitation would pass the organization's pending ones the instance allows (200 by default, `ORGPLANE_PENDING_INVITATIONS_PER_ORGANIZATION`; the message names the setting; refreshing a pending invitation adds none): cancel some, or have the instance's operator raise it; `mail_not_configured` for `delivery: mailed` on an instance without mail settings."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/invitations", { query: InvitationListQuery, success: InvitationPage, error: [...authenticatedErrors] }).pipe(requires("invitations.manage"))
      .annotate(OpenApi.Summary, "List invitations")
      .annotate(
        OpenApi.Description,
        "The organization's invitations, newest first, optionally only those in one status. Tokens are never shown again. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/invitations/:invitationId", { params: InvitationPath, success: InvitationResponse, error: [NotFoundResponse, ...authenticatedErrors] }).pipe(requires("invitations.manage"))
      .annotate(OpenApi.Summary, "Get an invitation")
      .annotate(
        OpenApi.Description,
        "One of the organization's invitations, in whatever status; its token is never shown again. Changes nothing.\n\nErrors: 404 `invitation_not_found` (another organization's answers the same)."
      )
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/invitations/:invitationId/cancel", { params: InvitationPath, success: InvitationResponse, error: [NotFoundResponse, ConflictResponse, ...authenticatedErrors] }).pipe(audits("invitation.cancel"), requires("invitations.manage"))
      .annotate(OpenApi.Summary, "Cancel an invitation")
      .annotate(
        OpenApi.Description,
        "Cancels a pending invitation and answers it; its token stops working.\n\nErrors: 404 `invitation_not_found`; 409 `invitation_not_pending` when it was accepted, canceled or has expired."
      )
  )
  // Everything above needs credentials; accepting also serves people who do not have an account yet. (A group's
  // middleware applies to the endpoints added before it.)
  .middleware(MemberAuthentication)
  .add(
    HttpApiEndpoint.post("accept", "/v1/invitations/accept", { payload: AcceptInvitationRequest, success: AcceptedInvitation, error: [NotFoundResponse, ConflictResponse, UnauthorizedResponse, RateLimitedResponse, ServiceUnavailableResponse, ...groupErrors] }).pipe(sessionOnly, audits("invitation.accept"))
      .middleware(OptionalAuthentication)
      .annotate(OpenApi.Summary, "Accept an invitation")
      .annotate(
        OpenApi.Description,
        "Joins the invitation's organization with its role and makes it the active organization: the session's when signed in, or that of a new session for a new account. Either signed in with a session as the person the invitation was sent to, or anonymously with `signUp`, which creates that person's account and returns its session. Works even when open sign-up is disabled; with `signUp` it counts as a sign-up from the client's address.\n\nErrors: 400 `invalid_request` on `signUp` when it comes with credentials; 401 `unauthorized` with neither credentials nor `signUp`; 403 `session_required` with an API key, `invitation_email_mismatch` when signed in as someone else; 404 `invitation_not_found` for an unknown, used, canceled or expired token; 409 `member_exists` when the person is already a member, `member_deprovisioned` when the organization's directory (SCIM) deactivated or deleted the person there (until it reactivates them), `account_exists` when the invitation's email already has an account (sign in as it and accept without `signUp`; an account someone else made with the address is taken back by the person's first sign-in through their organization's SSO); 429 `rate_limited` with `signUp` past the sign-ups the instance allows from the client's address (`ORGPLANE_SIGN_UPS_PER_HOUR`, counted with `POST /v1/auth/sign-up`'s), with `Retry-After`."
      )
  )
  .add(
    HttpApiEndpoint.post("preview", "/v1/invitations/preview", { payload: PreviewInvitationRequest, success: InvitationPreview, error: [NotFoundResponse, ServiceUnavailableResponse, ...groupErrors] }).pipe(notAudited("reads an invitation by its token; changes nothing"))
      .annotate(OpenApi.Summary, "Preview an invitation")
      .annotate(
        OpenApi.Description,
        "What an invite token is for, before saying yes: the organization's name, the role, who sent it (by name) and when it expires; no more (no ids, no emails). Needs no credentials: the token is the proof, sent in the body so it stays out of URLs and logs. Changes nothing.\n\nErrors: 404 `invitation_not_found` for an unknown, used, canceled or expired token, or one of a deleted organization (the same answer for each)."
      )
  )
  .annotate(OpenApi.Title, "Invitations")
  .annotate(
    OpenApi.Description,
    "Bringing a person into the organization by email. Owners and admins invite, list and cancel; those operations need credentials, a session or an API key (401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization). The invitee previews the invitation with its token and accepts it, signed in or signing up in the same call."
  )
{}
