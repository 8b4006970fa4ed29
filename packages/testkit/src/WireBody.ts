/**
 * A raw response's body read as what a schema puts on the wire, checked: a test that sends what the API's typed calls
 * cannot (a protocol's own paths and queries, as SCIM directories send them) still reads its answers typed, and a
 * body of another shape fails where it is read.
 */
import * as Schema from "effect/Schema"
import type * as Http from "./Http.js"

/** A reader of bodies of `schema`'s wire form, naming `what` when a response has another status or shape. */
export const wireBody = <S extends Schema.Top>(schema: S, what: string) => {
  const is = Schema.is(Schema.toEncoded(schema))
  return (response: Pick<Http.RawResponse, "status" | "text"> & { readonly body: unknown }, status?: number): S["Encoded"] => {
    if (status !== undefined && response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`)
    const body = response.body
    if (!is(body)) throw new Error(`${what}: not its wire form: ${response.status} ${response.text}`)
    return body
  }
}
