/** What Workers' differential tests (the module's and its group's) share: a real difference, read back as Effect 3 wrote it. */
import { expect } from "@effect/vitest"
import { type Json } from "./differential.js"

type JsonObject = { readonly [key: string]: Json }
const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** What a slug (a sandbox backend, an instance provider or status) says of itself. */
const SLUG = /: 1 to 32 lower-case letters, digits, `-` or `_`, starting with a letter \(for example /

/**
 * A real difference: Effect 3's override of a slug (SandboxBackend, InstanceProvider, InstanceStatus) left its
 * description out of the document; Effect 4 keeps it. Dropped here, wherever a slug is, to compare the rest; at least
 * one is there.
 */
export const withoutSlugDescriptions = (schema: Json): Json => {
  let found = 0
  const strip = (json: Json): Json => {
    if (Array.isArray(json)) return json.map(strip)
    if (!isObject(json)) return json
    const { description, ...rest } = json
    const slug = typeof description === "string" && SLUG.test(description)
    if (slug) found++
    return Object.fromEntries(Object.entries(slug ? rest : json).map(([key, value]) => [key, strip(value)]))
  }
  const stripped = strip(schema)
  expect(found).toBeGreaterThan(0)
  return stripped
}
