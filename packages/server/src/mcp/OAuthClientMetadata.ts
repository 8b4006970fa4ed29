/**
 * What the server publishes for MCP OAuth: its callback URL and its client ID metadata document.
 */
import type { McpClientMetadataDocument } from "@orgplane/schema"

export const CALLBACK_PATH = "/v1/mcp-connections/oauth/callback"
export const CLIENT_METADATA_PATH = "/v1/mcp-connections/oauth/client-metadata.json"

export const callbackUrlOf = (baseUrl: string) => `${baseUrl}${CALLBACK_PATH}`

export const clientMetadataDocument = (baseUrl: string): McpClientMetadataDocument => ({
  client_id: `${baseUrl}${CLIENT_METADATA_PATH}`,
  client_name: "orgplane",
  client_uri: baseUrl,
  redirect_uris: [callbackUrlOf(baseUrl)],
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: "none",
  application_type: "web"
})
