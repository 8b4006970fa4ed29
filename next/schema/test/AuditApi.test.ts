import { describe, expect, it } from "@effect/vitest"
import { AuditApi as AuditApi3 } from "../../../packages/schema/src/AuditApi.js"
import { AUDIT_RETENTION_MAX_DAYS, AUDIT_RETENTION_MIN_DAYS } from "../src/Audit.js"
import { AuditApi } from "../src/AuditApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { type Json } from "./differential.js"

describe("AuditApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(AuditApi, AuditApi3, {
      // The real difference Audit.test.ts names: retentionDays, a bounded integer, is inline in Effect 4 where Effect 3
      // referred to Int beside its bounds. Read as Effect 3 wrote it to compare the rest.
      "PUT /v1/audit/settings": (operation: Json): Json => {
        const retentionDays = { type: "integer", minimum: AUDIT_RETENTION_MIN_DAYS, maximum: AUDIT_RETENTION_MAX_DAYS }
        expect(operation).toMatchObject({ requestBody: { content: { "application/json": { properties: { retentionDays } } } } })
        return JSON.parse(JSON.stringify(operation).replace(`"retentionDays":{"type":"integer",`, `"retentionDays":{"$ref":"ref:Int",`))
      }
    })
    expect(operations).toHaveLength(6)
  })

  it("shows the examples of the Effect 3 group", () => {
    // The export's NDJSON example, and its CSV one (the transform's), among them.
    expect(sameExamples(AuditApi, AuditApi3)).toBeGreaterThan(0)
  })
})
