/** HTTP handlers of the MCP Connections group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Connections } from "./Connections.js"

export const McpConnectionsHttp = group(Api, "mcpConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* Connections
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => connections.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => connections.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connections.get(caller, path.connectionId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => connections.update(caller, path.connectionId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connections.remove(caller, path.connectionId)))
      .handle("mcpConnectionGrant", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connections.grant(caller, path.connectionId, payload)))
      .handle("mcpConnectionListAccess", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => connections.listGrants(caller, path.connectionId, urlParams)))
      .handle("mcpConnectionRevoke", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => connections.revoke(caller, path.connectionId, path.grantId)))
      .handle("getToolPolicy", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connections.getToolPolicy(caller, path.connectionId)))
      .handle("setToolPolicy", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connections.setToolPolicy(caller, path.connectionId, payload)))
  }))

export const layer = McpConnectionsHttp.pipe(Layer.provide(Connections.layer))
