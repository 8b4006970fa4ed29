import { describe, expect, it } from "@effect/vitest"
import * as AdminMetrics from "../src/AdminMetrics.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { countsAsDocumented, examplesAt } from "./people.js"
import { effect3 } from "./effect3.js"

const AdminMetrics3 = effect3("AdminMetrics")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("AdminMetrics on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(AdminMetrics, AdminMetrics3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, for the OpenAPI normalisation step: the counts (countsAsDocumented).
      AdminActivityPoint: (schema) => countsAsDocumented(schema, 3),
      AdminMetricsSummary: (schema) => countsAsDocumented(schema, 22)
    })
    expect(names.sort()).toEqual(["AdminActivityPoint", "AdminMetricsResponse", "AdminMetricsSummary"])
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(AdminMetrics.AdminActivityPoint, AdminMetrics3.AdminActivityPoint, examplesOfComponent("AdminActivityPoint"))
    roundTrips(AdminMetrics.AdminMetricsSummary, AdminMetrics3.AdminMetricsSummary, examplesOfComponent("AdminMetricsSummary"))
    roundTrips(AdminMetrics.AdminMetricsResponse, AdminMetrics3.AdminMetricsResponse, examplesAt("GET /v1/admin/metrics 200"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    const point = { day: "2026-11-02", activeUsers: 42, realActiveUsers: 31, signups: 3 }
    sameOn(AdminMetrics.AdminActivityPoint, AdminMetrics3.AdminActivityPoint, [
      point, { ...point, signups: 0 }, { ...point, day: "2026-11-2" }, { ...point, day: "02/11/2026" }, { ...point, activeUsers: -1 },
      { ...point, realActiveUsers: 0.5 }, { ...point, signups: null }
    ])
    const summary = examplesOfComponent("AdminMetricsSummary")[0]
    const changed = (member: Record<string, unknown>) =>
      typeof summary === "object" && summary !== null && !Array.isArray(summary) ? { ...summary, ...member } : summary
    sameOn(AdminMetrics.AdminMetricsSummary, AdminMetrics3.AdminMetricsSummary, [
      changed({}), changed({ medianHoursToFirstInvite: 0 }), changed({ medianHoursToFirstInvite: "2.5" }), changed({ totalUsers: -3 }),
      changed({ activitySeries: [{ ...point, day: "yesterday" }] }), changed({ billingLoaded: "true" })
    ])
  })
})
