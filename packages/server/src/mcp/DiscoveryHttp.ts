/**
 * HTTP handlers of the MCP discovery group (resolve, presets). Thin by design: the resolver checks the caller's role.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { McpResolver } from "./McpResolver.js"

export const McpDiscoveryHttp = group(Api, "mcpDiscovery", (handlers) =>
  Effect.gen(function*() {
    const resolver = yield* McpResolver
    return handlers
      .handle("resolve", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => resolver.resolve(caller, payload.query)))
      .handle("presets", () => Effect.flatMap(Effect.service(CurrentMember), (caller) => resolver.presets(caller)))
  }))

export const layer = McpDiscoveryHttp.pipe(Layer.provide(McpResolver.layer))
