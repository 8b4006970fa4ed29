/**
 * The phase of a request in an MCP exchange (the reference's rules), from its URL and body.
 */
import type { Exchange } from "./Inspection.js"

const samePath = (a: string, b: string) => {
  if (!URL.canParse(a) || !URL.canParse(b)) return false
  const x = new URL(a)
  const y = new URL(b)
  return x.origin === y.origin && x.pathname === y.pathname
}

/**
 * The phase of a request, from its URL and body (the reference's rules): the OAuth well-knowns, token and
 * registration requests, the MCP endpoint by JSON-RPC method, anything else `HTTP_ROUTING`.
 */
export const phaseOf = (exchange: Pick<Exchange, "url" | "rpcMethod" | "bodyText">, endpoint: string): string => {
  const path = URL.canParse(exchange.url) ? new URL(exchange.url).pathname : ""
  if (path.startsWith("/.well-known/oauth-protected-resource")) return "AUTH_RESOURCE_DISCOVERY"
  if (path.startsWith("/.well-known/oauth-authorization-server") || path.includes("/.well-known/openid-configuration")) return "AUTH_ISSUER_DISCOVERY"
  const body = exchange.bodyText
  if (body !== undefined && exchange.rpcMethod === undefined) {
    if (/(^|&)grant_type=/.test(body)) return /(^|&)grant_type=refresh_token(&|$)/.test(body) ? "CONTINUITY_REFRESH" : "AUTH_TOKEN_ACQUISITION"
    if (body.includes("\"redirect_uris\"")) return "AUTH_CLIENT_REGISTRATION"
  }
  if (samePath(exchange.url, endpoint)) {
    switch (exchange.rpcMethod) {
      case "initialize":
        return "MCP_INITIALIZE"
      case "notifications/initialized":
        return "MCP_INITIALIZED"
      case "tools/list":
        return "MCP_TOOL_DISCOVERY"
      case "tools/call":
        return "MCP_TOOL_EXECUTION"
      default:
        return "MCP_TRANSPORT"
    }
  }
  return "HTTP_ROUTING"
}

export const isMcpPhase = (phase: string | undefined) => phase !== undefined && phase.startsWith("MCP_")
