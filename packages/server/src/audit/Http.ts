/**
 * HTTP handlers of the Audit Log group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Audit } from "./Audit.js"
import { AuditRepository } from "./AuditRepository.js"
import * as Partitions from "./Partitions.js"
import * as Retention from "./Retention.js"
import * as StreamDelivery from "./StreamDelivery.js"
import { Streams } from "./Streams.js"
import { StreamsHttp } from "./StreamsHttp.js"
import { StreamsRepository } from "./StreamsRepository.js"
import { StreamWake } from "./StreamWake.js"

export const AuditHttp = group(Api, "audit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* Audit
    return handlers
      .handle("listEvents", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => audit.list(caller, query)))
      .handle("getEvent", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => audit.get(caller, params.eventId)))
      .handle("exportEvents", ({ query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) =>
          Effect.map(audit.exportEvents(caller, query), (body) =>
            HttpServerResponse.stream(body, {
              contentType: query.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson",
              headers: {
                "content-disposition": `attachment; filename="audit-events.${query.format}"`,
                "cache-control": "no-store"
              }
            }))))
      .handle("listEventTypes", () => Effect.flatMap(Effect.service(CurrentMember), (caller) => audit.types(caller)))
      .handle("getSettings", () => Effect.flatMap(Effect.service(CurrentMember), (caller) => audit.getSettings(caller)))
      .handle("setSettings", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => audit.setSettings(caller, payload)))
  }))

/** The handlers, with the log's partitions made at start-up and kept ahead daily, and its streams' delivery. */
export const layer = Layer.mergeAll(AuditHttp, Partitions.layer, Retention.layer, StreamsHttp, StreamDelivery.layer).pipe(
  Layer.provide(Audit.layer),
  Layer.provide(AuditRepository.layer),
  Layer.provide(Streams.layer),
  Layer.provide(StreamsRepository.layer),
  // One signal for the service that wakes the delivery loop and the loop.
  Layer.provide(StreamWake.layer)
)
