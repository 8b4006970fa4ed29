import { describe, expect, it } from "@effect/vitest"
import * as Audit from "../src/Audit.js"
import { AuditActions } from "../src/AuditCatalog.js"
import { exampleId } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { isJsonObject, operationExamples, refinedIntAsDocumented } from "./catalog.js"
import { decode3, decode4, examplesOfComponent, type Json, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const Audit3 = effect3("Audit")
const OpenApiExamples3 = effect3("OpenApiExamples")

/**
 * A real difference, for the OpenAPI normalisation step, of the same meaning: Effect 4 writes a record of any value
 * (`Record(String, Unknown)`) as `{ type: object }`, Effect 3 as `{ type: object, additionalProperties: {} }`. Read
 * here as Effect 3 wrote it.
 */
const recordsOfAnythingAsDocumented = (schema: Json): Json => {
  if (Array.isArray(schema)) return schema.map(recordsOfAnythingAsDocumented)
  if (typeof schema !== "object" || schema === null) return schema
  if (JSON.stringify(schema) === JSON.stringify({ type: "object" })) return { type: "object", additionalProperties: {} }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, recordsOfAnythingAsDocumented(value)]))
}

/**
 * A real difference, for the OpenAPI normalisation step: Effect 4 writes a refinement of Common's `Int`
 * (`retentionDays`) out in full, `Int`'s type and description with its checks in `allOf`, where Effect 3 referred to
 * the `Int` component beside its bounds and description. Read here as the document has it (`refinedIntAsDocumented`).
 */
const retentionDaysAsDocumented = (schema: Json): Json => {
  const properties = isJsonObject(schema) ? schema["properties"] : undefined
  const member = isJsonObject(properties) ? properties["retentionDays"] : undefined
  const documented = refinedIntAsDocumented(member)
  expect(documented).toMatchObject({ $ref: "ref:Int", minimum: Audit.AUDIT_RETENTION_MIN_DAYS, maximum: Audit.AUDIT_RETENTION_MAX_DAYS })
  return JSON.parse(JSON.stringify(schema).replace(JSON.stringify(member), JSON.stringify(documented)))
}

describe("Audit on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Audit, Audit3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      AuditChanges: (schema) => {
        expect(schema).toMatchObject({ properties: { before: { anyOf: [{ type: "object" }, { type: "null" }] } } })
        return recordsOfAnythingAsDocumented(schema)
      },
      AuditSettings: retentionDaysAsDocumented,
      UpdateAuditSettingsRequest: retentionDaysAsDocumented
    })
    expect(names.length).toBeGreaterThan(15)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Audit.AuditEvent, Audit3.AuditEvent, examplesOfComponent("AuditEvent"))
    roundTrips(Audit.AuditEventPage, Audit3.AuditEventPage, examplesOfComponent("AuditEventPage"))
    roundTrips(Audit.AuditEventResponse, Audit3.AuditEventResponse, operationExamples("GET /v1/audit/events/{eventId} 200"))
    roundTrips(Audit.AuditSettings, Audit3.AuditSettings, examplesOfComponent("AuditSettings"))
    roundTrips(Audit.AuditSettingsResponse, Audit3.AuditSettingsResponse, operationExamples("GET /v1/audit/settings 200"))
    roundTrips(Audit.UpdateAuditSettingsRequest, Audit3.UpdateAuditSettingsRequest, operationExamples("PUT /v1/audit/settings request"))
    roundTrips(Audit.AuditEventTypes, Audit3.AuditEventTypes, examplesOfComponent("AuditEventTypes"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Audit.AuditEventsQuery, Audit3.AuditEventsQuery, [
      {},
      { action: "member.*", outcome: "succeeded", order: "asc", limit: "10" },
      { action: "sso.connection.update", from: "2026-11-02T09:30:00Z", to: "2026-11-03T00:00:00+02:00" },
      { actorId: "usr_x", targetId: "om_x", credentialId: "apk_x", requestId: "9b2f4c1e" },
      { action: "Member.*" },
      { action: "member.**" },
      { action: `${"a".repeat(100)}.b` },
      { actorId: "" },
      { requestId: "x".repeat(101) },
      { outcome: "maybe" },
      { order: "newest" },
      { from: "2026-11-02" }
    ])
    sameOn(Audit.AuditExportQuery, Audit3.AuditExportQuery, [
      { format: "ndjson" }, { format: "csv", action: "sso.*" }, {}, { format: "json" }, { format: "csv", to: "yesterday" }
    ])
    sameOn(Audit.UpdateAuditSettingsRequest, Audit3.UpdateAuditSettingsRequest, [
      { retentionDays: 7 }, { retentionDays: 3650 }, { retentionDays: 6 }, { retentionDays: 3651 }, { retentionDays: 30.5 }, { retentionDays: "30" }, {}
    ])
    sameOn(Audit.AuditEventPath, Audit3.AuditEventPath, [{ eventId: exampleId("aev") }, { eventId: exampleId("tem") }, { eventId: "aev_1" }])
    // Every catalogued action is one, and nothing else is.
    for (const action of [...Object.keys(AuditActions), "member.unknown"]) {
      expect(decode4(Audit.AuditActionName, action).ok, action).toBe(decode3(Audit3.AuditActionName, action).ok)
    }
    expect(decode4(Audit.AuditActionName, "member.unknown").ok).toBe(false)
    expect(Audit.AUDIT_CSV_COLUMNS).toEqual(Audit3.AUDIT_CSV_COLUMNS)
    expect([Audit.AUDIT_RETENTION_DEFAULT_DAYS, Audit.AUDIT_RETENTION_MIN_DAYS, Audit.AUDIT_RETENTION_MAX_DAYS, Audit.AUDIT_REDACTED])
      .toEqual([Audit3.AUDIT_RETENTION_DEFAULT_DAYS, Audit3.AUDIT_RETENTION_MIN_DAYS, Audit3.AUDIT_RETENTION_MAX_DAYS, Audit3.AUDIT_REDACTED])
  })
})
