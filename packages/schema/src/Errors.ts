/**
 * Every error body of the API, each a tagged error class (what handlers fail with and clients catch) and a wire
 * schema (what travels: exactly the spec's members, no `_tag`) annotated with its HTTP status.
 */
import * as Effect from "effect/Effect"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaGetter from "effect/SchemaGetter"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import { Int } from "./Common.js"
import { McpDiagnostic, ToolInspection } from "./McpDiagnostics.js"
import { HealthCheck } from "./System.js"

/** A literal member the constructor fills in, so `new OrganizationNotFound()` needs no arguments. */
const code = <const C extends string>(value: C) => Schema.Literal(value).pipe(Schema.withConstructorDefault(Effect.succeed(value)))

/** The members of an error body: its class's fields without `_tag`. */
type BodyFields<Fields extends Schema.Struct.Fields> = Omit<Fields, "_tag">

/**
 * What `wire` needs of an error class: a schema of its instances with their fields, built from the body's decoded
 * members (the class fills in `_tag`).
 */
interface ErrorClass<Self, Fields extends Schema.Struct.Fields> extends Schema.Top {
  readonly Type: Self
  readonly fields: Fields
  new(props: Schema.Struct.Type<BodyFields<Fields>>): Self
}

/** The members of a literal union, as Markdown code, for descriptions. */
const codes = (literals: { readonly literals: ReadonlyArray<string> }) => literals.literals.map((code) => `\`${code}\``).join(", ")

const registry = new Map<Function, Schema.Top>()

/** The wire schema of an error the API declares, or undefined for anything else (a defect, a foreign error). */
export const errorResponseOf = (error: unknown): Schema.Top | undefined =>
  typeof error === "object" && error !== null ? registry.get(error.constructor) : undefined

/** The wire form of one error class: the spec's members only, with the HTTP status it answers with. */
const wire = <Self extends { readonly _tag: string }, Fields extends Schema.Struct.Fields>(
  cls: ErrorClass<Self, Fields>,
  status: number,
  description: string,
  options: { readonly exact?: boolean } = {}
) => {
  const { _tag, ...fields } = cls.fields
  const annotations = described(SchemaAST.resolveIdentifier(cls.ast), description)
  const body = Schema.Struct(fields)
  const asBody = SchemaParser.decodeUnknownEffect(Schema.toType(body))
  const make = (decoded: unknown) => Effect.map(asBody(decoded), (members) => new cls(members))
  const response = options.exact
    ? wireOf(Schema.StructWithRest(body, [noOtherMembers(Object.keys(fields))]).annotate(annotations), fields, Schema.toType(cls), make, status)
    : wireOf(body.annotate(annotations), fields, Schema.toType(cls), make, status)
  registry.set(cls, response)
  return response
}

/**
 * The rest of an exact body: no member but `names`. Effect 4 applies a record rest to the declared members too, so its
 * keys leave them out; the key check says nothing to JSON Schema (`[{}, true]`): the document's
 * `additionalProperties: false` says it.
 */
const noOtherMembers = (names: ReadonlyArray<string>) =>
  Schema.Record(
    Schema.String.check(Schema.makeFilter((name: string) => !names.includes(name), { toJsonSchema: () => [{}, true] })),
    Schema.Never
  )

const described = (identifier: string | undefined, description: string) =>
  identifier === undefined ? { description } : { identifier, description }

/**
 * An instance's values of the body's members, defined ones only (not `_tag` nor header values). Read by name: an
 * error's `message` is not enumerable (Effect 4's errors are `Error`s).
 */
const membersOf = (error: object, fields: Schema.Struct.Fields): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const name of Object.keys(fields)) {
    const value: unknown = Reflect.get(error, name)
    if (value !== undefined) out[name] = value
  }
  return out
}

/**
 * The body schema `from` decoded to the class's instances (`to`, through `make`) and encoded back to the body's
 * members, read through `from`'s Type, which types them without a cast.
 *
 * `exact` bodies refuse members they do not have (a 401 `{ error: "unauthorized" }` is not another 401's body with
 * more members): Effect 4 reads parse options from the API only, so such a body says it itself, with a rest of no
 * other members (`noOtherMembers`).
 */
const wireOf = <Self extends object, From extends Schema.Top>(
  from: From,
  fields: Schema.Struct.Fields,
  to: Schema.Codec<Self, Self>,
  /** The instance of a decoded body; it reads the body through the class's own body struct, typed (a cheap pass). */
  make: (decoded: From["Type"]) => Effect.Effect<Self, SchemaIssue.Issue>,
  status: number
) => {
  const members = SchemaParser.decodeUnknownEffect(Schema.toType(from))
  return from.pipe(
    Schema.decodeTo(to, {
      decode: SchemaGetter.transformEffect(make),
      encode: SchemaGetter.transformEffect((error: Self) => members(membersOf(error, fields)))
    }),
    HttpApiSchema.status(status)
  )
}

/**
 * The wire form of an error class limited to some of its codes (`error`), for an operation that answers no other:
 * its document and its typed client then name exactly those. Declarations only: encoding and `errorResponseOf` keep
 * the class's whole form, which sends the same body.
 */
const only = <
  Self extends { readonly _tag: string; readonly error: string },
  Fields extends Schema.Struct.Fields,
  const Code extends Self["error"]
>(
  cls: ErrorClass<Self, Fields>,
  status: number,
  identifier: string,
  description: string,
  codes: readonly [Code, ...Array<Code>]
) => {
  const { _tag, ...bodyFields } = cls.fields
  const { error: _, ...fields } = bodyFields
  const allowed: ReadonlyArray<string> = codes
  const to = Schema.toType(cls).check(Schema.makeFilter((value: Self) => allowed.includes(value.error), { identifier }))
  // The narrowed body decodes to the whole body (a narrower code is one of its codes), which makes the instance.
  const whole = SchemaParser.decodeUnknownEffect(Schema.toType(Schema.Struct(bodyFields)))
  // One code is a literal, not a union of one (which the document would show as an `anyOf` of one).
  const [first, ...rest] = codes
  const error = rest.length === 0 ? Schema.Literal(first) : Schema.Literals(codes)
  return wireOf(
    Schema.Struct({ error, ...fields }).annotate({ identifier, description }),
    bodyFields,
    to,
    (decoded) => Effect.map(whole(decoded), (body) => new cls(body)),
    status
  )
}

export const InvalidRequestDetail = Schema.StructWithRest(
  Schema.Struct({
    message: Schema.String,
    path: Schema.Array(Schema.Union([Schema.String, Schema.Finite]))
  }),
  [Schema.Record(Schema.String, Schema.Unknown)]
).annotate({ identifier: "InvalidRequestDetail" })

export class InvalidRequest extends Schema.TaggedError<InvalidRequest>("InvalidRequest")("InvalidRequest", {
  error: code("invalid_request"),
  details: Schema.Array(InvalidRequestDetail)
}) {
  /** One bad field, for checks that only the server can make. */
  static field(path: ReadonlyArray<string | number>, message: string) {
    return new InvalidRequest({ details: [{ message, path }] })
  }
}
export const InvalidRequestResponse = wire(InvalidRequest, 400, "The request is malformed: `details` lists every bad field with its path.")

/**
 * Why a 401: machine-readable, beside the `message` a person reads. A wrong password and an unknown email are one
 * reason (`invalid_credentials`), so the answer never tells whether an account exists. An API key that was revoked is
 * deleted, so it reads as one that never existed (`api_key_unknown`).
 */
export const UnauthorizedReason = Schema.Literals([
  // No `Authorization` header and no `X-API-Key`.
  "credentials_missing",
  // An `Authorization` header that is not `Bearer <token>` (another scheme, or no token).
  "credentials_malformed",
  "session_unknown",
  "session_expired",
  // Signed out, revoked (a password change, a reset, an owner's or the operator's action), or its account disabled.
  "session_revoked",
  "api_key_unknown",
  "api_key_expired",
  // The key exists but acts for no one: its member removed or suspended, its account disabled, its organization deleted.
  "api_key_inactive",
  "worker_token_unknown",
  // `GET /metrics` with a bearer token that is not the server's metrics token (ORGPLANE_METRICS_TOKEN).
  "metrics_token_refused",
  // Sign-in: a wrong password or an email without an account, told apart by nothing.
  "invalid_credentials",
  // The credential stopped working while the request ran (revoked, its account or member removed): nothing changed.
  "credential_revoked"
]).annotate({ identifier: "UnauthorizedReason" })
export type UnauthorizedReason = typeof UnauthorizedReason.Type

/** What each reason says, and the next step. */
const unauthorizedMessages: Record<UnauthorizedReason, string> = {
  credentials_missing:
    "No credentials: send a session token as `Authorization: Bearer <token>` (POST /v1/auth/sign-in gives one) or an API key as `X-API-Key: <key>`.",
  credentials_malformed:
    "The Authorization header is not `Bearer <token>`: send a session token as `Authorization: Bearer <token>`, or an API key as `X-API-Key: <key>`.",
  session_unknown: "The bearer token is not a session of this server: sign in (POST /v1/auth/sign-in) for a new one.",
  session_expired: "The session expired (it outlived its lifetime or was idle too long): sign in again (POST /v1/auth/sign-in).",
  session_revoked:
    "The session was ended (signed out, revoked, or its account disabled): sign in again (POST /v1/auth/sign-in).",
  api_key_unknown: "The API key is not one of this server's: it was revoked, or never existed. An owner or admin creates keys with POST /v1/api-keys.",
  api_key_expired: "The API key expired: an owner or admin creates a new one with POST /v1/api-keys.",
  api_key_inactive:
    "The API key no longer acts for anyone: its member was removed or suspended, its account disabled, or its organization deleted.",
  worker_token_unknown: "The worker token is not one of this server's: it was revoked, its worker deleted, or it never existed.",
  metrics_token_refused: "The bearer token is not this server's metrics token: send ORGPLANE_METRICS_TOKEN's value as `Authorization: Bearer <token>`.",
  invalid_credentials: "Wrong email or password.",
  credential_revoked: "The credential was revoked while this request ran (or its account or membership removed): nothing was changed."
}

/**
 * The `WWW-Authenticate` challenge of a 401 (RFC 7235 §4.1 asks one of every 401; RFC 6750 §3 says its codes): no
 * error code when no bearer token was presented, `invalid_request` for a malformed `Authorization`, `invalid_token` for
 * a token or key that is unknown, expired or revoked.
 */
export const unauthorizedChallenge = (reason: UnauthorizedReason): string => {
  switch (reason) {
    case "credentials_missing":
    case "invalid_credentials":
      return `Bearer realm="orgplane"`
    case "credentials_malformed":
      return `Bearer realm="orgplane", error="invalid_request"`
    default:
      return `Bearer realm="orgplane", error="invalid_token"`
  }
}

export class Unauthorized extends Schema.TaggedError<Unauthorized>("Unauthorized")("Unauthorized", {
  error: code("unauthorized"),
  reason: UnauthorizedReason,
  message: Schema.String
}) {
  /** The 401 of `reason`, with its message (or `message`, where the place knows more). */
  static because(reason: UnauthorizedReason, message: string = unauthorizedMessages[reason]) {
    return new Unauthorized({ reason, message })
  }
}
export const UnauthorizedResponse = wire(
  Unauthorized,
  401,
  `Credentials are missing, malformed, unknown, expired or revoked: \`message\` says which, \`reason\` is machine-readable (${codes(UnauthorizedReason)}); the \`WWW-Authenticate\` header is the Bearer challenge (RFC 6750 §3).`,
  { exact: true }
)

/** Machine-readable reasons of a 403. */
export const ForbiddenReason = Schema.Literals([
  "insufficient_role",
  "operator_only",
  "session_required",
  "membership_removed",
  "invitation_email_mismatch",
  "signup_disabled",
  "insufficient_access",
  "tool_disabled",
  "sso_required",
  "sso_session_required",
  "setup_token_invalid",
  "insufficient_scope",
  "recent_authentication_required",
  // The instance's operator disabled the account: its password and SSO sign-ins are refused until enabled again.
  "account_disabled",
  // The password an organization's owner or admin set through a reset link: the sign-in chooses the person's own.
  "password_change_required",
  // The request narrowed its credential to reads (`Orgplane-Read-Only: true`) and is not a GET or HEAD.
  "read_only_credential"
]).annotate({ identifier: "ForbiddenReason" })
export type ForbiddenReason = typeof ForbiddenReason.Type

export class Forbidden extends Schema.TaggedError<Forbidden>("Forbidden")("Forbidden", {
  reason: ForbiddenReason,
  message: Schema.String
}) {}
export const ForbiddenResponse = wire(
  Forbidden,
  403,
  `The caller is known but may not do this. \`reason\` is machine-readable: ${codes(ForbiddenReason)}.`
)

export class PlanRequired extends Schema.TaggedError<PlanRequired>("PlanRequired")("PlanRequired", {
  error: code("enterprise_plan_required"),
  feature: Schema.String,
  message: Schema.String
}) {}
export const PlanRequiredResponse = wire(PlanRequired, 402, "The organization's plan does not include this feature.")

export class OrganizationNotFound extends Schema.TaggedError<OrganizationNotFound>("OrganizationNotFound")(
  "OrganizationNotFound",
  {
    error: code("organization_not_found"),
    message: Schema.String.pipe(
      Schema.withConstructorDefault(Effect.succeed("No such organization, or you are not a member of it."))
    )
  }
) {
  /** A caller who belongs to no organization (right after sign-up, or removed from their last): what to do next. */
  static readonly noOrganization = () =>
    new OrganizationNotFound({
      message:
        "You are not a member of any organization: create one with POST /v1/organizations (orgplane orgs create <name>), or accept an invitation with POST /v1/invitations/accept (orgplane invitations accept <token>)."
    })
}
export const OrganizationNotFoundResponse = wire(
  OrganizationNotFound,
  404,
  "The caller belongs to no organization (`message` then says how to create or join one), or is not a member of the one named.",
  { exact: true }
)

/** What a 404 names. */
export const NotFoundCode = Schema.Literals([
  "not_found",
  "organization_not_found",
  "member_not_found",
  "team_not_found",
  "invitation_not_found",
  "api_key_not_found",
  "claim_not_found",
  "config_object_not_found",
  "config_object_version_not_found",
  "config_object_file_not_found",
  "plugin_not_found",
  "marketplace_not_found",
  "plugin_membership_not_found",
  "marketplace_membership_not_found",
  "access_grant_not_found",
  "connector_account_not_found",
  "connector_instance_not_found",
  "connector_target_not_found",
  "connector_mapping_not_found",
  "connector_sync_event_not_found",
  "desktop_policy_not_found",
  "sso_connection_not_found",
  "sso_domain_not_found",
  "sso_test_not_found",
  "worker_not_found",
  "memory_not_found",
  "connection_not_found",
  "suite_client_not_found",
  "template_not_found",
  "template_version_not_found",
  "llm_provider_not_found",
  "llm_catalog_provider_not_found",
  "scim_connection_not_found",
  "scim_token_not_found",
  "audit_event_not_found",
  "audit_stream_not_found",
  "session_not_found",
  "user_not_found"
]).annotate({ identifier: "NotFoundCode" })
export type NotFoundCode = typeof NotFoundCode.Type

export class NotFound extends Schema.TaggedError<NotFound>("NotFound")("NotFound", {
  error: NotFoundCode,
  message: Schema.String
}) {}
export const NotFoundResponse = wire(
  NotFound,
  404,
  `The resource does not exist or belongs to another organization. \`error\` names it: ${codes(NotFoundCode)}.`
)

/** The 404 of an operation on one MCP connection, which names nothing else. */
export const McpConnectionNotFoundResponse = only(
  NotFound,
  404,
  "McpConnectionNotFound",
  "`connection_not_found`: the MCP connection does not exist or belongs to another organization.",
  ["connection_not_found"]
)

/** The 404 of the operator's operations on one account, which names nothing else. */
export const UserNotFoundResponse = only(
  NotFound,
  404,
  "UserNotFound",
  "`user_not_found`: no account has this id (or it was deleted).",
  ["user_not_found"]
)

/** What a 409 names. */
export const ConflictCode = Schema.Literals([
  "email_taken",
  "last_owner",
  "member_not_admin",
  "member_exists",
  "team_exists",
  "invitation_not_pending",
  "plugin_exists",
  "plugin_name_listed",
  "marketplace_exists",
  "config_object_deleted",
  "plugin_deleted",
  "managed_marketplace_cannot_be_deleted",
  "connector_account_exists",
  "connector_account_disconnected",
  "connector_instance_exists",
  "connector_target_exists",
  "connector_mapping_exists",
  "connector_instance_disabled",
  "connector_target_required",
  "codehost_not_configured",
  "default_policy_required",
  "sso_domain_in_use",
  "sso_domain_not_verified",
  "sso_connection_active",
  "sso_connection_untested",
  "sso_domain_served",
  "sso_client_secret_required",
  "sso_kind_mismatch",
  "sso_metadata_url_required",
  "sso_connection_required",
  "sso_policy_locks_you_out",
  "worker_runtime_unavailable",
  "mcp_connection_exists",
  "mcp_connection_changed",
  "oauth_issuer_required",
  "oauth_client_required",
  "mcp_connection_not_oauth",
  "mcp_connection_not_per_member",
  "oauth_issuer_review_required",
  "suite_not_configured",
  "llm_provider_exists",
  "llm_provider_no_credential",
  // Directory provisioning (SCIM): identity and teams.
  "member_deprovisioned",
  "team_external_key_taken",
  "team_managed_by_directory",
  "scim_connection_exists",
  "audit_stream_limit_reached",
  // Quotas (instance settings): organizations a person owns, API keys per member, pending invitations.
  "organization_quota_reached",
  "api_key_quota_reached",
  "invitation_quota_reached",
  // An invitation's signUp for an email that already has an account (sign in and accept instead).
  "account_exists",
  // The instance's operator.
  "operator_exists",
  "operator_not_eligible",
  // Recovery: password reset links and mail.
  "reset_own_password",
  "account_in_other_organizations",
  "account_without_password",
  "mail_not_configured",
  "email_already_verified",
  // Accounts: a deletion that would leave an organization with members and no owner; the operator disabling themselves.
  "last_owner_of_organizations",
  "cannot_disable_yourself",
  // An organization's deletion and restoration.
  "organization_operates_instance",
  "organization_not_deleted",
  // The operator organization requiring SSO without its owners' password sign-in (an IdP outage would leave nobody
  // to operate the instance).
  "operator_password_fallback",
  // Organization as code: a plan applied to a state other than its own; a document that would lock its applier out;
  // an API key a document names for a member other than its applier (a key acts as its maker).
  "plan_stale",
  "document_locks_you_out",
  "api_key_maker"
]).annotate({ identifier: "ConflictCode" })
export type ConflictCode = typeof ConflictCode.Type

export class Conflict extends Schema.TaggedError<Conflict>("Conflict")("Conflict", {
  error: ConflictCode,
  message: Schema.String
}) {}
export const ConflictResponse = wire(
  Conflict,
  409,
  `The request conflicts with the current state. \`error\` says how: ${codes(ConflictCode)}.`
)

/** The 409 of an account's deletion: it would leave organizations with members and no owner. */
export const LastOwnerOfOrganizationsResponse = only(
  Conflict,
  409,
  "LastOwnerOfOrganizations",
  "`last_owner_of_organizations`: the person is the last owner of organizations that have other members; `message` names them and says what to do (transfer ownership, or delete the organization).",
  ["last_owner_of_organizations"]
)

/** The 409 of the operator disabling an account: their own. */
export const CannotDisableYourselfResponse = only(
  Conflict,
  409,
  "CannotDisableYourself",
  "`cannot_disable_yourself`: the operator may not disable their own account (nobody could enable it again but another operator).",
  ["cannot_disable_yourself"]
)

/** The 409 of an email change: the address has an account. */
export const EmailTakenResponse = only(Conflict, 409, "EmailTaken", "`email_taken`: another account has this address.", ["email_taken"])

export class RateLimited extends Schema.TaggedError<RateLimited>("RateLimited")("RateLimited", {
  error: code("rate_limited"),
  message: Schema.String
}) {
  /** Travels as the `Retry-After` header, not as a body member. */
  retryAfterSeconds: number | undefined = undefined

  static after(seconds: number, message: string): RateLimited {
    const error = new RateLimited({ message })
    error.retryAfterSeconds = seconds
    return error
  }
}
export const RateLimitedResponse = wire(RateLimited, 429, "Too many requests; the `Retry-After` header says how many seconds to wait.")

/** What a 409 about an `Idempotency-Key` names. */
export const IdempotencyConflictCode = Schema.Literals(["idempotency_key_in_use", "idempotency_response_lost"]).annotate({
  identifier: "IdempotencyConflictCode"
})
export type IdempotencyConflictCode = typeof IdempotencyConflictCode.Type

export class IdempotencyConflict extends Schema.TaggedError<IdempotencyConflict>("IdempotencyConflict")("IdempotencyConflict", {
  error: IdempotencyConflictCode,
  message: Schema.String
}) {
  /** Travels as the `Retry-After` header (with `idempotency_key_in_use`), not as a body member. */
  retryAfterSeconds: number | undefined = undefined

  /** Another request with the same key is running. */
  static inUse(seconds: number): IdempotencyConflict {
    const error = new IdempotencyConflict({
      error: "idempotency_key_in_use",
      message: "A request with this Idempotency-Key is still running; retry after it ends."
    })
    error.retryAfterSeconds = seconds
    return error
  }
}
export const IdempotencyConflictResponse = wire(
  IdempotencyConflict,
  409,
  "About the `Idempotency-Key`: `idempotency_key_in_use`, a request with this key is still running (retry after `Retry-After` seconds); `idempotency_response_lost`, a request with this key made its change but its answer was lost before it could be stored: read the resource to see the outcome, and use a new key for a new attempt."
)

export class IdempotencyKeyReused extends Schema.TaggedError<IdempotencyKeyReused>("IdempotencyKeyReused")("IdempotencyKeyReused", {
  error: code("idempotency_key_reused"),
  message: Schema.String
}) {}
export const IdempotencyKeyReusedResponse = wire(
  IdempotencyKeyReused,
  422,
  "The `Idempotency-Key` was used in the last 24 hours for a request with another method, path, query or body: a key names one request."
)

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>("PayloadTooLarge")("PayloadTooLarge", {
  error: code("payload_too_large"),
  message: Schema.String
}) {}
export const PayloadTooLargeResponse = wire(PayloadTooLarge, 413, "The request body is larger than this endpoint accepts.")

/**
 * The path exists, but not with the request's method. Answered by the server with an `Allow` header listing the
 * path's methods; no operation declares it (an operation is a path with its method).
 */
export class MethodNotAllowed extends Schema.TaggedError<MethodNotAllowed>("MethodNotAllowed")("MethodNotAllowed", {
  error: code("method_not_allowed"),
  message: Schema.String
}) {}
export const MethodNotAllowedResponse = wire(
  MethodNotAllowed,
  405,
  "The path exists, but not with this method: the `Allow` header lists the methods it has."
)

/**
 * Longest URL (path and query, as the request line carries it) the server reads, in characters: RFC 9110 asks
 * servers to support at least 8000. Cursors (at most 2048) and path parameters (at most 1024) fit many times over.
 */
export const MAX_URL_LENGTH = 8192

export class UriTooLong extends Schema.TaggedError<UriTooLong>("UriTooLong")("UriTooLong", {
  error: code("uri_too_long"),
  message: Schema.String
}) {}
export const UriTooLongResponse = wire(UriTooLong, 414, "The request's URL (path and query) is longer than the server accepts.")

export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>("UnsupportedMediaType")("UnsupportedMediaType", {
  error: code("unsupported_media_type"),
  message: Schema.String
}) {}
export const UnsupportedMediaTypeResponse = wire(
  UnsupportedMediaType,
  415,
  "The request body's `Content-Type` is not one this operation reads (or a body came without one); `message` names the media types it accepts."
)

export class RequestHeaderFieldsTooLarge extends Schema.TaggedError<RequestHeaderFieldsTooLarge>("RequestHeaderFieldsTooLarge")(
  "RequestHeaderFieldsTooLarge",
  {
    error: code("request_header_fields_too_large"),
    message: Schema.String
  }
) {}
export const RequestHeaderFieldsTooLargeResponse = wire(
  RequestHeaderFieldsTooLarge,
  431,
  "The request's header fields are larger than the server accepts."
)

export class ConnectionNotReady extends Schema.TaggedError<ConnectionNotReady>("ConnectionNotReady")("ConnectionNotReady", {
  error: code("connection_not_ready"),
  message: Schema.String
}) {}
export const ConnectionNotReadyResponse = wire(ConnectionNotReady, 409, "The MCP connection lacks the credential it needs.")

export const NeedsConnectionReason = Schema.Literals([
  "suite_not_configured",
  "feature_disabled",
  "not_connected",
  "reconnect_required",
  "scope_missing",
  "permission_denied"
]).annotate({
  identifier: "NeedsConnectionReason",
  description:
    "Why: `suite_not_configured` and `feature_disabled` are an admin's to fix (the suite's OAuth client); `not_connected`, `reconnect_required` (the suite refused the stored tokens), `scope_missing` and `permission_denied` (the suite answered 403) the member's: connect again."
})
export type NeedsConnectionReason = typeof NeedsConnectionReason.Type

export class NeedsConnection extends Schema.TaggedError<NeedsConnection>("NeedsConnection")("NeedsConnection", {
  error: code("needs_connection"),
  message: Schema.String,
  suite: Schema.optionalKey(Schema.Literals(["suite-a", "suite-b"])).annotateKey({
    description: "The suite whose connection is needed."
  }),
  reason: Schema.optionalKey(NeedsConnectionReason)
}) {}
export const NeedsConnectionResponse = wire(
  NeedsConnection,
  409,
  "The calling member has no usable connection to the external suite this capability acts through: `suite` names it and `reason` says why (an admin's to fix, or the member's: connect again)."
)

export class SuiteApiError extends Schema.TaggedError<SuiteApiError>("SuiteApiError")("SuiteApiError", {
  error: Schema.Literals(["suite_a_api_error", "suite_b_api_error"]),
  message: Schema.String,
  outcome: Schema.optionalKey(Schema.Literal("unknown")).annotateKey({
    description:
      "Present on a change (a draft, a meeting link) whose request was sent but whose answer never came or could not be read: it may have happened. Look before retrying."
  }),
  retryable: Schema.optionalKey(Schema.Boolean).annotateKey({
    description: "Whether the same request may succeed later (a rate limit, an unavailable suite, a timeout of a read)."
  })
}) {}
export const SuiteApiErrorResponse = wire(
  SuiteApiError,
  502,
  "The external mail (`suite_a_api_error`) or calendar (`suite_b_api_error`) suite failed: `message` carries its status and the start of its answer."
)

/** The 502 of the mail capabilities (suite-a), which never answer the calendar's code. */
export const MailSuiteApiErrorResponse = only(
  SuiteApiError,
  502,
  "MailSuiteApiError",
  "`suite_a_api_error`: the external mail suite failed: `message` carries its status and the start of its answer.",
  ["suite_a_api_error"]
)

/** The 502 of the calendar capability (suite-b). */
export const CalendarSuiteApiErrorResponse = only(
  SuiteApiError,
  502,
  "CalendarSuiteApiError",
  "`suite_b_api_error`: the external calendar suite failed: `message` carries its status and the start of its answer.",
  ["suite_b_api_error"]
)

export class CodeHostApiError extends Schema.TaggedError<CodeHostApiError>("CodeHostApiError")("CodeHostApiError", {
  error: code("codehost_api_error"),
  message: Schema.String
}) {}
export const CodeHostApiErrorResponse = wire(
  CodeHostApiError,
  502,
  "The code host (GitHub) failed or refused the request orgplane made for this one; `message` says how (for example a missing branch, a revoked token, a rate limit)."
)

/** A sign-in through SSO that the provider's answer or the connection's rules refused: `code` says why (`SsoFailureCode`). */
export class SsoSignInFailed extends Schema.TaggedError<SsoSignInFailed>("SsoSignInFailed")("SsoSignInFailed", {
  error: code("sso_sign_in_failed"),
  code: Schema.String,
  message: Schema.String
}) {}
export const SsoSignInFailedResponse = wire(
  SsoSignInFailed,
  401,
  "The SSO sign-in was refused: `code` is the stable reason (`issuer_mismatch`, `nonce_mismatch`, `replayed`, `email_domain_not_verified`, `idp_error`, ...), `message` says it in words."
)

/*
 * The refusals of `POST /v1/sso/verify-domain` that are not a bad request. The spec lists that operation's error
 * bodies as `invalid_request`, `unauthorized`, `enterprise_plan_required`, `organization_not_found` and a
 * `{message, reason}` body, so these say why in `reason` (not `error`), each with the status its kind has: 409 for
 * the domain's state, 502 for DNS.
 */

export const DomainVerificationConflictReason = Schema.Literals(["domain_verification_not_requested", "sso_domain_taken"]).annotate({
  identifier: "DomainVerificationConflictReason",
  description:
    "`domain_verification_not_requested`: no TXT record was requested for the domain, or the request expired (request one with `POST /v1/sso/request-domain-verification`); `sso_domain_taken`: another organization verified the domain first."
})
export type DomainVerificationConflictReason = typeof DomainVerificationConflictReason.Type

export class DomainVerificationConflict extends Schema.TaggedError<DomainVerificationConflict>("DomainVerificationConflict")(
  "DomainVerificationConflict",
  {
    reason: DomainVerificationConflictReason,
    message: Schema.String
  }
) {}
export const DomainVerificationConflictResponse = wire(
  DomainVerificationConflict,
  409,
  `The domain cannot be verified in its state: \`reason\` is ${codes(DomainVerificationConflictReason)}, \`message\` says what to do.`
)

export class DomainVerificationFailed extends Schema.TaggedError<DomainVerificationFailed>("DomainVerificationFailed")(
  "DomainVerificationFailed",
  {
    reason: code("domain_verification_failed"),
    message: Schema.String,
    recordName: Schema.String,
    expectedValue: Schema.String,
    foundValues: Schema.Array(Schema.String)
  }
) {}
export const DomainVerificationFailedResponse = wire(
  DomainVerificationFailed,
  409,
  "`reason` `domain_verification_failed`: the domain's TXT record is missing or carries another value: `recordName` is the name queried, `expectedValue` the value it must hold, `foundValues` the TXT values found there."
)

export class DnsLookupFailed extends Schema.TaggedError<DnsLookupFailed>("DnsLookupFailed")("DnsLookupFailed", {
  reason: code("dns_lookup_failed"),
  message: Schema.String
}) {}
export const DnsLookupFailedResponse = wire(
  DnsLookupFailed,
  502,
  "`reason` `dns_lookup_failed`: no DNS server answered the lookup (unreachable, timed out, SERVFAIL or REFUSED); `message` names the servers and what each did. Retry later."
)

export class WebhookRejected extends Schema.TaggedError<WebhookRejected>("WebhookRejected")("WebhookRejected", {
  ok: Schema.Literal(false).pipe(Schema.withConstructorDefault(Effect.succeed(false as const))),
  error: Schema.String
}) {}
export const WebhookRejectedResponse = wire(WebhookRejected, 401, "The webhook signature did not verify against the raw body.")

export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>("ServiceUnavailable")("ServiceUnavailable", {
  error: code("service_unavailable"),
  message: Schema.String
}) {}
export const ServiceUnavailableResponse = wire(
  ServiceUnavailable,
  503,
  "A dependency of the server (its database) is not available right now; `Retry-After` says when to try again."
)

/** A health probe's 503 (`/health/started`, `/health/ready`): the components it checks, at least one of them down. */
export class HealthDown extends Schema.TaggedError<HealthDown>("HealthDown")("HealthDown", {
  status: code("down"),
  checks: Schema.Array(HealthCheck)
}) {}
export const HealthDownResponse = wire(
  HealthDown,
  503,
  "A component the probe checks is down: `checks` lists each one it checks, with `data.reason` on those that are down."
)

/**
 * A stored secret the operation needs cannot be decrypted: a server-side problem (a key no longer configured, or a
 * ciphertext altered or moved from another row), so a 500 that names it, not a blind `internal_error`.
 */
export class StoredCredentialUnreadable extends Schema.TaggedError<StoredCredentialUnreadable>("StoredCredentialUnreadable")(
  "StoredCredentialUnreadable",
  {
    error: code("stored_credential_unreadable"),
    message: Schema.String
  }
) {}
/** The sentence an operation's description adds when it reads a stored secret. */
export const storedCredentialUnreadable =
  "500 `stored_credential_unreadable` when a secret it needs (`message` names which, never its value) is stored encrypted and does not decrypt with the server's keys (see the server's log): an operator restores the key, or an admin sets the secret again."
export const StoredCredentialUnreadableResponse = wire(
  StoredCredentialUnreadable,
  500,
  "A credential this operation needs is stored encrypted and cannot be decrypted with the server's keys: the key it was written with is no longer configured, or the stored value was altered or moved from another row or organization. `message` names the credential (never its value); the server's log names the key. Retrying does not help: an operator restores the key (`ORGPLANE_ENCRYPTION_KEYS`), or an admin sets the credential again."
)

export class ConnectionValidationFailed extends Schema.TaggedError<ConnectionValidationFailed>("ConnectionValidationFailed")(
  "ConnectionValidationFailed",
  {
    error: code("connection_validation_failed"),
    message: Schema.String,
    diagnostic: McpDiagnostic
  }
) {}
export const ConnectionValidationFailedResponse = wire(
  ConnectionValidationFailed,
  502,
  "The MCP server did not complete an MCP `initialize` with the connection's settings; `diagnostic` says what failed and what to do."
)

export class ToolExecutionFailed extends Schema.TaggedError<ToolExecutionFailed>("ToolExecutionFailed")("ToolExecutionFailed", {
  error: code("tool_execution_failed"),
  message: Schema.String,
  diagnostic: McpDiagnostic,
  inspection: ToolInspection
}) {}
export const ToolExecutionFailedResponse = wire(
  ToolExecutionFailed,
  502,
  "The tool call failed at the MCP server or on the way to it (or the tool answered an error); `diagnostic` says what failed and whose move it is, `inspection` shows the `tools/call` exchange."
)

export class LlmProviderApiError extends Schema.TaggedError<LlmProviderApiError>("LlmProviderApiError")("LlmProviderApiError", {
  error: code("llm_provider_api_error"),
  message: Schema.String,
  upstreamStatus: Schema.optionalKey(Int).annotateKey({
    description: "The HTTP status the provider answered with; absent when it gave no answer (unreachable, timed out, refused by the outbound guard)."
  }),
  retryable: Schema.Boolean.annotate({
    description: "Whether the same request may succeed later (a rate limit, a 5xx, a timeout or an unreachable provider)."
  })
}) {}
export const LlmProviderApiErrorResponse = wire(
  LlmProviderApiError,
  502,
  "The LLM provider refused or failed the request orgplane made with the stored credential, or could not be reached: `message` carries its status and the start of its answer, with the credential scrubbed from it."
)

/** Every error class that can answer, with its wire schema: what clients use to turn an error back into its body. */
export const ErrorResponses = [
  InvalidRequestResponse,
  UnauthorizedResponse,
  ForbiddenResponse,
  PlanRequiredResponse,
  OrganizationNotFoundResponse,
  NotFoundResponse,
  ConflictResponse,
  RateLimitedResponse,
  IdempotencyConflictResponse,
  IdempotencyKeyReusedResponse,
  PayloadTooLargeResponse,
  MethodNotAllowedResponse,
  UriTooLongResponse,
  UnsupportedMediaTypeResponse,
  RequestHeaderFieldsTooLargeResponse,
  ConnectionValidationFailedResponse,
  ToolExecutionFailedResponse,
  ConnectionNotReadyResponse,
  NeedsConnectionResponse,
  SuiteApiErrorResponse,
  CodeHostApiErrorResponse,
  WebhookRejectedResponse,
  DomainVerificationConflictResponse,
  DomainVerificationFailedResponse,
  DnsLookupFailedResponse,
  ServiceUnavailableResponse,
  StoredCredentialUnreadableResponse,
  LlmProviderApiErrorResponse
] as const

export class WorkerRuntimeError extends Schema.TaggedError<WorkerRuntimeError>("WorkerRuntimeError")("WorkerRuntimeError", {
  error: code("worker_runtime_error"),
  message: Schema.String
}) {}
export const WorkerRuntimeErrorResponse = wire(
  WorkerRuntimeError,
  502,
  "The worker's runtime could not be reached or gave no usable answer (refused, timed out, redirected, too large); `message` says which."
)

export class ToolCatalogFailed extends Schema.TaggedError<ToolCatalogFailed>("ToolCatalogFailed")("ToolCatalogFailed", {
  error: code("tool_catalog_failed"),
  message: Schema.String,
  diagnostic: McpDiagnostic
}) {}
export const ToolCatalogFailedResponse = wire(
  ToolCatalogFailed,
  502,
  "The MCP server's tool list could not be read (on the way, at the server, or an answer out of bounds); `diagnostic` says what failed and whose move it is."
)
