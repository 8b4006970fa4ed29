/**
 * ScimProtocol.ts, the SCIM 2.0 messages (RFC 7644): every answer as `application/scim+json`, each error with its
 * status and SCIM error body, a 304 without one, the document's examples decoded and encoded back unchanged, the
 * requests as a directory sends them taken and refused, no `null` read or written for a member left out.
 */
import { describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as ScimProtocol from "../src/ScimProtocol.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, encode, refuses, roundTrips, takes } from "./support/Decoding.js"

const port = (name: string): Schema.Codec<unknown, unknown> => {
  const found: unknown = Reflect.get(ScimProtocol, name)
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
/** The SCIM errors (their wire forms, `…Response`, are what travels), by their status. */
const errorStatuses: Readonly<Record<string, number>> = {
  ScimBadRequest: 400,
  ScimUnauthorized: 401,
  ScimForbidden: 403,
  ScimNotFound: 404,
  ScimMethodNotAllowed: 405,
  ScimConflict: 409,
  ScimPreconditionFailed: 412,
  ScimPayloadTooLarge: 413,
  ScimUriTooLong: 414,
  ScimUnsupportedMediaType: 415,
  ScimIdempotencyKeyReused: 422,
  ScimInternalError: 500,
  ScimServiceUnavailable: 503
}

/** The media types the generated OpenAPI document gives a success of `schema`. */
const contentTypes = (schema: Schema.Top) => {
  const api = HttpApi.make("test").add(HttpApiGroup.make("g").add(HttpApiEndpoint.get("e", "/", { success: schema })))
  const responses = OpenApi.fromApi(api).paths["/"]?.get?.responses ?? {}
  return [...new Set(Object.values(responses).flatMap((response) => Object.keys(response.content ?? {})))]
}

describe("ScimProtocol", () => {
  it("answers every SCIM message as application/scim+json", () => {
    const answers = Object.keys(ScimProtocol).filter((name) =>
      /(?:List|Response)$/.test(name) && name !== "ScimNotModifiedResponse" && Schema.isSchema(Reflect.get(ScimProtocol, name))
    )
    expect(answers.length).toBeGreaterThan(20)
    for (const name of answers) {
      expect(contentTypes(port(name)), name).toEqual(["application/scim+json"])
    }
  })

  it("answers every error with its status and a SCIM error body, refusing any other body", () => {
    const wires = Object.keys(errorStatuses).map((name) => `${name}Response`)
    expect(Object.keys(ScimProtocol).filter((name) => /^Scim\w+Response$/.test(name) && !/^Scim(?:User|Group|Schema|ResourceType|ServiceProviderConfig|NotModified|List)Response$/.test(name)).sort())
      .toEqual([...wires].sort())
    for (const name of wires) {
      const status = errorStatuses[name.replace(/Response$/, "")]
      expect(statusOf(port(name)), name).toEqual([status])
      const body = { schemas: [ScimProtocol.ScimErrorSchema], status: String(status), scimType: "invalidValue", detail: "No." }
      for (const input of [body, { schemas: body.schemas, status: body.status, detail: body.detail }]) {
        const decoded = decode(port(name), input)
        expect(decoded, name).toMatchObject({ ok: true })
        if (decoded.ok) {
          expect(decoded.value).toHaveProperty("_tag", name.replace(/Response$/, ""))
          expect(encode(port(name), decoded.value)).toEqual({ ok: true, value: input })
        }
      }
      for (
        const refused of [
          { ...body, status: "200" },
          { ...body, schemas: [] },
          { ...body, schemas: [ScimProtocol.ScimErrorSchema, ScimProtocol.ScimErrorSchema] },
          { ...body, schemas: ["urn:other"] },
          { ...body, scimType: "because" },
          { ...body, scimType: null },
          { schemas: body.schemas, status: body.status }
        ]
      ) {
        expect(decode(port(name), refused).ok, `${name} ${JSON.stringify(refused)}`).toBe(false)
      }
    }
    // The constructor fills in `schemas` and `status`; `scimType` left out is left out of the body.
    const error = new ScimProtocol.ScimBadRequest({ detail: "Bad filter.", scimType: "invalidFilter" })
    expect(ScimProtocol.scimErrorResponseOf(error)).toBe(ScimProtocol.ScimBadRequestResponse)
    expect(encode(ScimProtocol.ScimBadRequestResponse, error)).toEqual({
      ok: true,
      value: { schemas: [ScimProtocol.ScimErrorSchema], status: "400", scimType: "invalidFilter", detail: "Bad filter." }
    })
    const conflict = new ScimProtocol.ScimConflict({ detail: "In use.", scimType: undefined })
    expect(encode(ScimProtocol.ScimConflictResponse, conflict)).toEqual({
      ok: true,
      value: { schemas: [ScimProtocol.ScimErrorSchema], status: "409", detail: "In use." }
    })
    expect(ScimProtocol.scimErrorResponseOf(new Error("boom"))).toBeUndefined()
    expect(ScimProtocol.scimErrorResponseOf(null)).toBeUndefined()
  })

  it("answers a 304 with no body", () => {
    expect(statusOf(ScimProtocol.ScimNotModifiedResponse)).toEqual([304])
    expect(HttpApiSchema.isNoContent(ScimProtocol.ScimNotModifiedResponse.ast)).toBe(true)
    expect(encode(ScimProtocol.ScimNotModifiedResponse, new ScimProtocol.ScimNotModified())).toEqual({ ok: true, value: undefined })
    expect(decode(ScimProtocol.ScimNotModifiedResponse, undefined)).toMatchObject({ ok: true, value: { _tag: "ScimNotModified" } })
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    for (const name of ["ScimUser", "ScimGroup", "ScimPatchRequest", "ScimSearchRequest", "ScimSchemaDocument", "ScimResourceTypeDocument"]) {
      roundTrips(port(name), examplesOfComponent(name))
    }
    for (
      const name of [
        "ScimServiceProviderConfig",
        "ScimUserList",
        "ScimGroupList",
        "ScimSchemaList",
        "ScimResourceTypeList",
        "ScimUserRequest",
        "ScimGroupRequest",
        "ScimListQuery",
        "ScimResourceQuery",
        "ScimUserPath",
        "ScimSchemaPath",
        "ScimResourceTypePath"
      ]
    ) roundTrips(port(name), wireExamples(port(name).ast))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(ScimProtocol.ScimPatchRequest, [
      { schemas: [ScimProtocol.ScimPatchOpSchema], Operations: [{ op: "replace", path: "active", value: false }] },
      // The operations are read by the server: decoding takes any.
      { Operations: [] },
      { Operations: [1, "x", null, { op: "bogus" }] },
      { Operations: [], other: "ignored" }
    ])
    refuses(ScimProtocol.ScimPatchRequest, [
      {},
      { Operations: {} },
      { schemas: "urn", Operations: [] },
      { schemas: Array.from({ length: 11 }, () => "urn"), Operations: [] },
      { schemas: ["u".repeat(2049)], Operations: [] },
      { schemas: null, Operations: [] }
    ])
    takes(ScimProtocol.ScimSearchRequest, [
      { schemas: [ScimProtocol.ScimSearchRequestSchema], filter: "userName eq \"alan\"", startIndex: 1, count: 10 },
      { attributes: "userName,name", excludedAttributes: ["name.formatted"] },
      { sortBy: "userName" },
      {}
    ])
    refuses(ScimProtocol.ScimSearchRequest, [
      { startIndex: "1" },
      { count: null },
      { attributes: Array.from({ length: 101 }, () => "a") },
      { attributes: "a".repeat(2049) },
      { excludedAttributes: ["a".repeat(2049)] },
      { filter: 1 }
    ])
    takes(ScimProtocol.ScimListQuery, [
      { filter: "userName eq \"alan\"", startIndex: "1", count: "100" },
      // Read by the server: any text decodes (a bad one is a SCIM 400 `invalidValue`).
      { startIndex: "one", count: "-5" },
      { filter: "f".repeat(5000) },
      {}
    ])
    refuses(ScimProtocol.ScimListQuery, [
      { attributes: "a".repeat(2049) },
      { excludedAttributes: "a".repeat(2049) },
      { count: 5 }
    ])
    takes(ScimProtocol.ScimResourceQuery, [
      { attributes: "userName" },
      {}
    ])
    refuses(ScimProtocol.ScimResourceQuery, [
      { attributes: "a".repeat(2049) }
    ])
    takes(ScimProtocol.ScimWriteHeaders, [{ "if-match": "W/\"1\"" }, {}])
    refuses(ScimProtocol.ScimWriteHeaders, [{ "if-match": 1 }])
    for (const request of ["ScimUserRequest", "ScimGroupRequest"]) {
      takes(port(request), [
        { userName: "alan@acme.example", locale: "en", phoneNumbers: [{ value: "1" }] },
        { displayName: "Engineering", members: [{ value: "not an id" }] },
        {}
      ])
      refuses(port(request), [
        "alan",
        [],
        null
      ])
    }
    takes(ScimProtocol.ScimUserPath, [
      { connectionId: "scc_01m6dsg7e0f5cv7n2jh5v61kpp", userId: "anything" }
    ])
    refuses(ScimProtocol.ScimUserPath, [
      { connectionId: "org_01m6dsg7e0f3e93sqmgd9q3mye", userId: "om_1" }
    ])
  })

  it("reads no null for a left-out member and writes none for an undefined one, on the JSON wire", () => {
    // `Schema.optional` would take `null` and write `null` through the JSON codec the API uses; SCIM's optional
    // members do neither (a directory sends no `null` for what it leaves out).
    const search = Schema.decodeUnknownExit(Schema.toCodecJson(ScimProtocol.ScimSearchRequest))({ filter: null })
    expect(Exit.isFailure(search)).toBe(true)
    const user = { schemas: [ScimProtocol.ScimUserSchema], id: "om_1", title: undefined, meta: { resourceType: "User", version: undefined } }
    expect(Schema.encodeUnknownSync(Schema.toCodecJson(ScimProtocol.ScimUser))(user)).toEqual({
      schemas: [ScimProtocol.ScimUserSchema],
      id: "om_1",
      meta: { resourceType: "User" }
    })
    // A value may still hold `undefined` for a member.
    expect(Schema.is(ScimProtocol.ScimUser)(user)).toBe(true)
  })
})
