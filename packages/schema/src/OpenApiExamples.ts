/**
 * The examples of the OpenAPI document, from the schemas' `examples` annotations: every request body, parameter and
 * success response shows the example its schema has, or one composed from the examples of what it is made of (a
 * `{ team: Team }` response from the `Team` example), encoded by that schema, so it is exactly what goes over the wire.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpMethod from "@effect/platform/HttpMethod"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** Deeper than any schema of the API: a recursive schema without examples stops here instead of looping. */
const MAX_DEPTH = 32

const firstExample = (annotated: AST.Annotated): Option.Option<unknown> =>
  Option.map(AST.getExamplesAnnotation(annotated), (examples) => examples[0])

/**
 * The Type-side example of `ast`: its own first example, or one composed from its parts: a struct from its members'
 * (optional members when they have one), an array of one item, a union's first member that has one (a value before
 * `null`), a literal itself. None when a required part has no example: nothing is made up.
 */
export const composeExample = (ast: AST.AST, depth = 0): Option.Option<unknown> => {
  const own = firstExample(ast)
  if (Option.isSome(own) || depth > MAX_DEPTH) return own
  const next = (child: AST.AST) => composeExample(child, depth + 1)
  switch (ast._tag) {
    case "Literal":
      return Option.some(ast.literal)
    case "Enums":
      return ast.enums.length > 0 ? Option.some(ast.enums[0]![1]) : Option.none()
    case "Union": {
      const members = [...ast.types].sort((a, b) => Number(isNull(a)) - Number(isNull(b)))
      return Option.firstSomeOf(members.map(next))
    }
    case "TypeLiteral": {
      const out: Record<PropertyKey, unknown> = {}
      for (const member of ast.propertySignatures) {
        const example = Option.orElse(firstExample(member), () => next(member.type))
        if (Option.isSome(example)) out[member.name] = example.value
        else if (!member.isOptional) return Option.none()
      }
      // An object of none of its members would be made up.
      return Reflect.ownKeys(out).length > 0 || ast.propertySignatures.length === 0 ? Option.some(out) : Option.none()
    }
    case "TupleType": {
      const elements: Array<unknown> = []
      for (const element of ast.elements) {
        const example = next(element.type)
        if (Option.isSome(example)) elements.push(example.value)
        else if (!element.isOptional) return Option.none()
      }
      const rest = ast.rest[0]
      if (rest === undefined) return Option.some(elements)
      return Option.map(next(rest.type), (item) => [...elements, item])
    }
    case "Refinement":
      return next(ast.from)
    case "Transformation":
      return next(ast.to)
    case "Declaration":
      // A class: its fields' struct.
      return ast.typeParameters.length === 1 ? next(ast.typeParameters[0]!) : Option.none()
    case "Suspend":
      return next(ast.f())
    default:
      return Option.none()
  }
}

const isNull = (ast: AST.AST) => AST.isLiteral(ast) && ast.literal === null

/** The wire form of a Type-side `example` of `ast`: its encoding by the schema; an error when the schema refuses it. */
export const encodeExample = (ast: AST.AST, example: unknown): Either.Either<unknown, string> =>
  Schema.encodeUnknownEither(Schema.make(ast))(example).pipe(Either.mapLeft((error) => error.message))

/**
 * The examples written for `ast`: its own, or, for a union whose members all have their own (a request body with one
 * member per `authType`), each member's, so the document shows every kind.
 */
export const ownExamples = (ast: AST.AST): Option.Option<ReadonlyArray<unknown>> => {
  const own = AST.getExamplesAnnotation(ast)
  if (Option.isSome(own) || !AST.isUnion(ast)) return own
  const members = ast.types.map(ownExamples)
  return members.every(Option.isSome) ? Option.some(members.flatMap((member) => member.value)) : Option.none()
}

/** The wire forms of every example of `ast` (its own, else the composed one); those its schema refuses are left out. */
export const wireExamples = (ast: AST.AST): Array<unknown> => {
  const own = ownExamples(ast)
  const examples = Option.isSome(own) ? own.value : Option.toArray(composeExample(ast))
  return examples.flatMap((example) => Either.match(encodeExample(ast, example), { onLeft: () => [], onRight: (wire) => [wire] }))
}

/** OpenAPI Example Objects: one `example`, or `example1`, `example2`… */
const exampleObjects = (values: ReadonlyArray<unknown>) =>
  Object.fromEntries(values.map((value, index) => [values.length === 1 ? "example" : `example${index + 1}`, { value }]))

/** An endpoint's parameters by where they go, as `OpenApi.fromApi` places them. */
export const parameterSchemas = (endpoint: {
  readonly method: HttpMethod.HttpMethod
  readonly pathSchema: Option.Option<Schema.Schema.All>
  readonly urlParamsSchema: Option.Option<Schema.Schema.All>
  readonly headersSchema: Option.Option<Schema.Schema.All>
  readonly payloadSchema: Option.Option<Schema.Schema.All>
}): Array<{ readonly in: "path" | "query" | "header"; readonly ast: AST.AST }> => [
  ...Option.toArray(endpoint.pathSchema).map((schema) => ({ in: "path" as const, ast: schema.ast })),
  ...(HttpMethod.hasBody(endpoint.method) ? [] : Option.toArray(endpoint.payloadSchema)).map((schema) => ({
    in: "query" as const,
    ast: schema.ast
  })),
  ...Option.toArray(endpoint.headersSchema).map((schema) => ({ in: "header" as const, ast: schema.ast })),
  ...Option.toArray(endpoint.urlParamsSchema).map((schema) => ({ in: "query" as const, ast: schema.ast }))
]

/**
 * Each parameter of a parameter struct with the wire form (a string) of its example: the struct's own example's
 * member when it has one, else the member's own or composed example. Members without one are left out.
 */
export const parameterExamples = (struct: AST.AST): Array<{ readonly name: string; readonly value: string }> => {
  const whole = firstExample(struct).pipe(Option.getOrUndefined) as Record<string, unknown> | undefined
  return AST.getPropertySignatures(struct).flatMap((member) => {
    const name = String(member.name)
    const example = whole !== undefined && Object.hasOwn(whole, name)
      ? Option.some(whole[name])
      : Option.orElse(firstExample(member), () => composeExample(member.type))
    if (Option.isNone(example)) return []
    const wire = encodeExample(member.type, example.value)
    return Either.isRight(wire) && typeof wire.right === "string" ? [{ name, value: wire.right }] : []
  })
}

/**
 * A parameter's example as the document's schema types it: a query integer travels as decimal text, but its schema
 * says `integer`, so its example is the number (serialized back to the same text).
 */
const asDocumented = (schema: Record<string, any> | undefined, text: string): unknown =>
  (schema?.type === "integer" || schema?.type === "number") && /^-?[0-9]+(\.[0-9]+)?$/.test(text) ? Number(text) : text

/**
 * Writes the examples into the document: `examples` on every request body's and success response's media type and
 * on every parameter, from the endpoints' schemas. Where tools look for them: Scalar and Schemathesis read the
 * operation's `examples` (a schema's own `examples` is only where a component has them).
 */
export const addExamples = (api: HttpApi.HttpApi.Any, spec: Record<string, any>): Record<string, any> => {
  HttpApi.reflect(api as HttpApi.HttpApi<string, any, any, any>, {
    onGroup() {},
    onEndpoint({ endpoint, payloads, successes }) {
      const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
      const operation = spec.paths?.[path]?.[endpoint.method.toLowerCase()]
      if (operation === undefined) return
      if (HttpMethod.hasBody(endpoint.method)) {
        for (const [contentType, { ast }] of payloads) {
          const media = operation.requestBody?.content?.[contentType]
          const values = wireExamples(ast)
          if (media !== undefined && values.length > 0) media.examples = exampleObjects(values)
        }
      }
      for (const { ast, in: location } of parameterSchemas(endpoint)) {
        for (const { name, value } of parameterExamples(ast)) {
          const parameter = (operation.parameters ?? []).find((p: any) => p.in === location && p.name === name)
          if (parameter !== undefined) parameter.examples = exampleObjects([asDocumented(parameter.schema, value)])
        }
      }
      for (const [status, { ast }] of successes) {
        if (Option.isNone(ast) || HttpApiSchema.getEmptyDecodeable(ast.value)) continue
        // A success served in a media type of its own is declared as any (`*/*`: a config object's file).
        const content = operation.responses?.[status]?.content
        const media = content?.[HttpApiSchema.getEncoding(ast.value).contentType] ?? content?.["*/*"]
        // Bytes (a file's content) can only be shown as their text in a JSON document.
        const values = wireExamples(ast.value).map((value) => value instanceof Uint8Array ? new TextDecoder().decode(value) : value)
        if (media !== undefined && values.length > 0) media.examples = exampleObjects(values)
      }
    }
  })
  return spec
}
