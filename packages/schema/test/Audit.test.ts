/**
 * Audit.ts: the document's examples of events and settings decode and encode back unchanged, the queries, settings
 * and action names taken and refused, and the export's CSV columns, which scripts read by name.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Audit from "../src/Audit.js"
import { AuditActions } from "../src/AuditCatalog.js"
import { exampleId } from "../src/Ids.js"
import { examplesOfComponent, operationExamples } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Audit", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Audit.AuditEvent, examplesOfComponent("AuditEvent"))
    roundTrips(Audit.AuditEventPage, examplesOfComponent("AuditEventPage"))
    roundTrips(Audit.AuditEventResponse, operationExamples("GET /v1/audit/events/{eventId} 200"))
    roundTrips(Audit.AuditSettings, examplesOfComponent("AuditSettings"))
    roundTrips(Audit.AuditSettingsResponse, operationExamples("GET /v1/audit/settings 200"))
    roundTrips(Audit.UpdateAuditSettingsRequest, operationExamples("PUT /v1/audit/settings request"))
    roundTrips(Audit.AuditEventTypes, examplesOfComponent("AuditEventTypes"))
  })

  it("takes the queries and settings it documents and refuses the others", () => {
    takes(Audit.AuditEventsQuery, [
      {},
      { action: "member.*", outcome: "succeeded", order: "asc", limit: "10" },
      { action: "sso.connection.update", from: "2026-11-02T09:30:00Z", to: "2026-11-03T00:00:00+02:00" },
      { actorId: "usr_x", targetId: "om_x", credentialId: "apk_x", requestId: "9b2f4c1e" }
    ])
    refuses(Audit.AuditEventsQuery, [
      { action: "Member.*" },
      { action: "member.**" },
      { action: `${"a".repeat(100)}.b` },
      { actorId: "" },
      { requestId: "x".repeat(101) },
      { outcome: "maybe" },
      { order: "newest" },
      { from: "2026-11-02" }
    ])
    takes(Audit.AuditExportQuery, [
      { format: "ndjson" },
      { format: "csv", action: "sso.*" }
    ])
    refuses(Audit.AuditExportQuery, [
      {},
      { format: "json" },
      { format: "csv", to: "yesterday" }
    ])
    takes(Audit.UpdateAuditSettingsRequest, [
      { retentionDays: 7 },
      { retentionDays: 3650 }
    ])
    refuses(Audit.UpdateAuditSettingsRequest, [
      { retentionDays: 6 },
      { retentionDays: 3651 },
      { retentionDays: 30.5 },
      { retentionDays: "30" },
      {}
    ])
    takes(Audit.AuditEventPath, [{ eventId: exampleId("aev") }])
    refuses(Audit.AuditEventPath, [{ eventId: exampleId("tem") }, { eventId: "aev_1" }])
    // Every catalogued action is one, and nothing else is.
    takes(Audit.AuditActionName, Object.keys(AuditActions))
    refuses(Audit.AuditActionName, ["member.unknown", "member.*", ""])
  })

  it("exports the CSV columns scripts read, and keeps the retention bounds", () => {
    expect(Audit.AUDIT_CSV_COLUMNS).toEqual([
      "id",
      "occurredAt",
      "action",
      "category",
      "outcome",
      "actorType",
      "actorId",
      "actorMembershipId",
      "actorLabel",
      "credentialId",
      "ssoConnectionId",
      "ip",
      "userAgent",
      "targets",
      "changedFields",
      "changes",
      "reason",
      "requestId",
      "channel",
      "planHash"
    ])
    expect([Audit.AUDIT_RETENTION_DEFAULT_DAYS, Audit.AUDIT_RETENTION_MIN_DAYS, Audit.AUDIT_RETENTION_MAX_DAYS, Audit.AUDIT_REDACTED])
      .toEqual([365, 7, 3650, "[redacted]"])
  })
})
