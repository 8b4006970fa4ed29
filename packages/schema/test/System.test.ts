/** System.ts: the answers of `/health` and `/ready` and of the health probes (with their 503, Errors.ts), their examples and refusals. */
import { describe, expect, it } from "@effect/vitest"
import { HealthDown, HealthDownResponse } from "../src/Errors.js"
import { Health, HealthReport, Ready } from "../src/System.js"
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

  it("holds a probe's report to the shape of MicroProfile Health: up with its checks, or a 503 body down with why", () => {
    const [example] = examplesOfComponent("HealthReport")
    expect(example).toEqual({ status: "up", checks: [{ name: "database", status: "up" }, { name: "migrations", status: "up" }, { name: "durable_engine", status: "up" }] })
    expect(decode(HealthReport, { status: "up", checks: [] }).ok).toBe(true)
    const down = { status: "down", checks: [{ name: "database", status: "down", data: { reason: "timeout" } }, { name: "durable_engine", status: "up" }] }
    expect(encode(HealthDownResponse, new HealthDown({ checks: [{ name: "database", status: "down", data: { reason: "timeout" } }, { name: "durable_engine", status: "up" }] }))).toEqual({ ok: true, value: down })
    for (const input of [
      { status: "down", checks: [] },
      { status: "up" },
      { status: "up", checks: [{ name: "cache", status: "up" }] },
      { status: "up", checks: [{ name: "database", status: "UP" }] },
      // A reason is one of the fixed codes, never free text (the probes are public).
      { status: "up", checks: [{ name: "database", status: "down", data: { reason: "connect ECONNREFUSED 10.0.0.5:5432" } }] }
    ]) {
      expect(decode(HealthReport, input).ok, JSON.stringify(input)).toBe(false)
    }
    expect(decode(HealthDownResponse, down).ok).toBe(true)
    expect(decode(HealthDownResponse, { ...down, status: "up" }).ok).toBe(false)
  })
})
