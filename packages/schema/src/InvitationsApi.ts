/** Invitations: bringing a person into the organization by email. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  ConflictResponse,
  ForbiddenResponse,
  NotFoundResponse,
  ServiceUnavailableResponse,
  UnauthorizedResponse
} from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication, OptionalAuthentication } from "./Security.js"
import {
  AcceptedInvitation,
  AcceptInvitationRequest,
  CreatedInvitation,
  CreateInvitationRequest,
  InvitationListQuery,
  InvitationPage,
  InvitationPath,
  InvitationResponse,
  RefreshedInvitation
} from "./Invitations.js"

export class InvitationsApi extends HttpApiGroup.make("invitations")
  .add(
    HttpApiEndpoint.post("create", "/v1/invitations")
      .setPayload(CreateInvitationRequest)
      .addSuccess(CreatedInvitation, { status: 201 })
      .addSuccess(RefreshedInvitation)
      .addError(ConflictResponse)
      .pipe(requires("invitations.manage"))
      .annotate(
        OpenApi.Description,
        "Invites an email address as a member or an admin. The token is returned only here and expires after 7 days; deliver it to the invitee. When the email already has a pending or expired invitation, that invitation is refreshed instead (200, `refreshed: true`): new token, role and expiry, and the earlier token stops working. 409 `member_exists` when the email belongs to a member."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/invitations")
      .setUrlParams(InvitationListQuery)
      .addSuccess(InvitationPage)
      .pipe(requires("invitations.manage"))
      .annotate(OpenApi.Description, "Lists the organization's invitations, newest first.")
  )
  .add(
    HttpApiEndpoint.post("cancel", "/v1/invitations/:invitationId/cancel")
      .setPath(InvitationPath)
      .addSuccess(InvitationResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("invitations.manage"))
      .annotate(
        OpenApi.Description,
        "Cancels a pending invitation; its token stops working. 409 `invitation_not_pending` when it was accepted, canceled or has expired; 404 `invitation_not_found`."
      )
  )
  // Everything above needs credentials; accepting also serves people who do not have an account yet.
  .middlewareEndpoints(MemberAuthentication)
  .add(
    HttpApiEndpoint.post("accept", "/v1/invitations/accept")
      .setPayload(AcceptInvitationRequest)
      .addSuccess(AcceptedInvitation)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .addError(UnauthorizedResponse)
      .addError(ServiceUnavailableResponse)
      .middleware(OptionalAuthentication)
      .annotate(
        OpenApi.Description,
        "Joins the invitation's organization with its role and makes it the session's active organization. Either signed in (a session, not an API key: 403 `session_required`) as the person the invitation was sent to (403 `invitation_email_mismatch` otherwise), or anonymously with `signUp`, which creates that person's account and returns its session (409 `email_taken` when the email already has one: sign in first). Credentials and `signUp` together: 400 on `signUp`. Works even when open sign-up is disabled. 404 `invitation_not_found` for an unknown, used, canceled or expired token; 409 `member_exists` when the person is already a member; 401 with neither credentials nor `signUp`."
      )
  )
  .addError(ForbiddenResponse)
  .annotate(OpenApi.Title, "Invitations")
{}
