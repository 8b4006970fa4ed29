/**
 * How a request's schema failures read: the `details` of a 400 `invalid_request`, and a one-line summary of them.
 * The server answers with these details and the client's validation error carries the same ones, worded alike. A
 * union's literals, a tagged union's tag and an excess member keep the words clients and scripts already match, where
 * Effect 4 words them otherwise (`withKeptWords`).
 */
import { format } from "effect/Formatter"
import * as SchemaAST from "effect/SchemaAST"
import * as SchemaIssue from "effect/SchemaIssue"
import type { InvalidRequestDetail } from "./Errors.js"

/** One bad field of a request, as the server's 400 lists it. */
export type RequestIssueDetail = typeof InvalidRequestDetail.Type

/** A schema failure at a path, as a formatter of Effect 4's `SchemaIssue` (the Standard Schema one) reports it. */
export interface RequestIssue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const expected = /^Expected (.+), actual (.+)$/s

/** Longest actual value quoted back in a message: a hostile 10 MB string must not come back as a 10 MB error. */
const maxQuoted = 100

/** Details listed before the rest are summarized, for bodies with thousands of bad members. */
const maxDetails = 50

/** Longest message or path key: schema messages are shorter; only a caller's text could make one longer. */
const maxText = 500

/** The last detail of a capped list: `12 more problems not listed.` */
const notListed = " more problems not listed."

const ellipsis = (text: string, max = maxText) => text.length > max ? `${text.slice(0, max)}…` : text

/** `"aaaa…" (10485760 characters)`: the start of a long actual value and its length. */
const shorten = (actual: string) => {
  if (actual.length <= maxQuoted + 2) return actual
  if (actual.startsWith("\"") && actual.endsWith("\"")) {
    let length = actual.length - 2
    try {
      length = (JSON.parse(actual) as string).length
    } catch {
      // not a JSON string after all: its formatted length will do
    }
    return `"${actual.slice(1, maxQuoted + 1)}…" (${length} characters)`
  }
  return `${actual.slice(0, maxQuoted)}… (${actual.length} characters)`
}

const shortenMessage = (message: string) => {
  const parts = expected.exec(message)
  return parts === null ? ellipsis(message) : `Expected ${parts[1]}, actual ${shorten(parts[2])}`
}

/**
 * One detail per bad field. A value that fails every member of a union (say a role that is none of the literals)
 * comes as one issue per member: they become one "Expected "a", "b" or "c", actual ..." detail. Actual values and
 * keys quoted back are shortened, and past 50 details the rest is counted, so the error stays small whatever the
 * request.
 */
export const invalidRequestDetails = (issues: ReadonlyArray<RequestIssue>): Array<RequestIssueDetail> => {
  const byPath = new Map<string, { path: Array<string | number>; messages: Array<string> }>()
  for (const issue of issues) {
    const path = issue.path.map((key) => typeof key === "number" ? key : ellipsis(String(key), maxQuoted))
    const key = JSON.stringify(path)
    const entry = byPath.get(key) ?? { path, messages: [] }
    entry.messages.push(issue.message)
    byPath.set(key, entry)
  }
  const details = [...byPath.values()].flatMap(({ messages, path }) => {
    const parts = messages.map((message) => expected.exec(message))
    const actual = parts[0]?.[2]
    if (messages.length > 1 && parts.every((part) => part !== null && part[2] === actual)) {
      const options = parts.map((part) => part![1])
      return [{ message: shortenMessage(`Expected ${options.slice(0, -1).join(", ")} or ${options.at(-1)}, actual ${actual}`), path }]
    }
    return messages.map((message) => ({ message: shortenMessage(message), path }))
  })
  if (details.length <= maxDetails) return details
  return [...details.slice(0, maxDetails), { message: `${details.length - maxDetails}${notListed}`, path: [] }]
}

/** The literals of a union of literals (nested unions and `null` among them), in order; none for any other union. */
const literalMembers = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.AST> | undefined => {
  if (ast.checks !== undefined || ast.encoding !== undefined) return undefined
  switch (ast._tag) {
    case "Literal":
    case "Null":
      return [ast]
    case "Union": {
      const members: Array<SchemaAST.AST> = []
      for (const type of ast.types) {
        const literals = literalMembers(type)
        if (literals === undefined) return undefined
        members.push(...literals)
      }
      return members
    }
    default:
      return undefined
  }
}

const ownMessage = (ast: SchemaAST.AST) => typeof ast.annotations?.["message"] === "string"

/** The words for a value that is not a literal: `Expected "owner", actual "boss"` (a literal's own message first). */
const notTheLiteral = (literal: SchemaAST.AST, input: unknown) => {
  const message = literal.annotations?.["message"]
  return new SchemaIssue.InvalidValue({
    message: typeof message === "string"
      ? message
      : `Expected ${literal._tag === "Literal" ? format(literal.literal) : "null"}, actual ${format(input)}`
  })
}

/**
 * The refusal of an object that none of a tagged union's members takes (each member known by the first of its required
 * literal members whose value no earlier member has): the tag refused at its own path, "Expected "none" |
 * "apikey" | "oauth", actual "magic"" at `authType`, or missing there, where Effect 4 says "Expected
 * CreateMcpConnectionRequest" of the whole object. None for a union of anything but tagged objects, or an input that
 * is not an object.
 */
const refusedTags = (ast: SchemaAST.Union, input: unknown): SchemaIssue.Issue | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const keys = new Map<PropertyKey, { readonly values: Set<string>; readonly literals: Array<SchemaAST.Literal> }>()
  for (const member of ast.types) {
    const encoded = SchemaAST.toEncoded(member)
    if (!SchemaAST.isObjects(encoded)) return undefined
    const tags = encoded.propertySignatures.flatMap(({ name, type }) => {
      const literal = SchemaAST.toEncoded(type)
      return literal._tag === "Literal" && type.context?.isOptional !== true ? [[name, literal] as const] : []
    })
    if (tags.length === 0) return undefined
    for (const [index, [key, literal]] of tags.entries()) {
      const entry = keys.get(key) ?? { values: new Set<string>(), literals: [] }
      keys.set(key, entry)
      const value = String(literal.literal)
      if (entry.values.has(value) && index < tags.length - 1) continue
      entry.values.add(value)
      entry.literals.push(literal)
      break
    }
  }
  const issues = [...keys].flatMap(([key, { literals, values }]): Array<SchemaIssue.Issue> => {
    if (!Object.hasOwn(input, key)) return [new SchemaIssue.Pointer([key], new SchemaIssue.MissingKey(undefined))]
    const actual: unknown = Reflect.get(input, key)
    if (values.has(String(actual))) return []
    const expected = literals.map((literal) => format(literal.literal)).join(" | ")
    return [new SchemaIssue.Pointer([key], new SchemaIssue.InvalidValue({ message: `Expected ${expected}, actual ${format(actual)}` }))]
  })
  const [first, ...rest] = issues
  return first === undefined ? undefined : new SchemaIssue.Composite(ast, [first, ...rest])
}

/**
 * What an object or a tuple expects in place of a member it does not have (`onExcessProperty: "error"`): its index
 * signatures' key types and its members' names, `"name" | "url" | "authType"` (`never` for none), or a tuple's
 * indexes, `0 | 1`. None for an index signature of any other key type than string or symbol.
 */
const expectedMembers = (ast: SchemaAST.AST): string | undefined => {
  switch (ast._tag) {
    case "Objects": {
      const keys: Array<string> = []
      for (const { parameter } of ast.indexSignatures) {
        if (parameter._tag === "String") keys.push("string")
        else if (parameter._tag === "Symbol") keys.push("symbol")
        else return undefined
      }
      keys.push(...ast.propertySignatures.map(({ name }) => format(name)))
      return keys.length > 0 ? keys.join(" | ") : "never"
    }
    case "Arrays":
      return ast.rest.length > 0 ? undefined : ast.elements.length > 0 ? ast.elements.map((_, i) => i).join(" | ") : "never"
    default:
      return undefined
  }
}

/** The words for a member an object or tuple does not have: `is unexpected, expected: "name" | "url"`. */
const unexpectedMember = (ast: SchemaAST.AST): SchemaIssue.Issue => {
  const expected = typeof ast.annotations?.["messageUnexpectedKey"] === "string" ? undefined : expectedMembers(ast)
  return expected === undefined ? new SchemaIssue.UnexpectedKey(ast) : new SchemaIssue.InvalidValue({ message: `is unexpected, expected: ${expected}` })
}

/**
 * The issue in the words clients already match, where Effect 4 words it otherwise: a value that is none of a
 * union's literals ("Expected Role", or "Expected "admin" | "member"") becomes one issue per literal, "Expected
 * "admin", actual "owner"", which `invalidRequestDetails` joins into one detail; a value
 * that is not a lone literal says what it was as well; an object of no tag of a tagged union, `refusedTags`; a member
 * an object does not have, "is unexpected, expected: "name" | "url"" (`unexpectedMember`), where Effect 4 says
 * "Expected no excess property". Everything else keeps Effect 4's words, without the input
 * (decoding with `reportInput`, which the actual value needs, would otherwise add it to every default message).
 */
const withKeptWords = (issue: SchemaIssue.Issue): SchemaIssue.Issue => {
  switch (issue._tag) {
    case "Filter":
      return new SchemaIssue.Filter(issue.filter, withKeptWords(issue.issue))
    case "Encoding":
      return new SchemaIssue.Encoding(issue.ast, withKeptWords(issue.issue))
    case "Pointer":
      return new SchemaIssue.Pointer(issue.path, withKeptWords(issue.issue))
    case "Composite": {
      const [first, ...rest] = issue.issues
      return new SchemaIssue.Composite(issue.ast, [withKeptWords(first), ...rest.map(withKeptWords)])
    }
    case "AnyOf": {
      if (!ownMessage(issue.ast) && SchemaIssue.hasInput(issue)) {
        const input = issue.input
        const literals = literalMembers(issue.ast)
        if (literals !== undefined && literals.length > 0) {
          const [first, ...rest] = literals
          return new SchemaIssue.Composite(issue.ast, [notTheLiteral(first, input), ...rest.map((literal) => notTheLiteral(literal, input))])
        }
        const tags = issue.issues.length === 0 ? refusedTags(issue.ast, input) : undefined
        if (tags !== undefined) return tags
      }
      return new SchemaIssue.AnyOf(issue.ast, issue.issues.map(withKeptWords))
    }
    case "InvalidType":
      return issue.ast._tag === "Literal" && !ownMessage(issue.ast) && SchemaIssue.hasInput(issue)
        ? notTheLiteral(issue.ast, issue.input)
        : new SchemaIssue.InvalidType(issue.ast)
    case "InvalidValue":
      return new SchemaIssue.InvalidValue(issue.annotations)
    case "MissingKey":
      return new SchemaIssue.MissingKey(issue.annotations)
    case "UnexpectedKey":
      return unexpectedMember(issue.ast)
    case "Forbidden":
      return new SchemaIssue.Forbidden(issue.annotations)
    case "OneOf":
      return new SchemaIssue.OneOf(issue.ast, issue.successes)
  }
}

const standardIssues = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * A request's schema failure as the issues `invalidRequestDetails` takes: Effect 4's Standard Schema formatter's,
 * with the kept words where `withKeptWords` gives them (a union's literals, a tagged union's tag, an excess member).
 * The actual value is quoted only when the request was decoded with `reportInput` (the server's `HttpErrors.group`
 * decodes so, on top of the API's parse options; the client, which encodes with the API's options alone, keeps
 * Effect 4's words for those values); else Effect 4's words stay ("Expected Role"). An excess member has the kept
 * words either way: they quote no value.
 */
export const requestIssuesOf = (issue: SchemaIssue.Issue): Array<RequestIssue> =>
  standardIssues(withKeptWords(issue)).issues.map(({ message, path }) => ({
    path: (path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment),
    message
  }))

/** `input.rawSourceText`, `memberIds[0]`: a detail's path as people write it. */
export const formatPath = (path: ReadonlyArray<string | number>) =>
  path.reduce<string>((text, key) =>
    typeof key === "number" ? `${text}[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key)
      ? (text === "" ? key : `${text}.${key}`)
      : `${text}[${JSON.stringify(key)}]`, "")

/** Details named in a summary before the rest are counted. */
const summarized = 3

/**
 * One line for error messages: `name: must be 1 to 255 characters long (after trimming white space); limit: must
 * be an integer from 1 to 100 (and 2 more problems)`.
 */
export const summarizeDetails = (details: ReadonlyArray<RequestIssueDetail>) => {
  const last = details.at(-1)
  const capped = last !== undefined && last.path.length === 0 && last.message.endsWith(notListed)
  const listed = capped ? details.slice(0, -1) : details
  const named = listed.slice(0, summarized).map(({ message, path }) => {
    const oneLine = message.replace(/\s*\n\s*/g, " ")
    return path.length === 0 ? oneLine : `${formatPath(path)}: ${oneLine}`
  })
  const rest = listed.length - named.length + (capped ? Number.parseInt(last.message, 10) : 0)
  return `${named.join("; ")}${rest > 0 ? ` (and ${rest} more problem${rest === 1 ? "" : "s"})` : ""}`
}
