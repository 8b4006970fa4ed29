/** Small value schemas shared by every area. */
import * as Effect from "effect/Effect"
import type * as SchemaAST from "effect/SchemaAST"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { exampleTime } from "./Examples.js"
import { trimmedString } from "./internal/trimmed.js"

// `2030-01-01T00:00:00Z`, `2030-01-01T00:00:00.5+02:00`: RFC 3339's date-time, the profile of ISO 8601 that the
// `date-time` format of JSON Schema names. Up to 9 fractional digits; lower-case `t` and `z` as RFC 3339 allows.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/
const DATE_TIME_MAX_LENGTH = "2030-01-01T00:00:00.123456789+00:00".length

/** The instant `text` names, or undefined when it is not a date-time or names no real calendar date or time. */
const parseDateTime = (text: string): Date | undefined => {
  const match = DATE_TIME.exec(text)
  if (match === null) return undefined
  const [year, month, day, hours, minutes, seconds] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number]
  const millis = Number((match[7] ?? "0").padEnd(3, "0").slice(0, 3))
  const offsetHours = Number(match[9] ?? 0)
  const offsetMinutes = Number(match[10] ?? 0)
  if (hours > 23 || minutes > 59 || seconds > 59 || offsetHours > 23 || offsetMinutes > 59) return undefined
  // `Date.UTC` reads years below 100 as 19xx, `setUTCFullYear` does not; both roll 2030-02-31 over into March, which
  // the read-back refuses.
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day)
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined
  const offset = (match[8] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes)
  date.setUTCHours(hours, minutes - offset, seconds, millis)
  return date
}

const dateTimeMessage = "must be an ISO 8601 date-time with a time and an offset or Z, for example 2030-01-01T00:00:00Z"

/**
 * An instant: a `Date` in code; on the wire an ISO 8601 date-time with an offset or `Z` when read (a date alone,
 * a year, or a day the calendar does not have are refused, where `new Date(text)` would guess), and always `Z`
 * (`toISOString`) when written, which it also reads back.
 */
export const Timestamp = Schema.String.check(
  Schema.makeFilter((text: string) => parseDateTime(text) !== undefined || dateTimeMessage, {
    toJsonSchema: () => ({ format: "date-time", maxLength: DATE_TIME_MAX_LENGTH }),
    // For values generated from the schema (`effect/Arbitrary`): instants of 1970 to 2099, to the millisecond.
    arbitraryConstraint: {
      patterns: [{ source: "^(19[7-9][0-9]|20[0-9]{2})-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\\.[0-9]{3}Z$", flags: "" }]
    }
  })
).annotate({
  examples: [exampleTime().toISOString()],
  description:
    "An ISO 8601 date-time with a time and an offset or `Z` (RFC 3339), for example `2030-01-01T00:00:00Z`; up to 9 fractional digits of a second. Sent back with `Z` and milliseconds."
}).pipe(
  Schema.decodeTo(Schema.Date, {
    decode: SchemaGetter.transformEffect((text: string) => {
      const date = parseDateTime(text)
      return date === undefined ? Effect.fail(new SchemaIssue.InvalidValue({ message: dateTimeMessage }, text)) : Effect.succeed(date)
    }),
    encode: SchemaGetter.transform((date: Date) => date.toISOString())
  })
).annotate({ identifier: "Timestamp", examples: [exampleTime()] })

/**
 * The rule the request guard applies to every string of every request (Postgres cannot store NUL in `text`), as a
 * JSON Schema pattern: the OpenAPI document adds it to each request string that does not already exclude NUL.
 */
export const NO_NUL_PATTERN = "^[^\\u0000]*$"

// The dot-atom local part of RFC 5322 (no quoted strings), an `@`, and host-name labels (RFC 1123: letters, digits and
// hyphens, neither first nor last a hyphen).
const LOCAL_PART = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"

/** An address schema: trimmed, at most 254 characters, matching `pattern`, which the OpenAPI document states as well. */
const address = (identifier: string, pattern: string, description: string) => {
  const regExp = new RegExp(pattern)
  return trimmedString(
    (text) => text.length > 254 ? "must be at most 254 characters" : regExp.test(text) ? undefined : "must be an email address",
    { format: "email", maxLength: 254, pattern },
    description,
    // Generated values (`effect/Arbitrary`): addresses every address schema here takes.
    "^[a-z][a-z0-9]{0,9}@[a-z][a-z0-9]{0,9}\\.example$"
  ).annotate({ identifier })
}

/**
 * The email address of an account (sign-up, sign-in, invitations, bootstrap): a dot-atom local part and a host name
 * of one or more labels, the last one starting with a letter. A self-hosted control plane often runs on a private
 * network, so `admin@localhost` and `ops@intranet` are accounts; IP literals and quoted local parts are not (see the
 * server README, "Email addresses").
 */
export const Email = address(
  "Email",
  `^${LOCAL_PART}@(?:${LABEL}\\.)*[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`,
  "An email address: `name@host`, the host one or more labels (`admin@localhost` and `ada@example.com` both are). Leading and trailing white space is removed first."
)

/**
 * A recipient of a mail message the server drafts at a mail suite: the spec's address format (no leading dot, no
 * consecutive dots, domain labels of letters, digits and hyphens, a final label of 2 or more letters).
 */
export const MailAddress = address(
  "MailAddress",
  `^${LOCAL_PART}@(?:${LABEL}\\.)+[A-Za-z]{2,63}$`,
  "A mail address whose domain has at least two labels, the last of 2 or more letters (`ada@example.com`). Leading and trailing white space is removed first."
)

/**
 * Request schemas report every bad member, not just the first. Query structs use it as is: unknown query parameters
 * are ignored. Effect 4 reads parse options from the API, not from a schema's annotations (they would be ignored
 * there): the API sets this as `HttpApi.QueryParseOptions`.
 */
export const allErrors: SchemaAST.ParseOptions = { errors: "all" }

/**
 * Every request body struct, nested ones included: every bad member reported, and a member the API does not know is
 * refused (400 naming it) rather than dropped, so a misspelt optional member cannot silently do nothing. The OpenAPI
 * document says the same with `additionalProperties: false`. The API sets this as `HttpApi.PayloadParseOptions`
 * (Effect 4 ignores parse options annotated on a schema).
 */
export const requestBody: SchemaAST.ParseOptions = { errors: "all", onExcessProperty: "error" }

const TRIMMED = "Leading and trailing white space is removed first; the length limits apply to what remains."

/**
 * Text people type (names, search text): trimmed, then `min` to `max` characters, without NUL (Postgres cannot store
 * it in `text`: it would be a 500 instead of a 400). The JSON Schema is written here because the one generated for
 * `Trim` describes the untrimmed string and drops the refinements. `pattern` documents a further refinement the caller
 * adds (it must exclude NUL as well): the document cannot take it from a filter over this schema.
 */
export const TrimmedText = (min: number, max: number, description?: string, pattern = NO_NUL_PATTERN) => {
  const what = description?.replace(/\.$/, "")
  // One message for both bounds, without echoing the text back (it may be long).
  const message = `must be ${min} to ${max} characters long (after trimming white space)`
  return trimmedString(
    (text) => text.includes("\u0000") ? "must not contain the NUL character (U+0000)" : text.length < min || text.length > max ? message : undefined,
    { minLength: min, maxLength: max, pattern },
    what === undefined ? TRIMMED : `${what}. ${TRIMMED}`
  ).annotate({ description: `${what ?? "Text"}, ${min} to ${max} characters.` })
}

/**
 * A whole number in a query string, from `min` to `max`, in plain decimal digits: `Number(text)` would also take
 * `0x10`, `1e1`, ` 16`, `16.0` and `+16`. Documented by hand: the integer bounds of a string-encoded number are lost
 * in the generated JSON Schema.
 */
export const QueryInteger = (min: number, max: number, description: string) => {
  const message = `must be an integer from ${min} to ${max}`
  const inRange = (value: number) => Number.isInteger(value) && value >= min && value <= max
  return Schema.String.annotate({ description }).check(
    Schema.makeFilter((text: string) => (/^[0-9]{1,15}$/.test(text) && inRange(Number(text))) || message, {
      toJsonSchema: () => ({ type: "integer", minimum: min, maximum: max })
    })
  ).pipe(
    Schema.decodeTo(Schema.Number.check(Schema.makeFilter((value: number) => inRange(value) || message)), SchemaTransformation.numberFromString)
  ).annotate({ description })
}

/**
 * An integer, named `Int` ("an integer"), so the document keeps one `Int` component that members refer to. Effect 4's
 * `Schema.Int` has no name and adds the safe-integer bounds to its JSON Schema.
 */
export const Int = Schema.Int.annotate({ identifier: "Int", description: "an integer" })

/**
 * `true` or `false` in a query string, named `BooleanFromString` in the document; Effect 4 has no such schema.
 */
export const BooleanFromString = Schema.Literals(["true", "false"]).annotate({
  identifier: "BooleanFromString",
  description: "a string to be decoded into a boolean"
}).pipe(
  Schema.decodeTo(Schema.Boolean, {
    decode: SchemaGetter.transform((text: "true" | "false") => text === "true"),
    encode: SchemaGetter.transform((value: boolean) => value ? "true" : "false")
  })
)

export const Ok = Schema.Struct({ ok: Schema.Literal(true) })

/** Free text for the `q` filters of lists: trimmed, 1 to 255 characters; `description` says what it matches. */
export const searchText = (description: string) => TrimmedText(1, 255, description)
export const SearchText = searchText("Text to look for.")
