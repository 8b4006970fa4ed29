/**
 * The compiled response encoder (platform/SchemaJson.ts, ResponseEncoding.answering): for every endpoint of the API
 * whose success is one JSON body, its JSON text equals Schema's own encoding (`disableChecks`, as the builder encodes
 * the server's answers) + `JSON.stringify`, over values generated from the success schema (`effect/Arbitrary`, with
 * the ids' and timestamps' generation constraints of @orgplane/schema). Beside it, the cases a generator meets rarely:
 * a `__proto__` key, absent optional keys, a union's member, a recursive schema, and what it leaves to Schema.
 */
import { Api, openApiDocument } from "@orgplane/schema"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { describe, expect, it } from "vitest"
import { answering } from "../src/platform/ResponseEncoding.js"
import * as SchemaJson from "../src/platform/SchemaJson.js"

const endpoints = Object.values(Api.groups).flatMap((group) =>
  Object.entries(group.endpoints).map(([name, endpoint]) => ({ id: `${group.identifier}.${name}`, endpoint }))
)

/** Each operation's successes as the OpenAPI document states them: status and content types. */
const documented = new Map<string, ReadonlyArray<{ readonly status: number; readonly contentTypes: ReadonlyArray<string> }>>()
for (const item of Object.values(openApiDocument().paths)) {
  for (const operation of Object.values(item)) {
    if (typeof operation !== "object" || operation === null || !("operationId" in operation) || !("responses" in operation)) continue
    const successes = Object.entries(operation.responses ?? {}).filter(([status]) => /^2\d\d$/.test(status)).map(([status, response]) => ({
      status: Number(status),
      contentTypes: Object.keys("content" in response && response.content !== undefined ? response.content : {})
    }))
    documented.set(String(operation.operationId), successes)
  }
}

/** The operation's one success, when the document says it is a JSON body (`application/json`, or SCIM's `+json`). */
const jsonSuccessOf = (id: string) => {
  const successes = documented.get(id) ?? []
  const [only] = successes
  return successes.length === 1 && only.contentTypes.length === 1 && /^application\/([a-z.-]+\+)?json$/.test(only.contentTypes[0])
    ? { status: only.status, contentType: only.contentTypes[0] }
    : undefined
}

const schemaText = (schema: Schema.Top, value: unknown) =>
  JSON.stringify(Schema.encodeUnknownSync(Schema.make<Schema.Codec<unknown, unknown>>(schema.ast))(value, { disableChecks: true }))

const sample = (schema: Schema.Top) =>
  Arbitrary.sampleEffect(Arbitrary.schema(Schema.toType(schema)), { count: 1, seed: 7 }).pipe(Effect.runSync)[0]

describe("the compiled response encoder", () => {
  it("answers every endpoint whose success the API document says is one JSON body, with its status and content type", () => {
    expect(documented.size).toBe(endpoints.length)
    const taken = endpoints.filter(({ id }) => jsonSuccessOf(id) !== undefined)
    expect(taken.length).toBeGreaterThan(200)
    for (const { endpoint, id } of endpoints) {
      const answer = answering(endpoint, false)
      const success = jsonSuccessOf(id)
      if (success === undefined) {
        expect({ id, answered: answer !== undefined }).toEqual({ id, answered: false })
        continue
      }
      if (answer === undefined) throw new Error(`${id} is not answered by its compiled encoder`)
      const [schema] = endpoint.success
      const response = answer(sample(schema))
      if (!HttpServerResponse.isHttpServerResponse(response)) throw new Error(`${id} answered no response`)
      expect({ id, status: response.status, contentType: response.headers["content-type"] })
        .toEqual({ id, ...success })
    }
  })

  it("encodes as Schema does, for values generated from every success schema of the API", () =>
    Effect.gen(function*() {
      for (const { endpoint, id } of endpoints.filter(({ id }) => jsonSuccessOf(id) !== undefined)) {
        const [schema] = endpoint.success
        const encode = SchemaJson.compile(schema.ast)
        if (encode === undefined) throw new Error(`${id} does not compile`)
        const result = yield* Arbitrary.checkEffect(
          Arbitrary.schema(Schema.toType(schema)),
          (value) => JSON.stringify(encode(value)) === schemaText(schema, value),
          { runs: 25, seed: id }
        )
        expect({ id, failure: Arbitrary.formatCheckFailure(result) }).toEqual({ id, failure: undefined })
      }
    }).pipe(Effect.runPromise), 60_000)

  it("keeps a __proto__ key of a record as an own key", () => {
    const schema = Schema.toCodecJson(Schema.Record(Schema.String, Schema.Number))
    const value = JSON.parse(`{"a":1,"__proto__":2}`)
    const encoded = SchemaJson.compile(schema.ast)?.(value)
    expect(JSON.stringify(encoded)).toBe(`{"a":1,"__proto__":2}`)
    expect(JSON.stringify(encoded)).toBe(schemaText(schema, value))
  })

  it("leaves absent optional keys out, keeps declared keys in declared order and drops undeclared ones", () => {
    const schema = Schema.toCodecJson(Schema.Struct({
      b: Schema.optionalKey(Schema.String),
      a: Schema.NullOr(Schema.Date),
      c: Schema.optional(Schema.Number)
    }))
    const encode = SchemaJson.compile(schema.ast)
    for (const value of [{ a: null }, { a: new Date(0), b: "x", c: 1, extra: true }, { c: undefined, a: null, b: "y" }]) {
      expect(JSON.stringify(encode?.(value))).toBe(schemaText(schema, value))
    }
    expect(JSON.stringify(encode?.({ a: new Date(0), b: "x", c: 1, extra: true }))).toBe(`{"b":"x","a":"1970-01-01T00:00:00.000Z","c":1}`)
  })

  it("encodes a union's value by the first member it is, classes and tagged structs alike", () => {
    class Cat extends Schema.Class<Cat>("Cat")({ kind: Schema.Literal("cat"), born: Schema.Date }) {}
    const Dog = Schema.Struct({ kind: Schema.Literal("dog"), names: Schema.Array(Schema.String) })
    const schema = Schema.toCodecJson(Schema.Array(Schema.Union([Cat, Dog, Schema.Null])))
    const value = [new Cat({ kind: "cat", born: new Date(1000) }), { kind: "dog", names: ["a"] }, null]
    expect(JSON.stringify(SchemaJson.compile(schema.ast)?.(value))).toBe(schemaText(schema, value))
  })

  it("compiles a recursive schema once and encodes it to any depth", () => {
    interface Tree {
      readonly at: Date
      readonly children: ReadonlyArray<Tree>
    }
    interface TreeEncoded {
      readonly at: string
      readonly children: ReadonlyArray<TreeEncoded>
    }
    const At = Schema.String.pipe(Schema.decodeTo(Schema.Date, {
      decode: SchemaGetter.transform((text: string) => new Date(text)),
      encode: SchemaGetter.transform((date: Date) => date.toISOString())
    }))
    const Tree: Schema.Codec<Tree, TreeEncoded> = Schema.Struct({
      at: At,
      children: Schema.Array(Schema.suspend((): Schema.Codec<Tree, TreeEncoded> => Tree))
    })
    const value: Tree = { at: new Date(0), children: [{ at: new Date(1), children: [{ at: new Date(2), children: [] }] }] }
    expect(JSON.stringify(SchemaJson.compile(Tree.ast)?.(value))).toBe(schemaText(Tree, value))
  })

  it("leaves to Schema a schema whose encoding is effectful, and a value it cannot encode", () => {
    const effectful = Schema.String.pipe(Schema.decodeTo(Schema.Number, {
      decode: SchemaGetter.transformEffect((text: string) => Effect.succeed(Number(text))),
      encode: SchemaGetter.transformEffect((value: number) => Effect.succeed(String(value)))
    }))
    expect(SchemaJson.compile(Schema.Struct({ n: effectful }).ast)).toBeUndefined()

    const endpoint = endpoints.find(({ id }) => id === "members.list")?.endpoint
    const answer = endpoint && answering(endpoint, false)
    if (answer === undefined) throw new Error("members.list is not answered by its compiled encoder")
    const notAPage = { items: "no" }
    expect(answer(notAPage)).toBe(notAPage)
    const page = answer({ items: [], nextCursor: null })
    expect(HttpServerResponse.isHttpServerResponse(page)).toBe(true)
  })
})
