/**
 * HTTP handlers of the MCP Connections group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Connections } from "./Connections.js"

export const McpConnectionsHttp = group(Api, "mcpConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.get(caller, params.connectionId)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.update(caller, params.connectionId, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.remove(caller, params.connectionId)))
      .handle("mcpConnectionGrant", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.grant(caller, params.connectionId, payload)))
      .handle("mcpConnectionListAccess", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.listGrants(caller, params.connectionId, query)))
      .handle("mcpConnectionRevoke", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.revoke(caller, params.connectionId, params.grantId)))
      .handle("getToolPolicy", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.getToolPolicy(caller, params.connectionId)))
      .handle("setToolPolicy", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.setToolPolicy(caller, params.connectionId, payload)))
  }))

export const layer = McpConnectionsHttp.pipe(Layer.provide(Connections.layer))
