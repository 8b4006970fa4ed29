/** What the people area's differential tests share (Members, Invitations, ApiKeys, Memory, Account, Recovery, Admin*, Bootstrap). */
import { expect } from "@effect/vitest"
import { documentExamples, type Json } from "./differential.js"

/** The document's examples of the request or response body at `at` (`POST /v1/invitations request`, `... 201`). */
export const examplesAt = (at: string): Array<Json> =>
  documentExamples().flatMap((example) => example.at === `${at} application/json` ? [example.value] : [])

/** `schema` with its member `name`'s `description` left out, after checking it is `description`. */
export const withoutMemberDescription = (schema: Json, name: string, description: string): Json => {
  expect(schema).toMatchObject({ properties: { [name]: { description } } })
  return JSON.parse(JSON.stringify(schema).replace(`,"description":${JSON.stringify(description)}`, ""))
}

/**
 * A real difference, for the OpenAPI normalisation step: a count (Effect 3's Schema.NonNegativeInt, internal/counts.ts
 * here) is `{ type: integer, minimum: 0, description }` in Effect 4, `{ $ref: NonNegative, description, type: integer }`
 * in the document (NonNegative: `{ type: number, minimum: 0 }`), the same values. `schema` read as the document has
 * it, after checking it has `count` of them.
 */
export const countsAsDocumented = (schema: Json, count: number): Json => {
  const inline = /\{"type":"integer","minimum":0,"description":("(?:[^"\\]|\\.)*")\}/g
  const text = JSON.stringify(schema)
  expect(text.match(inline)?.length ?? 0).toBe(count)
  return JSON.parse(text.replace(inline, `{"$ref":"ref:NonNegative","description":$1,"type":"integer"}`))
}

/**
 * A real difference, not in the document (a member's own description replaces it there): Effect 3 described a checked
 * array by its last length check ("an array of at most 100 item(s)"); Effect 4 generates no description. `schema`
 * with Effect 3's, after checking it has none.
 */
export const withGeneratedArrayDescription = (schema: Json, maxItems: number): Json => {
  expect(schema).toMatchObject({ type: "array", maxItems })
  expect(schema).not.toHaveProperty("description")
  return typeof schema === "object" && schema !== null && !Array.isArray(schema)
    ? { ...schema, description: `an array of at most ${maxItems} item(s)` }
    : schema
}

/**
 * `view` (a schema or an operation's) with the description beside each reference to `id` that says `description` left
 * out, after checking there is one: a real difference, Effect 3's document lost such a description (the id's own JSON
 * Schema override won), Effect 4 writes it beside the reference.
 */
export const withoutIdDescription = (view: Json, id: string, description: string): Json => {
  const described = `{"$ref":"ref:${id}","description":${JSON.stringify(description)}}`
  const text = JSON.stringify(view)
  expect(text).toContain(described)
  return JSON.parse(text.split(described).join(`{"$ref":"ref:${id}"}`))
}

const isObject = (value: Json | undefined): value is { readonly [key: string]: Json } =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The member of `document` (as JSON) at `keys`, if any: `memberAt(document, "paths", "/v1/me", "get")`. */
export const memberAt = (document: unknown, ...keys: ReadonlyArray<string>): Json | undefined => {
  const json: Json = JSON.parse(JSON.stringify(document))
  return keys.reduce<Json | undefined>((node, key) => (isObject(node) ? node[key] : undefined), json)
}

/**
 * AccountDeletion (`DELETE /v1/me`, `DELETE /v1/admin/users/{userId}`) as the document has it: its 7 counts
 * (`countsAsDocumented`, for the OpenAPI normalisation step) and its userId without the description Effect 3's
 * document lost (`withoutIdDescription`).
 */
export const accountDeletionAsDocumented = (view: Json): Json =>
  countsAsDocumented(withoutIdDescription(view, "UserId", "The deleted account's id: kept by its tombstone and the audit log, naming nobody."), 7)
