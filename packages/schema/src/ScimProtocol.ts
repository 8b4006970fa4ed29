/**
 * The SCIM 2.0 protocol's messages (RFC 7643/7644) as the server answers them under `/scim/v2/{connectionId}`: the
 * User and Group resources, list responses, PatchOp and SearchRequest bodies, the discovery documents and the SCIM
 * error bodies, all `application/scim+json`.
 *
 * Requests are lenient where directories are: a resource body is any JSON object; the server reads the attributes it
 * advertises (names without case, `"True"`/`"False"` strings as booleans) and ignores the others (RFC 7644 §3.3 lets
 * it; Okta and Entra send attributes such as `locale` or `phoneNumbers` the server does not keep). A wrong type of an
 * advertised attribute is 400 `invalidValue`; a PATCH path or a filter naming an attribute the server does not
 * advertise is 400 `invalidPath` / `invalidFilter`. `password` is accepted and ignored: never stored, never returned.
 * What the server reads is bounded (ScimAttributes.ts: 2048 characters a string or PATCH path, 10,000 values a
 * multi-valued attribute, 1000 operations a PatchOp, 4096 characters a filter); beyond, 400 `invalidValue`,
 * `invalidPath` or `invalidFilter`. The few members checked in decoding (attribute lists, a message's `schemas`, the
 * types of a PatchOp or SearchRequest) answer the API's 400 `invalid_request`, naming them.
 */
import * as Effect from "effect/Effect"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import type * as JsonSchema from "effect/JsonSchema"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaGetter from "effect/SchemaGetter"
import type * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaParser from "effect/SchemaParser"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { exampleTime } from "./Examples.js"
import { exampleId, ScimConnectionId } from "./Ids.js"
import * as ScimAttributes from "./ScimAttributes.js"
import { publishedAs } from "./internal/published.js"

/** The media type of every SCIM answer. */
export const ScimMediaType = "application/scim+json"
/** Answers the schema as `application/scim+json`. */
export const scimJson = <S extends Schema.Top>(schema: S): S["Rebuild"] =>
  schema.pipe(HttpApiSchema.asJson({ contentType: ScimMediaType }))

export const ScimErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error"
export const ScimListResponseSchema = "urn:ietf:params:scim:api:messages:2.0:ListResponse"
export const ScimPatchOpSchema = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
export const ScimSearchRequestSchema = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"
export const ScimUserSchema = ScimAttributes.UserSchemaId
export const ScimEnterpriseUserSchema = ScimAttributes.EnterpriseUserSchemaId
export const ScimGroupSchema = ScimAttributes.GroupSchemaId

/** The `scimType` values of RFC 7644 §3.12 the server uses. */
export const ScimType = Schema.Literals([
  "invalidFilter",
  "tooMany",
  "uniqueness",
  "mutability",
  "invalidSyntax",
  "invalidPath",
  "noTarget",
  "invalidValue",
  "invalidVers",
  "sensitive"
])
export type ScimType = typeof ScimType.Type

/**
 * An optional member as SCIM has it: left out, or `undefined` in code, and left out on the wire. Effect 4's
 * `Schema.optional` would read a JSON `null` as `undefined` and write `undefined` as `null`, which no SCIM message
 * carries: the wire side is `optionalKey`, and an `undefined` value is left out when encoding.
 */
const optional = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(schema).pipe(
    Schema.decodeTo(Schema.optional(Schema.toType(schema)), {
      decode: SchemaGetter.passthrough(),
      encode: SchemaGetter.transformOptional(Option.filter((value) => value !== undefined))
    })
  )

/**
 * What the document states of a value the server reads itself, beyond what decoding checks: a check every value
 * passes, carrying the JSON Schema keywords (Effect 4 has no `jsonSchema` override annotation).
 */
const documented = (jsonSchema: JsonSchema.JsonSchema) => Schema.makeFilter<unknown>(() => true, { toJsonSchema: () => jsonSchema })

/**
 * A body's JSON Schema saying it takes members beyond its own (it ignores them, as its endpoints' parse options do):
 * Effect 4 writes every struct closed, so this check goes beside it, and the document writes it on the struct
 * (OpenApiComponents' `arrayChecksInline`).
 */
const open = documented({ additionalProperties: true })

const constant = <const C extends string>(value: C) => Schema.Literal(value).pipe(Schema.withConstructorDefault(Effect.succeed(value)))
// Documented as an array of its one item (not `prefixItems` with `items: false`, which tools read poorly): the wire
// side is that array, the value the one-item tuple.
const errorSchemas = Schema.Array(Schema.Literal(ScimErrorSchema)).check(Schema.isMinLength(1), Schema.isMaxLength(1)).pipe(
  Schema.decodeTo(Schema.Tuple([Schema.Literal(ScimErrorSchema)]), SchemaTransformation.passthroughSupertype()),
  Schema.withConstructorDefault(Effect.succeed([ScimErrorSchema] as const))
)

const registry = new Map<Function, Schema.Top>()

/** The wire schema of a SCIM error, or undefined for anything else. */
export const scimErrorResponseOf = (error: unknown): Schema.Top | undefined =>
  typeof error === "object" && error !== null ? registry.get(error.constructor) : undefined

/** The members of a SCIM error body: its class's fields without `_tag`. */
export type BodyFields<Fields extends Schema.Struct.Fields> = Omit<Fields, "_tag">

/** What `wire` needs of a SCIM error class: a schema of its instances, made from the body's decoded members. */
export interface ScimErrorClass<Self, Fields extends Schema.Struct.Fields> extends Schema.Top {
  readonly Type: Self
  readonly fields: Fields
  new(props: Schema.Struct.Type<BodyFields<Fields>>): Self
}

/**
 * The wire form of a SCIM error: `{schemas, status, scimType?, detail}` as `application/scim+json`, named as its class
 * (the document's `ScimBadRequest`…). Decodes to an instance; encodes an instance's defined members, read by name (an
 * Effect 4 error's `message` is not enumerable) and typed through the body's Type.
 */
const wire = <Self extends { readonly _tag: string }, Fields extends Schema.Struct.Fields>(
  cls: ScimErrorClass<Self, Fields>,
  status: number,
  description: string
) => {
  const { _tag, ...fields } = cls.fields
  const identifier = SchemaAST.resolveIdentifier(cls.ast)
  const body = Schema.Struct(fields).annotate(identifier === undefined ? { description } : { identifier, description })
  const asBody = SchemaParser.decodeUnknownEffect(Schema.toType(body))
  const make = (decoded: unknown): Effect.Effect<Self, SchemaIssue.Issue> => Effect.map(asBody(decoded), (members) => new cls(members))
  const members = (error: Self): Record<string, unknown> => {
    const out: Record<string, unknown> = {}
    for (const name of Object.keys(fields)) {
      const value: unknown = Reflect.get(error, name)
      if (value !== undefined) out[name] = value
    }
    return out
  }
  const response = body.pipe(
    Schema.decodeTo(Schema.toType(cls), {
      decode: SchemaGetter.transformEffect(make),
      encode: SchemaGetter.transformEffect((error: Self) => asBody(members(error)))
    }),
    HttpApiSchema.status(status),
    scimJson
  )
  registry.set(cls, response)
  return response
}

const errorFields = <const S extends string>(status: S) => ({
  schemas: errorSchemas,
  status: constant(status),
  scimType: optional(ScimType),
  detail: Schema.String
})

export class ScimBadRequest extends Schema.TaggedError<ScimBadRequest>("ScimBadRequest")("ScimBadRequest", errorFields("400")) {}
export const ScimBadRequestResponse = wire(
  ScimBadRequest,
  400,
  "The request is not valid SCIM: `scimType` says why (`invalidFilter`, `invalidSyntax`, `invalidPath`, `invalidValue`, `mutability`, `noTarget`, `tooMany`)."
)

export class ScimUnauthorized extends Schema.TaggedError<ScimUnauthorized>("ScimUnauthorized")("ScimUnauthorized", errorFields("401")) {}
export const ScimUnauthorizedResponse = wire(
  ScimUnauthorized,
  401,
  "The bearer token is missing, unknown, expired, revoked or not a token of this connection."
)

export class ScimForbidden extends Schema.TaggedError<ScimForbidden>("ScimForbidden")("ScimForbidden", errorFields("403")) {}
export const ScimForbiddenResponse = wire(ScimForbidden, 403, "The connection may not do this (its organization's plan, for one).")

export class ScimNotFound extends Schema.TaggedError<ScimNotFound>("ScimNotFound")("ScimNotFound", errorFields("404")) {}
export const ScimNotFoundResponse = wire(ScimNotFound, 404, "No such resource in this connection, or no such SCIM endpoint.")

/**
 * A method the path does not take (`DELETE /ServiceProviderConfig`), with `Allow` listing those it does: a SCIM error
 * like every refusal under the protocol's base, which no operation declares (405 belongs to none: the API's
 * description states it).
 */
export class ScimMethodNotAllowed
  extends Schema.TaggedError<ScimMethodNotAllowed>("ScimMethodNotAllowed")("ScimMethodNotAllowed", errorFields("405"))
{}
export const ScimMethodNotAllowedResponse = wire(
  ScimMethodNotAllowed,
  405,
  "The path does not take this method; the `Allow` header lists those it takes."
)

/**
 * A GET whose `If-None-Match` names the resource's current version (RFC 7644 §3.14): 304 without a body, the version
 * in the `ETag` header.
 */
export class ScimNotModified extends Schema.TaggedError<ScimNotModified>("ScimNotModified")("ScimNotModified", {}) {}
export const ScimNotModifiedResponse = ScimNotModified.pipe(
  HttpApiSchema.asNoContent({ decode: () => new ScimNotModified() }),
  HttpApiSchema.status(304)
).annotate({
  description: "`If-None-Match` names the resource's current version: no body; `ETag` is that version."
})

export class ScimConflict extends Schema.TaggedError<ScimConflict>("ScimConflict")("ScimConflict", errorFields("409")) {}
export const ScimConflictResponse = wire(
  ScimConflict,
  409,
  "`uniqueness`: another resource of the connection has this userName, displayName or externalId. Without `scimType`: the `Idempotency-Key` is in use by a request still running (retry after `Retry-After` seconds)."
)

export class ScimPreconditionFailed
  extends Schema.TaggedError<ScimPreconditionFailed>("ScimPreconditionFailed")("ScimPreconditionFailed", errorFields("412"))
{}
export const ScimPreconditionFailedResponse = wire(
  ScimPreconditionFailed,
  412,
  "`If-Match` names a version the resource no longer has: read it again and retry."
)

/*
 * What the server refuses before the SCIM handlers (the request guard, `Idempotency-Key`), answered under the
 * protocol's base as a SCIM error of the same status (RFC 7644 §3.12): a directory's client reads only those. The
 * 400 is `ScimBadRequest` (`invalidSyntax`), a key in use the 409 `ScimConflict` without `scimType`.
 */
export class ScimPayloadTooLarge
  extends Schema.TaggedError<ScimPayloadTooLarge>("ScimPayloadTooLarge")("ScimPayloadTooLarge", errorFields("413"))
{}
export const ScimPayloadTooLargeResponse = wire(ScimPayloadTooLarge, 413, "The request body is larger than the server accepts.")

export class ScimUriTooLong extends Schema.TaggedError<ScimUriTooLong>("ScimUriTooLong")("ScimUriTooLong", errorFields("414")) {}
export const ScimUriTooLongResponse = wire(ScimUriTooLong, 414, "The request's URL (path and query) is longer than the server accepts.")

export class ScimUnsupportedMediaType
  extends Schema.TaggedError<ScimUnsupportedMediaType>("ScimUnsupportedMediaType")("ScimUnsupportedMediaType", errorFields("415"))
{}
export const ScimUnsupportedMediaTypeResponse = wire(
  ScimUnsupportedMediaType,
  415,
  "The request body is not JSON (`application/scim+json` or `application/json`, UTF-8), or came without a `Content-Type`."
)

export class ScimIdempotencyKeyReused
  extends Schema.TaggedError<ScimIdempotencyKeyReused>("ScimIdempotencyKeyReused")("ScimIdempotencyKeyReused", errorFields("422"))
{}
export const ScimIdempotencyKeyReusedResponse = wire(
  ScimIdempotencyKeyReused,
  422,
  "The `Idempotency-Key` was sent before with another method, path, query or body."
)

export class ScimInternalError
  extends Schema.TaggedError<ScimInternalError>("ScimInternalError")("ScimInternalError", errorFields("500"))
{}
export const ScimInternalErrorResponse = wire(ScimInternalError, 500, "The server failed; the failure is logged.")

export class ScimServiceUnavailable
  extends Schema.TaggedError<ScimServiceUnavailable>("ScimServiceUnavailable")("ScimServiceUnavailable", errorFields("503"))
{}
export const ScimServiceUnavailableResponse = wire(
  ScimServiceUnavailable,
  503,
  "The server cannot complete the request right now (its database): retry after `Retry-After` seconds."
)

/** `meta` of a resource: its version is the ETag (`W/"<n>"`) that `If-Match` compares. */
export const ScimMeta = Schema.Struct({
  resourceType: Schema.String,
  created: optional(Schema.String),
  lastModified: optional(Schema.String),
  location: optional(Schema.String),
  version: optional(Schema.String)
}).annotate({ identifier: "ScimMeta" })

const optionalString = optional(Schema.String)

export const ScimName = Schema.Struct({
  formatted: optionalString,
  familyName: optionalString,
  givenName: optionalString
}).annotate({ identifier: "ScimName" })

export const ScimEmail = Schema.Struct({
  value: optionalString,
  type: optionalString,
  primary: optional(Schema.Boolean)
}).annotate({ identifier: "ScimEmail" })

export const ScimEnterpriseUser = Schema.Struct({
  employeeNumber: optionalString,
  department: optionalString,
  manager: optional(Schema.Struct({ value: optionalString, displayName: optionalString }))
}).annotate({ identifier: "ScimEnterpriseUser" })

const exampleUserId = exampleId("om", 3)
const exampleConnection = exampleId("scc")
const exampleBase = `https://orgplane.example/scim/v2/${exampleConnection}`

/** Alan as the directory provisioned him, as the server answers him. */
const exampleUser = {
  schemas: [ScimUserSchema, ScimEnterpriseUserSchema],
  id: exampleUserId,
  externalId: "00u1alan",
  userName: "alan@acme.example",
  name: { givenName: "Alan", familyName: "Turing" },
  displayName: "Alan Turing",
  active: true,
  emails: [{ value: "alan@acme.example", type: "work", primary: true }],
  [ScimEnterpriseUserSchema]: { department: "Research" },
  meta: {
    resourceType: "User",
    created: exampleTime(30).toISOString(),
    lastModified: exampleTime(30).toISOString(),
    location: `${exampleBase}/Users/${exampleUserId}`,
    version: "W/\"1\""
  }
}

/**
 * A SCIM User as the server answers it: the membership (`id` is its `om_` id) with the attributes the directory sent
 * that the server advertises. What `attributes`/`excludedAttributes` leave out is absent; `id`, `schemas` and `meta`
 * are always present.
 */
export const ScimUser = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  externalId: optionalString,
  userName: optionalString,
  name: optional(ScimName),
  displayName: optionalString,
  title: optionalString,
  active: optional(Schema.Boolean),
  emails: optional(Schema.Array(ScimEmail)),
  [ScimEnterpriseUserSchema]: optional(ScimEnterpriseUser),
  meta: ScimMeta
}).annotate({
  identifier: "ScimUser",
  examples: [exampleUser]
})
export type ScimUser = typeof ScimUser.Type

const exampleGroupId = exampleId("scg")

/** Engineering, with Alan, as the server answers it. */
const exampleGroup = {
  schemas: [ScimGroupSchema],
  id: exampleGroupId,
  externalId: "00g1engineering",
  displayName: "Engineering",
  members: [{ value: exampleUserId, display: "Alan Turing", $ref: `${exampleBase}/Users/${exampleUserId}`, type: "User" }],
  meta: {
    resourceType: "Group",
    created: exampleTime(30).toISOString(),
    lastModified: exampleTime(30).toISOString(),
    location: `${exampleBase}/Groups/${exampleGroupId}`,
    version: "W/\"1\""
  }
}

/** A SCIM Group as the server answers it (`id` is its `scg_` id). */
export const ScimGroup = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  externalId: optionalString,
  displayName: optionalString,
  members: optional(Schema.Array(Schema.Struct({
    value: Schema.String,
    display: optionalString,
    $ref: optionalString,
    type: optionalString
  }))),
  meta: ScimMeta
}).annotate({
  identifier: "ScimGroup",
  examples: [exampleGroup]
})
export type ScimGroup = typeof ScimGroup.Type

/**
 * A resource as a directory sends it (POST, PUT): any JSON object; see the module comment for what is read. The JSON
 * schema documents the attributes the server keeps.
 */
export const ScimResourceRequest = (identifier: string, description: string, properties: Record<string, unknown>, required: ReadonlyArray<string>) =>
  Schema.Record(Schema.String, Schema.Unknown).check(documented({ required, properties, additionalProperties: true })).annotate({
    identifier,
    description,
    // Published where used as this JSON Schema alone (its identifier and description not written in it).
    ...publishedAs({ type: "object", required, properties, additionalProperties: true })
  })

/** A string the server reads: at most `MaxStringLength` characters (beyond, 400 `invalidValue`). */
const text = (extra: Record<string, unknown> = {}) => ({ type: "string", maxLength: ScimAttributes.MaxStringLength, ...extra })
/** A complex attribute: sub-attributes the server does not keep are ignored. */
const complex = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "object",
  properties,
  additionalProperties: true,
  ...extra
})
/** A multi-valued attribute: at most `MaxValues` values (beyond, 400 `invalidValue`). */
const values = (items: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "array",
  maxItems: ScimAttributes.MaxValues,
  items,
  ...extra
})

/** `primary: true` on one value at most (RFC 7643 §2.4; more is 400 `invalidValue`). */
const onePrimary = {
  contains: { type: "object", required: ["primary"], properties: { primary: { const: true } } },
  minContains: 0,
  maxContains: 1
}

export const ScimUserRequest = ScimResourceRequest(
  "ScimUserRequest",
  "A User as the directory sends it. `userName` is required, and an email (in `emails`, or as `userName`): the person's account is found or created by it. Attributes the server does not advertise are ignored, and so are `schemas` and `password` (never stored). Each string at most 2048 characters, `emails` at most 10,000 values, one of them primary at most.",
  {
    userName: text({ minLength: 1 }),
    externalId: text(),
    name: complex({ formatted: text(), givenName: text(), familyName: text() }),
    displayName: text(),
    title: text(),
    active: { type: "boolean", description: "`\"True\"`/`\"False\"` strings are read as booleans." },
    emails: values(
      complex({ value: text(), type: text(), primary: { type: "boolean", description: "True on one email at most." } }),
      onePrimary
    ),
    [ScimEnterpriseUserSchema]: complex({
      employeeNumber: text(),
      department: text(),
      manager: complex({ value: text() }, { description: "The manager's User id (Entra may send the id alone as a string)." })
    })
  },
  ["userName"]
).annotate({
  examples: [{
    schemas: [ScimUserSchema],
    userName: "alan@acme.example",
    externalId: "00u1alan",
    name: { givenName: "Alan", familyName: "Turing" },
    emails: [{ value: "alan@acme.example", type: "work", primary: true }],
    active: true
  }]
})

export const ScimGroupRequest = ScimResourceRequest(
  "ScimGroupRequest",
  "A Group as the directory sends it. `displayName` is required; `members` are the ids of the connection's Users (`om_…`: another value is 400 `invalidValue`); other attributes, `schemas` among them, are ignored. Each string at most 2048 characters, `members` at most 10,000 values.",
  {
    displayName: text({ minLength: 1 }),
    externalId: text(),
    members: values(complex({
      // A MembershipId: `om_` and 26 characters.
      value: {
        type: "string",
        minLength: exampleUserId.length,
        maxLength: exampleUserId.length,
        pattern: "^om_[0-7][0-9a-hjkmnp-tv-z]{25}$",
        description: "The id of a User of this connection."
      }
    }, { required: ["value"] }))
  },
  ["displayName"]
).annotate({
  examples: [{ schemas: [ScimGroupSchema], displayName: "Engineering", externalId: "00g1engineering", members: [{ value: exampleUserId }] }]
})

/**
 * Text the server takes as it is (names of attributes, schema URNs), at most `max` characters: checked in decoding, so
 * longer is 400 `invalid_request` naming it.
 */
const bounded = (max: number, description: string) =>
  Schema.String.check(Schema.isMaxLength(max, { message: `must be at most ${max} characters long` })).annotate({ description })

/** The `schemas` of a PatchOp or SearchRequest: its URN, not read (at most 10, each at most 2048 characters). */
const messageSchemas = Schema.Array(bounded(ScimAttributes.MaxStringLength, "A schema URN.")).check(
  Schema.isMaxLength(10, { message: "must hold at most 10 URNs" })
).annotate({ description: "The message's schema URN; not read." })

/** Any JSON value: a PATCH operation's `value` is read against the attribute its path names. */
const anyJson = { type: ["object", "array", "string", "number", "boolean", "null"] }

/** One operation of a PatchOp as the document states it; the server reads each itself (see the module comment). */
const patchOperation = {
  type: "object",
  required: ["op"],
  additionalProperties: true,
  properties: {
    op: {
      type: "string",
      enum: ["add", "remove", "replace", "Add", "Remove", "Replace"],
      description: "add, remove or replace, in any case."
    },
    path: text({ description: "An attribute path (RFC 7644 §3.10); without one, `value` is an object of attributes (not for remove)." }),
    value: { ...anyJson, description: "Read against the attribute the path names." }
  }
}

/**
 * A PatchOp body (RFC 7644 §3.5.2); the operations are read as the module comment says. Open: members beyond these
 * (and an operation's beyond `op`, `path` and `value`) are ignored (Effect 4 reads parse options from the API: its
 * endpoints do not refuse unknown members), which its JSON Schema says (`open`).
 */
export const ScimPatchRequest = Schema.Struct({
  schemas: optional(messageSchemas),
  // The operations and their bounds as the server reads them (beyond the bounds, 400 `invalidValue`), documented
  // here: decoding takes any array.
  Operations: Schema.Array(Schema.Unknown).check(
    documented({ minItems: 1, maxItems: ScimAttributes.MaxOperations, items: patchOperation })
  )
}).check(open).annotate({
  identifier: "ScimPatchRequest",
  examples: [{ schemas: [ScimPatchOpSchema], Operations: [{ op: "replace", path: "active", value: false }] }]
})

/** An RFC 7644 filter: at most `MaxFilterLength` characters (beyond, 400 `invalidFilter`). */
const filter = Schema.String.annotate({
  description:
    "An RFC 7644 filter, e.g. `userName eq \"alan@acme.example\"`; a malformed one, or one on an attribute the server does not filter on, is 400 `invalidFilter`."
}).check(documented({ maxLength: ScimAttributes.MaxFilterLength }))

/**
 * `startIndex` and `count` as a query has them: an integer in decimal digits (at most 9); out of range counts as the
 * nearest bound (RFC 7644 §3.4.2.4), anything else is 400 `invalidValue`.
 */
const queryInteger = (description: string) =>
  Schema.String.annotate({ description }).check(documented({ type: "integer", minimum: -999_999_999, maximum: 999_999_999 }))

/** A comma-separated list of attribute names (`attributes`, `excludedAttributes`). */
const attributeList = (description: string) => bounded(ScimAttributes.MaxStringLength, description)

/** The query of a list (and the members of a `.search` body): all optional, read as RFC 7644 §3.4.2 says. */
export const ScimListQuery = Schema.Struct({
  filter: optional(filter),
  startIndex: optional(queryInteger("1-based index of the first result (below 1 counts as 1).")),
  count: optional(queryInteger("Results per page: default 100, at most 1000 (more counts as 1000, a negative count as 0).")),
  attributes: optional(attributeList("Comma-separated attributes to return (plus id, schemas, meta).")),
  excludedAttributes: optional(attributeList("Comma-separated attributes to leave out."))
}).annotate({
  examples: [{
    filter: "userName eq \"alan@acme.example\"",
    startIndex: "1",
    count: "100",
    attributes: "userName,name,active",
    excludedAttributes: "name.formatted"
  }]
})

/** `attributes` or `excludedAttributes` of a SearchRequest: a comma-separated list, or an array of names (at most 100). */
const searchAttributes = (description: string) =>
  Schema.Union([
    attributeList(description),
    Schema.Array(bounded(ScimAttributes.MaxStringLength, "An attribute name.")).check(
      Schema.isMaxLength(100, { message: "must hold at most 100 names" })
    )
  ])

/**
 * A SearchRequest body (RFC 7644 §3.4.3). Open: members beyond these (`sortBy`, say: no sorting) are ignored (by its
 * endpoints' parse options, as ScimPatchRequest's).
 */
export const ScimSearchRequest = Schema.Struct({
  schemas: optional(messageSchemas),
  filter: optional(filter),
  startIndex: optional(Schema.Finite),
  count: optional(Schema.Finite),
  attributes: optional(searchAttributes("Attributes to return (plus id, schemas, meta).")),
  excludedAttributes: optional(searchAttributes("Attributes to leave out."))
}).check(open).annotate({
  identifier: "ScimSearchRequest",
  examples: [{ schemas: [ScimSearchRequestSchema], filter: "userName eq \"alan@acme.example\"", startIndex: 1, count: 10 }]
})

/** The query of one resource: projection only. */
export const ScimResourceQuery = Schema.Struct({
  attributes: optional(attributeList("Comma-separated attributes to return (plus id, schemas, meta).")),
  excludedAttributes: optional(attributeList("Comma-separated attributes to leave out."))
}).annotate({ examples: [{ attributes: "userName,name,active", excludedAttributes: "name.formatted" }] })

/** `If-Match` of a write: the resource's `meta.version` (`W/"<n>"`, or `*`); another version is 412. */
export const ScimWriteHeaders = Schema.Struct({
  "if-match": optional(Schema.String.annotate({ description: "The `meta.version` the write is for; another is 412.", examples: ["W/\"1\""] }))
})

/** A ListResponse (RFC 7644 §3.4.2) of `resource`; its example holds `resources` on one page. */
export const ScimListResponse = <S extends Schema.Top>(resource: S, identifier: string, resources: ReadonlyArray<S["Type"]>) =>
  Schema.Struct({
    schemas: Schema.Array(Schema.String),
    totalResults: Schema.Finite,
    startIndex: Schema.Finite,
    itemsPerPage: Schema.Finite,
    Resources: Schema.Array(resource)
  }).annotate({ identifier, examples: [ScimAttributes.listResponse(resources)] }).pipe(scimJson)

// A list holds the very schema a single answer is (`…Response`): Effect 4 names two schemas of one identifier apart
// (`ScimUser`, `ScimUser_1`) when they are two, as the media type annotation makes them.
export const ScimUserResponse = ScimUser.pipe(scimJson)
export const ScimUserList = ScimListResponse(ScimUserResponse, "ScimUserList", [exampleUser])
export const ScimGroupResponse = ScimGroup.pipe(scimJson)
export const ScimGroupList = ScimListResponse(ScimGroupResponse, "ScimGroupList", [exampleGroup])

export const ScimConnectionPath = Schema.Struct({ connectionId: ScimConnectionId })
/** A User's path: the id is checked by the server (a malformed one is a 404 like a missing one). */
export const ScimUserPath = Schema.Struct({ connectionId: ScimConnectionId, userId: Schema.String }).annotate({
  examples: [{ connectionId: exampleConnection, userId: exampleUserId }]
})

/**
 * Discovery documents (RFC 7643 §5–7), generated from the one table of advertised attributes (ScimAttributes.ts); the
 * examples are those documents, for a connection at `https://orgplane.example`.
 */
export const ScimAttributeDocument: Schema.Codec<ScimAttributeDocument> = Schema.Struct({
  name: Schema.String,
  type: Schema.String,
  multiValued: Schema.Boolean,
  description: Schema.String,
  required: Schema.Boolean,
  caseExact: Schema.Boolean,
  mutability: Schema.String,
  returned: Schema.String,
  uniqueness: Schema.String,
  canonicalValues: optional(Schema.Array(Schema.String)),
  referenceTypes: optional(Schema.Array(Schema.String)),
  subAttributes: optional(Schema.Array(Schema.suspend(() => ScimAttributeDocument)))
}).annotate({ identifier: "ScimAttributeDocument" })
export interface ScimAttributeDocument {
  readonly name: string
  readonly type: string
  readonly multiValued: boolean
  readonly description: string
  readonly required: boolean
  readonly caseExact: boolean
  readonly mutability: string
  readonly returned: string
  readonly uniqueness: string
  readonly canonicalValues?: ReadonlyArray<string> | undefined
  readonly referenceTypes?: ReadonlyArray<string> | undefined
  readonly subAttributes?: ReadonlyArray<ScimAttributeDocument> | undefined
}

const documentMeta = Schema.Struct({ resourceType: Schema.String, location: Schema.String })

export const ScimSchemaDocument = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  attributes: Schema.Array(ScimAttributeDocument),
  meta: documentMeta
}).annotate({
  identifier: "ScimSchemaDocument",
  examples: [ScimAttributes.schemaDocument(ScimAttributes.UserSchema, exampleBase)]
})

export const ScimResourceTypeDocument = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  id: Schema.String,
  name: Schema.String,
  endpoint: Schema.String,
  description: Schema.String,
  schema: Schema.String,
  schemaExtensions: Schema.Array(Schema.Struct({ schema: Schema.String, required: Schema.Boolean })),
  meta: documentMeta
}).annotate({
  identifier: "ScimResourceTypeDocument",
  examples: [ScimAttributes.resourceTypeDocument(ScimAttributes.UserResourceType, exampleBase)]
})

const supported = Schema.Struct({ supported: Schema.Boolean })

export const ScimServiceProviderConfig = Schema.Struct({
  schemas: Schema.Array(Schema.String),
  documentationUri: optional(Schema.String),
  patch: supported,
  bulk: Schema.Struct({ supported: Schema.Boolean, maxOperations: Schema.Finite, maxPayloadSize: Schema.Finite }),
  filter: Schema.Struct({ supported: Schema.Boolean, maxResults: Schema.Finite }),
  changePassword: supported,
  sort: supported,
  etag: supported,
  authenticationSchemes: Schema.Array(Schema.Struct({
    type: Schema.String,
    name: Schema.String,
    description: Schema.String,
    primary: optional(Schema.Boolean)
  })),
  meta: documentMeta
}).annotate({
  identifier: "ScimServiceProviderConfig",
  examples: [ScimAttributes.serviceProviderConfigDocument(exampleBase)]
})

export const ScimServiceProviderConfigResponse = ScimServiceProviderConfig.pipe(scimJson)
export const ScimSchemaResponse = ScimSchemaDocument.pipe(scimJson)
export const ScimSchemaList = ScimListResponse(
  ScimSchemaResponse,
  "ScimSchemaList",
  ScimAttributes.Schemas.map((schema) => ScimAttributes.schemaDocument(schema, exampleBase))
)
export const ScimResourceTypeResponse = ScimResourceTypeDocument.pipe(scimJson)
export const ScimResourceTypeList = ScimListResponse(
  ScimResourceTypeResponse,
  "ScimResourceTypeList",
  ScimAttributes.ResourceTypes.map((type) => ScimAttributes.resourceTypeDocument(type, exampleBase))
)

export const ScimSchemaPath = Schema.Struct({ connectionId: ScimConnectionId, schemaId: Schema.String }).annotate({
  examples: [{ connectionId: exampleConnection, schemaId: ScimUserSchema }]
})
export const ScimResourceTypePath = Schema.Struct({ connectionId: ScimConnectionId, name: Schema.String }).annotate({
  examples: [{ connectionId: exampleConnection, name: "User" }]
})
