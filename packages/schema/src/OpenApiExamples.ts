/**
 * The examples of the OpenAPI document, from the schemas' `examples` annotations: every request body, parameter and
 * success response shows the example its schema has, or one composed from the examples of what it is made of (a
 * `{ team: Team }` response from the `Team` example), encoded by that schema, so it is exactly what goes over the wire.
 */
import * as HttpMethod from "effect/http/HttpMethod"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"
import { isJsonObject, type Json, type JsonObject, objectAt } from "./internal/json.js"

/** Deeper than any schema of the API: a recursive schema without examples stops here instead of looping. */
const MAX_DEPTH = 32

/**
 * The examples annotated on `ast`. Effect 4 keeps what is annotated after a check on that check, and what is
 * annotated before on the node: the latest check's that has some, else the node's.
 */
const examplesOf = (ast: AST.AST): Option.Option<ReadonlyArray<unknown>> => {
  const annotated: Array<unknown> = [...(ast.checks ?? [])].reverse().map((check) => check.annotations?.examples)
  annotated.push(ast.annotations?.examples)
  const examples = annotated.find(Array.isArray)
  return Array.isArray(examples) ? Option.some(examples) : Option.none()
}

const firstExample = (ast: AST.AST): Option.Option<unknown> =>
  Option.flatMap(examplesOf(ast), (examples) => examples.length > 0 ? Option.some(examples[0]) : Option.none())

/**
 * The Type-side example of `ast`: its own first example, or one composed from its parts: a struct from its members'
 * (optional members when they have one), an array of one item, a union's first member that has one (a value before
 * `null`), a literal itself. None when a required part has no example: nothing is made up.
 *
 * An Effect 4 AST is the Type side already (a transformation is an `encoding` on its target, a check a `checks`
 * entry), so there is no refinement or transformation node to look through.
 */
export const composeExample = (ast: AST.AST, depth = 0): Option.Option<unknown> => {
  const own = firstExample(ast)
  if (Option.isSome(own) || depth > MAX_DEPTH) return own
  const next = (child: AST.AST) => composeExample(child, depth + 1)
  switch (ast._tag) {
    case "Literal":
      return Option.some(ast.literal)
    case "Null":
      return Option.some(null)
    case "Enum":
      return ast.enums.length > 0 ? Option.some(ast.enums[0]![1]) : Option.none()
    case "Union": {
      const members = [...ast.types].sort((a, b) => Number(isNull(a)) - Number(isNull(b)))
      return Option.firstSomeOf(members.map(next))
    }
    case "Objects": {
      const out: Record<PropertyKey, unknown> = {}
      for (const member of ast.propertySignatures) {
        const example = next(member.type)
        if (Option.isSome(example)) out[member.name] = example.value
        else if (member.type.context?.isOptional !== true) return Option.none()
      }
      // An object of none of its members would be made up.
      return Reflect.ownKeys(out).length > 0 || ast.propertySignatures.length === 0 ? Option.some(out) : Option.none()
    }
    case "Arrays": {
      const elements: Array<unknown> = []
      for (const element of ast.elements) {
        const example = next(element)
        if (Option.isSome(example)) elements.push(example.value)
        else if (element.context?.isOptional !== true) return Option.none()
      }
      const rest = ast.rest[0]
      if (rest === undefined) return Option.some(elements)
      return Option.map(next(rest), (item) => [...elements, item])
    }
    case "Declaration": {
      // A class: its fields' struct's example, made an instance the way the wire makes one (Effect 4 encodes only
      // instances of a class, so a plain object would be dropped from the document).
      const fields = ast.typeParameters.length === 1 ? ast.typeParameters[0]! : undefined
      if (fields === undefined) return Option.none()
      return Option.flatMap(next(fields), (value) =>
        Result.getSuccess(Result.flatMap(encodeExample(fields, value), (wire) => decodeExample(ast, wire))))
    }
    case "Suspend":
      return next(ast.thunk())
    default:
      return Option.none()
  }
}

const isNull = (ast: AST.AST) => ast._tag === "Null"

/** The wire form of a Type-side `example` of `ast`: its encoding by the schema; the text when the schema refuses it. */
export const encodeExample = (ast: AST.AST, example: unknown): Result.Result<unknown, string> =>
  Schema.encodeUnknownResult(Schema.make<Schema.Codec<unknown, unknown>>(ast))(example).pipe(Result.mapError((error) => error.message))

const decodeExample = (ast: AST.AST, wire: unknown): Result.Result<unknown, string> =>
  Schema.decodeUnknownResult(Schema.make<Schema.Codec<unknown, unknown>>(ast))(wire).pipe(Result.mapError((error) => error.message))

/**
 * The examples written for `ast`: its own, or, for a union whose members all have their own (a request body with one
 * member per `authType`), each member's, so the document shows every kind.
 */
export const ownExamples = (ast: AST.AST): Option.Option<ReadonlyArray<unknown>> => {
  const own = examplesOf(ast)
  if (Option.isSome(own) || ast._tag !== "Union") return own
  const members = ast.types.map(ownExamples)
  return members.every(Option.isSome) ? Option.some(members.flatMap((member) => member.value)) : Option.none()
}

/** The wire forms of every example of `ast` (its own, else the composed one); those its schema refuses are left out. */
export const wireExamples = (ast: AST.AST): Array<unknown> => {
  const own = ownExamples(ast)
  const examples = Option.isSome(own) ? own.value : Option.toArray(composeExample(ast))
  return examples.flatMap((example) => Result.match(encodeExample(ast, example), { onFailure: () => [], onSuccess: (wire) => [wire] }))
}

/** The document as JSON, which the writer changes in place (the types, for the modules that import them from here). */
export type { Json, JsonObject } from "./internal/json.js"

/** OpenAPI Example Objects: one `example`, or `example1`, `example2`… */
const exampleObjects = (values: ReadonlyArray<unknown>): JsonObject =>
  Object.fromEntries(values.map((value, index) => [values.length === 1 ? "example" : `example${index + 1}`, { value: asJson(value) }]))

/** A wire example as JSON (it is one: the schema encoded it for a JSON document; bytes are shown as their text). */
const asJson = (value: unknown): Json =>
  value instanceof Uint8Array ? new TextDecoder().decode(value) : JSON.parse(JSON.stringify(value ?? null))

/** An endpoint's parameters by where they go, as `OpenApi.fromApi` places them. */
export const parameterSchemas = (endpoint: HttpApiEndpoint.Top): Array<{ readonly in: "path" | "query" | "header"; readonly ast: AST.AST }> => [
  ...(endpoint.params === undefined ? [] : [{ in: "path" as const, ast: endpoint.params.ast }]),
  ...(HttpMethod.hasBody(endpoint.method) ? [] : [...endpoint.payload.values()].flatMap(({ schemas }) =>
    schemas.map((schema) => ({ in: "query" as const, ast: schema.ast }))
  )),
  ...(endpoint.headers === undefined ? [] : [{ in: "header" as const, ast: endpoint.headers.ast }]),
  ...(endpoint.query === undefined ? [] : [{ in: "query" as const, ast: endpoint.query.ast }])
]

/**
 * Each parameter of a parameter struct with the wire form (a string) of its example: the struct's own example's
 * member when it has one, else the member's own or composed example. Members without one are left out.
 */
export const parameterExamples = (struct: AST.AST): Array<{ readonly name: string; readonly value: string }> => {
  if (struct._tag !== "Objects") return []
  const whole = Option.getOrUndefined(firstExample(struct))
  return struct.propertySignatures.flatMap((member) => {
    const name = String(member.name)
    const example = typeof whole === "object" && whole !== null && Object.hasOwn(whole, name)
      ? Option.some(Reflect.get(whole, name))
      : Option.orElse(firstExample(member.type), () => composeExample(member.type))
    if (Option.isNone(example)) return []
    const wire = encodeExample(member.type, example.value)
    return Result.isSuccess(wire) && typeof wire.success === "string" ? [{ name, value: wire.success }] : []
  })
}

/**
 * A parameter's example as the document's schema types it: a query integer travels as decimal text, but its schema
 * says `integer`, so its example is the number (serialized back to the same text).
 */
const asDocumented = (schema: JsonObject | undefined, text: string): Json =>
  isNumeric(schema) && /^-?[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : text

/** A number's schema, or (how Effect 4 writes a query integer: the text, checked as an integer) one whose `allOf` says so. */
const isNumeric = (schema: JsonObject | undefined): boolean => {
  const allOf = schema?.["allOf"]
  return schema?.["type"] === "integer" || schema?.["type"] === "number" ||
    (Array.isArray(allOf) && allOf.some((member) => isJsonObject(member) && isNumeric(member)))
}

/**
 * Writes the examples into the document: `examples` on every request body's and success response's media type and
 * on every parameter, from the endpoints' schemas. Where tools look for them: Scalar and Schemathesis read the
 * operation's `examples` (a schema's own `examples` is only where a component has them).
 */
export const addExamples = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>, spec: JsonObject): JsonObject => {
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, successes }) {
      const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
      const operation = objectAt(objectAt(spec, "paths"), path)?.[endpoint.method.toLowerCase()]
      if (!isJsonObject(operation)) return
      if (HttpMethod.hasBody(endpoint.method)) {
        for (const [contentType, { schemas }] of endpoint.payload) {
          const media = objectAt(objectAt(operation["requestBody"], "content"), contentType)
          const values = schemas.flatMap((schema) => wireExamples(schema.ast))
          if (media !== undefined && values.length > 0) media["examples"] = exampleObjects(values)
        }
      }
      const parameters = operation["parameters"]
      for (const { ast, in: location } of parameterSchemas(endpoint)) {
        for (const { name, value } of parameterExamples(ast)) {
          const parameter = (Array.isArray(parameters) ? parameters : []).find((p) => isJsonObject(p) && p["in"] === location && p["name"] === name)
          if (isJsonObject(parameter)) parameter["examples"] = exampleObjects([asDocumented(objectAt(parameter, "schema"), value)])
        }
      }
      for (const [status, schemas] of successes) {
        const content = objectAt(objectAt(operation["responses"], String(status)), "content")
        for (const schema of schemas) {
          if (HttpApiSchema.isNoContent(schema.ast)) continue
          // The schema's own media type, the one the generator writes first (a config object's file is declared as
          // any, `*/*`); a transform may add others after it (the audit export's `text/csv`), which take the same
          // examples. (Effect 4 keeps a schema's encoding internal.)
          const [declared] = Object.keys(content ?? {})
          const media = declared === undefined ? undefined : objectAt(content, declared)
          const values = wireExamples(schema.ast)
          if (media !== undefined && values.length > 0) media["examples"] = exampleObjects(values)
        }
      }
    }
  })
  return spec
}
