/** Connecting OAuth MCP connections: connect (start an authorization), the callback, disconnect, the client metadata. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  ConflictResponse,
  ConnectionValidationFailedResponse,
  ForbiddenResponse,
  NotFoundResponse,
  ServiceUnavailableResponse,
  storedCredentialUnreadable,
  StoredCredentialUnreadableResponse
} from "./Errors.js"
import {
  McpClientMetadataDocument,
  McpConnectResult,
  McpDisconnectResult,
  McpOAuthCallbackQuery,
  McpOAuthCallbackResult
} from "./McpAuthorization.js"
import { McpConnectionPath } from "./McpConnections.js"
import { requires } from "./Policy.js"
import { MemberAuthentication, memberAuthenticationErrors } from "./Security.js"
import { audits } from "./AuditCatalog.js"

export class McpAuthorizationApi extends HttpApiGroup.make("mcpAuthorization")
  .add(
    HttpApiEndpoint.post("connect", "/v1/mcp-connections/:connectionId/connect", {
      params: McpConnectionPath,
      success: McpConnectResult,
      error: [NotFoundResponse, ForbiddenResponse, ConflictResponse, ConnectionValidationFailedResponse, StoredCredentialUnreadableResponse, ...memberAuthenticationErrors]
    }).pipe(audits("mcp_connection.connect"), requires("mcp.connectOwn", "mcp.manage"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Connect an MCP connection")
      .annotate(
        OpenApi.Description,
        "Starts connecting the caller's credential of an `oauth` connection: the organization's shared one (`shared`: `mcp.manage`) or the caller's own (`per_member`: `mcp.connectOwn`, and a grant of the connection must reach the caller). Answers `connected` when the credential is in place and not about to expire (refreshing it first if it is), otherwise `needs_auth` with the authorization server's URL to open in a browser: the server discovers the authorization server (RFC 9728, RFC 8414), registers its OAuth client if it has none (a client ID metadata document, else dynamic registration), and starts an authorization code flow with PKCE for the MCP URL as `resource`. The authorization server then sends the browser to `GET /v1/mcp-connections/oauth/callback`, which stores the tokens. An authorization URL works once, for 10 minutes.\n\nErrors: 403 `insufficient_role` (a member connecting a shared connection), `insufficient_access` (no grant reaches the caller); 404 `connection_not_found`; 409 `mcp_connection_not_oauth` (`none` and `apikey` connections are connected when created), `oauth_issuer_required` (the MCP server names several authorization servers: set `oauth.authorizationServerIssuer`), `oauth_client_required` (the authorization server offers no registration: register a client and set `oauth.clientId`), `oauth_issuer_review_required` (the MCP server now names another authorization server than the one its tokens came from: until an owner or admin connects, which is their review, nobody else may, and the connection's tools are blocked); 502 `connection_validation_failed` when discovery or registration failed (`diagnostic` says where)." + " " + storedCredentialUnreadable
      )
  )
  .add(
    HttpApiEndpoint.get("callback", "/v1/mcp-connections/oauth/callback", {
      query: McpOAuthCallbackQuery,
      success: McpOAuthCallbackResult,
      error: [NotFoundResponse, ConnectionValidationFailedResponse, ServiceUnavailableResponse, StoredCredentialUnreadableResponse]
    })
      .annotate(OpenApi.Summary, "Complete an MCP authorization")
      .annotate(
        OpenApi.Description,
        "Where the authorization server sends the browser back (the redirect URI registered for the server's OAuth client: `<ORGPLANE_PUBLIC_URL>/v1/mcp-connections/oauth/callback`). Public: the signed `state` names the pending authorization and authenticates the request. The server checks the signature (in constant time), that the authorization is neither used nor expired, and the issuer (`iss`, RFC 9207) when sent; exchanges the code with the PKCE verifier; and stores the tokens encrypted: the connection's shared credential, or the credential of the member who started it. Answers `{ok: true, connectionId, status: \"connected\"}`, which a browser shows as is.\n\n`state` is required, and so is `code` or `error` (an authorization server sends `state` back with either).\n\nErrors: 400 `invalid_request` on `state` when it is missing or empty; otherwise its detail carries a `code`: on `state` `oauth_state_invalid` (malformed, tampered or unknown), `oauth_authorization_expired`, `oauth_authorization_used`, `oauth_client_changed` (start again with `connect`); on `error` `oauth_access_denied` (the person denied) or `oauth_authorization_refused` (another error of the authorization server, with its description); on `code` `oauth_code_missing` or `oauth_code_rejected` (the token endpoint refused it); on `iss` `oauth_issuer_mismatch`; 404 `connection_not_found` when the connection was deleted meanwhile; 502 `connection_validation_failed` when the token endpoint could not be reached." + " " + storedCredentialUnreadable
      )
  )
  .add(
    HttpApiEndpoint.post("disconnect", "/v1/mcp-connections/:connectionId/disconnect", {
      params: McpConnectionPath,
      success: McpDisconnectResult,
      error: [NotFoundResponse, ForbiddenResponse, ConflictResponse, ...memberAuthenticationErrors]
    }).pipe(audits("mcp_connection.disconnect"), requires("mcp.manage"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Disconnect an MCP connection")
      .annotate(
        OpenApi.Description,
        "Drops the OAuth credential of a connection: the shared one (its tokens, granted scopes and health), or for a `per_member` connection every member's own. The OAuth client stays registered. Calls are refused with 409 `connection_not_ready` until someone connects again. `removed` is false when nothing was connected. Members drop only their own with `DELETE /v1/mcp-connections/{connectionId}/my-account`.\n\nErrors: 404 `connection_not_found`; 409 `mcp_connection_not_oauth` for `none` and `apikey` connections (change or delete those instead)."
      )
  )
  .add(
    HttpApiEndpoint.delete("disconnectMine", "/v1/mcp-connections/:connectionId/my-account", {
      params: McpConnectionPath,
      success: McpDisconnectResult,
      error: [NotFoundResponse, ForbiddenResponse, ConflictResponse, ...memberAuthenticationErrors]
    }).pipe(audits("mcp_connection.disconnect"), requires("mcp.connectOwn"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Disconnect my MCP account")
      .annotate(
        OpenApi.Description,
        "Drops the caller's own credential of a `per_member` connection. `removed` is false when the caller had none.\n\nNo grant is needed: a member whose grant was revoked may still drop what they stored.\n\nErrors: 404 `connection_not_found`; 409 `mcp_connection_not_per_member` for a connection with a shared credential (or none)."
      )
  )
  .add(
    HttpApiEndpoint.get("clientMetadata", "/v1/mcp-connections/oauth/client-metadata.json", {
      success: McpClientMetadataDocument
    })
      .annotate(OpenApi.Summary, "OAuth client metadata document")
      .annotate(
        OpenApi.Description,
        "The server's OAuth client ID metadata document: its own URL is the `client_id` the server uses with authorization servers that advertise `client_id_metadata_document_supported` (only when `ORGPLANE_PUBLIC_URL` is https). A public client (`token_endpoint_auth_method` `none`) named `orgplane`, with the callback as its one redirect URI. Public.\n\nErrors: none."
      )
  )
  .annotate(OpenApi.Title, "MCP Authorization")
  .annotate(
    OpenApi.Description,
    "Connecting `oauth` MCP connections: an authorization code flow with PKCE (S256) against the authorization server the MCP server names, with the MCP URL as `resource` (RFC 8707). Tokens are stored encrypted, never returned, and refreshed before they expire. Connect, disconnect and disconnect-my-account need credentials (401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization); the callback and the client metadata document are public. Connection ids are `emc_` TypeIDs (a malformed one is a 400)."
  )
{}
