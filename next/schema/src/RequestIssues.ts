/**
 * How a request's schema failures read: the `details` of a 400 `invalid_request`, and a one-line summary of them.
 * The server answers with these details and the client's validation error carries the same ones, worded alike.
 */
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
