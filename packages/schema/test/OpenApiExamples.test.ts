/**
 * The API's examples: every one a schema declares is a value of that schema, every request body, parameter and
 * success response of the OpenAPI document has one, and each is what its schema reads (a request) or writes (a
 * response) on the wire. Generic over the API: a new endpoint or schema is checked without touching this file.
 */
import { HttpApi, HttpApiSchema, HttpMethod } from "@effect/platform"
import { Api, OpenApiExamples, openApiDocument } from "@orgplane/schema"
import { Either, Equal, Option, Schema, SchemaAST as AST } from "effect"
import { describe, expect, it } from "vitest"

interface Endpoint {
  /** `teams.create (POST /v1/teams)`, for failure messages. */
  readonly name: string
  readonly operation: Record<string, any>
  readonly payloads: ReadonlyMap<string, { readonly ast: AST.AST }>
  readonly parameters: ReadonlyArray<{ readonly in: string; readonly ast: AST.AST }>
  readonly successes: ReadonlyMap<number, { readonly ast: Option.Option<AST.AST> }>
  readonly errors: ReadonlyMap<number, { readonly ast: Option.Option<AST.AST> }>
  readonly hasBody: boolean
}

const document: Record<string, any> = openApiDocument()

const endpoints: Array<Endpoint> = []
HttpApi.reflect(Api, {
  onGroup() {},
  onEndpoint({ endpoint, errors, group, payloads, successes }) {
    const path = endpoint.path.replace(/:(\w+)\??/g, "{$1}")
    const operation = document.paths[path]?.[endpoint.method.toLowerCase()]
    if (operation === undefined) throw new Error(`${group.identifier}.${endpoint.name}: not in the document`)
    endpoints.push({
      name: `${operation.operationId} (${endpoint.method} ${path})`,
      operation,
      payloads,
      parameters: OpenApiExamples.parameterSchemas(endpoint),
      successes,
      errors,
      hasBody: HttpMethod.hasBody(endpoint.method)
    })
  }
})

const examplesOf = (media: Record<string, any> | undefined): Array<unknown> =>
  Object.values<any>(media?.examples ?? {}).map((example) => example.value)

const decode = (ast: AST.AST, value: unknown) => Schema.decodeUnknownEither(Schema.make(ast))(value)
const encode = (ast: AST.AST, value: unknown) => Schema.encodeUnknownEither(Schema.make(ast))(value)

/** Cursors: opaque positions only the server issues (signed), so a made-up one is refused; they have no example. */
const serverIssued = (parameter: Record<string, any>) => parameter.in === "query" && parameter.name === "cursor"

describe("the API's examples", () => {
  it("are values of their own schemas, written and read back unchanged", () => {
    const offenders: Array<string> = []
    let checked = 0
    const seen = new Set<AST.AST>()
    const check = (ast: AST.AST, annotated: AST.Annotated, where: string) => {
      for (const example of Option.getOrElse(AST.getExamplesAnnotation(annotated), () => [])) {
        checked++
        const wire = encode(ast, example)
        if (Either.isLeft(wire)) {
          offenders.push(`${where}: example ${JSON.stringify(example)} is refused: ${wire.left.message}`)
          continue
        }
        // Read back from its encoded form (not through JSON: inside an error class, Type-side schemas carry Dates).
        const again = Either.flatMap(decode(ast, wire.right), (value) => encode(ast, value))
        if (Either.isLeft(again) || !Equal.equals(JSON.stringify(again.right), JSON.stringify(wire.right))) {
          offenders.push(`${where}: example ${JSON.stringify(wire.right)} does not read back: ${Either.isLeft(again) ? again.left.message : JSON.stringify(again.right)}`)
        }
      }
    }
    const walk = (ast: AST.AST, where: string): void => {
      if (seen.has(ast)) return
      seen.add(ast)
      check(ast, ast, where)
      switch (ast._tag) {
        case "TypeLiteral":
          for (const member of ast.propertySignatures) {
            const at = `${where}.${String(member.name)}`
            check(member.type, member, at)
            walk(member.type, at)
          }
          return
        case "TupleType":
          ast.elements.forEach((element, index) => walk(element.type, `${where}[${index}]`))
          ast.rest.forEach((rest) => walk(rest.type, `${where}[]`))
          return
        case "Union":
          return ast.types.forEach((member) => walk(member, where))
        case "Refinement":
          return walk(ast.from, where)
        case "Transformation":
          walk(ast.from, where)
          return walk(ast.to, where)
        case "Declaration":
          return ast.typeParameters.forEach((parameter) => walk(parameter, where))
        case "Suspend":
          return walk(ast.f(), where)
      }
    }
    for (const endpoint of endpoints) {
      for (const [contentType, { ast }] of endpoint.payloads) walk(ast, `${endpoint.name} body ${contentType}`)
      for (const { ast, in: location } of endpoint.parameters) walk(ast, `${endpoint.name} ${location}`)
      for (const [status, { ast }] of endpoint.successes) Option.map(ast, (ast) => walk(ast, `${endpoint.name} ${status}`))
      for (const [status, { ast }] of endpoint.errors) Option.map(ast, (ast) => walk(ast, `${endpoint.name} ${status}`))
    }
    expect(offenders).toEqual([])
    expect(checked).toBeGreaterThan(100)
  })

  it("give every request body, parameter and success response of the document an example", () => {
    const missing: Array<string> = []
    for (const { hasBody, name, operation, payloads } of endpoints) {
      for (const [contentType, media] of Object.entries<any>(operation.requestBody?.content ?? {})) {
        if (examplesOf(media).length === 0) missing.push(`${name}: request body ${contentType}`)
      }
      // A request is shown as someone would send it, written for it: not put together from its members' examples.
      for (const [contentType, { ast }] of hasBody ? payloads : []) {
        if (Option.isNone(OpenApiExamples.ownExamples(ast))) missing.push(`${name}: request body ${contentType} has no example of its own`)
      }
      for (const parameter of operation.parameters ?? []) {
        if (!serverIssued(parameter) && examplesOf(parameter).length === 0) missing.push(`${name}: ${parameter.in} parameter ${parameter.name}`)
      }
      for (const [status, response] of Object.entries<any>(operation.responses ?? {})) {
        if (!status.startsWith("2")) continue
        for (const [contentType, media] of Object.entries<any>(response.content ?? {})) {
          if (examplesOf(media).length === 0) missing.push(`${name}: ${status} response ${contentType}`)
        }
      }
    }
    expect(missing).toEqual([])
  })

  it("in the document are read by the request's schemas: bodies, path and query parameters", () => {
    const offenders: Array<string> = []
    for (const endpoint of endpoints) {
      if (endpoint.hasBody) {
        for (const [contentType, { ast }] of endpoint.payloads) {
          for (const example of examplesOf(endpoint.operation.requestBody?.content?.[contentType])) {
            const read = decode(ast, example)
            if (Either.isLeft(read)) offenders.push(`${endpoint.name} body ${JSON.stringify(example)}: ${read.left.message}`)
          }
        }
      }
      for (const { ast, in: location } of endpoint.parameters) {
        for (const member of AST.getPropertySignatures(ast)) {
          const parameter = (endpoint.operation.parameters ?? []).find((p: any) => p.in === location && p.name === member.name)
          for (const example of examplesOf(parameter)) {
            // What travels is text: `20`, not 20.
            const read = decode(member.type, String(example))
            if (Either.isLeft(read)) offenders.push(`${endpoint.name} ${location} ${String(member.name)} ${JSON.stringify(example)}: ${read.left.message}`)
          }
        }
      }
    }
    expect(offenders).toEqual([])
  })

  it("in the document are what the responses' schemas write: read and written back unchanged", () => {
    const offenders: Array<string> = []
    let checked = 0
    for (const endpoint of endpoints) {
      for (const [status, { ast }] of endpoint.successes) {
        if (Option.isNone(ast) || HttpApiSchema.getEmptyDecodeable(ast.value)) continue
        const contentType = HttpApiSchema.getEncoding(ast.value).contentType
        // Bytes are shown as their text (OpenApiExamples.addExamples): read back as the bytes they stand for.
        const bytes = HttpApiSchema.getEncoding(ast.value).kind === "Uint8Array"
        for (const shown of examplesOf(endpoint.operation.responses?.[status]?.content?.[contentType])) {
          checked++
          const example = bytes && typeof shown === "string" ? new TextEncoder().encode(shown) : shown
          const again = Either.flatMap(decode(ast.value, example), (value) => encode(ast.value, value))
          if (Either.isLeft(again)) offenders.push(`${endpoint.name} ${status}: ${again.left.message}`)
          else if (JSON.stringify(again.right) !== JSON.stringify(example)) {
            offenders.push(`${endpoint.name} ${status}: ${JSON.stringify(example)} is written back as ${JSON.stringify(again.right)}`)
          }
        }
      }
    }
    expect(offenders).toEqual([])
    expect(checked).toBeGreaterThan(100)
  })
})
