/** HTTP handlers of the Memory group. Thin by design: the service scopes everything to the caller. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { MemoryBank } from "./MemoryBank.js"

export const MemoryHttp = group(Api, "memory", (handlers) =>
  Effect.gen(function*() {
    const memory = yield* MemoryBank
    return handlers
      .handle("save", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => memory.save(caller, payload)))
      .handle("search", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => memory.search(caller, urlParams)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => memory.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => memory.get(caller, path.memoryId)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => memory.remove(caller, path.memoryId)))
  }))

export const layer = MemoryHttp.pipe(Layer.provide(MemoryBank.layer))
