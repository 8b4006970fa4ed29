/**
 * The examples of the OpenAPI document, from the schemas' `examples` annotations: every request body, parameter and
 * success response shows the example its schema has, or one composed from the examples of what it is made of (a
 * `{ team: Team }` response from the `Team` example), encoded by that schema, so it is exactly what goes over the wire.
 *
 * Ported so far: the part that reads schemas (composing, encoding and listing examples). The part that writes them
 * into the document (`parameterSchemas`, `parameterExamples`, `addExamples`) walks an `HttpApi` and the generated
 * document, and moves with the `*Api.ts` definitions and the OpenAPI normalisation step.
 */
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

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
