/**
 * HTTP handlers of the Memory group. Thin by design: the service scopes everything to the caller.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { MemoryBank } from "./MemoryBank.js"

export const MemoryHttp = group(Api, "memory", (handlers) =>
  Effect.gen(function*() {
    const memory = yield* MemoryBank
    return handlers
      .handle("save", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => memory.save(caller, payload)))
      .handle("search", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => memory.search(caller, query)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => memory.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => memory.get(caller, params.memoryId)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => memory.remove(caller, params.memoryId)))
  }))

export const layer = MemoryHttp.pipe(Layer.provide(MemoryBank.layer))
