/** The whole orgplane control-plane API: every group, the shared errors and the OpenAPI description. */
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { AdminApi } from "./AdminApi.js"
import { ApiKeysApi } from "./ApiKeysApi.js"
import { BootstrapApi } from "./BootstrapApi.js"
import { ConfigObjectsApi } from "./ConfigObjectsApi.js"
import {
  ConnectorAccountsApi,
  ConnectorInstancesApi,
  ConnectorMappingsApi,
  ConnectorSyncEventsApi,
  ConnectorTargetsApi,
  WebhooksApi
} from "./ConnectorsApi.js"
import { type ApiErrors, withApiErrors, withRequestParsing } from "./ApiOf.js"
import { MAX_URL_LENGTH, MethodNotAllowedResponse, unauthorizedChallenge } from "./Errors.js"
import { idempotencyKeyLifetimeHours, idempotencyKeyPattern, idempotentOperations } from "./Idempotency.js"
import { InvitationsApi } from "./InvitationsApi.js"
import { MarketplacesApi } from "./MarketplacesApi.js"
import { MembersApi, RolesApi } from "./MembersApi.js"
import { OrganizationDocumentApi } from "./OrganizationDocumentApi.js"
import { OrganizationsApi } from "./OrganizationsApi.js"
import { PluginsApi } from "./PluginsApi.js"
import { ActionsExtension, describeActions, Policy } from "./Policy.js"
import { SsoApi, SsoSignInApi } from "./SsoApi.js"
import { ScimConnectionsApi } from "./ScimConnectionsApi.js"
import { ScimMethodNotAllowedResponse } from "./ScimProtocol.js"
import { documentScimErrors, ScimDiscoveryApi, ScimGroupsApi, ScimUsersApi } from "./ScimProtocolApi.js"
import { SystemApi } from "./SystemApi.js"
import { TeamsApi } from "./TeamsApi.js"
import { AuditApi } from "./AuditApi.js"
import { AuditStreamsApi } from "./AuditStreamsApi.js"
import { DesktopPoliciesApi } from "./DesktopPoliciesApi.js"
import { UsersApi } from "./UsersApi.js"
import { RecoveryApi } from "./RecoveryApi.js"
import { AccountApi } from "./AccountApi.js"
import { WorkerActivityApi } from "./WorkerActivityApi.js"
import { WorkerRuntimeApi, WorkersApi } from "./WorkersApi.js"
import { CapabilitiesApi, SuiteClientsApi, SuiteConnectionsApi } from "./CapabilitiesApi.js"
import { MemoryApi } from "./MemoryApi.js"
import { annotatedBodiesInline, responsesAsPublished } from "./OpenApiResponses.js"
import {
  arrayChecksInline,
  checksFlattened,
  componentExamples,
  defaultedClassesInline,
  descriptionsBeside,
  inlineIds,
  integersAsPublished,
  lowerCaseSchemes,
  memberDescriptions,
  nameEncodedComponents,
  objectsAsPublished,
  parametersAsPublished
} from "./OpenApiComponents.js"
import { shapeDocument } from "./OpenApiDocument.js"
import { TelemetryApi } from "./TelemetryApi.js"
import { TemplatesApi } from "./TemplatesApi.js"
import { McpConnectionsApi } from "./McpConnectionsApi.js"
import { LlmProvidersApi } from "./LlmProvidersApi.js"
import { McpDiscoveryApi } from "./McpDiscoveryApi.js"
import { McpToolsApi } from "./McpToolsApi.js"
import { McpAuthorizationApi } from "./McpAuthorizationApi.js"
import { addExamples, type Json, type JsonObject } from "./OpenApiExamples.js"
import { addLinks } from "./OpenApiLinks.js"
import { isJsonObject, objectAt } from "./internal/json.js"

const description = `The control-plane API of an organization workspace.

Authentication: send a session token as \`Authorization: Bearer <token>\` (from \`POST /v1/auth/sign-up\` or
\`POST /v1/auth/sign-in\`), or an organization API key as \`x-api-key: <key>\` (from \`POST /v1/api-keys\`).
Each operation lists the schemes it accepts; public operations list none.
\`Orgplane-Read-Only: true\` narrows the request's credential (a session or an API key) to reads: an operation
other than a GET or HEAD answers 403 \`read_only_credential\` and changes nothing (\`false\` or no header: the credential
as it is; \`GET /v1/me\` says which in \`credential.readOnly\`). \`Orgplane-Channel\` declares the channel the request
came through, recorded as the audit event's \`via.channel\`: \`mcp\` for an MCP server acting for the caller, \`api\` (the
default) otherwise. Any other value of either header is 400 \`invalid_request\` on every route, before authentication.

Errors always have a JSON body. 400 \`invalid_request\` lists every bad field in \`details\` with its path;
401 is \`{"error":"unauthorized"}\`; 403 is \`{reason, message}\`; 404 is \`{error, message}\`, and a resource of
another organization answers 404 exactly like a missing one. Operations that use the database answer 503
\`service_unavailable\` with \`Retry-After\` while it is unavailable. Each operation's description lists its own errors;
its group's description, those all of the group's operations share.

Caching: every answer under \`/v1\`, errors included, says \`Cache-Control: no-store\` (RFC 6749 §5.1): sign-in,
sign-up, API keys, invitations, claim links and SSO exchange codes carry credentials, and the rest is an
organization's data, so no shared or private cache may keep any of it.

HTTP itself: a path answers a method it does not have with 405 \`method_not_allowed\` and an \`Allow\` header
listing those it has (HEAD wherever GET is; OPTIONS is not served, so it answers 405 like any other); under
\`/scim/v2\`, the 405 is a SCIM error (\`{schemas, status: "405", detail}\`, \`application/scim+json\`). A URL (path
and query) over ${MAX_URL_LENGTH} characters is 414 \`uri_too_long\`; a header block over the server's limit (16 KiB
with Node's default) is 431 \`request_header_fields_too_large\`, or 414 when the request line alone is what is too
long. A request body is JSON: \`Content-Type: application/json\` (parameters such as \`charset=utf-8\` allowed, a
charset other than UTF-8 not) or an \`application/*+json\` type. Another media type, or a non-empty body without a
\`Content-Type\`, is 415 \`unsupported_media_type\` on operations that take a body, answered before authentication
like 413; operations without a request body ignore one (the signed webhook reads its own, as GitHub sent it).
A path is read only as sent: one with a \`;\`, a \`#\` (in the query too), a \`.\` or \`..\` segment (\`%2e\` too), an
empty segment (\`//\`), an encoded \`/\` or \`\\\` (\`%2F\`, \`%5C\`) or a raw \`\\\` is 400 \`invalid_request\` on every
route, before authentication (under \`/scim/v2\`, a SCIM error), since a proxy in front of the server could read it
as another path; a trailing slash is ignored. What a request that no operation takes may be answered (404, 405 and
those refusals) is declared once, in the document's \`x-orgplane-unrouted-responses\`.

Lists are cursor-paginated: \`{items, nextCursor}\`; pass \`nextCursor\` back as \`cursor\` until it is null. A cursor
the list did not return (or returned for other filters) is 400 on \`cursor\`.

Safe retries: every POST, PUT, PATCH and DELETE that requires credentials takes an optional \`Idempotency-Key\`
header (1 to 255 printable ASCII characters; a UUID, say). The first answer the operation gives (a success or one of
its own 4xx errors) is kept for ${idempotencyKeyLifetimeHours} hours for the credential that sent the key (and the organization it acts in),
and the same key with the same request answers it again, byte for byte, with \`Idempotent-Replayed: true\`; the
change and the key are committed together, so a retry after a 5xx or a lost connection never makes the change
twice. The same key with another method, path, query or body is 422 \`idempotency_key_reused\`; while the first
request runs, 409 \`idempotency_key_in_use\` with \`Retry-After\`. Answers of 429 and 5xx are not kept: a retry runs
again. Operations open to anonymous callers (sign-up, sign-in, bootstrap, accepting an invitation, the webhook)
ignore the header.

Versions: \`info.version\` is the label of this API contract (\`dev\` until the contract is frozen), not the
software's version; a server reports its own version in \`GET /health\` (\`{"ok": true, "version": "<version>"}\`), and
the client and the CLI send theirs in \`user-agent\` (\`orgplane-client/<version> orgplane-cli/<version>\`).`

/** Operations behind `OptionalAuthentication`: credentials are accepted, not required. */
const optionalSecurity = new Set(["invitations.accept"])

/** Methods whose requests the server reads no body of (`HttpMethod.hasBody`): they cannot be too large. */
const bodiless = new Set(["get", "head", "options"])

const methods = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"])



/** Every operation of the document, with its path and method. */
const operationsOf = (spec: JsonObject): Array<{ readonly path: string; readonly method: string; readonly operation: JsonObject }> =>
  Object.entries(objectAt(spec, "paths") ?? {}).flatMap(([path, item]) =>
    Object.entries(isJsonObject(item) ? item : {}).flatMap(([method, operation]) =>
      methods.has(method) && isJsonObject(operation) ? [{ path, method, operation }] : []
    )
  )

/** An operation's `responses`, made when it has none. */
const responsesOf = (operation: JsonObject): JsonObject => {
  const responses = objectAt(operation, "responses") ?? {}
  operation["responses"] = responses
  return responses
}

/**
 * Names the components, writes the ids out and names the schemes as the document has them (`OpenApiComponents.ts`), documents 400 only for operations that take input, 413 only for methods with a body and 415 only for operations
 * with a request body (the API declares them once, for every operation, with 414 and 431, which any request can
 * get; the 400 of a path read two ways needs no more, since a template is matched segment by segment and no such
 * path matches one without a parameter), marks optional credentials as such (an empty security requirement), and
 * states the policy actions (with their roles, from the policy table) of every operation that checks some. The SCIM
 * protocol's errors are then put under the media type they are sent as (`documentScimErrors`). 405 belongs to no
 * operation: the API's description states it, and `x-orgplane-unrouted-responses` declares it with what else a
 * request no operation takes is answered. Then it shapes the document (`OpenApiDocument.ts`: the NUL rule on request
 * strings, discriminated request unions, no generated noise) and names its contact. A 400 declares only the API's
 * `InvalidRequest`, through the `ApiErrors` middleware.
 */
const transform = (spec: JsonObject): JsonObject => {
  nameEncodedComponents(spec)
  inlineIds(spec)
  integersAsPublished(spec)
  descriptionsBeside(spec)
  parametersAsPublished(spec)
  objectsAsPublished(spec)
  checksFlattened(spec)
  arrayChecksInline(spec)
  lowerCaseSchemes(spec)
  documentIdempotency(spec)
  documentHeaders(spec)
  for (const { method, operation } of operationsOf(spec)) {
    const id = operation["operationId"]
    if (typeof id === "string" && optionalSecurity.has(id)) {
      const security = operation["security"]
      operation["security"] = [...(Array.isArray(security) ? security : []), {}]
    }
    const actions = operation[ActionsExtension]
    if (Array.isArray(actions)) {
      const own = operation["description"]
      const checked = actions.flatMap((action) => typeof action === "string" && isAction(action) ? [action] : [])
      operation["description"] = [typeof own === "string" ? own : "", describeActions(checked)].filter(Boolean).join("\n\n")
    }
    const responses = responsesOf(operation)
    const parameters = operation["parameters"]
    const takesInput = (Array.isArray(parameters) && parameters.length > 0) || operation["requestBody"] !== undefined
    if (!takesInput) delete responses["400"]
    if (bodiless.has(method)) delete responses["413"]
    if (operation["requestBody"] === undefined) delete responses["415"]
  }
  documentScimErrors(spec)
  spec[unroutedMember] = unroutedResponses(spec)
  return withContact(shapeDocument(spec))
}

const isAction = (action: string): action is Parameters<typeof describeActions>[0][number] => Object.hasOwn(Policy, action)

/** The document's member holding the answers to a request that no operation takes. */
export const unroutedMember = "x-orgplane-unrouted-responses"

/**
 * A schema written out whole (Effect 4 names it as a definition the root refers to: its body is what is written), the
 * other definitions it refers to given as the document's components (which must have them).
 */
const inline = (spec: JsonObject, schema: Schema.Top): JsonObject => {
  // Closed objects, as the generator writes the document's (`onExcessProperty: "error"`).
  const document = Schema.toJsonSchemaDocument(schema, { onExcessProperty: "error" })
  const rootRef = document.schema.$ref
  const root = typeof rootRef === "string" ? rootRef.replace("#/$defs/", "") : undefined
  const components = objectAt(objectAt(spec, "components"), "schemas") ?? {}
  for (const name of Object.keys(document.definitions)) {
    if (name !== root && components[name] === undefined) throw new Error(`${unroutedMember}: no component ${name}`)
  }
  const body = root === undefined ? document.schema : document.definitions[root]
  const written: Json = JSON.parse(JSON.stringify(body).replaceAll("#/$defs/", "#/components/schemas/"))
  return { schema: written }
}

/**
 * What a request no operation takes is answered (an unknown path, a method its path does not have, a request refused
 * before routing or before Node's parser read a path), as a Responses object at the document's root: the API's
 * errors, and under `/scim/v2` their SCIM form. 405 names no operation's method, so no operation declares it.
 */
const unroutedResponses = (spec: JsonObject): JsonObject => {
  const ref = (name: string): JsonObject => {
    if (objectAt(objectAt(spec, "components"), "schemas")?.[name] === undefined) throw new Error(`${unroutedMember}: no component ${name}`)
    return { schema: { $ref: `#/components/schemas/${name}` } }
  }
  const both = (json: string, scim: string): JsonObject => ({ "application/json": ref(json), "application/scim+json": ref(scim) })
  return {
    "400": {
      description: "A path a proxy could read as another (see the API's description), an `Orgplane-Channel` or `Orgplane-Read-Only` header of a value the API does not take, or a request that is not HTTP/1.1.",
      content: both("InvalidRequest", "ScimBadRequest")
    },
    "404": { description: "No operation has this path: `not_found`.", content: both("NotFound", "ScimNotFound") },
    "405": {
      description: "The path has operations, none with this method: `method_not_allowed`.",
      headers: { Allow: { description: "The methods the path has (HEAD wherever GET is).", schema: { type: "string" } } },
      // The 405s belong to no operation: written out here rather than as components nothing else refers to.
      content: { "application/json": inline(spec, MethodNotAllowedResponse), "application/scim+json": inline(spec, ScimMethodNotAllowedResponse) }
    },
    "413": { description: "A request body's chunk extensions larger than the server reads.", content: { "application/json": ref("PayloadTooLarge") } },
    "414": { description: `A URL over ${MAX_URL_LENGTH} characters, or a request line over the server's header limit.`, content: both("UriTooLong", "ScimUriTooLong") },
    "431": { description: "A header block over the server's limit.", content: { "application/json": ref("RequestHeaderFieldsTooLarge") } }
  }
}

const writeMethods = new Set(["post", "put", "patch", "delete"])

/** The `Idempotency-Key` header as an OpenAPI parameter. */
const idempotencyKeyParameter = (): JsonObject => ({
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    `Makes retrying this write safe: the first answer (a success or one of this operation's 4xx errors) is kept for ${idempotencyKeyLifetimeHours} hours and a request with the same key and the same method, path, query and body answers it again, with \`Idempotent-Replayed: true\`. Keys are scoped to the credential that sends them.`,
  schema: { type: "string", minLength: 1, maxLength: 255, pattern: idempotencyKeyPattern.source },
  examples: { uuid: { summary: "A fresh UUID per operation", value: "3f6c2a9e-8d41-4b7a-9c0e-5a1d2b3c4e5f" } }
})

const idempotentReplayedHeader = (): JsonObject => ({
  description: "`true` when this is the kept answer of an earlier request with the same `Idempotency-Key`.",
  schema: { type: "string", enum: ["true"] }
})

/** A schema reference removed from one response, and the response with it when nothing is left. */
const dropSchema = (responses: JsonObject, status: string, ref: string) => {
  const content = objectAt(objectAt(responses[status], "content"), "application/json")
  if (content === undefined) return
  const schema = objectAt(content, "schema")
  const anyOf = schema?.["anyOf"]
  if (schema?.["$ref"] === ref) {
    delete responses[status]
  } else if (Array.isArray(anyOf)) {
    const kept = anyOf.filter((member) => !(isJsonObject(member) && member["$ref"] === ref))
    content["schema"] = kept.length === 1 ? kept[0]! : { anyOf: kept }
  }
}

/**
 * The \`Idempotency-Key\` header on the operations that take it (\`idempotentOperations\`), with the
 * \`Idempotent-Replayed\` header on the answers that may be replayed (2xx and the operation's own 4xx); the 409
 * \`idempotency_*\` and 422 answers (declared once, for the whole API) stay only on those operations.
 */
const documentIdempotency = (spec: JsonObject) => {
  const { ids } = idempotentOperations(Groups)
  for (const { method, operation } of operationsOf(spec)) {
    const responses = responsesOf(operation)
    const id = operation["operationId"]
    if (!writeMethods.has(method) || typeof id !== "string" || !ids.has(id)) {
      dropSchema(responses, "409", "#/components/schemas/IdempotencyConflict")
      dropSchema(responses, "422", "#/components/schemas/IdempotencyKeyReused")
      continue
    }
    const parameters = operation["parameters"]
    operation["parameters"] = [...(Array.isArray(parameters) ? parameters : []), idempotencyKeyParameter()]
    for (const [status, response] of Object.entries(responses)) {
      if (isJsonObject(response) && (/^2/.test(status) || (/^4/.test(status) && !["401", "413", "422", "429"].includes(status)))) {
        response["headers"] = { ...objectAt(response, "headers"), "Idempotent-Replayed": idempotentReplayedHeader() }
      }
    }
  }
}

/** Response headers declared once (`components.headers`) and named by every response that carries them. */
const sharedHeaders = (): JsonObject => ({
  CacheControl: {
    description:
      "`no-store`, on every answer under `/v1`: no cache may keep it (RFC 6749 §5.1). Some answers carry credentials (sessions, API keys, invitation and claim tokens, SSO exchange codes), all of them an organization's data.",
    schema: { type: "string", enum: ["no-store"] }
  },
  RetryAfter: {
    description: "Seconds to wait before trying again.",
    schema: { type: "integer", minimum: 1 }
  },
  WwwAuthenticate: {
    description:
      "The Bearer challenge (RFC 6750 §3): `Bearer realm=\"orgplane\"` when no token was presented (no credentials, a wrong password), with `error=\"invalid_request\"` for an `Authorization` header that is not `Bearer <token>`, `error=\"invalid_token\"` for a token or API key that is unknown, expired or revoked. The body's `message` says which.",
    schema: { type: "string" },
    example: unauthorizedChallenge("session_expired")
  }
})

/** Whether a response's body may be the API's 401 `unauthorized` (a webhook's 401 is another). */
const answersUnauthorized = (response: JsonObject) =>
  JSON.stringify(objectAt(response, "content") ?? {}).includes("\"#/components/schemas/Unauthorized\"")

/**
 * `Cache-Control` on every response of a `/v1` operation; `Retry-After` on every 429 and 503; `WWW-Authenticate` on
 * every 401 `unauthorized`.
 */
const documentHeaders = (spec: JsonObject) => {
  for (const { path, operation } of operationsOf(spec)) {
    if (!path.startsWith("/v1/")) continue
    for (const [status, response] of Object.entries(responsesOf(operation))) {
      if (!isJsonObject(response)) continue
      response["headers"] = {
        ...objectAt(response, "headers"),
        "Cache-Control": { $ref: "#/components/headers/CacheControl" },
        ...(status === "429" || status === "503" ? { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } : {}),
        ...(status === "401" && answersUnauthorized(response) ? { "WWW-Authenticate": { $ref: "#/components/headers/WwwAuthenticate" } } : {})
      }
    }
  }
  const components = objectAt(spec, "components") ?? {}
  spec["components"] = { ...components, headers: { ...objectAt(components, "headers"), ...sharedHeaders() } }
}

/** Who answers for the API (the platform's annotations have no `contact`). */
const withContact = (spec: JsonObject): JsonObject => ({
  ...spec,
  info: { ...objectAt(spec, "info"), contact: { name: "orgplane" } }
})

/**
 * Where the API is served: relative to the document (`/`, the origin it is served from) unless the server knows its
 * public URL.
 */
const servers = (url = "/") => [{ url, description: url === "/" ? "The server that serves this document." : "This server." }]

/** Every group, in the document's order. */
const groups = [
    SystemApi,
    UsersApi,
    AccountApi,
    OrganizationsApi,
    OrganizationDocumentApi,
    MembersApi,
    RolesApi,
    TeamsApi,
    InvitationsApi,
    ApiKeysApi,
    ConfigObjectsApi,
    PluginsApi,
    MarketplacesApi,
    ConnectorAccountsApi,
    ConnectorInstancesApi,
    ConnectorTargetsApi,
    ConnectorMappingsApi,
    ConnectorSyncEventsApi,
    WebhooksApi,
    BootstrapApi,
    AdminApi,
    DesktopPoliciesApi,
    SsoApi,
    SsoSignInApi,
    ScimConnectionsApi,
    ScimDiscoveryApi,
    ScimUsersApi,
    ScimGroupsApi,
    WorkersApi,
    WorkerRuntimeApi,
    WorkerActivityApi,
    MemoryApi,
    TemplatesApi,
    TelemetryApi,
    McpConnectionsApi,
    LlmProvidersApi,
    McpDiscoveryApi,
    McpToolsApi,
    McpAuthorizationApi,
    SuiteClientsApi,
    SuiteConnectionsApi,
    CapabilitiesApi,
    AuditApi,
    AuditStreamsApi,
    RecoveryApi
] as const

/**
 * Every group of the API by name: `Api`'s declared type, so the published declarations (tsup's dts build) name the
 * groups instead of writing out every endpoint's type, which TypeScript refuses to serialize whole.
 */
export type ApiGroups = typeof groups[number]

/** Every group and the shared errors; `Api` adds the document's description, whose examples are read from these. */
const Groups = withRequestParsing(withApiErrors(HttpApi.make("orgplane").add(...groups)))

/** The generated document as plain JSON (the platform types it loosely), for the steps above. */
const asDocument = (spec: object): JsonObject => JSON.parse(JSON.stringify(spec))

export const Api: HttpApi.HttpApi<"orgplane", HttpApiGroup.AddMiddleware<ApiGroups, ApiErrors>> = Groups.annotateMerge(
  OpenApi.annotations({
    title: "orgplane control-plane API",
    version: "dev",
    description,
    license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
    servers: servers(),
    // Then the responses and the components' examples as the document publishes them (`OpenApiResponses.ts`,
    // `OpenApiComponents.ts`: they read the API's schemas), then the operations' examples and links.
    transform: (spec) =>
      addLinks(addExamples(Groups, annotatedBodiesInline(defaultedClassesInline(Groups, componentExamples(Groups, memberDescriptions(Groups, responsesAsPublished(Groups, transform(asDocument(spec)))))))))
  })
)

/**
 * The OpenAPI 3.1 document of the API, with the given `info.version`, served from `serverUrl` (default `/`: the origin
 * the document is read from).
 */
export const openApiDocument = (version = "dev", serverUrl?: string): OpenApi.OpenAPISpec => {
  const spec = OpenApi.fromApi(Api)
  return { ...spec, info: { ...spec.info, version }, servers: servers(serverUrl?.replace(/\/+$/, "") || undefined) }
}
