/**
 * The HTTP table of MCP diagnostics: a failure classified by its status, refined by the answer that carried it.
 */
import type { Classified } from "./Diagnostics.js"
import { isMcpPhase } from "./ExchangePhase.js"
import { type Exchange, mediaTypeOf } from "./Inspection.js"

/** The classification by status alone (no exchange recorded): the first classification, kept for callers without one. */
export const byStatus = (status: number): Classified => {
  if (status === 401) {
    return {
      category: "oauth_resource_rejected",
      code: "MCP_HTTP_401",
      retryable: false,
      httpStatus: status,
      owner: "organization_admin",
      message: "The MCP server refused the credential (HTTP 401).",
      operatorAction: "Check the connection's credential: update the API key or reconnect the account."
    }
  }
  if (status === 403) {
    return {
      category: "provider_policy_denied",
      code: "MCP_HTTP_403",
      retryable: false,
      httpStatus: status,
      owner: "provider_admin",
      message: "The MCP server forbade the request (HTTP 403).",
      operatorAction: "Check the permissions of the account or key the connection uses at the provider."
    }
  }
  if (status === 404) {
    return {
      category: "endpoint_not_found",
      code: "MCP_HTTP_404",
      retryable: false,
      httpStatus: status,
      owner: "organization_admin",
      message: "No MCP endpoint at this URL (HTTP 404).",
      operatorAction: "Check the connection's URL: it must be the server's MCP endpoint (often ending in /mcp)."
    }
  }
  if (status === 429) {
    return {
      category: "provider_throttled",
      code: "MCP_HTTP_429",
      retryable: true,
      httpStatus: status,
      owner: "provider_admin",
      message: "The MCP server is rate-limiting requests (HTTP 429).",
      operatorAction: "Wait and retry; ask the provider for a higher limit if it persists."
    }
  }
  if (status >= 500) {
    return {
      category: "provider_unavailable",
      code: `MCP_HTTP_${status}`,
      retryable: true,
      httpStatus: status,
      owner: "provider_admin",
      message: `The MCP server failed (HTTP ${status}).`,
      operatorAction: "Retry later; contact the provider if it persists."
    }
  }
  return {
    category: "http_failure",
    code: `MCP_HTTP_${status}`,
    retryable: status === 408,
    httpStatus: status,
    owner: "organization_admin",
    message: `The MCP server answered HTTP ${status}.`,
    operatorAction: "Check the connection's URL and settings."
  }
}

/** The `error` and whether a challenge is a Bearer one, from `WWW-Authenticate`. */
const challengeOf = (header: string | undefined) => {
  if (header === undefined) return { bearer: false, error: undefined }
  const error = /\berror="?([A-Za-z_]+)"?/.exec(header)?.[1]
  return { bearer: /^\s*bearer\b/i.test(header) || /,\s*bearer\b/i.test(header), error }
}

/**
 * The classification by the HTTP answer of the request that failed (the reference's table), or undefined when
 * it says nothing more than the status would.
 */
export const byResponse = (exchange: Exchange, phase: string): Classified | undefined => {
  const response = exchange.response
  if (response === undefined) return undefined
  const status = response.status
  const mcp = isMcpPhase(phase)
  if (status === 404 && exchange.sentSessionId) {
    return {
      category: "mcp_session_expired",
      code: "MCP_SESSION_NOT_FOUND",
      retryable: true,
      httpStatus: status,
      phase: "CONTINUITY_SESSION",
      owner: "orgplane",
      message: "The MCP server no longer knows the session (HTTP 404 to a request carrying its session id).",
      operatorAction: "Retry: a new session is opened for every call."
    }
  }
  if (status === 404 && mcp) return byStatus(404)
  if ((status === 406 || status === 415) && mcp) {
    return {
      category: "mcp_transport_negotiation",
      code: `MCP_HTTP_${status}`,
      retryable: false,
      httpStatus: status,
      owner: "provider_admin",
      message: `The MCP server refused the request's media types (HTTP ${status}): it may not speak Streamable HTTP.`,
      operatorAction: "Check that the URL is the server's Streamable HTTP endpoint, not a legacy SSE one."
    }
  }
  if (status === 429 || status >= 500) return byStatus(status)
  const challenge = challengeOf(response.wwwAuthenticate)
  if (mcp && (status === 401 || (status === 403 && (challenge.bearer || challenge.error === "insufficient_scope")))) {
    if (!exchange.sentAuthorization) {
      return {
        category: "oauth_resource_rejected",
        code: "MCP_PROVIDER_AUTH_REQUIRED",
        retryable: false,
        httpStatus: status,
        owner: "organization_admin",
        message: `The MCP server requires a credential, and the connection sent none (HTTP ${status}).`,
        operatorAction: "Give the connection a credential: an API key, or OAuth and connect the account."
      }
    }
    if (challenge.error === "insufficient_scope") {
      return {
        category: "oauth_insufficient_scope",
        code: "MCP_OAUTH_INSUFFICIENT_SCOPE",
        retryable: false,
        httpStatus: status,
        owner: "organization_admin",
        message: `The MCP server needs scopes the credential was not granted (HTTP ${status}, insufficient_scope).`,
        operatorAction: "Add the scopes the server asks for to the connection's requested scopes, then reconnect."
      }
    }
    return {
      category: "oauth_resource_rejected",
      code: `MCP_OAUTH_HTTP_${status}`,
      retryable: status === 401,
      httpStatus: status,
      owner: "member",
      message: `The MCP server refused the credential (HTTP ${status}).`,
      operatorAction: "Reconnect your account for this connection, then retry."
    }
  }
  if (status === 403 && (exchange.rpcMethod === "tools/list" || exchange.rpcMethod === "tools/call")) {
    return {
      category: "provider_policy_denied",
      code: "MCP_PROVIDER_HTTP_403",
      retryable: false,
      httpStatus: status,
      owner: "provider_admin",
      message: "The MCP server forbade the request (HTTP 403).",
      operatorAction: "Check the permissions of the account or key the connection uses at the provider."
    }
  }
  if (status >= 400) {
    return {
      category: "http_failure",
      code: `MCP_HTTP_${status}`,
      retryable: status === 408,
      httpStatus: status,
      owner: "organization_admin",
      message: `The MCP server answered HTTP ${status}.`,
      operatorAction: "Check the connection's URL and settings."
    }
  }
  if (status >= 200 && status < 300 && mcp) {
    const type = mediaTypeOf(response.contentType)
    if (type === "text/html") {
      return {
        category: "unexpected_html",
        code: "MCP_HTTP_HTML_RESPONSE",
        retryable: false,
        httpStatus: status,
        owner: "organization_admin",
        message: "The URL answered a web page (text/html), not MCP.",
        operatorAction: "Check the connection's URL: it must be the server's MCP endpoint, not its website."
      }
    }
    const accepted = type === "application/json" || type === "text/event-stream" ||
      (phase === "MCP_INITIALIZED" && (status === 202 || status === 204))
    if (!accepted) {
      return {
        category: "unexpected_content_type",
        code: "MCP_HTTP_CONTENT_TYPE",
        retryable: false,
        httpStatus: status,
        owner: "provider_admin",
        message: `The MCP server answered an unexpected content type (${type === "" ? "none" : type.slice(0, 100)}).`,
        operatorAction: "Check that the URL is an MCP endpoint speaking Streamable HTTP."
      }
    }
  }
  return undefined
}
