/** Users: sign-up, sign-in, sign-out and the caller's own profile. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  ConflictResponse,
  EmailTakenResponse,
  ForbiddenResponse,
  InvalidRequestResponse,
  NotFoundResponse,
  OrganizationNotFoundResponse,
  RateLimitedResponse,
  ServiceUnavailableResponse,
  UnauthorizedResponse
} from "./Errors.js"
import { PageQuery } from "./Pagination.js"
import { Authentication, sessionOnly } from "./Security.js"
import {
  AuthResult,
  ChangeEmailRequest,
  ChangeEmailResult,
  ChangePasswordRequest,
  ChangePasswordResult,
  EndedSessions,
  Me,
  MyOrganizationPage,
  MyOrganizationsQuery,
  MySessionPage,
  SessionPath,
  SignInRequest,
  SignUpRequest,
  SwitchOrganizationRequest,
  UpdateMeRequest
} from "./Users.js"
import { audits, notAudited } from "./AuditCatalog.js"

export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.post("signUp", "/v1/auth/sign-up", { payload: SignUpRequest, success: AuthResult.pipe(HttpApiSchema.status(201)), error: [ConflictResponse, ForbiddenResponse, RateLimitedResponse, ServiceUnavailableResponse] }).pipe(notAudited("creates a person in no organization yet; the organization they join records it (invitation.accept, organization.create, session.create)"))
      .annotate(OpenApi.Summary, "Sign up")
      .annotate(
        OpenApi.Description,
        "Creates an account and signs it in: answers the person and a new session token. The account belongs to no organization yet. Public. An instance with sign-up disabled still lets its very first account in.\n\nErrors: 403 `signup_disabled` when the instance does not allow sign-up, `sso_required` when the email's domain belongs to an organization that requires SSO (its people get their account by signing in through it); 409 `email_taken` when the email is registered (this instance sends no mail, so it cannot answer alike and prove the address by a link instead; the limit below bounds how fast anyone can test emails with it); 429 `rate_limited` with `Retry-After` (seconds) past 20 sign-up attempts from one client address (an IPv6 address's /64) in an hour (`ORGPLANE_SIGN_UPS_PER_HOUR`), whatever their outcome, invitations accepted with `signUp` counted with them."
      )
  )
  .add(
    HttpApiEndpoint.post("signIn", "/v1/auth/sign-in", { payload: SignInRequest, success: AuthResult, error: [UnauthorizedResponse, ForbiddenResponse, RateLimitedResponse, ServiceUnavailableResponse] }).pipe(audits("session.create"))
      .annotate(OpenApi.Summary, "Sign in")
      .annotate(
        OpenApi.Description,
        "Exchanges an email and password for a new session token, acting in the person's oldest organization (if any). A temporary password (set through a reset link an organization's owner or admin was shown) is changed here, at its first sign-in: `newPassword` becomes the account's password and the session is made. Public.\n\nErrors: 400 `invalid_request` on `newPassword` when the password is not one that must change; 401 `unauthorized` for a wrong email or a wrong password (the same answer for both); 403 `password_change_required` for a right temporary password without `newPassword`, `sso_required` when the email's domain belongs to an organization that requires SSO (sign in with `POST /v1/sso/sign-in`; `POST /v1/sso/discover` names the connection): the answer depends on the domain alone, except that the organization's owners may sign in with their password while its policy keeps `ownersPasswordFallback` (break-glass; such a session acts in that organization); 429 `rate_limited` with `Retry-After` (seconds) once too many sign-ins failed within the window (15 minutes by default): 10 for one email from one client address, 50 for one email from any address (not counted against the addresses that email signed in from in the last 30 days), 100 from one address for any emails (`ORGPLANE_SIGN_IN_*`). A refused attempt checks no password, the right one included, and counts nothing; the answer is the same whether an account has the email or not. A successful sign-in clears the counts of its email, and of its email from its address."
      )
  )
  .add(
    HttpApiEndpoint.post("signOut", "/v1/auth/sign-out", { success: HttpApiSchema.NoContent, error: [ForbiddenResponse] }).pipe(sessionOnly, audits("session.revoke"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Sign out")
      .annotate(
        OpenApi.Description,
        "Revokes the session token the request carries; the person's other sessions stay signed in. Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key."
      )
  )
  .add(
    HttpApiEndpoint.get("me", "/v1/me", { success: Me })
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Get the caller")
      .annotate(
        OpenApi.Description,
        "The caller, the organization the request acts in and their membership in it (both null for a person who belongs to no organization); with an API key, the key's organization and the member who created it; and the credential: its kind, its scopes and whether the request narrowed it to reads (what an agent acting for the caller may do). Any signed-in caller, with a session or an API key; changes nothing.\n\nErrors: 401 `unauthorized` without valid credentials."
      )
  )
  .add(
    HttpApiEndpoint.post("switchOrganization", "/v1/me/active-organization", { payload: SwitchOrganizationRequest, success: Me, error: [ForbiddenResponse, OrganizationNotFoundResponse] }).pipe(sessionOnly, audits("session.switch_organization"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Switch the active organization")
      .annotate(
        OpenApi.Description,
        "Makes another of the caller's organizations the one this session acts in (what members, teams, invitations and API keys operations apply to); answers the caller as `GET /v1/me` does. Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key, `sso_session_required` when the organization requires SSO and would refuse this session (see `PUT /v1/sso/policy`); 404 `organization_not_found` unless the caller is an active member of it."
      )
  )
  .add(
    HttpApiEndpoint.patch("updateMe", "/v1/me", { payload: UpdateMeRequest, success: Me, error: [ForbiddenResponse] }).pipe(sessionOnly, audits("user.update"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Change the caller's name")
      .annotate(
        OpenApi.Description,
        "Changes the caller's own display name; answers the caller as `GET /v1/me` does. Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key."
      )
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/v1/me/password", { payload: ChangePasswordRequest, success: ChangePasswordResult, error: [ForbiddenResponse, InvalidRequestResponse, RateLimitedResponse] }).pipe(sessionOnly, audits("user.password.change"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Change the caller's password")
      .annotate(
        OpenApi.Description,
        "Sets a new password after checking the current one. Every other session of the account is signed out; the calling one stays. The answer counts them and lists the API keys the person's memberships made, in every organization they ever joined (a deleted organization's included), which a password change leaves working unless `revokeApiKeys` is true (then they, and the keys made with them, are revoked). Session only.\n\nErrors: 400 `invalid_request` on `currentPassword` when it is wrong; 401 `unauthorized` without a valid session; 403 `session_required` with an API key; 429 `rate_limited` (with `Retry-After`) after 10 attempts, right or wrong, in 15 minutes (shared with `PUT /v1/me/email` and `DELETE /v1/me`, which check the password too)."
      )
  )
  .add(
    HttpApiEndpoint.put("changeEmail", "/v1/me/email", { payload: ChangeEmailRequest, success: ChangeEmailResult, error: [ForbiddenResponse, InvalidRequestResponse, EmailTakenResponse, RateLimitedResponse] }).pipe(sessionOnly, audits("user.email.change"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Change the caller's email")
      .annotate(
        OpenApi.Description,
        "Sets a new email for the account after checking its password. The new address is unverified until proven (`emailVerified: false` in the answer): the proofs the old address had, to the instance and to the organizations that invited it, are cleared, so an SSO sign-in does not link to the account by the new address without taking it back first (docs/security.md, \"Pre-account hijacking through SSO\"). Only a change of the letters' case keeps them. Sessions and API keys stay; the addresses the account signed in from follow it (the sign-in throttle spares them). The audit log records `user.email.change` with the old and new address. Session only.\n\nErrors: 400 `invalid_request` on `password` when it is wrong; 401 `unauthorized` without a valid session; 403 `session_required` with an API key, `sso_required` for an address of a domain whose organization requires SSO (its people get their account from SSO); 409 `email_taken` when another account has the address; 429 `rate_limited` (with `Retry-After`) after 10 password checks, right or wrong, in 15 minutes (shared with `POST /v1/me/password` and `DELETE /v1/me`)."
      )
  )
  .add(
    HttpApiEndpoint.get("listSessions", "/v1/me/sessions", { query: PageQuery, success: MySessionPage, error: [ForbiddenResponse] }).pipe(sessionOnly)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List the caller's sessions")
      .annotate(
        OpenApi.Description,
        "The caller's live sessions, newest first: how each signed in (password or SSO), when, from which address and user agent, when it was last used, when it expires, and which one this request carries (`current`). Ended, expired and idle sessions are not listed. Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key."
      )
  )
  .add(
    HttpApiEndpoint.delete("endSession", "/v1/me/sessions/:sessionId", { params: SessionPath, success: HttpApiSchema.NoContent, error: [ForbiddenResponse, NotFoundResponse] }).pipe(sessionOnly, audits("session.revoke"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "End one of the caller's sessions")
      .annotate(
        OpenApi.Description,
        "Signs out one of the caller's sessions, wherever it is (the current one too, as `POST /v1/auth/sign-out` does). Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key; 404 `session_not_found` when the caller has no such live session (another person's answers the same)."
      )
  )
  .add(
    HttpApiEndpoint.post("endOtherSessions", "/v1/me/sessions/end-others", { success: EndedSessions, error: [ForbiddenResponse] }).pipe(sessionOnly, audits("session.revoke"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "End the caller's other sessions")
      .annotate(
        OpenApi.Description,
        "Signs out every session of the caller except the one this request carries, and answers how many ended. API keys are not sessions: revoke them with `DELETE /v1/api-keys/{apiKeyId}`, or with a password change's `revokeApiKeys`. Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key."
      )
  )
  .add(
    HttpApiEndpoint.get("listOrganizations", "/v1/me/organizations", { query: MyOrganizationsQuery, success: MyOrganizationPage, error: [ForbiddenResponse] }).pipe(sessionOnly)
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "List the caller's organizations")
      .annotate(
        OpenApi.Description,
        "The organizations the caller belongs to, with their membership in each, oldest membership first; deleted organizations are not among them. With `deleted=true`, instead, the deleted organizations the caller is an owner of that they may still restore (their owners deleted them: not the instance's operator) (`POST /v1/organizations/{organizationId}/restore`), each with `deletedAt` and `purgeAfter`. Session only (an API key knows only its own organization); changes nothing.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key."
      )
  )
  .annotate(OpenApi.Title, "Users")
  .annotate(
    OpenApi.Description,
    "The caller's own account: signing up, in and out, their name, email and password, and which of their organizations a session acts in. Sign-up and sign-in are public; everything else acts on the signed-in person, and all but `GET /v1/me` needs a session (an API key acts for an organization, not as a person signing in: 403 `session_required`)."
  )
{}
