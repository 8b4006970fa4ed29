import { describe, expect, it } from "@effect/vitest"
import * as OpenApi from "effect/http-api/OpenApi"
import { TelemetryApi as TelemetryApi3 } from "../../../packages/schema/src/TelemetryApi.js"
import { apiOf } from "../src/ApiOf.js"
import { TelemetryApi } from "../src/TelemetryApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { type Json, normalise, splitKey } from "./differential.js"
import { batchAsDocumented, changedAt, withoutNulPatterns } from "./telemetry.js"

/** The component Effect 4's document of the group names `name`, normalised, without its examples. */
const portedComponent = (name: string): Json => {
  const document: Json = JSON.parse(JSON.stringify(OpenApi.fromApi(apiOf(TelemetryApi))))
  const schema = splitKey(splitKey(splitKey(document, "components").value ?? null, "schemas").value ?? null, name).value
  expect(schema, name).toBeDefined()
  return splitKey(normalise(schema ?? null), "examples").rest
}

describe("TelemetryApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(TelemetryApi, TelemetryApi3, {
      // The batch is a transformation (a struct open to other members, decoded to the struct without them), whose
      // wire side Effect 4 names `IngestTelemetryRequestEncoded` (the normalisation step's `referencePolicy` names it
      // back): read here as that component, with Telemetry.test.ts's real differences read as Effect 3 wrote them, and
      // without the NUL pattern the port's event strings state and the document's own step adds (this document is the
      // one before the step).
      "POST /v1/telemetry/ingest": (operation: Json): Json =>
        changedAt(operation, ["requestBody", "content", "application/json"], (body) => {
          expect(body).toEqual({ $ref: "ref:IngestTelemetryRequest" })
          return changedAt(batchAsDocumented(portedComponent("IngestTelemetryRequestEncoded")), ["properties", "events", "items"], withoutNulPatterns)
        })
    })
    expect(operations).toEqual(["POST /v1/telemetry/ingest"])
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(TelemetryApi, TelemetryApi3)).toBeGreaterThan(0)
  })
})
