/**
 * The MCP server's layers: its name and protocol versions, the middleware that hands each request its `Transport`,
 * and the server over stdio (`orgplane mcp serve`) with one Transport for every request. The server's `/mcp` endpoint
 * serves the same registrations (`Tools.layer`) over Streamable HTTP with a Transport of the request's credential.
 */
import { randomUUID } from "node:crypto"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CurrentSession } from "./Confirmation.js"
import * as Tools from "./Tools.js"
import { Transport } from "./Transport.js"

/** What the server calls itself in `initialize`. */
export const name = "orgplane"

/** What the server tells a client it is for. */
export const instructions =
  "Administers an orgplane organization for the person whose credential this server holds, through the same API, schema and policy. find_operations, describe_operation, then read_operation for what only reads, call_operation for what changes something; destructive operations need a confirmation the person gives."

/** The MCP protocol versions served, the newest stateful one first. */
export const protocols = [McpProtocol.v2025_11_25, McpProtocol.v2026_07_28, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26] as const

/**
 * Middleware giving every request the same Transport (one credential for the whole server, as on stdio) and, with
 * `session`, the same MCP session: a confirmation is bound to it.
 */
export const transportMiddleware = (transport: Transport["Service"], session?: string) =>
  McpServer.middleware<{ provides: Transport }>()((effect) =>
    Effect.provideService(session === undefined ? effect : Effect.provideService(effect, CurrentSession, session), Transport, transport)
  )

/**
 * The registrations with every request's Transport fixed to `transport`, in one MCP session of their own (a random
 * id: stdio's connection is the process's one session).
 */
export const registrations = (options: Tools.Options & { readonly transport: Transport["Service"] }) => {
  const { transport, ...toolOptions } = options
  return Layer.unwrap(Effect.sync(() => Tools.layer(toolOptions).pipe(Layer.provide(transportMiddleware(transport, randomUUID()).layer))))
}

/** The MCP server over stdio, every request sent with `transport` (say `Transport.fromHttpClient`). */
export const layerStdio = (options: Tools.Options & { readonly transport: Transport["Service"]; readonly version: string }) => {
  const { version, ...rest } = options
  return McpServer.layerStdio({ name, version, instructions, protocols, registrations: registrations(rest) })
}
