/**
 * Errors.ts, the API's error bodies: each answered with its status, decoded to an instance and encoded back to the
 * same wire body, sending what an instance has (not its tag, nor what travels as a header), refusing another code or
 * a wrong member; and the wire schema of an error the API declares found from the error.
 */
import { describe, expect, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import * as Errors from "../src/Errors.js"
import { type Json } from "./support/SavedDocument.js"
import { decode, encode } from "./support/Decoding.js"

/** Every wire schema the module exports (`…Response`), by name. */
const responses = Object.keys(Errors).filter((name) => name.endsWith("Response") && Schema.isSchema(Reflect.get(Errors, name))).sort()

const wire = (name: string): Schema.Codec<unknown, unknown> => {
  const found: unknown = Reflect.get(Errors, name)
  if (!Schema.isSchema(found)) throw new Error(`${name} is no schema`)
  return Schema.make(found.ast)
}

/** The status the HttpApi gives an error schema: what `HttpApi.reflect` files it under. */
const statusOf = (schema: Schema.Top) => {
  const statuses: Array<number> = []
  const api = HttpApi.make("test").add(HttpApiGroup.make("g").add(HttpApiEndpoint.get("e", "/", { error: schema })))
  HttpApi.reflect(api, { onGroup() {}, onEndpoint: ({ errors }) => statuses.push(...errors.keys()) })
  return statuses
}

const isObject = (value: Json | undefined): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A body a schema takes, made from its JSON Schema: its required members (the first of an enum, text, `false`, 1, no
 * items), references followed into `definitions`.
 */
const sampleOf = (schema: Json | undefined, definitions: { readonly [name: string]: Json }): Json => {
  if (!isObject(schema)) return null
  const ref = schema["$ref"]
  if (typeof ref === "string") return sampleOf(definitions[ref.replace(/^#\/\$defs\//, "")], definitions)
  const allOf = schema["allOf"]
  if (Array.isArray(allOf) && allOf.length > 0) return sampleOf(allOf[0], definitions)
  const anyOf = schema["anyOf"]
  if (Array.isArray(anyOf) && anyOf.length > 0) return sampleOf(anyOf[0], definitions)
  const enums = schema["enum"]
  if (Array.isArray(enums) && enums.length > 0) return enums[0]!
  switch (schema["type"]) {
    case "string": return "text"
    case "boolean": return false
    case "integer":
    case "number": return 1
    case "array": return []
    case "object": {
      const properties = schema["properties"]
      const required = schema["required"]
      const out: Record<string, Json> = {}
      if (isObject(properties) && Array.isArray(required)) {
        for (const name of required) if (typeof name === "string") out[name] = sampleOf(properties[name], definitions)
      }
      return out
    }
    default: return null
  }
}
/** A body `schema` takes, made from its JSON Schema. */
const sampleBody = (schema: Schema.Top): Json => {
  const document: { readonly schema: Json; readonly definitions: { readonly [name: string]: Json } } = JSON.parse(JSON.stringify(Schema.toJsonSchemaDocument(schema)))
  return sampleOf(document.schema, document.definitions)
}

describe("Errors", () => {
  it("answers each error with its status", () => {
    expect(Object.fromEntries(responses.map((name) => [name, statusOf(wire(name))]))).toEqual({
      CalendarSuiteApiErrorResponse: [502],
      CannotDisableYourselfResponse: [409],
      CodeHostApiErrorResponse: [502],
      ConflictResponse: [409],
      ConnectionNotReadyResponse: [409],
      ConnectionValidationFailedResponse: [502],
      DnsLookupFailedResponse: [502],
      DomainVerificationConflictResponse: [409],
      DomainVerificationFailedResponse: [409],
      EmailTakenResponse: [409],
      ForbiddenResponse: [403],
      HealthDownResponse: [503],
      IdempotencyConflictResponse: [409],
      IdempotencyKeyReusedResponse: [422],
      InvalidRequestResponse: [400],
      LastOwnerOfOrganizationsResponse: [409],
      LlmProviderApiErrorResponse: [502],
      MailSuiteApiErrorResponse: [502],
      McpConnectionNotFoundResponse: [404],
      MethodNotAllowedResponse: [405],
      NeedsConnectionResponse: [409],
      NotFoundResponse: [404],
      OrganizationNotFoundResponse: [404],
      PayloadTooLargeResponse: [413],
      PlanRequiredResponse: [402],
      RateLimitedResponse: [429],
      RequestHeaderFieldsTooLargeResponse: [431],
      ServiceUnavailableResponse: [503],
      SsoSignInFailedResponse: [401],
      StoredCredentialUnreadableResponse: [500],
      SuiteApiErrorResponse: [502],
      ToolCatalogFailedResponse: [502],
      ToolExecutionFailedResponse: [502],
      UnauthorizedResponse: [401],
      UnsupportedMediaTypeResponse: [415],
      UriTooLongResponse: [414],
      UserNotFoundResponse: [404],
      WebhookRejectedResponse: [401],
      WorkerRuntimeErrorResponse: [502]
    })
    expect(Errors.ErrorResponses.length).toBe(28)
  })

  it("decodes a body of each error to an instance and encodes it back to the same wire body", () => {
    for (const name of responses) {
      const body = sampleBody(wire(name))
      const decoded = decode(wire(name), body)
      expect(decoded, `${name} ${JSON.stringify(body)}`).toMatchObject({ ok: true })
      if (!decoded.ok) continue
      expect(decoded.value).toHaveProperty("_tag")
      expect(encode(wire(name), decoded.value), name).toEqual({ ok: true, value: body })
    }
  })

  it("sends the members an instance has, not _tag nor what travels as a header", () => {
    const limited = Errors.RateLimited.after(30, "Slow down.")
    expect(limited.retryAfterSeconds).toBe(30)
    expect(encode(Errors.RateLimitedResponse, limited)).toEqual({ ok: true, value: { error: "rate_limited", message: "Slow down." } })
    const inUse = Errors.IdempotencyConflict.inUse(2)
    expect(encode(Errors.IdempotencyConflictResponse, inUse)).toEqual({
      ok: true,
      value: { error: "idempotency_key_in_use", message: "A request with this Idempotency-Key is still running; retry after it ends." }
    })
    expect(encode(Errors.UnauthorizedResponse, Errors.Unauthorized.because("invalid_credentials"))).toEqual({
      ok: true,
      value: { error: "unauthorized", reason: "invalid_credentials", message: "Wrong email or password." }
    })
    expect(encode(Errors.OrganizationNotFoundResponse, new Errors.OrganizationNotFound())).toEqual({
      ok: true,
      value: { error: "organization_not_found", message: "No such organization, or you are not a member of it." }
    })
    expect(encode(Errors.WebhookRejectedResponse, new Errors.WebhookRejected({ error: "bad signature" }))).toEqual({ ok: true, value: { ok: false, error: "bad signature" } })
    expect(encode(Errors.InvalidRequestResponse, Errors.InvalidRequest.field(["name"], "is required"))).toEqual({
      ok: true,
      value: { error: "invalid_request", details: [{ message: "is required", path: ["name"] }] }
    })
    const needs = { error: "needs_connection", message: "Connect.", suite: "suite-a", reason: "not_connected" }
    const decoded = decode(Errors.NeedsConnectionResponse, needs)
    expect(decoded.ok && encode(Errors.NeedsConnectionResponse, decoded.value)).toEqual({ ok: true, value: needs })
  })

  it("refuses bodies with another code, a wrong member, or a member an exact body does not have", () => {
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      // exact bodies: no other member
      ["UnauthorizedResponse", { error: "unauthorized", reason: "session_unknown", message: "x", details: [] }],
      ["OrganizationNotFoundResponse", { error: "organization_not_found", message: "x", reason: "x" }],
      // a 401 without its reason
      ["UnauthorizedResponse", { error: "unauthorized", message: "x" }],
      // codes
      ["UnauthorizedResponse", { error: "forbidden" }],
      ["NotFoundResponse", { error: "nothing_found", message: "x" }],
      ["ConflictResponse", { error: "email_taken" }],
      ["ForbiddenResponse", { reason: "because", message: "x" }],
      // an operation's narrowed codes
      ["UserNotFoundResponse", { error: "team_not_found", message: "x" }],
      ["EmailTakenResponse", { error: "last_owner", message: "x" }],
      ["MailSuiteApiErrorResponse", { error: "suite_b_api_error", message: "x" }],
      // members
      ["NeedsConnectionResponse", { error: "needs_connection", message: "x", suite: "suite-c" }],
      ["SuiteApiErrorResponse", { error: "suite_a_api_error", message: "x", outcome: "known" }],
      ["LlmProviderApiErrorResponse", { error: "llm_provider_api_error", message: "x", retryable: true, upstreamStatus: 502.5 }],
      ["InvalidRequestResponse", { error: "invalid_request", details: [{ message: "x", path: [true] }] }],
      ["DomainVerificationFailedResponse", { reason: "domain_verification_failed", message: "x", recordName: "r", expectedValue: "v", foundValues: [1] }],
      ["WebhookRejectedResponse", { ok: true, error: "x" }]
    ]
    for (const [name, body] of cases) {
      expect(decode(wire(name), body).ok, `${name} ${JSON.stringify(body)}`).toBe(false)
    }
    // A narrowed wire still takes its own code, and a body's unknown members are dropped where it is not exact.
    expect(decode(Errors.UserNotFoundResponse, { error: "user_not_found", message: "x" }).ok).toBe(true)
    expect(decode(Errors.NotFoundResponse, { error: "team_not_found", message: "x", extra: 1 }).ok).toBe(true)
  })

  it("finds the wire schema of an error the API declares, and none for anything else", () => {
    expect(Errors.errorResponseOf(new Errors.NotFound({ error: "team_not_found", message: "No such team." }))).toBe(Errors.NotFoundResponse)
    expect(Errors.errorResponseOf(new Errors.WorkerRuntimeError({ message: "down" }))).toBe(Errors.WorkerRuntimeErrorResponse)
    expect(Errors.errorResponseOf(new Error("boom"))).toBeUndefined()
    expect(Errors.errorResponseOf("boom")).toBeUndefined()
    expect(Option.isNone(Option.fromUndefinedOr(Errors.errorResponseOf(null)))).toBe(true)
    expect(Errors.MAX_URL_LENGTH).toBe(8192)
    expect(Errors.storedCredentialUnreadable).toMatch(/^500 `stored_credential_unreadable` when a secret it needs/)
  })
})
