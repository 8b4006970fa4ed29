/** HTTP handlers of the Audit Log group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Audit } from "./Audit.js"
import { AuditRepository } from "./AuditRepository.js"
import * as Partitions from "./Partitions.js"
import * as Retention from "./Retention.js"
import * as StreamDelivery from "./StreamDelivery.js"
import { Streams } from "./Streams.js"
import { StreamsHttp } from "./StreamsHttp.js"
import { StreamsRepository } from "./StreamsRepository.js"

export const AuditHttp = group(Api, "audit", (handlers) =>
  Effect.gen(function*() {
    const audit = yield* Audit
    return handlers
      .handle("listEvents", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => audit.list(caller, urlParams)))
      .handle("getEvent", ({ path }) => Effect.flatMap(CurrentMember, (caller) => audit.get(caller, path.eventId)))
      .handle("exportEvents", ({ urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(audit.exportEvents(caller, urlParams), (body) =>
            HttpServerResponse.stream(body, {
              contentType: urlParams.format === "csv" ? "text/csv; charset=utf-8" : "application/x-ndjson",
              headers: {
                "content-disposition": `attachment; filename="audit-events.${urlParams.format}"`,
                "cache-control": "no-store"
              }
            }))))
      .handle("listEventTypes", () => Effect.flatMap(CurrentMember, (caller) => audit.types(caller)))
      .handle("getSettings", () => Effect.flatMap(CurrentMember, (caller) => audit.getSettings(caller)))
      .handle("setSettings", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => audit.setSettings(caller, payload)))
  }))

/** The handlers, with the log's partitions made at start-up and kept ahead daily, and its streams' delivery. */
export const layer = Layer.mergeAll(AuditHttp, Partitions.layer, Retention.layer, StreamsHttp, StreamDelivery.layer).pipe(
  Layer.provide(Audit.layer),
  Layer.provide(AuditRepository.layer),
  Layer.provide(Streams.layer),
  Layer.provide(StreamsRepository.layer)
)
