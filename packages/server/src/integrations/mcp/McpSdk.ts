/**
 * The MCP SDK's client side, loaded by its first use rather than at start-up: the `Client` and its Streamable HTTP
 * transport (external MCP connections, the inspector), the OAuth helpers (MCP connections' and the suites' sign-in,
 * token refresh), and the protocol's error codes. With zod schemas for the whole protocol and Ajv beside them, it
 * was a twentieth of a second of every start, for servers that may never open an MCP session.
 *
 * Types come from the SDK directly (`import type`), which costs nothing at run time.
 */
import { lazyModule } from "../../platform/Lazy.js"

type Auth = typeof import("@modelcontextprotocol/sdk/client/auth.js")
type ClientModule = typeof import("@modelcontextprotocol/sdk/client/index.js")
type TransportModule = typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js")
type Types = typeof import("@modelcontextprotocol/sdk/types.js")

export interface McpSdk extends
  Pick<
    Auth,
    | "discoverAuthorizationServerMetadata"
    | "discoverOAuthProtectedResourceMetadata"
    | "exchangeAuthorization"
    | "extractWWWAuthenticateParams"
    | "refreshAuthorization"
    | "registerClient"
    | "startAuthorization"
  >,
  Pick<ClientModule, "Client">,
  Pick<TransportModule, "StreamableHTTPClientTransport" | "StreamableHTTPError">,
  Pick<Types, "ErrorCode" | "LATEST_PROTOCOL_VERSION" | "McpError">
{}

const sdk = lazyModule(async (): Promise<McpSdk> => {
  const [auth, client, transport, types] = await Promise.all([
    import("@modelcontextprotocol/sdk/client/auth.js"),
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js")
  ])
  return { ...auth, ...client, ...transport, ...types }
})

/** The SDK, imported once. */
export const mcpSdk = sdk.load

/**
 * The SDK when something has loaded it, else undefined: for telling its errors apart synchronously, which is only
 * asked of an error a session or a helper threw, so after the SDK was loaded.
 */
export const mcpSdkIfLoaded = sdk.ifLoaded

// The SDK's asynchronous OAuth helpers, as they are (each returns a promise), with the SDK loaded first. One by one
// (a generic `loadingFirst(name)` would need a cast through `unknown`): each keeps the helper's own type.

export const discoverAuthorizationServerMetadata: McpSdk["discoverAuthorizationServerMetadata"] = async (...args) =>
  (await mcpSdk()).discoverAuthorizationServerMetadata(...args)
export const discoverOAuthProtectedResourceMetadata: McpSdk["discoverOAuthProtectedResourceMetadata"] = async (...args) =>
  (await mcpSdk()).discoverOAuthProtectedResourceMetadata(...args)
export const exchangeAuthorization: McpSdk["exchangeAuthorization"] = async (...args) => (await mcpSdk()).exchangeAuthorization(...args)
export const refreshAuthorization: McpSdk["refreshAuthorization"] = async (...args) => (await mcpSdk()).refreshAuthorization(...args)
export const registerClient: McpSdk["registerClient"] = async (...args) => (await mcpSdk()).registerClient(...args)
export const startAuthorization: McpSdk["startAuthorization"] = async (...args) => (await mcpSdk()).startAuthorization(...args)
