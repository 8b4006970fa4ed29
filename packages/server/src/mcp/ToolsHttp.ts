/** HTTP handlers of the MCP Tools group. Thin by design: the service checks and runs. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { ToolCalls } from "./ToolCalls.js"

export const McpToolsHttp = group(Api, "mcpTools", (handlers) =>
  Effect.gen(function*() {
    const tools = yield* ToolCalls
    return handlers
      .handle("call", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => tools.call(caller, path.connectionId, payload)))
      .handle("listTools", ({ path }) => Effect.flatMap(CurrentMember, (caller) => tools.listTools(caller, path.connectionId)))
  }))

export const layer = McpToolsHttp.pipe(Layer.provide(ToolCalls.layer))
