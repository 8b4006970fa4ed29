/**
 * HTTP handlers of the MCP Tools group. Thin by design: the service checks and runs.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { ToolCalls } from "./ToolCalls.js"

export const McpToolsHttp = group(Api, "mcpTools", (handlers) =>
  Effect.gen(function*() {
    const tools = yield* ToolCalls
    return handlers
      .handle("call", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => tools.call(caller, params.connectionId, payload)))
      .handle("listTools", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => tools.listTools(caller, params.connectionId)))
  }))

export const layer = McpToolsHttp.pipe(Layer.provide(ToolCalls.layer))
