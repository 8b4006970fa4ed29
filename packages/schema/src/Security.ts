/**
 * How callers authenticate: a session token (`Authorization: Bearer`) or an organization API key (`x-api-key`).
 * The middleware tag lives here so the API, the server and the clients share it; the server implements it.
 */
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context } from "effect"
import { UnauthorizedResponse } from "./Errors.js"
import type { ApiKeyId, MembershipId, OrganizationId, SessionId, UserId } from "./Ids.js"

/** What authenticated the request. An API key pins the request to one organization and one member. */
export type Credential =
  | { readonly _tag: "Session"; readonly sessionId: SessionId; readonly activeOrganizationId: OrganizationId | null }
  | {
    readonly _tag: "ApiKey"
    readonly apiKeyId: ApiKeyId
    readonly organizationId: OrganizationId
    readonly membershipId: MembershipId
  }

export interface Actor {
  readonly userId: UserId
  readonly credential: Credential
}

export class CurrentActor extends Context.Tag("@orgplane/schema/CurrentActor")<CurrentActor, Actor>() {}

export const bearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "A session token from `POST /v1/auth/sign-in` or `POST /v1/auth/sign-up`."),
  HttpApiSecurity.annotate(OpenApi.Format, "session-token")
)

export const apiKey = HttpApiSecurity.apiKey({ in: "header", key: "x-api-key" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "An organization API key from `POST /v1/api-keys`, sent raw (no `Bearer`). It acts as the member who created it, in that key's organization."
  )
)

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Authentication", {
  failure: UnauthorizedResponse,
  provides: CurrentActor,
  security: { bearer, apiKey }
}) {}

/**
 * The same credentials, for an operation that also serves anonymous callers: when none (or a bad one) is sent the
 * handler runs without a `CurrentActor` and decides itself.
 */
export class OptionalAuthentication extends HttpApiMiddleware.Tag<OptionalAuthentication>()("OptionalAuthentication", {
  optional: true,
  provides: CurrentActor,
  security: { bearer, apiKey }
}) {}
