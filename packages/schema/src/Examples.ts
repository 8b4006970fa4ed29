/**
 * The pieces the API's examples share, so that they tell one consistent story: the Acme organization, its owner Ada,
 * its admin Grace and its member Alan (and Edsger, invited), on 2 November 2026. Schemas annotate their `examples` with these; the OpenAPI
 * document composes request and response examples from them (`OpenApiExamples.ts`).
 */
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { exampleId } from "./Ids.js"
import { composeExample } from "./OpenApiExamples.js"

/** The examples' instant plus `minutes`: 2026-11-02T09:30:00Z for 0 (the instant the example ids of Ids.ts carry). */
export const exampleTime = (minutes = 0): Date => new Date(Date.UTC(2026, 10, 2, 9, 30 + minutes))

/** The example organization. */
export const acme = { id: exampleId("org"), name: "Acme" } as const

/** The example people: their user and membership ids, names and emails. */
const person = (n: number, name: string, email: string) =>
  ({ userId: exampleId("usr", n), membershipId: exampleId("om", n), name, email }) as const
export const ada = person(1, "Ada Lovelace", "ada@acme.example")
export const grace = person(2, "Grace Hopper", "grace@acme.example")
export const alan = person(3, "Alan Turing", "alan@acme.example")
/** Invited, not yet a member. */
export const edsger = person(4, "Edsger Dijkstra", "edsger@acme.example")

/** A password that passes the rules (10 to 256 characters): examples only. */
export const examplePassword = "correct horse battery staple"

const BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

/**
 * An example secret as the server makes them: `<prefix>_` and 43 base64url characters (32 random bytes), here drawn
 * from `seed` so every run shows the same one. `exampleToken("ops")` is a session token, `"opk"` an API key.
 */
export const exampleToken = (prefix: string, seed = 1): string => {
  let state = 2166136261
  for (const char of `${prefix}:${seed}`) state = Math.imul(state ^ char.charCodeAt(0), 16777619) >>> 0
  let text = ""
  for (let index = 0; index < 43; index++) {
    state = Math.imul(state ^ (state >>> 15), 2246822507) >>> 0
    state = Math.imul(state ^ (state >>> 13), 3266489909) >>> 0
    text += BASE64URL[state & 63]
  }
  return `${prefix}_${text}`
}

/**
 * The example of `schema` (its own, or composed from its parts'), typed by its Type: one example reused in another.
 * The example is checked against the schema's Type, which is what types it (and a wrong one fails here, at load).
 */
export const exampleOf = <S extends Schema.Top>(schema: S): S["Type"] => {
  const example = Option.getOrThrowWith(composeExample(schema.ast), () => new Error(`no example for ${String(schema.ast)}`))
  if (!Schema.is(schema)(example)) throw new Error(`the example of ${String(schema.ast)} is not one of its values`)
  return example
}
