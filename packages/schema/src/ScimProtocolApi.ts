/**
 * The SCIM 2.0 protocol surface of a connection, `/scim/v2/{connectionId}/...`, for directories (Okta, Entra ID,
 * OneLogin, JumpCloud): discovery and Users (Groups are a group of their own below). Every answer is
 * `application/scim+json`, every error a SCIM error body (see ScimProtocol.ts for how requests are read).
 */
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Context from "effect/Context"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import { MaxBodyBytes } from "./BodyLimit.js"
import { exampleId, type OrganizationId, ScimConnectionId, type ScimTokenId } from "./Ids.js"
import {
  ScimBadRequestResponse,
  ScimConflictResponse,
  ScimConnectionPath,
  ScimIdempotencyKeyReusedResponse,
  ScimMediaType,
  ScimForbiddenResponse,
  ScimGroupList,
  ScimGroupRequest,
  ScimGroupResponse,
  ScimPatchOpSchema,
  ScimListQuery,
  ScimNotFoundResponse,
  ScimNotModifiedResponse,
  ScimPatchRequest,
  ScimPayloadTooLargeResponse,
  ScimPreconditionFailedResponse,
  ScimResourceQuery,
  ScimResourceTypeList,
  ScimResourceTypePath,
  ScimResourceTypeResponse,
  ScimSchemaList,
  ScimSchemaPath,
  ScimSchemaResponse,
  ScimSearchRequest,
  ScimSearchRequestSchema,
  ScimServiceProviderConfigResponse,
  ScimServiceUnavailableResponse,
  ScimUnsupportedMediaTypeResponse,
  ScimUriTooLongResponse,
  ScimUserList,
  ScimUserPath,
  ScimUserRequest,
  ScimUnauthorizedResponse,
  ScimUserResponse,
  ScimWriteHeaders
} from "./ScimProtocol.js"
import { audits, notAudited } from "./AuditCatalog.js"
import type { Json, JsonObject } from "./OpenApiExamples.js"
import { isJsonObject, objectAt } from "./internal/json.js"

/**
 * A directory's request: the connection its token belongs to (the path's), in its organization.
 */
export interface ScimClient {
  readonly organizationId: OrganizationId
  readonly connectionId: ScimConnectionId
  readonly tokenId: ScimTokenId
}

export class CurrentScimClient extends Context.Service<CurrentScimClient, ScimClient>()("@orgplane/schema/CurrentScimClient") {}

export const scimToken = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "A SCIM token of this connection (`scim_…`) from `POST /v1/scim/connections/{connectionId}/tokens`, sent by the directory."
  ),
  HttpApiSecurity.annotate(OpenApi.Format, "scim-token")
)

/** The challenge of a SCIM 401 (RFC 7644 §2, RFC 6750 §3): the Bearer scheme, `error="invalid_token"` for a refused token. */
export const scimChallenge = (refusedToken: boolean) =>
  `Bearer realm="orgplane SCIM"${refusedToken ? ", error=\"invalid_token\"" : ""}`

/**
 * Headers of the protocol the platform does not document, on every SCIM operation: the 401's `WWW-Authenticate`, and
 * for a read that answers 304, its `If-None-Match` and the 304's `ETag`. (`If-None-Match` is read by the handler, not
 * declared with `setHeaders`, which would make typed clients pass `headers` to every read.)
 */
const documentHeaders = (operation: Record<string, unknown>): Record<string, unknown> => {
  const responses = objectOf(operation["responses"])
  const header = (description: string, example: string) => ({ description, schema: { type: "string" }, example })
  /** The response of `status` with `headers` added, when the operation answers it. */
  const withHeaders = (status: string, headers: Record<string, unknown>) => {
    const response = responses[status]
    return Predicate.isObject(response) ? { [status]: { ...response, headers: { ...objectOf(response["headers"]), ...headers } } } : {}
  }
  const notModified = responses["304"] !== undefined
  const parameters = Array.isArray(operation["parameters"]) ? operation["parameters"] : []
  return {
    ...operation,
    ...(notModified
      ? {
        parameters: [...parameters, {
          name: "If-None-Match",
          in: "header",
          required: false,
          description: "A `meta.version` the client has (`W/\"<n>\"`, or `*`): when it is the current one, 304 without a body (RFC 7644 §3.14).",
          schema: { type: "string" },
          examples: { version: { summary: "The version read before", value: "W/\"1\"" } }
        }]
      }
      : {}),
    responses: {
      ...responses,
      ...withHeaders("401", {
        "WWW-Authenticate": header(
          "The scheme to authenticate with (RFC 7644 §2): Bearer, with `error=\"invalid_token\"` when a token was sent and refused.",
          scimChallenge(true)
        )
      }),
      ...withHeaders("304", { ETag: header("The resource's `meta.version`.", "W/\"1\"") })
    }
  }
}

/** `value` when it is an object, else an empty one. */
const objectOf = (value: unknown): { readonly [key: string]: unknown } => Predicate.isObject(value) ? value : {}

/** The SCIM protocol's base, as the document's paths have it. */
export const scimBase = "/scim/v2/"

/** The SCIM errors standing for the API's refusals of the same status under the protocol's base. */
const scimFormOf: { readonly [name: string]: string | undefined } = {
  InvalidRequest: "ScimBadRequest",
  PayloadTooLarge: "ScimPayloadTooLarge",
  UriTooLong: "ScimUriTooLong",
  UnsupportedMediaType: "ScimUnsupportedMediaType",
  IdempotencyConflict: "ScimConflict",
  IdempotencyKeyReused: "ScimIdempotencyKeyReused"
}

/**
 * Refusals Node's parser makes before any path is read (`platform/ClientErrors.ts`: a request line or header block
 * over its limit), answered as the API's JSON errors whatever the path.
 */
const beforeAnyPath = new Set(["UriTooLong", "RequestHeaderFieldsTooLarge"])



/** The references a schema is: its own `$ref`, or those of its `anyOf`. */
const refsOf = (schema: Json | undefined): ReadonlyArray<string> => {
  if (!isJsonObject(schema)) return []
  const anyOf = schema["anyOf"]
  const ref = schema["$ref"]
  return Array.isArray(anyOf) ? anyOf.flatMap(refsOf) : typeof ref === "string" ? [ref] : []
}

const schemaOf = (refs: ReadonlyArray<string>): JsonObject =>
  refs.length === 1 ? { $ref: refs[0]! } : { anyOf: refs.map(($ref) => ({ $ref })) }

/**
 * Every error of the SCIM protocol's operations as it is sent: a SCIM error, `application/scim+json` (the platform
 * puts the errors of one status under one media type, JSON, with the API's own refusals among them, which the
 * server answers under the base as SCIM errors of the same status); `application/json` only for what Node's parser
 * refuses before a path is read (414, 431). Run on the whole document, after the API's own shaping.
 */
export const documentScimErrors = (spec: JsonObject): JsonObject => {
  const components = objectAt(objectAt(spec, "components"), "schemas")
  for (const [path, item] of Object.entries(objectAt(spec, "paths") ?? {})) {
    if (!path.startsWith(scimBase) || !isJsonObject(item)) continue
    for (const operation of Object.values(item)) {
      if (!isJsonObject(operation)) continue
      // The group declares the SCIM 422 for all its operations; it stays where the API's idempotency keys are taken.
      const parameters = operation["parameters"]
      const takesKey = (Array.isArray(parameters) ? parameters : []).some((parameter) => isJsonObject(parameter) && parameter["name"] === "Idempotency-Key")
      const responses = objectAt(operation, "responses")
      for (const [status, response] of Object.entries(responses ?? {})) {
        const content = objectAt(response, "content")
        if (!/^[45]/.test(status) || !isJsonObject(response) || content === undefined) continue
        const refs = Object.values(content).flatMap((media) => refsOf(isJsonObject(media) ? media["schema"] : undefined))
        const name = (ref: string) => ref.slice("#/components/schemas/".length)
        const scim = new Set<string>()
        const json = new Set<string>()
        for (const ref of refs) {
          if (name(ref) === "ScimIdempotencyKeyReused" && !takesKey) continue
          if (name(ref).startsWith("Scim")) scim.add(ref)
          else if (beforeAnyPath.has(name(ref))) json.add(ref)
          const form = scimFormOf[name(ref)]
          if (form !== undefined) scim.add(`#/components/schemas/${form}`)
        }
        for (const ref of [...scim, ...json]) {
          if (components?.[name(ref)] === undefined) throw new Error(`${path} ${status}: no component ${ref}`)
        }
        if (scim.size === 0 && json.size === 0) {
          if (responses !== undefined) delete responses[status]
          continue
        }
        response["content"] = {
          ...(scim.size > 0 ? { [ScimMediaType]: { schema: schemaOf([...scim]) } } : {}),
          ...(json.size > 0 ? { "application/json": { schema: schemaOf([...json]) } } : {})
        }
      }
    }
  }
  return spec
}

/** A non-revoked, unexpired token of the path's connection; anything else is a SCIM 401 (403 off the enterprise plan). */
export class ScimAuthentication extends HttpApiMiddleware.Service<ScimAuthentication, { provides: CurrentScimClient }>()(
  "ScimAuthentication",
  { error: [ScimUnauthorizedResponse, ScimForbiddenResponse, ScimServiceUnavailableResponse], security: { scimToken } }
) {}

const base = "/scim/v2/:connectionId"

/**
 * How SCIM requests are read: with Schema's defaults (their schemas set no parse options).
 * Members a body or query does not declare are ignored, as directories send more (RFC 7644 §3.3), not refused as the
 * API's own request bodies are: Effect 4 reads parse options from the API, a group or an endpoint, here the groups'.
 */
const scimParseOptions: SchemaAST.ParseOptions = {}

/** The errors every operation of ScimDiscoveryApi may answer (Effect 4 declares errors on endpoints, not groups). */
const discoveryErrors = [ScimBadRequestResponse, ScimUriTooLongResponse] as const

export class ScimDiscoveryApi extends HttpApiGroup.make("scimDiscovery")
  .add(
    HttpApiEndpoint.get("serviceProviderConfig", `${base}/ServiceProviderConfig`, { params: ScimConnectionPath, success: ScimServiceProviderConfigResponse, error: discoveryErrors })
      .annotate(OpenApi.Summary, "SCIM service provider configuration")
      .annotate(
        OpenApi.Description,
        "What the server supports, truthfully: PATCH, filters (at most 1000 results a page) and ETags; no bulk, sort or password change. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("listSchemas", `${base}/Schemas`, { params: ScimConnectionPath, success: ScimSchemaList, error: discoveryErrors })
      .annotate(OpenApi.Summary, "List SCIM schemas")
      .annotate(
        OpenApi.Description,
        "The User schema, its enterprise extension and the Group schema, with exactly the attributes the server stores and returns. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("getSchema", `${base}/Schemas/:schemaId`, { params: ScimSchemaPath, success: ScimSchemaResponse, error: [ScimNotFoundResponse, ...discoveryErrors] })
      .annotate(OpenApi.Summary, "Get a SCIM schema")
      .annotate(OpenApi.Description, "One schema by its URN. Changes nothing.\n\nErrors: 404 for a URN the server does not advertise.")
  )
  .add(
    HttpApiEndpoint.get("listResourceTypes", `${base}/ResourceTypes`, { params: ScimConnectionPath, success: ScimResourceTypeList, error: discoveryErrors })
      .annotate(OpenApi.Summary, "List SCIM resource types")
      .annotate(OpenApi.Description, "User (with the enterprise extension) and Group. Changes nothing.\n\nErrors: none beyond the group's.")
  )
  .add(
    HttpApiEndpoint.get("getResourceType", `${base}/ResourceTypes/:name`, { params: ScimResourceTypePath, success: ScimResourceTypeResponse, error: [ScimNotFoundResponse, ...discoveryErrors] })
      .annotate(OpenApi.Summary, "Get a SCIM resource type")
      .annotate(OpenApi.Description, "`User` or `Group`. Changes nothing.\n\nErrors: 404 for another name.")
  )
  .middleware(ScimAuthentication)
  .annotateEndpoints(OpenApi.Transform, documentHeaders)
  .annotate(
    OpenApi.Description,
    "SCIM discovery (RFC 7644 §4) of a connection, generated from the one table of advertised attributes. Errors every operation may answer: 401 (a token that is not one of this connection's, with `WWW-Authenticate`), 503 with `Retry-After`, as SCIM error bodies. Under the base, a path the server does not serve answers a SCIM 404 (root-level `/.search`, which RFC 7644 §3.4.3 makes optional, among them: search `/Users/.search` and `/Groups/.search`; `/Bulk`, not supported), and a method a path does not take a SCIM 405 with `Allow`."
  )
{}

const userErrors = "404 when the User is not one of this connection's (or was deleted)"

/**
 * The errors every operation of ScimUsersApi and ScimGroupsApi may answer (Effect 4 declares errors on endpoints, not
 * groups).
 */
const resourceErrors = [
  ScimBadRequestResponse,
  ScimServiceUnavailableResponse,
  ScimPayloadTooLargeResponse,
  ScimUriTooLongResponse,
  ScimUnsupportedMediaTypeResponse,
  ScimIdempotencyKeyReusedResponse
] as const

export class ScimUsersApi extends HttpApiGroup.make("scimUsers")
  .add(
    HttpApiEndpoint.post("create", `${base}/Users`, { params: ScimConnectionPath, payload: ScimUserRequest, success: ScimUserResponse.pipe(HttpApiSchema.status(201)), error: [ScimNotFoundResponse, ScimConflictResponse, ...resourceErrors] }).pipe(audits("scim.user.provision"))
      .annotate(OpenApi.Summary, "Create a SCIM User")
      .annotate(
        OpenApi.Description,
        "Provisions a person as a member of the organization: the account with the User's email (the primary one, else the first, else `userName` when it is an email) is found or created without a password, and becomes a member with the connection's default role; a person already a member is linked instead. A User needs an email, in `emails` or as its `userName`; `primary` is true on one email at most (RFC 7643 §2.4). `active: false` creates the member suspended.\n\nErrors: 400 `invalidValue` for a missing `userName`, a wrong type, no email or several primary emails; 404 when the connection was deleted meanwhile; 409 `uniqueness` when a User of this connection has the `userName` (compared case-insensitively) or the `externalId`, or the person's membership is another connection's User."
      )
  )
  .add(
    HttpApiEndpoint.get("list", `${base}/Users`, { params: ScimConnectionPath, query: ScimListQuery, success: ScimUserList, error: resourceErrors })
      .annotate(OpenApi.Summary, "List SCIM Users")
      .annotate(
        OpenApi.Description,
        "The connection's Users, oldest first, filtered (RFC 7644 filters on userName, externalId, id, emails, active, displayName, name, title, the enterprise attributes, meta.created and meta.lastModified) and paged by `startIndex`/`count`. Changes nothing.\n\nErrors: 400 `invalidFilter` for a filter that is malformed or names an attribute the server does not filter on, `invalidValue` for a `startIndex` or `count` that is not a number."
      )
  )
  .add(
    HttpApiEndpoint.post("search", `${base}/Users/.search`, { params: ScimConnectionPath, payload: ScimSearchRequest, success: ScimUserList, error: resourceErrors }).pipe(notAudited("a search sent as POST (RFC 7644 §3.4.3); it reads"))
      .annotate(OpenApi.Summary, "Search SCIM Users")
      .annotate(
        OpenApi.Description,
        "The list of Users with its parameters in a SearchRequest body (RFC 7644 §3.4.3). Changes nothing.\n\nErrors: as the list's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", `${base}/Users/:userId`, { params: ScimUserPath, query: ScimResourceQuery, success: ScimUserResponse, error: [ScimNotModifiedResponse, ScimNotFoundResponse, ...resourceErrors] })
      .annotate(OpenApi.Summary, "Get a SCIM User")
      .annotate(
        OpenApi.Description,
        `One User, projected by \`attributes\`/\`excludedAttributes\`, with its \`meta.version\` as \`ETag\`. Changes nothing.\n\nAnswers: 304 without a body when \`If-None-Match\` names the User's \`meta.version\` (RFC 7644 §3.14). Errors: ${userErrors}.`
      )
  )
  .add(
    HttpApiEndpoint.put("replace", `${base}/Users/:userId`, { params: ScimUserPath, headers: ScimWriteHeaders, payload: ScimUserRequest, success: ScimUserResponse, error: [ScimNotFoundResponse, ScimConflictResponse, ScimPreconditionFailedResponse, ...resourceErrors] }).pipe(audits("scim.user.update"))
      .annotate(OpenApi.Summary, "Replace a SCIM User")
      .annotate(
        OpenApi.Description,
        `Replaces the User's attributes with the body's (Okta's full replace; \`password\` ignored, \`active\` kept when absent); \`active\` false suspends the membership, true restores it.\n\nErrors: 400 \`invalidValue\` (a wrong type, several primary emails); ${userErrors}; 409 \`uniqueness\`; 412 when \`If-Match\` is not the User's \`meta.version\`.`
      )
  )
  .add(
    HttpApiEndpoint.patch("patch", `${base}/Users/:userId`, { params: ScimUserPath, headers: ScimWriteHeaders, payload: ScimPatchRequest, success: ScimUserResponse, error: [ScimNotFoundResponse, ScimConflictResponse, ScimPreconditionFailedResponse, ...resourceErrors] }).pipe(audits("scim.user.update"))
      .annotate(OpenApi.Summary, "Patch a SCIM User")
      .annotate(
        OpenApi.Description,
        `Applies a PatchOp as Okta and Entra send it (ops in any case, \`"True"\`/\`"False"\` strings, no-path values with dotted and value-filter keys, enterprise URN paths); \`active\` false suspends the membership (sessions in the organization, its API keys and credentials revoked), true restores it. Making an email primary makes the others not (RFC 7644 §3.5.2). A no-path replace whose value-filter key matches no email (Entra's form) adds it.\n\nErrors: 400 \`invalidPath\` for a path the server does not advertise, \`mutability\` for a read-only one, \`noTarget\` for a remove or replace whose value filter matches nothing (RFC 7644 §3.5.2.3), \`invalidValue\` for a value of the wrong type or an operation making several emails primary, \`invalidSyntax\` for an unknown op; ${userErrors}; 409 \`uniqueness\`; 412 when \`If-Match\` is not the User's \`meta.version\`.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", `${base}/Users/:userId`, { params: ScimUserPath, headers: ScimWriteHeaders, success: HttpApiSchema.NoContent, error: [ScimNotFoundResponse, ScimPreconditionFailedResponse, ...resourceErrors] }).pipe(audits("scim.user.deprovision"))
      .annotate(OpenApi.Summary, "Delete a SCIM User")
      .annotate(
        OpenApi.Description,
        `Deprovisions the User: the membership is removed (it leaves its teams, its API keys are revoked) and stays marked as deprovisioned, so neither SSO nor an invitation brings the person back until the directory creates them again; the person's account is never deleted.\n\nErrors: ${userErrors}; 412 when \`If-Match\` is not the User's \`meta.version\`.`
      )
  )
  .middleware(ScimAuthentication)
  .annotateEndpoints(OpenApi.Transform, documentHeaders)
  .annotate(HttpApi.PayloadParseOptions, scimParseOptions)
  .annotate(HttpApi.QueryParseOptions, scimParseOptions)
  .annotate(
    OpenApi.Description,
    "SCIM Users (RFC 7644 §3) of a connection: each is a member of the organization, its `id` the membership's `om_` id. Errors every operation may answer: 400 SCIM errors for malformed input, 401 (a token that is not one of this connection's, with `WWW-Authenticate`), 503 with `Retry-After` (directories retry), as SCIM error bodies; so are the API's refusals made before the SCIM handlers (413, 414, 415 and an `Idempotency-Key`'s 409 or 422), all `application/scim+json` but for what Node's parser refuses before reading a path (a request line or header block over its limit: 414, 431, the API's JSON errors)."
  )
{}

/**
 * The largest Group body (POST, PUT, PATCH): 4 MiB, room for 10,000 members sent with `display` and `$ref` (about
 * 250 bytes each); other SCIM bodies keep the server's default.
 */
export const ScimGroupBodyBytes = 4 * 1024 * 1024

const exampleConnection = exampleId("scc")
const exampleGroupId = exampleId("scg")
const exampleMember = exampleId("om", 3)

/** The queries and search of Groups, shown with a Group's attributes (a User's are an `invalidFilter` there). */
const GroupListQuery = ScimListQuery.annotate({
  examples: [{
    filter: "displayName eq \"Engineering\"",
    startIndex: "1",
    count: "100",
    attributes: "displayName,externalId",
    excludedAttributes: "members"
  }]
})
const GroupQuery = ScimResourceQuery.annotate({ examples: [{ attributes: "displayName,members", excludedAttributes: "members.display" }] })
const GroupSearchRequest = ScimSearchRequest.annotate({
  examples: [{ schemas: [ScimSearchRequestSchema], filter: "displayName eq \"Engineering\"", startIndex: 1, count: 10, excludedAttributes: "members" }]
})

const GroupPatchRequest = ScimPatchRequest.annotate({
  examples: [{
    schemas: [ScimPatchOpSchema],
    Operations: [{ op: "Add", path: "members", value: [{ value: exampleMember }] }]
  }]
})

/** A Group's path: the id is checked by the server (a malformed one is a 404 like a missing one). */
export const ScimGroupPath = Schema.Struct({ connectionId: ScimConnectionId, groupId: Schema.String }).annotate({
  examples: [{ connectionId: exampleConnection, groupId: exampleGroupId }]
})

const writeErrors = "400 `invalidValue` (a member that is not a User of this connection, a wrong type; nothing is written), `invalidSyntax`; 409 `uniqueness` (another group of the connection has the displayName, compared case-insensitively, or the externalId)"


export class ScimGroupsApi extends HttpApiGroup.make("scimGroups")
  .add(
    HttpApiEndpoint.post("create", `${base}/Groups`, { params: ScimConnectionPath, payload: ScimGroupRequest, success: ScimGroupResponse.pipe(HttpApiSchema.status(201)), error: [ScimNotFoundResponse, ScimConflictResponse, ...resourceErrors] }).pipe(audits("scim.group.provision"))
      .annotate(MaxBodyBytes, ScimGroupBodyBytes)
      .annotate(OpenApi.Summary, "Create a SCIM group")
      .annotate(
        OpenApi.Description,
        `Creates a Group with its members (Users of this connection). Per the connection's group mapping mode: \`metadata_only\` makes no team; \`create_teams\` creates a team named after the group (\`"<name> (SCIM)"\` when the organization has a team of that name), owned by the connection; \`link_by_external_key\` maps the group onto the team whose external key is the group's externalId (none: no team). The team holds the group's active members. A group name grants no role unless a role rule of the connection names it. Bodies up to 4 MiB (10,000 members).\n\nErrors: ${writeErrors}; 404 when the connection no longer exists.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", `${base}/Groups`, { params: ScimConnectionPath, query: GroupListQuery, success: ScimGroupList, error: [ScimNotFoundResponse, ...resourceErrors] })
      .annotate(OpenApi.Summary, "List SCIM groups")
      .annotate(
        OpenApi.Description,
        "The connection's Groups in creation order, filtered (displayName, externalId, members.value, meta.created, meta.lastModified, id), paged by 1-based `startIndex` and `count` (default 100, at most 1000), projected by `attributes`/`excludedAttributes` (`excludedAttributes=members`, as Entra sends it, does not read the members at all). Changes nothing.\n\nErrors: 400 `invalidFilter`; 404 when the connection no longer exists."
      )
  )
  .add(
    HttpApiEndpoint.post("search", `${base}/Groups/.search`, { params: ScimConnectionPath, payload: GroupSearchRequest, success: ScimGroupList, error: [ScimNotFoundResponse, ...resourceErrors] }).pipe(notAudited("a search sent as POST (RFC 7644 §3.4.3); it reads"))
      .annotate(OpenApi.Summary, "Search SCIM groups")
      .annotate(
        OpenApi.Description,
        "The list of Groups with the query in a SearchRequest body (RFC 7644 §3.4.3), as GET's. Changes nothing.\n\nErrors: 400 `invalidFilter`; 404 when the connection no longer exists."
      )
  )
  .add(
    HttpApiEndpoint.get("get", `${base}/Groups/:groupId`, { params: ScimGroupPath, query: GroupQuery, success: ScimGroupResponse, error: [ScimNotModifiedResponse, ScimNotFoundResponse, ...resourceErrors] })
      .annotate(OpenApi.Summary, "Get a SCIM group")
      .annotate(
        OpenApi.Description,
        "One Group with its members, projected by `attributes`/`excludedAttributes`, with its `meta.version` as `ETag`. Changes nothing.\n\nAnswers: 304 without a body when `If-None-Match` names the Group's `meta.version` (RFC 7644 §3.14). Errors: 404 when the connection has no such group."
      )
  )
  .add(
    HttpApiEndpoint.put("replace", `${base}/Groups/:groupId`, { params: ScimGroupPath, headers: ScimWriteHeaders, payload: ScimGroupRequest, success: ScimGroupResponse, error: [ScimNotFoundResponse, ScimConflictResponse, ScimPreconditionFailedResponse, ...resourceErrors] }).pipe(audits("scim.group.update"))
      .annotate(MaxBodyBytes, ScimGroupBodyBytes)
      .annotate(OpenApi.Summary, "Replace a SCIM group")
      .annotate(
        OpenApi.Description,
        `Replaces the Group: displayName, externalId and the whole member list (absent members: none), as Okta sends a rename. A team the directory created is renamed with it; the team's members follow.\n\nErrors: ${writeErrors}; 404 when the connection has no such group; 412 when \`If-Match\` names another version.`
      )
  )
  .add(
    HttpApiEndpoint.patch("patch", `${base}/Groups/:groupId`, { params: ScimGroupPath, headers: ScimWriteHeaders, payload: GroupPatchRequest, success: ScimGroupResponse, error: [ScimNotFoundResponse, ScimConflictResponse, ScimPreconditionFailedResponse, ...resourceErrors] }).pipe(audits("scim.group.update"))
      .annotate(MaxBodyBytes, ScimGroupBodyBytes)
      .annotate(OpenApi.Summary, "Patch a SCIM group")
      .annotate(
        OpenApi.Description,
        `Applies a PatchOp as Okta and Entra send it: ops in any case; \`members\` add (these), replace (exactly these), remove (with a value: these; without: all); \`members[value eq "…"]\` remove; \`displayName\` and \`externalId\`; a no-path add or replace with an object value. All operations form one change, written in one transaction with set-based statements (a 10,000-member add is a few statements).\n\nErrors: ${writeErrors}, \`invalidPath\` (an attribute the Group does not have, a filter other than \`value eq\`), \`mutability\` (id, meta, removing displayName), \`noTarget\` (a remove without a path); 404 when the connection has no such group; 412 when \`If-Match\` names another version.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", `${base}/Groups/:groupId`, { params: ScimGroupPath, headers: ScimWriteHeaders, success: HttpApiSchema.NoContent, error: [ScimNotFoundResponse, ScimPreconditionFailedResponse, ...resourceErrors] }).pipe(audits("scim.group.delete"))
      .annotate(OpenApi.Summary, "Delete a SCIM group")
      .annotate(
        OpenApi.Description,
        "Deletes the Group. A team the directory created is not deleted: it stays, with its members, as an ordinary team the organization manages again; a linked team is released the same way. Roles given by the connection's rules follow the members' remaining groups.\n\nErrors: 404 when the connection has no such group; 412 when `If-Match` names another version."
      )
  )
  .middleware(ScimAuthentication)
  .annotateEndpoints(OpenApi.Transform, documentHeaders)
  .annotate(HttpApi.PayloadParseOptions, scimParseOptions)
  .annotate(HttpApi.QueryParseOptions, scimParseOptions)
  .annotate(
    OpenApi.Description,
    "SCIM Groups (RFC 7643 §4.2) of a connection, mapped onto teams per its group mapping mode. Errors every operation may answer: 400 SCIM errors for malformed input, 401 (a token that is not one of this connection's, with `WWW-Authenticate`), 503 with `Retry-After` (directories retry), as SCIM error bodies; so are the API's refusals made before the SCIM handlers (413, 414, 415 and an `Idempotency-Key`'s 409 or 422), all `application/scim+json` but for what Node's parser refuses before reading a path (a request line or header block over its limit: 414, 431, the API's JSON errors)."
  )
{}
