import { describe, expect, it } from "@effect/vitest"
import { AuditApi } from "../src/AuditApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { refinedIntAsDocumented } from "./catalog.js"
import { type Json } from "./differential.js"
import { effect3 } from "./effect3.js"

const AuditApi3 = effect3("AuditApi").AuditApi

describe("AuditApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(AuditApi, AuditApi3, {
      // The real difference Audit.test.ts names: retentionDays, a refinement of Int, is written out in Effect 4 where
      // Effect 3 referred to Int beside its bounds. Read as Effect 3 wrote it (as the document does) to compare the rest.
      "PUT /v1/audit/settings": (operation: Json): Json => {
        const text = JSON.stringify(operation)
        const [member] = /"retentionDays":(\{"type":"integer"[^{}]*\[\{[^{}]*\}\]\})/.exec(text)?.slice(1) ?? []
        expect(member).toBeDefined()
        const documented = refinedIntAsDocumented(member === undefined ? undefined : JSON.parse(member))
        expect(documented).toBeDefined()
        return JSON.parse(text.replace(`"retentionDays":${member}`, `"retentionDays":${JSON.stringify(documented)}`))
      }
    })
    expect(operations).toHaveLength(6)
  })

  it("shows the examples of the Effect 3 group", () => {
    // The export's NDJSON example, and its CSV one (the transform's), among them.
    expect(sameExamples(AuditApi, AuditApi3)).toBeGreaterThan(0)
  })
})
