/**
 * Encoding a handler's answer without checking it again. A handler answers with values the server made itself: class
 * instances built from rows of its own tables, checked as they were read or written. The platform encodes every
 * answer through its success schema, which validates the whole value again on the way out (every id's pattern, every
 * date, every literal) before it transforms it: for a page of 50 members that was about 900 µs of CPU against 140 µs
 * for building the same JSON by hand.
 *
 * `encoder(ast)` compiles, once per schema, a function that does only the transformations of the encode direction (a
 * `Date` to its ISO string, a class to its fields, a struct to its declared keys, an array item by item, the member
 * of a union whose type the value has) and skips the checks that would only repeat what is already known. What it
 * does not know how to do without checking (a declaration with type parameters, a struct with renamed or defaulted
 * keys, a tuple, an effectful transformation) it leaves to the schema's own encoder, checks included. The result is
 * the JSON the schema's encoder would give for any value of the schema's type; a value that is not of it (a bug)
 * throws, and the caller lets the platform's encoder answer, which reports the bug as before.
 *
 * What is not checked any more: a handler's value that has the schema's shape but breaks one of its refinements (an
 * id of the wrong pattern, a negative count where the schema says positive) is sent as it is, where the platform
 * answered 500. With `ORGPLANE_CHECK_RESPONSE_ENCODING=1` (set by the test suite) every answer is also encoded by
 * the schema: a value it refuses is answered by the platform's encoder (500, as before), and a difference from the
 * schema's JSON is a defect (500), so the whole suite checks both the handlers and this module.
 */
import { type HttpApiEndpoint, HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Either, ParseResult, Schema, SchemaAST as AST } from "effect"

type Encode = (value: unknown) => unknown

const identity: Encode = (value) => value

/** The schema's own encoder for what this module does not compile: checks included, synchronous. */
const checked = (ast: AST.AST): Encode => ParseResult.encodeUnknownSync(Schema.make(ast))

/** A synchronous transformation's result, or a throw (the schema's own encoder then answers). */
const run = (result: unknown): unknown => {
  if (Either.isEither(result)) {
    if (Either.isRight(result)) return result.right
    throw new Error("transformation failed")
  }
  throw new Error("transformation is not synchronous")
}

const compiled = new WeakMap<AST.AST, Encode>()

export const encoder = (ast: AST.AST): Encode => {
  const found = compiled.get(ast)
  if (found !== undefined) return found
  // Recursive schemas (a Suspend reaching this AST again) find the placeholder, which calls the compiled function.
  let target: Encode | undefined
  compiled.set(ast, (value) => target!(value))
  target = compile(ast)
  compiled.set(ast, target)
  return target
}

const compile = (ast: AST.AST): Encode => {
  switch (ast._tag) {
    case "StringKeyword":
    case "NumberKeyword":
    case "BooleanKeyword":
    case "Literal":
    case "Enums":
    case "TemplateLiteral":
    case "UnknownKeyword":
    case "AnyKeyword":
    case "UndefinedKeyword":
    case "VoidKeyword":
    case "ObjectKeyword":
      return identity
    case "Refinement":
      return encoder(ast.from)
    case "Suspend": {
      let inner: Encode | undefined
      return (value) => (inner ??= encoder(ast.f()))(value)
    }
    case "Declaration":
      // A declared type without parameters (a class's instance, `DateFromSelf`) encodes as itself once checked.
      return ast.typeParameters.length === 0 ? identity : checked(ast)
    case "Transformation": {
      if (ast.transformation._tag === "TypeLiteralTransformation") return checked(ast)
      const to = encoder(ast.to)
      const from = encoder(ast.from)
      if (ast.transformation._tag === "ComposeTransformation") return (value) => from(to(value))
      const transform = ast.transformation.encode
      return (value) => {
        const typed = to(value)
        return from(run(transform(typed, AST.defaultParseOption, ast, typed)))
      }
    }
    case "TypeLiteral": {
      if (ast.indexSignatures.length > 0) return checked(ast)
      const fields = ast.propertySignatures.map((ps) => [ps.name, ps.isOptional, encoder(ps.type)] as const)
      return (value) => {
        if (typeof value !== "object" || value === null) throw new Error("expected an object")
        const out: Record<PropertyKey, unknown> = {}
        for (const [name, optional, encode] of fields) {
          if (Object.prototype.hasOwnProperty.call(value, name)) out[name] = encode((value as any)[name])
          else if (!optional) throw new Error(`missing ${String(name)}`)
        }
        return out
      }
    }
    case "TupleType": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return checked(ast)
      const item = encoder(ast.rest[0]!.type)
      return (value) => {
        if (!Array.isArray(value)) throw new Error("expected an array")
        return value.map((element) => item(element))
      }
    }
    case "Union": {
      // Literals first (`null` of a `NullOr`): a comparison, where a member's guard may run its checks.
      const literals = ast.types.filter(AST.isLiteral).map((member) => member.literal)
      const members = ast.types.filter((member) => !AST.isLiteral(member))
        .map((member) => [Schema.is(Schema.make(AST.typeAST(member))), encoder(member)] as const)
      return (value) => {
        if (literals.includes(value as AST.LiteralValue)) return value
        for (const [is, encode] of members) if (is(value)) return encode(value)
        throw new Error("no member of the union")
      }
    }
    default:
      return checked(ast)
  }
}

/** Whether every answer is also encoded by its schema and compared (the test suite sets it). */
const verify = typeof process !== "undefined" && process.env.ORGPLANE_CHECK_RESPONSE_ENCODING === "1"

export class EncodingMismatch extends Error {}

/**
 * The response of an endpoint's success, made here when the endpoint has one success schema of JSON with a body;
 * `undefined` for others, and for a value this module cannot encode (the platform's encoder then answers).
 */
export const successResponder = (
  endpoint: HttpApiEndpoint.HttpApiEndpoint.AnyWithProps
): ((value: unknown) => HttpServerResponse.HttpServerResponse | undefined) | undefined => {
  const schemas = new Set<Schema.Schema.Any>()
  HttpApiSchema.deunionize(schemas, endpoint.successSchema)
  if (schemas.size !== 1) return undefined
  const [schema] = schemas as unknown as [Schema.Schema.Any]
  if (HttpApiSchema.isVoid(schema.ast)) return undefined
  const encoding = HttpApiSchema.getEncoding(schema.ast)
  if (encoding.kind !== "Json") return undefined
  const status = HttpApiSchema.getStatusSuccessAST(schema.ast)
  const encode = encoder(schema.ast)
  const reference = verify ? ParseResult.encodeUnknownSync(schema as Schema.Schema<unknown, unknown>) : undefined
  const options = { status, contentType: encoding.contentType }
  return (value) => {
    let body: string
    try {
      body = JSON.stringify(encode(value))
    } catch {
      return undefined
    }
    if (reference !== undefined) {
      let expected: string
      try {
        expected = JSON.stringify(reference(value))
      } catch {
        // A value its schema refuses: the platform's encoder reports it (500), as without this module.
        return undefined
      }
      if (expected !== body) throw new EncodingMismatch(`fast encoding differs from the schema's:\n${body}\n${expected}`)
    }
    return HttpServerResponse.text(body, options)
  }
}
