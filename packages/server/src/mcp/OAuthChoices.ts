/**
 * The choices of an MCP OAuth connect (pure): the authorization server, the OAuth client, the scopes, what is kept.
 */
import type { AuthorizationServerMetadata, OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js"
import type { McpRegistrationSource } from "@orgplane/schema"
import type { McpConnectionRow } from "./ConnectionsRepository.js"
import { metadataOf } from "./Credentials.js"
import { clientMetadataDocument } from "./OAuthClientMetadata.js"

/** Which authorization server: the configured issuer, else the one the MCP server names; several → the admin picks. */
export const chooseIssuer = (
  configured: string | null,
  resourceMetadata: Pick<OAuthProtectedResourceMetadata, "authorization_servers"> | undefined,
  mcpUrl: string
): { readonly issuer: string } | { readonly several: ReadonlyArray<string> } => {
  if (configured !== null) return { issuer: configured }
  const servers = resourceMetadata?.authorization_servers ?? []
  if (servers.length === 1) return { issuer: servers[0] }
  if (servers.length > 1) return { several: servers }
  // No protected-resource metadata: the MCP server's origin is its own authorization server (MCP 2025-03-26).
  return { issuer: new URL(mcpUrl).origin }
}

export type Registration =
  | { readonly _tag: "existing"; readonly source: McpRegistrationSource }
  | { readonly _tag: "client_metadata"; readonly clientId: string }
  | { readonly _tag: "dynamic" }
  | { readonly _tag: "required" }

/**
 * The OAuth client to use, in order: one an admin registered (`pre_registered`); one registered before with this
 * authorization server and callback; a client ID metadata document when the authorization server supports them and
 * the server's public URL is https (the authorization server must be able to fetch it); dynamic registration
 * (RFC 7591) when it has a registration endpoint; else an admin must register a client.
 */
export const chooseRegistration = (
  connection: Pick<McpConnectionRow, "oauthClientId" | "oauthRegistrationSource" | "oauthMetadata" | "oauthRedirectUri">,
  issuer: string,
  metadata: Pick<AuthorizationServerMetadata, "registration_endpoint"> & { readonly client_id_metadata_document_supported?: unknown },
  callbackUrl: string,
  publicBaseUrl: string | undefined
): Registration => {
  if (connection.oauthClientId !== null && (connection.oauthRegistrationSource === "pre_registered" || connection.oauthRegistrationSource === null)) {
    return { _tag: "existing", source: "pre_registered" }
  }
  if (
    connection.oauthClientId !== null && connection.oauthRegistrationSource !== null && metadataOf(connection)?.issuer === issuer &&
    connection.oauthRedirectUri === callbackUrl
  ) {
    return { _tag: "existing", source: connection.oauthRegistrationSource }
  }
  if (metadata.client_id_metadata_document_supported === true && publicBaseUrl !== undefined && publicBaseUrl.startsWith("https://")) {
    return { _tag: "client_metadata", clientId: clientMetadataDocument(publicBaseUrl).client_id }
  }
  if (typeof metadata.registration_endpoint === "string") return { _tag: "dynamic" }
  return { _tag: "required" }
}

/**
 * The scopes an authorization asks for: those the admin set; else those the MCP server's challenge names; else its
 * protected-resource metadata's `scopes_supported`; else none (the authorization server's default).
 */
export const scopesToRequest = (
  configured: ReadonlyArray<string>,
  challengeScope: string | undefined,
  supported: ReadonlyArray<string> | undefined
): ReadonlyArray<string> => {
  if (configured.length > 0) return configured
  const challenged = (challengeScope ?? "").split(" ").filter((scope) => scope !== "")
  if (challenged.length > 0) return challenged
  return supported ?? []
}

/** Issuers compare as URLs without a trailing slash (`https://as.example` and `https://as.example/` are one). */
export const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, "") === b.replace(/\/+$/, "")

/** The token endpoint authentication a dynamically registered client asks for: public (PKCE) when allowed. */
export const authMethodFor = (metadata: AuthorizationServerMetadata): "none" | "client_secret_basic" | "client_secret_post" => {
  const supported = metadata.token_endpoint_auth_methods_supported
  if (supported === undefined || supported.includes("none")) return "none"
  return supported.includes("client_secret_post") && !supported.includes("client_secret_basic") ? "client_secret_post" : "client_secret_basic"
}

/** The endpoints and capabilities kept in `oauth_metadata` (what refresh and the callback need). */
export const keptMetadata = (metadata: AuthorizationServerMetadata) => {
  const keys = [
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "registration_endpoint",
    "revocation_endpoint",
    "scopes_supported",
    "response_types_supported",
    "grant_types_supported",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "client_id_metadata_document_supported"
  ]
  const record = metadata as Record<string, unknown>
  return Object.fromEntries(keys.filter((key) => record[key] !== undefined).map((key) => [key, record[key]]))
}
