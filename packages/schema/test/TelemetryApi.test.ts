import { describe, expect, it } from "@effect/vitest"
import { TelemetryApi } from "../src/TelemetryApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { type Json } from "./differential.js"
import { batchAsDocumented, changedAt, withoutNulPatterns } from "./telemetry.js"
import { effect3 } from "./effect3.js"

const TelemetryApi3 = effect3("TelemetryApi").TelemetryApi

describe("TelemetryApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(TelemetryApi, TelemetryApi3, {
      // The batch (its component IngestTelemetryRequestEncoded: a transformation, a struct open to other members
      // decoded to the struct without them) with Telemetry.test.ts's real differences read as Effect 3 wrote them, and
      // without the NUL pattern the port's event strings state and the document's own step adds (this document is the
      // one before the step).
      "POST /v1/telemetry/ingest": (operation: Json): Json =>
        changedAt(operation, ["requestBody", "content", "application/json"], (body) => {
          expect(body).toMatchObject({ type: "object", properties: { events: { type: "array" } } })
          return changedAt(batchAsDocumented(body), ["properties", "events", "items"], withoutNulPatterns)
        })
    })
    expect(operations).toEqual(["POST /v1/telemetry/ingest"])
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(TelemetryApi, TelemetryApi3)).toBeGreaterThan(0)
  })
})
