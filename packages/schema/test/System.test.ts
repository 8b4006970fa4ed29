/** System.ts: the answers of `/health` and `/ready`, their examples and refusals. */
import { describe, expect, it } from "@effect/vitest"
import { Health, Ready } from "../src/System.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { decode, encode } from "./support/Decoding.js"

describe("System", () => {
  it("decodes the document's examples and encodes them back", () => {
    const examples = examplesOfComponent("Health")
    expect(examples.length).toBeGreaterThan(0)
    for (const example of examples) {
      const decoded = decode(Health, example)
      expect(decoded, JSON.stringify(example)).toMatchObject({ ok: true })
      expect(decoded.ok && encode(Health, decoded.value)).toEqual({ ok: true, value: example })
    }
    expect(decode(Ready, { ok: true, checks: { database: "ok" } }).ok).toBe(true)
  })

  it("takes what its schemas allow and refuses the rest", () => {
    for (const input of [{ ok: false, version: "1" }, { ok: true }, { ok: "true", version: "1" }, { version: "1" }]) {
      expect(decode(Health, input).ok).toBe(false)
    }
    for (const input of [{ ok: true, checks: { database: "down" } }, { ok: true, checks: {} }, { ok: true }]) {
      expect(decode(Ready, input).ok).toBe(false)
    }
  })
})
