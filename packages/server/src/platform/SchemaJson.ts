/**
 * A schema's encoder compiled once into a plain function: a value of the schema's type in, the value Schema's own
 * encoder would give (ready for `JSON.stringify`) out, with no Effect, no `Option` and no issue built on the way.
 * Schema's encoder interprets the AST for every value (a page of 50 members: 255 µs, where the compiled function takes
 * about 30), which made encoding the largest single cost of a list answer (issue 71).
 *
 * What it is: Schema's encoding with `disableChecks` (every transformation, no refinement) for the ASTs an HTTP answer
 * is made of: objects (declared keys in declared order, optional keys left out when absent, string index signatures),
 * arrays and tuples, unions, literals and primitives, declarations with an encoding (classes, dates) or none, and
 * suspended (recursive) schemas, through transformations whose getters are synchronous (passthrough, transform,
 * transform optional). `compile` answers `undefined` for an AST with anything else (an effectful getter, a middleware,
 * a declaration that encodes with its own parser): such a schema stays with Schema's encoder.
 *
 * A union's member is the first whose type the value is (`Schema.is` of the member's type side), as Schema's encoder
 * tries them in order; null and undefined go straight to a `Null` or `Undefined` member.
 *
 * Proven equal to `Schema.encodeUnknownSync` + `JSON.stringify` over values generated from every response schema of
 * the API (test/SchemaJson.test.ts), and checked against it on every answer while the test suites run
 * (ResponseEncoding.ts).
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import type * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** A compiled encoder: a value of the type in, its encoded form out. */
export type Encoder = (value: unknown) => unknown

/** Thrown by an encoder when a value's optional transformation leaves nothing where the AST needs a value. */
export class NotEncodable extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

const identity: Encoder = (value) => value

/** A getter as a function of a present value, or of an optional one (`TransformOptional`), or none. */
type Step =
  | { readonly _tag: "Value"; readonly run: Encoder }
  | { readonly _tag: "Optional"; readonly run: (value: Option.Option<unknown>) => Option.Option<unknown> }

const stepOf = (getter: SchemaGetter.Getter<unknown, unknown, unknown>): Step | undefined => {
  switch (getter._tag) {
    case "Passthrough":
      return { _tag: "Value", run: identity }
    case "Transform":
      return { _tag: "Value", run: getter.transform }
    case "TransformOptional":
      return { _tag: "Optional", run: getter.transform }
    default:
      return undefined
  }
}

/** The encoding direction of an AST's links: the first link's getter first, the last link's `to` encoded last. */
const linksOf = (encoding: SchemaAST.Encoding): ReadonlyArray<Step> | undefined => {
  const steps: Array<Step> = []
  for (const link of encoding) {
    if (!SchemaTransformation.isTransformation(link.transformation)) return undefined
    const step = stepOf(link.transformation.encode)
    if (step === undefined) return undefined
    steps.push(step)
  }
  return steps
}

/** The steps as one function on an optional value (`None`: the key is absent). */
const optionalChain = (steps: ReadonlyArray<Step>, last: Encoder) => (input: Option.Option<unknown>): Option.Option<unknown> => {
  let current = input
  for (const step of steps) {
    current = step._tag === "Value" ? Option.map(current, step.run) : step.run(current)
  }
  return Option.map(current, last)
}

/** The steps as one function on a present value. */
const valueChain = (steps: ReadonlyArray<Step>, last: Encoder): Encoder => {
  if (steps.every((step) => step._tag === "Value")) {
    const runs = steps.flatMap((step) => step._tag === "Value" && step.run !== identity ? [step.run] : [])
    if (runs.length === 0) return last
    if (runs.length === 1) {
      const [run] = runs
      return last === identity ? run : (value) => last(run(value))
    }
    return (value) => {
      let current = value
      for (const run of runs) current = run(current)
      return last(current)
    }
  }
  const chain = optionalChain(steps, last)
  return (value) => {
    const out = chain(Option.some(value))
    if (Option.isNone(out)) throw new NotEncodable("an optional transformation left no value")
    return out.value
  }
}

/** The compiler's memory: one encoder per AST, so shared and recursive schemas compile once. */
interface Compiling {
  readonly done: Map<SchemaAST.AST, Encoder | undefined>
}

/** The AST's encoder, or `undefined` when it holds what this compiler does not encode (see the module comment). */
export const compile = (ast: SchemaAST.AST): Encoder | undefined => compileWith(ast, { done: new Map() })

const compileWith = (ast: SchemaAST.AST, state: Compiling): Encoder | undefined => {
  if (state.done.has(ast)) return state.done.get(ast)
  // A placeholder for a recursive reference met while this AST compiles: it calls the finished encoder.
  let finished: Encoder | undefined
  state.done.set(ast, (value) => {
    if (finished === undefined) throw new NotEncodable("a recursive schema was used before it compiled")
    return finished(value)
  })
  finished = compileNode(ast, state)
  state.done.set(ast, finished)
  return finished
}

const compileNode = (ast: SchemaAST.AST, state: Compiling): Encoder | undefined => {
  if (ast.encoding !== undefined) {
    const steps = linksOf(ast.encoding)
    if (steps === undefined) return undefined
    const to = ast.encoding[ast.encoding.length - 1].to
    const last = compileWith(to, state)
    return last === undefined ? undefined : valueChain(steps, last)
  }
  switch (ast._tag) {
    case "Null":
    case "Undefined":
    case "Void":
    case "Unknown":
    case "Any":
    case "String":
    case "Number":
    case "Boolean":
    case "Literal":
    case "Enum":
    case "TemplateLiteral":
    case "ObjectKeyword":
      return identity
    case "Declaration":
      // A declaration without an encoding encodes with its own parser unless it has none to run on its parts.
      return ast.typeParameters.length === 0 && ast.encodingRun === undefined ? identity : undefined
    case "Suspend":
      return compileWith(ast.thunk(), state)
    case "Arrays":
      return compileArrays(ast, state)
    case "Objects":
      return compileObjects(ast, state)
    case "Union":
      return compileUnion(ast, state)
    default:
      return undefined
  }
}

const compileArrays = (ast: SchemaAST.Arrays, state: Compiling): Encoder | undefined => {
  if (ast.rest.length > 1) return undefined
  const elements: Array<Encoder> = []
  for (const element of ast.elements) {
    if (SchemaAST.isOptional(element)) return undefined
    const encoder = compileWith(element, state)
    if (encoder === undefined) return undefined
    elements.push(encoder)
  }
  const rest = ast.rest.length === 1 ? compileWith(ast.rest[0], state) : identity
  if (rest === undefined) return undefined
  const fixed = elements.length
  return (value) => {
    if (!Array.isArray(value)) throw new NotEncodable("expected an array")
    const out = new Array<unknown>(value.length)
    for (let index = 0; index < value.length; index++) {
      out[index] = index < fixed ? elements[index](value[index]) : rest(value[index])
    }
    return out
  }
}

/** A declared key: its value encoded, or, where its links hold an optional getter, its presence encoded with it. */
type Property =
  | { readonly _tag: "Value"; readonly name: string; readonly optional: boolean; readonly encode: Encoder }
  | {
    readonly _tag: "Optional"
    readonly name: string
    readonly optional: boolean
    readonly encode: (value: Option.Option<unknown>) => Option.Option<unknown>
  }

const compileProperty = (signature: SchemaAST.PropertySignature, state: Compiling): Property | undefined => {
  // A declared `__proto__` would need its own way of being set; no answer of the API declares one.
  if (typeof signature.name !== "string" || signature.name === "__proto__") return undefined
  const type = signature.type
  const optional = SchemaAST.isOptional(type)
  const steps = type.encoding === undefined ? undefined : linksOf(type.encoding)
  if (type.encoding !== undefined && steps === undefined) return undefined
  if (steps !== undefined && type.encoding !== undefined && steps.some((step) => step._tag === "Optional")) {
    const last = compileWith(type.encoding[type.encoding.length - 1].to, state)
    if (last === undefined) return undefined
    return { _tag: "Optional", name: signature.name, optional, encode: optionalChain(steps, last) }
  }
  const encode = compileWith(type, state)
  return encode === undefined ? undefined : { _tag: "Value", name: signature.name, optional, encode }
}

const compileObjects = (ast: SchemaAST.Objects, state: Compiling): Encoder | undefined => {
  const properties: Array<Property> = []
  for (const signature of ast.propertySignatures) {
    const property = compileProperty(signature, state)
    if (property === undefined) return undefined
    properties.push(property)
  }
  if (ast.indexSignatures.length > 1) return undefined
  const index = ast.indexSignatures[0]
  let indexed: Encoder | undefined
  if (index !== undefined) {
    if (index.parameter._tag !== "String" || index.parameter.encoding !== undefined) return undefined
    indexed = compileWith(index.type, state)
    if (indexed === undefined) return undefined
  }
  const declared = new Set(properties.map((property) => property.name))
  return (value) => {
    if (typeof value !== "object" || value === null) throw new NotEncodable("expected an object")
    const input: Readonly<Record<string, unknown>> = Object(value)
    const out: Record<string, unknown> = {}
    for (const property of properties) {
      const present = Object.hasOwn(input, property.name)
      if (property._tag === "Optional") {
        const encoded = property.encode(present ? Option.some(input[property.name]) : Option.none())
        if (Option.isSome(encoded)) out[property.name] = encoded.value
        else if (!property.optional) throw new NotEncodable(`"${property.name}" encoded to nothing`)
        continue
      }
      if (!present) {
        if (property.optional) continue
        throw new NotEncodable(`"${property.name}" is missing`)
      }
      out[property.name] = property.encode(input[property.name])
    }
    if (indexed !== undefined) {
      for (const key of Object.keys(input)) {
        if (!declared.has(key)) setOwn(out, key, indexed(input[key]))
      }
    }
    return out
  }
}

/** Sets an own key, `__proto__` included (an assignment to it would set the object's prototype instead). */
const setOwn = (target: Record<string, unknown>, key: string, value: unknown) => {
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}

const compileUnion = (ast: SchemaAST.Union, state: Compiling): Encoder | undefined => {
  const members: Array<{ readonly is: (value: unknown) => boolean; readonly encode: Encoder }> = []
  let hasNull = false
  let hasUndefined = false
  for (const member of ast.types) {
    if (member._tag === "Null" && member.encoding === undefined) {
      hasNull = true
      continue
    }
    if (member._tag === "Undefined" && member.encoding === undefined) {
      hasUndefined = true
      continue
    }
    const encode = compileWith(member, state)
    if (encode === undefined) return undefined
    members.push({ is: Schema.is(Schema.make(SchemaAST.toType(member))), encode })
  }
  if (members.length === 1 && (hasNull || hasUndefined)) {
    const [only] = members
    return (value) => value === null && hasNull || value === undefined && hasUndefined ? value : only.encode(value)
  }
  return (value) => {
    if (value === null && hasNull || value === undefined && hasUndefined) return value
    for (const member of members) {
      if (member.is(value)) return member.encode(value)
    }
    throw new NotEncodable("the value is none of the union's members")
  }
}
