/**
 * A command's flags and arguments: the parser (`@effect/cli`) together with what the help says about it. Values are
 * checked with the API's own schemas while parsing, so bad input is a usage error (exit 2) that names the flag and
 * quotes the schema's message, before anything is sent. A description left out is taken from the schema.
 */
import { Args, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect, Option, ParseResult, Schema, SchemaAST } from "effect"

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
}

export interface Flag<A> {
  readonly parser: Options.Options<A>
  readonly doc: Doc
}

export interface Arg<A> {
  readonly parser: Args.Args<A>
  readonly doc: Doc
}

export type Input<A> = Flag<A> | Arg<A>

/** The values a record of inputs parses to. */
export type Values<Inputs extends Record<string, Input<any>>> = {
  readonly [K in keyof Inputs]: Inputs[K] extends Input<infer A> ? A : never
}

interface Spec<A> {
  /** Defaults to the schema's description. */
  readonly description?: string
  /** Defaults to `<name>` for arguments and `<text>` for flags. */
  readonly placeholder?: string
  /** Checks (and decodes) the text given; the API's own schema for the field. */
  readonly schema?: Schema.Schema<A, string>
}

interface ListSpec<A> {
  readonly description?: string
  readonly placeholder?: string
  /** Checks (and decodes) every text given, as one list: the API's own schema, for its limits. */
  readonly schema?: Schema.Schema<ReadonlyArray<A>, ReadonlyArray<string>>
}

const descriptionOf = (spec: { readonly description?: string; readonly schema?: Schema.Schema.AnyNoContext }) => {
  if (spec.description !== undefined) return spec.description
  if (spec.schema === undefined) return ""
  const ast = spec.schema.ast
  const own = SchemaAST.getDescriptionAnnotation(ast)
  const described = Option.isSome(own) ? own : ast._tag === "Refinement" || ast._tag === "Transformation"
    ? SchemaAST.getDescriptionAnnotation(ast._tag === "Refinement" ? ast.from : ast.to)
    : Option.none()
  return Option.getOrElse(described, () => "")
}

/** The first problem, labelled with the flag or argument. Never echoes the value (it may be a secret). */
const problem = (label: string) => (issue: ParseResult.ParseIssue) => {
  const [first] = ParseResult.ArrayFormatter.formatIssueSync(issue)
  return HelpDoc.p(`${label}: ${first?.message ?? "is not valid"}`)
}

const decodeWith = <A, I>(schema: Schema.Schema<A, I>, label: string) => (value: unknown) =>
  Effect.mapError(ParseResult.decodeUnknown(schema)(value), (issue) => ValidationError.invalidValue(problem(label)(issue)))

const checkOption = <A, I>(self: Options.Options<I>, label: string, schema: Schema.Schema<A, I>) =>
  Options.mapEffect(self, decodeWith(schema, label))

const checkArg = <A, I>(self: Args.Args<I>, label: string, schema: Schema.Schema<A, I>) =>
  Args.mapEffect(self, (value) => Effect.mapError(ParseResult.decodeUnknown(schema)(value), problem(label)))

const flagDoc = (name: string, spec: Spec<any> | ListSpec<any>, placeholder: string): Doc => ({
  kind: "flag",
  name,
  placeholder: spec.placeholder ?? placeholder,
  description: descriptionOf(spec),
  optional: false,
  repeated: false
})

/** `--name <text>`, checked with `spec.schema` when given. */
export const text = <A = string>(name: string, spec: Spec<A> = {}): Flag<A> => {
  const base = Options.text(name)
  return {
    parser: spec.schema === undefined ? base as unknown as Options.Options<A> : checkOption(base, `--${name}`, spec.schema),
    doc: flagDoc(name, spec, "<text>")
  }
}

/** `--name <text>`, given any number of times, checked with `spec.schema` when given at all. */
export const repeatedText = <A = string>(name: string, spec: ListSpec<A> = {}): Flag<ReadonlyArray<A>> => {
  const base = Options.repeated(Options.text(name))
  const schema = spec.schema
  return {
    parser: schema === undefined
      ? base as unknown as Options.Options<ReadonlyArray<A>>
      : Options.mapEffect(base, (values) => values.length === 0 ? Effect.succeed([]) : decodeWith(schema, `--${name}`)(values)),
    doc: { ...flagDoc(name, spec, "<text>"), optional: true, repeated: true }
  }
}

/** `--name <secret>`: kept redacted, never printed. */
export const secret = (name: string, spec: { readonly description: string; readonly placeholder?: string }) => ({
  parser: Options.redacted(name),
  doc: flagDoc(name, spec, "<secret>")
})

/** `--name a|b|c`. */
export const choice = <const L extends string>(name: string, values: ReadonlyArray<L>, spec: { readonly description: string }): Flag<L> => ({
  parser: Options.choice(name, values),
  doc: flagDoc(name, spec, `<${values.join("|")}>`)
})

/** `--name a|b|c`, given any number of times. */
export const repeatedChoice = <const L extends string>(
  name: string,
  values: ReadonlyArray<L>,
  spec: { readonly description: string }
): Flag<ReadonlyArray<L>> => ({
  parser: Options.repeated(Options.choice(name, values)),
  doc: { ...flagDoc(name, spec, `<${values.join("|")}>`), optional: true, repeated: true }
})

/** `--name`: a switch, false unless given. */
export const boolean = (name: string, spec: { readonly description: string }): Flag<boolean> => ({
  parser: Options.boolean(name),
  doc: { ...flagDoc(name, spec, ""), optional: true }
})

/** The flag may be left out: `Option.none()` then. */
export const optional = <A>(flag: Flag<A>): Flag<Option.Option<A>> => ({
  parser: Options.optional(flag.parser),
  doc: { ...flag.doc, optional: true }
})

/** The flag may be left out: `value` then, shown in the help. */
export const withDefault = <A extends string>(flag: Flag<A>, value: A): Flag<A> => ({
  parser: Options.withDefault(flag.parser, value),
  doc: { ...flag.doc, optional: true, description: `${flag.doc.description} Default: ${value}.`.trim() }
})

const argDoc = (name: string, spec: Spec<any> | ListSpec<any>): Doc => ({
  kind: "arg",
  name,
  placeholder: spec.placeholder ?? `<${name}>`,
  description: descriptionOf(spec),
  optional: false,
  repeated: false
})

/** A positional argument, checked with `spec.schema` when given. */
export const argument = <A = string>(name: string, spec: Spec<A> = {}): Arg<A> => {
  const base = Args.text({ name })
  return {
    parser: spec.schema === undefined ? base as unknown as Args.Args<A> : checkArg(base, name, spec.schema),
    doc: argDoc(name, spec)
  }
}

/** A positional argument that may be left out (the last one), checked with `spec.schema` when given. */
export const optionalArgument = <A = string>(name: string, spec: Spec<A> = {}): Arg<Option.Option<A>> => {
  const one = argument(name, spec)
  return { parser: Args.optional(one.parser), doc: { ...one.doc, optional: true } }
}

/** One or more positional arguments at the end, checked with `spec.schema`. */
export const variadic = <A = string>(name: string, spec: ListSpec<A> = {}): Arg<ReadonlyArray<A>> => {
  const base = Args.atLeast(Args.text({ name }), 1)
  return {
    parser: spec.schema === undefined
      ? base as unknown as Args.Args<ReadonlyArray<A>>
      : checkArg(base, name, spec.schema),
    doc: { ...argDoc(name, spec), repeated: true }
  }
}

/** A positional argument that is one of `values`. */
export const argumentChoice = <const L extends string>(
  name: string,
  values: ReadonlyArray<L>,
  spec: { readonly description: string }
): Arg<L> => ({
  parser: Args.choice(values.map((value) => [value, value] as [string, L]), { name }),
  doc: { ...argDoc(name, spec), placeholder: `<${values.join("|")}>` }
})

/** `{ [key]: value }` when the option holds one, else `{}`: optional request members are absent, never undefined. */
export const ifSome = <const K extends string, A>(key: K, option: Option.Option<A>): { readonly [P in K]?: A } =>
  Option.isSome(option) ? ({ [key]: option.value } as { readonly [P in K]: A }) : {}
