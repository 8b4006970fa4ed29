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

export const option = <A>(self: Options.Options<string>, label: string, schema: Schema.Schema<A, string>) =>
  Options.mapEffect(self, (value) =>
    Effect.mapError(ParseResult.decodeUnknown(schema)(value), (issue) => ValidationError.invalidValue(problem(label)(issue))))

export const arg = <A>(self: Args.Args<string>, label: string, schema: Schema.Schema<A, string>) =>
  Args.mapEffect(self, (value) => Effect.mapError(ParseResult.decodeUnknown(schema)(value), problem(label)))

/** `{ [key]: value }` when the option holds one, else `{}`: optional request members are absent, never undefined. */
export const ifSome = <const K extends string, A>(key: K, option: Option.Option<A>): { readonly [P in K]?: A } =>
  Option.isSome(option) ? ({ [key]: option.value } as { readonly [P in K]: A }) : {}
