/** Small value schemas shared by every area. */
import { Schema } from "effect"

/** An instant, as an ISO 8601 date-time string with `Z` on the wire and a `Date` in code. */
export const Timestamp = Schema.Date.annotations({
  identifier: "Timestamp",
  jsonSchema: { type: "string", format: "date-time" }
})

export const Email = Schema.Trim.pipe(
  Schema.maxLength(254),
  Schema.pattern(/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/, {
    message: () => "must be an email address"
  })
).annotations({ identifier: "Email", jsonSchema: { type: "string", format: "email", maxLength: 254 } })

/** Request schemas report every bad member, not just the first. */
export const allErrors = { parseOptions: { errors: "all" as const } }

export const Ok = Schema.Struct({ ok: Schema.Literal(true) })

/** Free text for the `q` filters of lists: trimmed, 1 to 255 characters. */
export const SearchText = Schema.Trim.pipe(Schema.minLength(1), Schema.maxLength(255))
