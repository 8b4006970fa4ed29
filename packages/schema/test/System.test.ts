import { describe, expect, it } from "@effect/vitest"
import { Health, Ready } from "../src/System.js"
import { componentSchema, decode3, decode4, encode4, examplesOfComponent, jsonSchemaOf } from "./differential.js"
import { effect3 } from "./effect3.js"

const System3 = effect3("System")

describe("System on Effect 4", () => {
  it("decodes the document's examples and encodes them back", () => {
    const examples = examplesOfComponent("Health")
    expect(examples.length).toBeGreaterThan(0)
    for (const example of examples) {
      const decoded = decode4(Health, example)
      expect(decoded).toEqual(decode3(System3.Health, example))
      expect(decoded.ok && encode4(Health, decoded.value)).toEqual({ ok: true, value: example })
    }
    expect(decode4(Ready, { ok: true, checks: { database: "ok" } }).ok).toBe(true)
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    for (const input of [{ ok: false, version: "1" }, { ok: true }, { ok: "true", version: "1" }, { version: "1" }]) {
      expect(decode4(Health, input).ok).toBe(false)
      expect(decode3(System3.Health, input).ok).toBe(false)
    }
    for (const input of [{ ok: true, checks: { database: "down" } }, { ok: true, checks: {} }, { ok: true }]) {
      expect(decode4(Ready, input).ok).toBe(false)
      expect(decode3(System3.Ready, input).ok).toBe(false)
    }
  })

  it("gives the JSON Schema of the Effect 3 document", () => {
    expect(jsonSchemaOf(Health)).toEqual(componentSchema("Health"))
    expect(jsonSchemaOf(Ready)).toEqual(componentSchema("Ready"))
  })
})
