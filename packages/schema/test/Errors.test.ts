import { describe, expect, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import * as Errors from "../src/Errors.js"
import { componentSchema, decode3, decode4, encode3, encode4, fixture, type Json, jsonSchema3Of, jsonSchemaOf, splitKey } from "./differential.js"
import { type Effect3, effect3, isHandle } from "./effect3.js"

const Option3 = effect3("effect/Option")
const Schema3 = effect3("effect/Schema")
const SchemaAST3 = effect3("effect/SchemaAST")
const Errors3 = effect3("Errors")

/** Every wire schema both modules export (`…Response`), by name. */
const responses = Object.keys(Errors3).filter((name) => name.endsWith("Response")).sort()

const port = (name: string): Schema.Codec<unknown, unknown> => {
  const found: unknown = Reflect.get(Errors, name)
  if (!Schema.isSchema(found)) throw new Error(`${name} is not ported`)
  return Schema.make(found.ast)
}
const original = (name: string): Effect3 => {
  const found: unknown = Reflect.get(Errors3, name)
  if (!Schema3.isSchema(found) || !isHandle(found)) throw new Error(`${name} is not an Effect 3 schema`)
  return Schema3.make(found.ast)
}

/** The status Effect 4's HttpApi gives an error schema: what `HttpApi.reflect` files it under. */
const status4 = (schema: Schema.Top) => {
  const statuses: Array<number> = []
  const api = HttpApi.make("test").add(HttpApiGroup.make("g").add(HttpApiEndpoint.get("e", "/", { error: schema })))
  HttpApi.reflect(api, { onGroup() {}, onEndpoint: ({ errors }) => statuses.push(...errors.keys()) })
  return statuses
}

const status3 = (schema: Effect3) =>
  Option3.getOrUndefined(SchemaAST3.getAnnotation(schema.ast, Symbol.for("@effect/platform/HttpApiSchema/AnnotationStatus")))

const isObject = (value: Json | undefined): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A body a schema takes, made from the Effect 3 document's JSON Schema of it: its required members (the first of an
 * enum, text, `false`, 1, no items), references followed into the document's components.
 */
const sampleOf = (schema: Json | undefined): Json => {
  if (!isObject(schema)) return null
  const ref = schema["$ref"]
  if (typeof ref === "string") return sampleOf(componentOf(ref.replace(/^(?:ref:|#\/components\/schemas\/)/, "")))
  const allOf = schema["allOf"]
  if (Array.isArray(allOf) && allOf.length > 0) return sampleOf(allOf[0])
  const anyOf = schema["anyOf"]
  if (Array.isArray(anyOf) && anyOf.length > 0) return sampleOf(anyOf[0])
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
        for (const name of required) if (typeof name === "string") out[name] = sampleOf(properties[name])
      }
      return out
    }
    default: return null
  }
}
const componentOf = (name: string): Json | undefined => {
  const components = fixture["components"]
  const schemas = isObject(components) ? components["schemas"] : undefined
  return isObject(schemas) ? schemas[name] : undefined
}
/** The name the document gives a wire schema's body (Effect 4 names its definition `<identifier>Encoded`). */
const identifierOf = (schema: Schema.Top) => {
  const ref = Schema.toJsonSchemaDocument(schema).schema.$ref
  const name = typeof ref === "string" ? ref.replace("#/$defs/", "").replace(/Encoded$/, "") : undefined
  return name !== undefined && componentOf(name) !== undefined ? name : undefined
}

/**
 * A real difference, for the OpenAPI normalisation step: an exact body (Unauthorized, OrganizationNotFound) states
 * its rest of no other members as a `propertyNames` that any name passes (`anyOf: [{ enum: [its members] },
 * { type: "string" }]`) beside `additionalProperties: false`. Dropped here to compare the rest.
 */
const withoutVacuousPropertyNames = (schema: Json): Json => splitKey(schema, "propertyNames").rest

describe("Errors on Effect 4", () => {
  it("ports every wire schema with the Effect 3 one's status, read through the Effect 4 API", () => {
    expect(responses.length).toBeGreaterThan(30)
    for (const name of responses) {
      const status = status3(original(name))
      expect(status, name).toBeGreaterThanOrEqual(400)
      expect(status4(port(name)), name).toEqual([status])
    }
    expect(Errors.ErrorResponses.length).toBe(Errors3.ErrorResponses.length)
  })

  it("gives the JSON Schema of the Effect 3 document for every body it has, and of Effect 3 for the others", () => {
    let inDocument = 0
    for (const name of responses) {
      const identifier = identifierOf(port(name))
      if (identifier !== undefined) {
        inDocument++
        expect(withoutVacuousPropertyNames(jsonSchemaOf(port(name))), name).toEqual(componentSchema(identifier))
      } else {
        expect(jsonSchemaOf(port(name)), name).toEqual(jsonSchema3Of(original(name)))
      }
    }
    expect(inDocument).toBeGreaterThan(25)
    for (const name of ["ForbiddenReason", "NotFoundCode", "ConflictCode", "IdempotencyConflictCode", "NeedsConnectionReason", "DomainVerificationConflictReason", "InvalidRequestDetail"] as const) {
      expect(jsonSchemaOf(Errors[name]), name).toEqual(componentSchema(name))
    }
  })

  it("decodes the same bodies as Effect 3 to instances and encodes them back to the same wire body", () => {
    for (const name of responses) {
      const body = sampleOf(jsonSchema3Of(original(name)))
      const decoded = decode4(port(name), body)
      expect(decoded, `${name} ${JSON.stringify(body)}`).toMatchObject({ ok: true })
      expect(decode3(original(name), body), name).toMatchObject({ ok: true })
      if (!decoded.ok) continue
      expect(decoded.value).toHaveProperty("_tag")
      const encoded = encode4(port(name), decoded.value)
      expect(encoded, name).toEqual({ ok: true, value: body })
      const decoded3 = decode3(original(name), body)
      if (decoded3.ok) expect(encoded).toEqual(encode3(original(name), decoded3.value))
    }
  })

  it("sends the members an instance has, not _tag nor what travels as a header", () => {
    const limited = Errors.RateLimited.after(30, "Slow down.")
    expect(limited.retryAfterSeconds).toBe(30)
    expect(encode4(Errors.RateLimitedResponse, limited)).toEqual({ ok: true, value: { error: "rate_limited", message: "Slow down." } })
    expect(encode4(Errors.RateLimitedResponse, limited)).toEqual(encode3(Errors3.RateLimitedResponse, Errors3.RateLimited.after(30, "Slow down.")))
    const inUse = Errors.IdempotencyConflict.inUse(2)
    expect(encode4(Errors.IdempotencyConflictResponse, inUse)).toEqual(encode3(Errors3.IdempotencyConflictResponse, Errors3.IdempotencyConflict.inUse(2)))
    expect(encode4(Errors.UnauthorizedResponse, new Errors.Unauthorized())).toEqual({ ok: true, value: { error: "unauthorized" } })
    expect(encode4(Errors.WebhookRejectedResponse, new Errors.WebhookRejected({ error: "bad signature" }))).toEqual({ ok: true, value: { ok: false, error: "bad signature" } })
    expect(encode4(Errors.InvalidRequestResponse, Errors.InvalidRequest.field(["name"], "is required"))).toEqual(
      encode3(Errors3.InvalidRequestResponse, Errors3.InvalidRequest.field(["name"], "is required"))
    )
    const needs = { error: "needs_connection", message: "Connect.", suite: "suite-a", reason: "not_connected" }
    const decoded = decode4(Errors.NeedsConnectionResponse, needs)
    expect(decoded.ok && encode4(Errors.NeedsConnectionResponse, decoded.value)).toEqual({ ok: true, value: needs })
  })

  it("refuses what the Effect 3 wire schemas refuse", () => {
    const cases: ReadonlyArray<readonly [string, unknown]> = [
      // exact bodies: no other member
      ["UnauthorizedResponse", { error: "unauthorized", message: "x" }],
      ["OrganizationNotFoundResponse", { error: "organization_not_found", message: "x" }],
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
      expect(decode4(port(name), body).ok, `${name} ${JSON.stringify(body)}`).toBe(false)
      expect(decode3(original(name), body).ok, `${name} ${JSON.stringify(body)}`).toBe(false)
    }
    // A narrowed wire still takes its own code, and a body's unknown members are dropped where it is not exact.
    expect(decode4(Errors.UserNotFoundResponse, { error: "user_not_found", message: "x" }).ok).toBe(true)
    expect(decode4(Errors.NotFoundResponse, { error: "team_not_found", message: "x", extra: 1 }).ok).toBe(decode3(Errors3.NotFoundResponse, { error: "team_not_found", message: "x", extra: 1 }).ok)
  })

  it("finds the wire schema of an error the API declares, and none for anything else", () => {
    expect(Errors.errorResponseOf(new Errors.NotFound({ error: "team_not_found", message: "No such team." }))).toBe(Errors.NotFoundResponse)
    expect(Errors.errorResponseOf(new Errors.WorkerRuntimeError({ message: "down" }))).toBe(Errors.WorkerRuntimeErrorResponse)
    expect(Errors.errorResponseOf(new Error("boom"))).toBeUndefined()
    expect(Errors.errorResponseOf("boom")).toBeUndefined()
    expect(Option.isNone(Option.fromUndefinedOr(Errors.errorResponseOf(null)))).toBe(true)
    expect(Errors.MAX_URL_LENGTH).toBe(Errors3.MAX_URL_LENGTH)
    expect(Errors.storedCredentialUnreadable).toBe(Errors3.storedCredentialUnreadable)
  })
})
