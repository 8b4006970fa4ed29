/**
 * How callers authenticate: a session token (`Authorization: Bearer`) or an organization API key (`x-api-key`),
 * and what a request knows about its caller once authenticated. The middleware tags live here so the API, the
 * server and the clients share them; the server implements them.
 */
import * as Context from "effect/Context"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import { addExtension } from "./Extensions.js"
import { ForbiddenResponse, OrganizationNotFoundResponse, ServiceUnavailableResponse, UnauthorizedResponse } from "./Errors.js"
import type { ApiKeyId, OrganizationId, SessionId, SsoConnectionId, WorkerId, WorkerTokenId } from "./Ids.js"
import type { Membership, Organization } from "./Organizations.js"
import type { Action } from "./Policy.js"
import type { User } from "./Users.js"

/** What authenticated the request. An API key pins the request to its organization and the member who made it. */
export type Credential =
  | {
    readonly _tag: "Session"
    readonly sessionId: SessionId
    /** The SSO connection that signed the session in; null for a password sign-in. */
    readonly ssoConnectionId: SsoConnectionId | null
    /** When the person signed in to make this session: what a recent authentication is judged by. */
    readonly authenticatedAt: Date
    /** True when the request narrowed it to reads (`Orgplane-Read-Only: true`); absent: false. */
    readonly readOnly?: boolean
  }
  | {
    readonly _tag: "ApiKey"
    readonly apiKeyId: ApiKeyId
    /** The actions the key may take (within its maker's role); null for a key made before scopes: its maker's whole role. */
    readonly scopes: ReadonlyArray<Action> | null
    /** True when the request narrowed it to reads (`Orgplane-Read-Only: true`); absent: false. */
    readonly readOnly?: boolean
  }

/**
 * The caller (resolved with its credential in one statement), with the organization the request acts in: an API key's own organization, or a session's
 * active organization (its oldest membership when none is active or it was left). `organization` and
 * `membership` are null for a person who belongs to no organization.
 */
export interface Actor {
  readonly user: User
  readonly credential: Credential
  readonly organization: Organization | null
  readonly membership: Membership | null
}

/** The caller as a member of the organization the request acts in. */
export interface MemberContext extends Actor {
  readonly _tag: "Member"
  readonly organization: Organization
  readonly membership: Membership
}

/** OpenAPI extension member marking an operation only a session may call. */
export const SessionOnlyExtension = "x-orgplane-session-only"

/**
 * Marks an endpoint only a person's session may call: it acts as the person signing in (their sessions, their
 * account, organizations they create or join), never as an organization's API key, which the server refuses with 403
 * `session_required` once the key is resolved, in its authentication (one place). The OpenAPI document carries the
 * mark (`x-orgplane-session-only`), `operationsOf` reads it (`sessionOnly`), and the MCP server hides the operation
 * from an API key.
 */
export const sessionOnly = addExtension(SessionOnlyExtension, true)

export class CurrentActor extends Context.Service<CurrentActor, Actor>()("@orgplane/schema/CurrentActor") {}

export class CurrentMember extends Context.Service<CurrentMember, MemberContext>()("@orgplane/schema/CurrentMember") {}

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

const security = { bearer, apiKey }

/**
 * Any signed-in caller (a session or an API key); provides `CurrentActor`. A security middleware wraps the endpoint's
 * effect: the server's implementation resolves the credential and provides the service to it. The schemes are tried
 * in order and the last failure answers. 403 `read_only_credential` when the request narrowed the credential to reads
 * (`Orgplane-Read-Only: true`, CallerHeaders.ts) and is not a GET or HEAD; so for every middleware here.
 */
export class Authentication extends HttpApiMiddleware.Service<Authentication, { provides: CurrentActor }>()("Authentication", {
  error: [UnauthorizedResponse, ForbiddenResponse, ServiceUnavailableResponse],
  security
}) {}

/**
 * A signed-in caller acting in an organization they belong to; provides `CurrentMember`. 404
 * `organization_not_found` when the caller belongs to no organization (or just left the active one); 403
 * `sso_session_required` when that organization requires SSO and its own connections did not authenticate the
 * session, or when an API key was made outside its SSO by a member it covers (see `PUT /v1/sso/policy`).
 */
export class MemberAuthentication extends HttpApiMiddleware.Service<MemberAuthentication, { provides: CurrentMember }>()(
  "MemberAuthentication",
  { error: [UnauthorizedResponse, ForbiddenResponse, OrganizationNotFoundResponse, ServiceUnavailableResponse], security }
) {}

/**
 * `MemberAuthentication`'s errors, for an endpoint whose error responses the document lists with these after the
 * endpoint's own, where a group's middleware's errors come before them. Such an endpoint declares these after its own
 * errors, and the document keeps that order (`responsesAsPublished` puts a middleware's errors first unless the
 * endpoint declares them).
 */
export const memberAuthenticationErrors = [UnauthorizedResponse, ForbiddenResponse, OrganizationNotFoundResponse, ServiceUnavailableResponse] as const

/**
 * The same credentials, for an operation that also serves anonymous callers: when none (or a bad one) is sent the
 * handler runs without a `CurrentActor` and decides itself. Effect 4 has no optional middleware: this one provides
 * nothing to the types; the server's implementation provides `CurrentActor` when a credential resolves and runs the
 * endpoint as it is otherwise, and the handler reads `Effect.serviceOption(CurrentActor)`.
 */
export class OptionalAuthentication extends HttpApiMiddleware.Service<OptionalAuthentication>()("OptionalAuthentication", {
  security
}) {}

/** A worker's runtime, authenticated by its worker token. */
export interface WorkerCaller {
  readonly organizationId: OrganizationId
  readonly workerId: WorkerId
  readonly tokenId: WorkerTokenId
}

export class CurrentWorker extends Context.Service<CurrentWorker, WorkerCaller>()("@orgplane/schema/CurrentWorker") {}

export const workerToken = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "A worker token (`opw_…`) from `POST /v1/workers` or `POST /v1/workers/{id}/tokens`, sent by the worker's runtime."
  ),
  HttpApiSecurity.annotate(OpenApi.Format, "worker-token")
)

/**
 * A worker's runtime (not a person): its worker token becomes `CurrentWorker`. 401 `unauthorized` for a missing,
 * unknown or revoked token, or a token of a deleted worker.
 */
export class WorkerAuthentication extends HttpApiMiddleware.Service<WorkerAuthentication, { provides: CurrentWorker }>()(
  "WorkerAuthentication",
  { error: [UnauthorizedResponse, ServiceUnavailableResponse], security: { workerToken } }
) {}
