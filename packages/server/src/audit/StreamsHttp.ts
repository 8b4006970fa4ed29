/** HTTP handlers of the Audit Log Streams group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Streams } from "./Streams.js"

export const StreamsHttp = group(Api, "auditStreams", (handlers) =>
  Effect.gen(function*() {
    const streams = yield* Streams
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => streams.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => streams.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => streams.get(caller, path.streamId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => streams.update(caller, path.streamId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => streams.remove(caller, path.streamId)))
      .handle("rotateSecret", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => streams.rotateSecret(caller, path.streamId)))
      .handle("test", ({ path }) => Effect.flatMap(CurrentMember, (caller) => streams.test(caller, path.streamId)))
  }))
