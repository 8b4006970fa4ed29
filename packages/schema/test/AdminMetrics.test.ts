/** AdminMetrics.ts: the instance-wide counts the operator reads, their examples and refusals. */
import { describe, it } from "@effect/vitest"
import * as AdminMetrics from "../src/AdminMetrics.js"
import { examplesAt, examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("AdminMetrics", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(AdminMetrics.AdminActivityPoint, examplesOfComponent("AdminActivityPoint"))
    roundTrips(AdminMetrics.AdminMetricsSummary, examplesOfComponent("AdminMetricsSummary"))
    roundTrips(AdminMetrics.AdminMetricsResponse, examplesAt("GET /v1/admin/metrics 200"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const point = { day: "2026-11-02", activeUsers: 42, realActiveUsers: 31, signups: 3 }
    takes(AdminMetrics.AdminActivityPoint, [
      point,
      { ...point, signups: 0 }
    ])
    refuses(AdminMetrics.AdminActivityPoint, [
      { ...point, day: "2026-11-2" },
      { ...point, day: "02/11/2026" },
      { ...point, activeUsers: -1 },
      { ...point, realActiveUsers: 0.5 },
      { ...point, signups: null }
    ])
    const summary = examplesOfComponent("AdminMetricsSummary")[0]
    const changed = (member: Record<string, unknown>) =>
      typeof summary === "object" && summary !== null && !Array.isArray(summary) ? { ...summary, ...member } : summary
    takes(AdminMetrics.AdminMetricsSummary, [
      changed({}),
      changed({ medianHoursToFirstInvite: 0 })
    ])
    refuses(AdminMetrics.AdminMetricsSummary, [
      changed({ medianHoursToFirstInvite: "2.5" }),
      changed({ totalUsers: -3 }),
      changed({ activitySeries: [{ ...point, day: "yesterday" }] }),
      changed({ billingLoaded: "true" })
    ])
  })
})
