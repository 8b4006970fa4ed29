/** Users: sign-up, sign-in, sign-out and the caller's own profile. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import {
  ConflictResponse,
  ForbiddenResponse,
  InvalidRequestResponse,
  OrganizationNotFoundResponse,
  RateLimitedResponse,
  ServiceUnavailableResponse,
  UnauthorizedResponse
} from "./Errors.js"
import { PageQuery } from "./Pagination.js"
import { Authentication } from "./Security.js"
import {
  AuthResult,
  ChangePasswordRequest,
  Me,
  MyOrganizationPage,
  SignInRequest,
  SignUpRequest,
  SwitchOrganizationRequest,
  UpdateMeRequest
} from "./Users.js"

export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.post("signUp", "/v1/auth/sign-up")
      .setPayload(SignUpRequest)
      .addSuccess(AuthResult, { status: 201 })
      .addError(ConflictResponse)
      .addError(ForbiddenResponse)
      .addError(ServiceUnavailableResponse)
      .annotate(
        OpenApi.Description,
        "Creates an account and signs it in. 409 `email_taken` when the email is registered; 403 `signup_disabled` when the instance does not allow sign-up."
      )
  )
  .add(
    HttpApiEndpoint.post("signIn", "/v1/auth/sign-in")
      .setPayload(SignInRequest)
      .addSuccess(AuthResult)
      .addError(UnauthorizedResponse)
      .addError(ServiceUnavailableResponse)
      .annotate(
        OpenApi.Description,
        "Exchanges an email and password for a session token. A wrong email and a wrong password answer the same 401."
      )
  )
  .add(
    HttpApiEndpoint.post("signOut", "/v1/auth/sign-out")
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ForbiddenResponse)
      .middleware(Authentication)
      .annotate(OpenApi.Description, "Revokes the presented session token. Needs a session (403 `session_required` with an API key).")
  )
  .add(
    HttpApiEndpoint.get("me", "/v1/me")
      .addSuccess(Me)
      .middleware(Authentication)
      .annotate(OpenApi.Description, "The caller, their active organization and their membership in it.")
  )
  .add(
    HttpApiEndpoint.post("switchOrganization", "/v1/me/active-organization")
      .setPayload(SwitchOrganizationRequest)
      .addSuccess(Me)
      .addError(ForbiddenResponse)
      .addError(OrganizationNotFoundResponse)
      .middleware(Authentication)
      .annotate(
        OpenApi.Description,
        "Makes another organization the session's active one. 404 `organization_not_found` unless the caller is a member; 403 `session_required` with an API key."
      )
  )
  .add(
    HttpApiEndpoint.patch("updateMe", "/v1/me")
      .setPayload(UpdateMeRequest)
      .addSuccess(Me)
      .addError(ForbiddenResponse)
      .middleware(Authentication)
      .annotate(OpenApi.Description, "Changes the caller's own name. Needs a session (403 `session_required` with an API key).")
  )
  .add(
    HttpApiEndpoint.post("changePassword", "/v1/me/password")
      .setPayload(ChangePasswordRequest)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(ForbiddenResponse)
      .addError(InvalidRequestResponse)
      .addError(RateLimitedResponse)
      .middleware(Authentication)
      .annotate(
        OpenApi.Description,
        "Changes the caller's password. Every other session of the account is signed out; the calling one stays. 400 `invalid_request` on `currentPassword` when it is wrong; 403 `session_required` with an API key; 429 after 10 attempts in 15 minutes."
      )
  )
  .add(
    HttpApiEndpoint.get("listOrganizations", "/v1/me/organizations")
      .setUrlParams(PageQuery)
      .addSuccess(MyOrganizationPage)
      .addError(ForbiddenResponse)
      .middleware(Authentication)
      .annotate(
        OpenApi.Description,
        "The organizations the caller belongs to, with their membership in each, oldest membership first. Needs a session (403 `session_required`: an API key only knows its own organization)."
      )
  )
  .annotate(OpenApi.Title, "Users")
{}
