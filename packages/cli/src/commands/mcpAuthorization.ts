/**
 * `orgplane mcp connections connect | disconnect`: connecting the OAuth credential of an MCP connection (the
 * organization's shared one, or your own on a `per_member` connection) and dropping it. The connection is named by
 * its id (emc_…) or its name, like every `mcp connections` command.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import { type ExternalMcpConnectionId, McpConnectResult, McpDisconnectResult } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Progress from "../Progress.js"
import { connection, resolveConnection } from "./mcpConnectionArgument.js"

/** Waits until the caller's credential is in place (or gives up after 10 minutes). */
const awaitConnected = (client: OrgplaneApiClient, id: ExternalMcpConnectionId) =>
  Progress.awaitAuthorization(Effect.map(client.mcpConnections.get({ params: { connectionId: id } }), ({ item }) => item.connectedForMe))

export const connect = Commands.leaf("connect", {
  summary: "Connect an OAuth MCP connection: the shared credential (admins), or your own account on a per-member connection.",
  details: [
    "Prints the authorization server's URL to open in a browser (valid 10 minutes, once), or that the connection is already connected. With --wait it then waits until the authorization is completed (up to 10 minutes; the URL goes to standard error)."
  ],
  inputs: {
    connection,
    wait: Inputs.boolean("wait", { description: "Wait until the authorization in the browser completed (up to 10 minutes)." })
  },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const connectionId = yield* resolveConnection(client, input.connection)
        const connected = `Connected: ${connectionId} has a usable credential.`
        const result = yield* client.mcpAuthorization.connect({ params: { connectionId } })
        if (result.status === "connected" || !input.wait) {
          return yield* Output.emit(input.global, McpConnectResult, result, (value) =>
            value.status === "connected"
              ? connected
              : `Open this URL in a browser to authorize (valid 10 minutes):\n${value.authorizeUrl}`)
        }
        yield* Output.note(`Open this URL in a browser to authorize (valid 10 minutes):\n${result.authorizeUrl}`)
        yield* awaitConnected(client, connectionId)
        yield* Output.emit(input.global, McpConnectResult, { status: "connected", authorizeUrl: null }, () => connected)
      }))
})

export const disconnect = Commands.leaf("disconnect", {
  summary: "Disconnect an OAuth MCP connection: its shared credential (admins), or with --mine your own account.",
  details: [
    "Without --mine (owners and admins): drops the shared credential, or every member's on a per-member connection; the OAuth client stays registered. With --mine: drops only your own credential of a per-member connection."
  ],
  inputs: {
    connection,
    mine: Inputs.boolean("mine", { description: "Drop only your own account's credential (per-member connections)." })
  },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const connectionId = yield* resolveConnection(client, input.connection)
        const result = input.mine
          ? yield* client.mcpAuthorization.disconnectMine({ params: { connectionId } })
          : yield* client.mcpAuthorization.disconnect({ params: { connectionId } })
        yield* Output.emit(input.global, McpDisconnectResult, result, ({ removed }) =>
          removed
            ? `Disconnected ${input.mine ? "your account from " : ""}${connectionId}.`
            : `Nothing to disconnect: ${input.mine ? "you had not connected your account to" : "nothing was connected on"} ${connectionId}.`)
      }))
})
