/**
 * Connecting an OAuth MCP connection: what `connect` answers (connected already, or the URL to open), the
 * authorization server's redirect back to the server (the callback), and the client ID metadata document the server
 * publishes for authorization servers that accept URL client ids.
 */
import { Schema } from "effect"
import { allErrors } from "./Common.js"
import { ExternalMcpConnectionId } from "./Ids.js"

export const McpConnectStatus = Schema.Literal("connected", "needs_auth").annotations({
  identifier: "McpConnectStatus",
  description: "`connected`: the caller's credential is in place and usable; `needs_auth`: open `authorizeUrl` to authorize."
})
export type McpConnectStatus = typeof McpConnectStatus.Type

export const McpConnectResult = Schema.Struct({
  status: McpConnectStatus,
  authorizeUrl: Schema.NullOr(Schema.String).annotations({
    description:
      "With `needs_auth`: the authorization server's page to open in a browser (valid 10 minutes, once). Null with `connected`."
  })
}).annotations({ identifier: "McpConnectResult" })
export type McpConnectResult = typeof McpConnectResult.Type

const param = (max: number, description: string) =>
  Schema.optionalWith(Schema.String.pipe(Schema.maxLength(max)), { exact: true }).annotations({ description })

/** What the authorization server sends back (RFC 6749 §4.1.2, RFC 9207 `iss`). */
export const McpOAuthCallbackQuery = Schema.Struct({
  code: param(4096, "The authorization code."),
  state: param(1024, "The state the server gave in the authorization URL: it names and signs the pending authorization."),
  error: param(255, "The authorization server's error code (for example `access_denied`) instead of a code."),
  error_description: param(1024, "Its human-readable text."),
  iss: param(2048, "The authorization server's issuer (RFC 9207): when present it must be the one the authorization started with.")
}).annotations(allErrors)
export type McpOAuthCallbackQuery = typeof McpOAuthCallbackQuery.Type

export const McpOAuthCallbackResult = Schema.Struct({
  ok: Schema.Literal(true),
  connectionId: ExternalMcpConnectionId,
  status: Schema.Literal("connected")
}).annotations({ identifier: "McpOAuthCallbackResult" })

export const McpDisconnectResult = Schema.Struct({
  ok: Schema.Literal(true),
  removed: Schema.Boolean.annotations({ description: "Whether there was a credential to drop (false: nothing was connected)." })
}).annotations({ identifier: "McpDisconnectResult" })

/** The OAuth client ID metadata document (draft-ietf-oauth-client-id-metadata-document): its URL is the client id. */
export const McpClientMetadataDocument = Schema.Struct({
  client_id: Schema.String,
  client_name: Schema.String,
  client_uri: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  grant_types: Schema.Array(Schema.String),
  response_types: Schema.Array(Schema.String),
  token_endpoint_auth_method: Schema.Literal("none"),
  application_type: Schema.Literal("web")
}).annotations({ identifier: "McpClientMetadataDocument" })
export type McpClientMetadataDocument = typeof McpClientMetadataDocument.Type
