/**
 * What failed in an exchange with an MCP server, as the API reports it (`McpDiagnostic`): a category and code a
 * program can branch on, whose move it is (`operatorAction`), whether retrying can help, and where the request went
 * (origin and a hash of the path, never the path itself: paths can carry identifiers). Provider text never goes
 * into a diagnostic's message: it may carry anything, and the message is shown to admins.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { McpDiagnostic } from "@orgplane/schema"
import * as NodeCrypto from "node:crypto"
import { originOf } from "../platform/Outbound.js"
import { httpStatusOf, type McpSessionError, outboundErrorOf } from "./Session.js"

export interface DiagnosticContext {
  readonly referenceId: string
  /** The MCP endpoint the exchange was with. */
  readonly url: string
  /** Where in the exchange it failed, when the caller knows (for example `MCP_INITIALIZE`). */
  readonly phase?: string | undefined
}

/** `sha256:` and the first 16 hex digits of the SHA-256 of the URL's path. */
export const pathHash = (url: string): string => {
  const path = URL.canParse(url) ? new URL(url).pathname : ""
  return `sha256:${NodeCrypto.createHash("sha256").update(path).digest("hex").slice(0, 16)}`
}

const base = (context: DiagnosticContext) => ({
  referenceId: context.referenceId,
  ...(context.phase === undefined ? {} : { phase: context.phase }),
  outbound: { origin: originOf(context.url), pathHash: pathHash(context.url) }
})

type Classified = Pick<McpDiagnostic, "category" | "code" | "operatorAction" | "message" | "retryable"> &
  Partial<Pick<McpDiagnostic, "httpStatus" | "jsonRpcCode">>

const byStatus = (status: number): Classified => {
  if (status === 401) {
    return {
      category: "oauth_resource_rejected",
      code: "MCP_HTTP_401",
      retryable: false,
      httpStatus: status,
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
      message: `The MCP server failed (HTTP ${status}).`,
      operatorAction: "Retry later; contact the provider if it persists."
    }
  }
  return {
    category: "http_failure",
    code: `MCP_HTTP_${status}`,
    retryable: status === 408,
    httpStatus: status,
    message: `The MCP server answered HTTP ${status}.`,
    operatorAction: "Check the connection's URL and settings."
  }
}

const classify = (error: McpSessionError): Classified => {
  const outbound = outboundErrorOf(error.cause)
  if (outbound !== undefined) {
    switch (outbound.reason) {
      case "blocked":
        return {
          category: "security_blocked",
          code: "MCP_URL_BLOCKED",
          retryable: false,
          message: outbound.message,
          operatorAction: "Use a public https URL: private, loopback and link-local addresses are refused."
        }
      case "timeout":
        return {
          category: "request_timeout",
          code: "MCP_REQUEST_TIMEOUT",
          retryable: true,
          message: "The MCP server did not answer in time.",
          operatorAction: "Retry later; check that the server is up."
        }
      case "too_large":
        return {
          category: "response_too_large",
          code: "MCP_RESPONSE_BODY_LIMIT",
          retryable: false,
          message: "The MCP server's answer was larger than allowed.",
          operatorAction: "Ask for less (narrower arguments), or contact the provider."
        }
      case "network":
        return {
          category: "network_failure",
          code: "MCP_NETWORK_FAILURE",
          retryable: true,
          message: outbound.message,
          operatorAction: "Check that the host exists and accepts connections from this server."
        }
    }
  }
  const status = httpStatusOf(error.cause)
  if (status !== undefined) return byStatus(status)
  if (error.cause instanceof McpError) {
    const code = error.cause.code
    if (code === ErrorCode.RequestTimeout) {
      return {
        category: "request_timeout",
        code: "MCP_REQUEST_TIMEOUT",
        retryable: true,
        jsonRpcCode: code,
        message: "The MCP server did not answer in time.",
        operatorAction: "Retry later; check that the server is up."
      }
    }
    return {
      category: code >= -32099 && code <= -32000 ? "provider_declared_error" : "mcp_protocol_failure",
      code: code === ErrorCode.InvalidParams ? "MCP_INVALID_PARAMS" : code >= -32099 && code <= -32000 ? "MCP_PROVIDER_DECLARED_ERROR" : `MCP_JSONRPC_${Math.abs(code)}`,
      retryable: false,
      jsonRpcCode: code,
      message: `The MCP server answered a JSON-RPC error ${code}.`,
      operatorAction: "Check the request and the server's documentation."
    }
  }
  return {
    category: "mcp_protocol_failure",
    code: error.stage === "initialize" ? "MCP_INITIALIZE" : "MCP_TRANSPORT",
    retryable: false,
    message: error.stage === "initialize" ? "The server did not complete an MCP initialize." : "The MCP exchange failed.",
    operatorAction: "Check that the URL is an MCP endpoint speaking Streamable HTTP."
  }
}

/** The diagnostic of a session failure. */
export const fromSessionError = (error: McpSessionError, context: DiagnosticContext): McpDiagnostic => ({
  ...base(context),
  ...classify(error)
})
