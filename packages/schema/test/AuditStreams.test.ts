/**
 * AuditStreams.ts: the document's examples of streams decode and encode back unchanged, the requests, queries and
 * paths taken and refused, and the limits and the headers a receiver reads (the signature, the delivery id).
 */
import { describe, expect, it } from "@effect/vitest"
import * as AuditStreams from "../src/AuditStreams.js"
import { exampleId } from "../src/Ids.js"
import { examplesOfComponent, operationExamples, splitKey } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("AuditStreams", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(AuditStreams.AuditStream, examplesOfComponent("AuditStream"))
    roundTrips(AuditStreams.AuditStreamDelivery, examplesOfComponent("AuditStream").map((stream) => splitKey(stream, "delivery").value))
    roundTrips(AuditStreams.AuditStreamPage, examplesOfComponent("AuditStreamPage"))
    roundTrips(AuditStreams.AuditStreamResponse, examplesOfComponent("AuditStreamResponse"))
    roundTrips(AuditStreams.AuditStreamWithSecret, examplesOfComponent("AuditStreamWithSecret"))
    roundTrips(AuditStreams.AuditStreamTestResult, examplesOfComponent("AuditStreamTestResult"))
    roundTrips(AuditStreams.CreateAuditStreamRequest, operationExamples("POST /v1/audit/streams request"))
    roundTrips(AuditStreams.UpdateAuditStreamRequest, operationExamples("PATCH /v1/audit/streams/{streamId} request"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(AuditStreams.CreateAuditStreamRequest, [
      { url: "https://siem.acme.example/ingest" },
      { url: " http://collector.internal:8088/x?token=1 ", description: " Splunk ", status: "paused" }
    ])
    refuses(AuditStreams.CreateAuditStreamRequest, [
      { url: "/ingest" },
      { url: "ftp://siem.acme.example/" },
      { url: "https://user:pw@siem.acme.example/" },
      { url: "https://siem.acme.example/#x" },
      { url: "https://siem.acme.example/\\x" },
      { url: "https://siem.acme.example/", description: "" },
      { url: "https://siem.acme.example/", status: "stopped" },
      { description: "no url" }
    ])
    takes(AuditStreams.UpdateAuditStreamRequest, [
      { status: "paused" },
      { description: null },
      { url: "https://siem.acme.example/v2" }
    ])
    refuses(AuditStreams.UpdateAuditStreamRequest, [
      {},
      { description: "" },
      { url: "siem.acme.example" }
    ])
    takes(AuditStreams.AuditStreamListQuery, [{}, { limit: "5" }])
    refuses(AuditStreams.AuditStreamListQuery, [{ limit: "500" }, { cursor: "" }])
    takes(AuditStreams.AuditStreamPath, [{ streamId: exampleId("ast") }])
    refuses(AuditStreams.AuditStreamPath, [{ streamId: exampleId("aev") }, {}])
    expect(decode(AuditStreams.UpdateAuditStreamRequest, {})).toMatchObject({ ok: false, message: expect.stringContaining("give url, description, status or several") })
    expect([AuditStreams.MAX_AUDIT_STREAMS, AuditStreams.AUDIT_STREAM_BATCH, AuditStreams.AUDIT_STREAM_SIGNATURE_HEADER, AuditStreams.AUDIT_STREAM_DELIVERY_HEADER])
      .toEqual([5, 100, "orgplane-signature", "orgplane-delivery-id"])
  })
})
