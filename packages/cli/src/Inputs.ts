/**
 * A command's flags and arguments: the parser (`effect/cli`'s `Flag` and `Argument`) together with what the help
 * says about it. Values are checked with the API's own schemas while parsing, so bad input is a usage error (exit 2)
 * that names the flag and quotes the schema's message, before anything is sent. A description left out is taken from
 * the schema.
 */
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as Flags from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"

/** What the help shows for one flag or argument. */
export interface Doc {
  readonly kind: "flag" | "arg"
  /** `member` for `--member`, `teamId` for `<teamId>`. */
  readonly name: string
  /** The value's name in usage lines (`<id>`), empty for a switch. */
  readonly placeholder: string
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
  /** A value the examples give it: the schema's own example (an id's), else a choice's first value. */
  readonly example?: string
}

export interface Flag<A> {
  readonly parser: Flags.Flag<A>
  readonly doc: Doc
}

export interface Arg<A> {
  readonly parser: Argument.Argument<A>
  readonly doc: Doc
}

export type Input<A> = Flag<A> | Arg<A>

/** The value one input parses to. */
export type ValueOf<I> = I extends Flag<infer A> ? A : I extends Arg<infer A> ? A : never

/** The values a record of inputs parses to. */
export type Values<Inputs extends Record<string, Input<unknown>>> = {
  readonly [K in keyof Inputs]: ValueOf<Inputs[K]>
}

/** A schema that checks (and decodes) the text given: the API's own schema for the field. */
export type TextSchema<A> = Schema.Codec<A, string>

interface Spec<A> {
  /** Defaults to the schema's description. */
  readonly description?: string
  /** Defaults to `<name>` for arguments and `<text>` for flags. */
  readonly placeholder?: string
  /** Checks (and decodes) the text given; the API's own schema for the field. */
  readonly schema?: TextSchema<A>
}

interface ListSpec<A> {
  readonly description?: string
  readonly placeholder?: string
  /** Checks (and decodes) every text given, as one list: the API's own schema, for its limits. */
  readonly schema?: Schema.Codec<ReadonlyArray<A>, ReadonlyArray<string>>
}

/**
 * The schema's own description, else the one of what it refines or decodes to, else its wire form's (a URL field's
 * rule is told on the text it decodes from).
 */
const descriptionOf = (spec: { readonly description?: string; readonly schema?: Schema.Top }) => {
  if (spec.description !== undefined) return spec.description
  if (spec.schema === undefined) return ""
  const ast = spec.schema.ast
  return SchemaAST.resolveDescription(ast) ?? SchemaAST.resolveDescription(SchemaAST.toType(ast)) ??
    SchemaAST.resolveDescription(SchemaAST.toEncoded(ast)) ?? ""
}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first problem, labelled with the flag or argument. Never echoes the value (it may be a secret). */
const problem = (label: string) => (error: Schema.SchemaError) =>
  new CliError.ValidationError({ message: `${label}: ${formatIssue(error.issue).issues[0]?.message ?? "is not valid"}` })

const decodeWith = <A, I>(schema: Schema.Codec<A, I>, label: string) => (value: I) =>
  Effect.mapError(Schema.decodeEffect(schema)(value), problem(label))

/** The schema's first string example (every id schema has one), on either side of a transformation. */
const exampleOf = (schema: Schema.Top | undefined): { readonly example?: string } => {
  if (schema === undefined) return {}
  const examples = [schema.ast, SchemaAST.toType(schema.ast), SchemaAST.toEncoded(schema.ast)]
    .flatMap((ast) => SchemaAST.resolveAt<ReadonlyArray<unknown>>("examples")(ast) ?? [])
  const example = examples.find((value): value is string => typeof value === "string")
  return example === undefined ? {} : { example }
}

const flagDoc = (name: string, spec: { readonly description?: string; readonly placeholder?: string; readonly schema?: Schema.Top }, placeholder: string): Doc => ({
  kind: "flag",
  name,
  placeholder: spec.placeholder ?? placeholder,
  description: descriptionOf(spec),
  optional: false,
  repeated: false,
  ...exampleOf(spec.schema)
})

/** `--name <text>`, checked with `spec.schema` when given. */
export function text(name: string, spec?: Omit<Spec<string>, "schema">): Flag<string>
export function text<A>(name: string, spec: Spec<A> & { readonly schema: TextSchema<A> }): Flag<A>
export function text<A>(name: string, spec: Spec<A> = {}): Flag<A> | Flag<string> {
  const base = Flags.String(name)
  const schema = spec.schema
  const doc = flagDoc(name, spec, "<text>")
  return schema === undefined ? { parser: base, doc } : { parser: Flags.mapEffect(base, decodeWith(schema, `--${name}`)), doc }
}

/** `--name <text>`, given any number of times, checked with `spec.schema` when given at all. */
export function repeatedText(name: string, spec?: Omit<ListSpec<string>, "schema">): Flag<ReadonlyArray<string>>
export function repeatedText<A>(name: string, spec: ListSpec<A> & { readonly schema: Schema.Codec<ReadonlyArray<A>, ReadonlyArray<string>> }): Flag<ReadonlyArray<A>>
export function repeatedText<A>(name: string, spec: ListSpec<A> = {}): Flag<ReadonlyArray<A>> | Flag<ReadonlyArray<string>> {
  const base = Flags.atLeast(Flags.String(name), 0)
  const schema = spec.schema
  const doc = { ...flagDoc(name, spec, "<text>"), optional: true, repeated: true }
  return schema === undefined ? { parser: base, doc } : {
    parser: Flags.mapEffect(base, (values) => values.length === 0 ? Effect.succeed<ReadonlyArray<A>>([]) : decodeWith(schema, `--${name}`)(values)),
    doc
  }
}

/** `--name <secret>`: kept redacted, never printed. */
export const secret = (name: string, spec: { readonly description: string; readonly placeholder?: string }): Flag<Redacted.Redacted<string>> => ({
  parser: Flags.Redacted(name),
  doc: flagDoc(name, spec, "<secret>")
})

/** `--name a|b|c`. */
export const choice = <const L extends string>(name: string, values: ReadonlyArray<L>, spec: { readonly description: string }): Flag<L> => ({
  parser: Flags.Literals(name, values),
  doc: { ...flagDoc(name, spec, `<${values.join("|")}>`), ...(values[0] === undefined ? {} : { example: values[0] }) }
})

/** `--name a|b|c`, given any number of times. */
export const repeatedChoice = <const L extends string>(
  name: string,
  values: ReadonlyArray<L>,
  spec: { readonly description: string }
): Flag<ReadonlyArray<L>> => ({
  parser: Flags.atLeast(Flags.Literals(name, values), 0),
  doc: { ...flagDoc(name, spec, `<${values.join("|")}>`), optional: true, repeated: true }
})

/** `--name`: a switch, false unless given. */
export const boolean = (name: string, spec: { readonly description: string }): Flag<boolean> => ({
  parser: Flags.withDefault(Flags.Boolean(name), false),
  doc: { ...flagDoc(name, spec, ""), optional: true }
})

/** The flag may be left out: `Option.none()` then. */
export const optional = <A>(flag: Flag<A>): Flag<Option.Option<A>> => ({
  parser: Flags.optional(flag.parser),
  doc: { ...flag.doc, optional: true }
})

/** The flag may be left out: `value` then, shown in the help. */
export const withDefault = <A extends string>(flag: Flag<A>, value: A): Flag<A> => ({
  parser: Flags.withDefault(flag.parser, value),
  doc: { ...flag.doc, optional: true, description: `${flag.doc.description} Default: ${value}.`.trim() }
})

const argDoc = (name: string, spec: { readonly description?: string; readonly placeholder?: string; readonly schema?: Schema.Top }): Doc => ({
  kind: "arg",
  name,
  placeholder: spec.placeholder ?? `<${name}>`,
  description: descriptionOf(spec),
  optional: false,
  repeated: false,
  ...exampleOf(spec.schema)
})

/** A positional argument, checked with `spec.schema` when given. */
export function argument(name: string, spec?: Omit<Spec<string>, "schema">): Arg<string>
export function argument<A>(name: string, spec: Spec<A> & { readonly schema: TextSchema<A> }): Arg<A>
export function argument<A>(name: string, spec: Spec<A> = {}): Arg<A> | Arg<string> {
  const base = Argument.String(name)
  const schema = spec.schema
  const doc = argDoc(name, spec)
  return schema === undefined ? { parser: base, doc } : { parser: Argument.mapEffect(base, decodeWith(schema, name)), doc }
}

/** A positional argument that may be left out (the last one), checked with `spec.schema` when given. */
export function optionalArgument(name: string, spec?: Omit<Spec<string>, "schema">): Arg<Option.Option<string>>
export function optionalArgument<A>(name: string, spec: Spec<A> & { readonly schema: TextSchema<A> }): Arg<Option.Option<A>>
export function optionalArgument<A>(name: string, spec: Spec<A> = {}): Arg<Option.Option<A>> | Arg<Option.Option<string>> {
  const base = Argument.String(name)
  const schema = spec.schema
  const doc = { ...argDoc(name, spec), optional: true }
  return schema === undefined
    ? { parser: Argument.optional(base), doc }
    : { parser: Argument.optional(Argument.mapEffect(base, decodeWith(schema, name))), doc }
}

/** One or more positional arguments at the end, checked with `spec.schema`. */
export function variadic(name: string, spec?: Omit<ListSpec<string>, "schema">): Arg<ReadonlyArray<string>>
export function variadic<A>(name: string, spec: ListSpec<A> & { readonly schema: Schema.Codec<ReadonlyArray<A>, ReadonlyArray<string>> }): Arg<ReadonlyArray<A>>
export function variadic<A>(name: string, spec: ListSpec<A> = {}): Arg<ReadonlyArray<A>> | Arg<ReadonlyArray<string>> {
  const base = Argument.atLeast(Argument.String(name), 1)
  const schema = spec.schema
  const doc = { ...argDoc(name, spec), repeated: true }
  return schema === undefined ? { parser: base, doc } : { parser: Argument.mapEffect(base, decodeWith(schema, name)), doc }
}

/** A positional argument that is one of `values`. */
export const argumentChoice = <const L extends string>(
  name: string,
  values: ReadonlyArray<L>,
  spec: { readonly description: string }
): Arg<L> => ({
  parser: Argument.Literals(name, values),
  doc: { ...argDoc(name, spec), placeholder: `<${values.join("|")}>`, ...(values[0] === undefined ? {} : { example: values[0] }) }
})

/**
 * The words a repeated flag gave, checked as one list with the API's own schema of that list (its members' rules,
 * its limits).
 */
export const wordsAs = <S extends Schema.Codec<ReadonlyArray<unknown>, ReadonlyArray<unknown>>>(schema: S) =>
  Schema.Array(Schema.String).pipe(Schema.decodeTo(schema, SchemaTransformation.passthrough({ strict: false })))

/** `{ [key]: value }` when the option holds one, else `{}`: optional request members are absent, never undefined. */
export const ifSome = <const K extends string, A>(key: K, option: Option.Option<A>): { readonly [P in K]?: A } =>
  Option.isSome(option) ? ({ [key]: option.value } as { readonly [P in K]: A }) : {}
