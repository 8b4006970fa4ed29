/**
 * HTTP handlers of the Telemetry group. Thin by design: the service decides what is kept.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Partitions } from "./Partitions.js"
import * as Retention from "./Retention.js"
import { Telemetry } from "./Telemetry.js"
import { TelemetryRepository } from "./TelemetryRepository.js"

export const TelemetryHttp = group(Api, "telemetry", (handlers) =>
  Effect.gen(function*() {
    const telemetry = yield* Telemetry
    return handlers.handle("ingest", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => telemetry.ingest(caller, payload)))
  }))

/** The handlers and the daily retention job, sharing this process's set of known partitions. */
export const layer = TelemetryHttp.pipe(
  Layer.provide(Layer.merge(Telemetry.layerWithoutDependencies, Retention.layer)),
  Layer.provide(TelemetryRepository.layer),
  Layer.provide(Partitions.layer)
)
