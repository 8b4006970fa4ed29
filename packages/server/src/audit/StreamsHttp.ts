/**
 * HTTP handlers of the Audit Log Streams group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import { group } from "../platform/HttpErrors.js"
import { Streams } from "./Streams.js"

export const StreamsHttp = group(Api, "auditStreams", (handlers) =>
  Effect.gen(function*() {
    const streams = yield* Streams
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => streams.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => streams.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => streams.get(caller, params.streamId)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => streams.update(caller, params.streamId, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => streams.remove(caller, params.streamId)))
      .handle("rotateSecret", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => streams.rotateSecret(caller, params.streamId)))
      .handle("test", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => streams.test(caller, params.streamId)))
  }))
