import { describe, expect, it } from "@effect/vitest"
import * as AuditStreams from "../src/AuditStreams.js"
import { exampleId } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { operationExamples } from "./catalog.js"
import { decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"
import { effect3 } from "./effect3.js"

const AuditStreams3 = effect3("AuditStreams")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("AuditStreams on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(AuditStreams, AuditStreams3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference: Effect 3's document lost the description of the test result's `deliveryId` (the id's own
      // JSON Schema override won); Effect 4 writes it beside the reference. Dropped here to compare the rest.
      AuditStreamTestResult: (schema) => {
        const description = "The ping's `Orgplane-Delivery-Id`."
        expect(schema).toMatchObject({ properties: { deliveryId: { $ref: "ref:AuditStreamDeliveryId", description } } })
        return JSON.parse(JSON.stringify(schema).replace(`,"description":${JSON.stringify(description)}`, ""))
      }
    })
    expect(names.length).toBeGreaterThan(10)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(AuditStreams.AuditStream, AuditStreams3.AuditStream, examplesOfComponent("AuditStream"))
    roundTrips(AuditStreams.AuditStreamDelivery, AuditStreams3.AuditStreamDelivery, examplesOfComponent("AuditStream").map((stream) => splitKey(stream, "delivery").value))
    roundTrips(AuditStreams.AuditStreamPage, AuditStreams3.AuditStreamPage, examplesOfComponent("AuditStreamPage"))
    roundTrips(AuditStreams.AuditStreamResponse, AuditStreams3.AuditStreamResponse, examplesOfComponent("AuditStreamResponse"))
    roundTrips(AuditStreams.AuditStreamWithSecret, AuditStreams3.AuditStreamWithSecret, examplesOfComponent("AuditStreamWithSecret"))
    roundTrips(AuditStreams.AuditStreamTestResult, AuditStreams3.AuditStreamTestResult, examplesOfComponent("AuditStreamTestResult"))
    roundTrips(AuditStreams.CreateAuditStreamRequest, AuditStreams3.CreateAuditStreamRequest, operationExamples("POST /v1/audit/streams request"))
    roundTrips(AuditStreams.UpdateAuditStreamRequest, AuditStreams3.UpdateAuditStreamRequest, operationExamples("PATCH /v1/audit/streams/{streamId} request"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(AuditStreams.CreateAuditStreamRequest, AuditStreams3.CreateAuditStreamRequest, [
      { url: "https://siem.acme.example/ingest" },
      { url: " http://collector.internal:8088/x?token=1 ", description: " Splunk ", status: "paused" },
      { url: "/ingest" },
      { url: "ftp://siem.acme.example/" },
      { url: "https://user:pw@siem.acme.example/" },
      { url: "https://siem.acme.example/#x" },
      { url: "https://siem.acme.example/\\x" },
      { url: "https://siem.acme.example/", description: "" },
      { url: "https://siem.acme.example/", status: "stopped" },
      { description: "no url" }
    ])
    sameOn(AuditStreams.UpdateAuditStreamRequest, AuditStreams3.UpdateAuditStreamRequest, [
      { status: "paused" }, { description: null }, { url: "https://siem.acme.example/v2" }, {}, { description: "" }, { url: "siem.acme.example" }
    ])
    sameOn(AuditStreams.AuditStreamListQuery, AuditStreams3.AuditStreamListQuery, [{}, { limit: "5" }, { limit: "500" }, { cursor: "" }])
    sameOn(AuditStreams.AuditStreamPath, AuditStreams3.AuditStreamPath, [{ streamId: exampleId("ast") }, { streamId: exampleId("aev") }, {}])
    expect(decode4(AuditStreams.UpdateAuditStreamRequest, {})).toMatchObject({ ok: false, message: expect.stringContaining("give url, description, status or several") })
    expect([AuditStreams.MAX_AUDIT_STREAMS, AuditStreams.AUDIT_STREAM_BATCH, AuditStreams.AUDIT_STREAM_SIGNATURE_HEADER, AuditStreams.AUDIT_STREAM_DELIVERY_HEADER])
      .toEqual([AuditStreams3.MAX_AUDIT_STREAMS, AuditStreams3.AUDIT_STREAM_BATCH, AuditStreams3.AUDIT_STREAM_SIGNATURE_HEADER, AuditStreams3.AUDIT_STREAM_DELIVERY_HEADER])
  })
})
