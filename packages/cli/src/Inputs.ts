/**
 * Flags and arguments checked with the API's own schemas while parsing, so bad input is a usage error (exit 2)
 * that names the flag, before anything is sent.
 */
import { Args, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect, Option, ParseResult, type Schema } from "effect"

/** The first problem, with the flag or argument it concerns. Never echoes the value (it may be a secret). */
const problem = (label: string) => (issue: ParseResult.ParseIssue) => {
  const [first] = ParseResult.ArrayFormatter.formatIssueSync(issue)
  return HelpDoc.p(`${label}: ${first?.message ?? "is not valid"}`)
}

/** A flag checked with `schema`; for a repeated flag, give `Schema.Array(item)` (repeat before checking). */
export const option = <A, I = string>(self: Options.Options<I>, label: string, schema: Schema.Schema<A, I>) =>
  Options.mapEffect(self, (value) =>
    Effect.mapError(ParseResult.decodeUnknown(schema)(value), (issue) => ValidationError.invalidValue(problem(label)(issue))))

/** An argument checked with `schema`; for a variadic one, give `Schema.Array(item)`. */
export const arg = <A, I = string>(self: Args.Args<I>, label: string, schema: Schema.Schema<A, I>) =>
  Args.mapEffect(self, (value) => Effect.mapError(ParseResult.decodeUnknown(schema)(value), problem(label)))

/** `{ [key]: value }` when the option holds one, else `{}`: optional request members are absent, never undefined. */
export const ifSome = <const K extends string, A>(key: K, option: Option.Option<A>): { readonly [P in K]?: A } =>
  Option.isSome(option) ? ({ [key]: option.value } as { readonly [P in K]: A }) : {}
