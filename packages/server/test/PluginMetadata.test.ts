/**
 * connectors/PluginMetadata.ts: a plugin's metadata as its repository gives it, each member read on its own (one of the
 * wrong type left out rather than losing the rest), text trimmed, keywords kept to 50 non-empty texts, none at all
 * when the repository gives nothing usable.
 */
import { describe, expect, it } from "@effect/vitest"
import { sourceMetadataOf } from "../src/connectors/PluginMetadata.js"

const none = { version: null, author: null, homepage: null, repository: null, license: null, keywords: [], category: null }

describe("sourceMetadataOf", () => {
  it("reads each member on its own, trimmed; an author or repository as text or an object naming it", () => {
    expect(sourceMetadataOf({ version: " 1.2 ", author: { name: " Ann " }, repository: "https://r", keywords: ["a", " b ", "", 2, null] }))
      .toEqual({ ...none, version: "1.2", author: "Ann", repository: "https://r", keywords: ["a", "b"] })
    expect(sourceMetadataOf({ author: "Bob", repository: { url: " https://git " }, keywords: "not a list" }))
      .toEqual({ ...none, author: "Bob", repository: "https://git" })
  })

  it("keeps at most 50 keywords", () => {
    expect(sourceMetadataOf({ keywords: Array.from({ length: 60 }, (_, i) => `k${i}`) }))
      .toEqual({ ...none, keywords: Array.from({ length: 50 }, (_, i) => `k${i}`) })
  })

  it("gives none when nothing is usable", () => {
    expect(sourceMetadataOf({})).toBeNull()
    expect(sourceMetadataOf({ author: { name: "" }, repository: { url: 3 }, homepage: 4, license: "  ", category: ["x"] })).toBeNull()
  })
})
