/**
 * connectors/PluginMetadata.ts: a plugin's metadata as its repository gives it, each member read on its own (one of the
 * wrong type left out rather than losing the rest), text trimmed, keywords kept to 50 non-empty texts, none at all
 * when the repository gives nothing usable.
 */
import { describe, expect, it } from "@effect/vitest"
import { storedMetadata } from "../src/catalog/PluginsRepository.js"
import { sourceMetadataOf } from "../src/connectors/PluginMetadata.js"

const none = { version: null, author: null, authorEmail: null, authorUrl: null, homepage: null, repository: null, license: null, keywords: [], category: null }

describe("sourceMetadataOf", () => {
  it("reads each member on its own, trimmed; an author or repository as text or an object naming it", () => {
    expect(sourceMetadataOf({ version: " 1.2 ", author: { name: " Ann " }, repository: "https://r", keywords: ["a", " b ", "", 2, null] }))
      .toEqual({ ...none, version: "1.2", author: "Ann", repository: "https://r", keywords: ["a", "b"] })
    expect(sourceMetadataOf({ author: "Bob", repository: { url: " https://git " }, keywords: "not a list" }))
      .toEqual({ ...none, author: "Bob", repository: "https://git" })
    // An author object keeps its email and url, each read on its own.
    expect(sourceMetadataOf({ author: { name: "Boris", email: " boris@example.com ", url: 7 } }))
      .toEqual({ ...none, author: "Boris", authorEmail: "boris@example.com" })
    expect(sourceMetadataOf({ author: { name: "Ann", url: "https://ann.example" } })).toEqual({ ...none, author: "Ann", authorUrl: "https://ann.example" })
  })

  it("keeps at most 50 keywords", () => {
    expect(sourceMetadataOf({ keywords: Array.from({ length: 60 }, (_, i) => `k${i}`) }))
      .toEqual({ ...none, keywords: Array.from({ length: 50 }, (_, i) => `k${i}`) })
  })

  it("gives none when nothing is usable", () => {
    expect(sourceMetadataOf({})).toBeNull()
    expect(sourceMetadataOf({ author: { name: "" }, repository: { url: 3 }, homepage: 4, license: "  ", category: ["x"] })).toBeNull()
  })

  it("reads metadata stored before authorEmail and authorUrl as the repository not giving them, so a sync sees no change", () => {
    const before = { version: "1.0.0", author: "Boris", homepage: null, repository: null, license: null, keywords: [], category: null }
    expect(storedMetadata(before)).toEqual({ ...none, version: "1.0.0", author: "Boris" })
    expect(storedMetadata(before)).toEqual(sourceMetadataOf({ version: "1.0.0", author: { name: "Boris" } }))
  })
})
