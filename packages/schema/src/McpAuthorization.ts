/**
 * Connecting an OAuth MCP connection: what `connect` answers (connected already, or the URL to open), the
 * authorization server's redirect back to the server (the callback), and the client ID metadata document the server
 * publishes for authorization servers that accept URL client ids.
 */
import * as Schema from "effect/Schema"
import { exampleId, ExternalMcpConnectionId } from "./Ids.js"

export const McpConnectStatus = Schema.Literals(["connected", "needs_auth"]).annotate({
  identifier: "McpConnectStatus",
  description: "`connected`: the caller's credential is in place and usable; `needs_auth`: open `authorizeUrl` to authorize."
})
export type McpConnectStatus = typeof McpConnectStatus.Type

export const McpConnectResult = Schema.Struct({
  status: McpConnectStatus,
  authorizeUrl: Schema.NullOr(Schema.String).annotate({
    description:
      "With `needs_auth`: the authorization server's page to open in a browser (valid 10 minutes, once). Null with `connected`."
  })
}).annotate({
  identifier: "McpConnectResult",
  examples: [{
    status: "needs_auth",
    authorizeUrl: "https://mcp.linear.app/authorize?response_type=code&client_id=orgplane-acme&state=eyJ2IjoxfQ.k3Jx&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM&code_challenge_method=S256"
  }]
})
export type McpConnectResult = typeof McpConnectResult.Type

/**
 * The redirect back from an authorization server, every parameter shown: a code, the state the server signed, the
 * issuer; `error` and `error_description` come instead of the code when the person declined.
 */
const callbackExample = {
  code: "SplxlOBeZQQYbYS6WxSbIA",
  state: "eyJ2IjoxLCJpZCI6Im1vYV94In0.k3JxQ9",
  error: "access_denied",
  error_description: "The person declined the authorization.",
  iss: "https://login.provider.example"
}

const param = (max: number, description: string) =>
  Schema.optionalKey(Schema.String.check(Schema.isMaxLength(max))).annotateKey({ description })

const noState = "The callback carries no `state`: start again with connect."

/**
 * What the authorization server sends back (RFC 6749 §4.1.2, RFC 9207 `iss`). `state` is required: the server always
 * sends one, and an authorization server returns it with a code and with an error alike (§4.1.2.1), so a refusal
 * still reaches the pending authorization and gets its own answer. `code` or `error` is required too, which query
 * parameters cannot say in the document: the callback's description does. Every bad member reported: the API's
 * `HttpApi.QueryParseOptions` (`allErrors`), not an annotation here.
 */
export const McpOAuthCallbackQuery = Schema.Struct({
  code: param(4096, "The authorization code (with `error` absent; one of the two is required)."),
  state: Schema.String.check(Schema.isMinLength(1, { message: noState }), Schema.isMaxLength(1024)).annotate({
    description:
      "The state the server gave in the authorization URL: it names and signs the pending authorization. Authorization servers return it with a code and with an error alike."
  }).annotateKey({ messageMissingKey: noState }),
  error: param(255, "The authorization server's error code (for example `access_denied`) instead of a code."),
  error_description: param(1024, "Its human-readable text."),
  iss: param(2048, "The authorization server's issuer (RFC 9207): when present it must be the one the authorization started with.")
}).annotate({ examples: [callbackExample] })
export type McpOAuthCallbackQuery = typeof McpOAuthCallbackQuery.Type

export const McpOAuthCallbackResult = Schema.Struct({
  ok: Schema.Literal(true),
  connectionId: ExternalMcpConnectionId,
  status: Schema.Literal("connected")
}).annotate({ identifier: "McpOAuthCallbackResult", examples: [{ ok: true, connectionId: exampleId("emc"), status: "connected" }] })

export const McpDisconnectResult = Schema.Struct({
  ok: Schema.Literal(true),
  removed: Schema.Boolean.annotate({ description: "Whether there was a credential to drop (false: nothing was connected)." })
}).annotate({ identifier: "McpDisconnectResult", examples: [{ ok: true, removed: true }] })

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
}).annotate({
  identifier: "McpClientMetadataDocument",
  examples: [{
    client_id: "https://orgplane.acme.example/v1/mcp-connections/oauth/client-metadata.json",
    client_name: "orgplane",
    client_uri: "https://orgplane.acme.example",
    redirect_uris: ["https://orgplane.acme.example/v1/mcp-connections/oauth/callback"],
    grant_types: ["authorization_code", "refresh_token"],
    response_types: ["code"],
    token_endpoint_auth_method: "none",
    application_type: "web"
  }]
})
export type McpClientMetadataDocument = typeof McpClientMetadataDocument.Type
