/**
 * The error table of MCP diagnostics: a session failure (guard, network, HTTP, JSON-RPC, protocol) classified.
 */
import type { McpDiagnostic } from "@orgplane/schema"
import { mcpSdkIfLoaded } from "../integrations/mcp/McpSdk.js"
import { type Classified, contextPhase, type DiagnosticContext, finish, toDiagnostic } from "./Diagnostics.js"
import { byResponse, byStatus } from "./HttpClassification.js"
import type { Exchange } from "./Inspection.js"
import { httpStatusOf, type McpSessionError, outboundErrorOf } from "./Session.js"

const dnsCodes = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "ENODATA", "EDNS", "ESERVFAIL", "EREFUSED"])
const tcpCodes = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE", "ECONNABORTED", "EADDRNOTAVAIL"])
const isTls = (code: string) =>
  code.startsWith("ERR_TLS") || code.startsWith("ERR_SSL") || code.startsWith("CERT_") || code.includes("CERT") ||
  code === "DEPTH_ZERO_SELF_SIGNED_CERT" || code === "UNABLE_TO_VERIFY_LEAF_SIGNATURE" || code === "EPROTO"

const timeout: Classified = {
  category: "request_timeout",
  code: "MCP_REQUEST_TIMEOUT",
  retryable: true,
  owner: "provider_admin",
  message: "The MCP server did not answer in time.",
  operatorAction: "Retry later; check that the server is up."
}

const byOutbound = (outbound: NonNullable<ReturnType<typeof outboundErrorOf>>): Classified => {
  switch (outbound.reason) {
    case "blocked":
      return {
        category: "security_blocked",
        code: "MCP_URL_BLOCKED",
        retryable: false,
        owner: "organization_admin",
        message: outbound.message,
        operatorAction: "Use a public https URL: private, loopback and link-local addresses are refused."
      }
    case "timeout":
      return timeout
    case "too_large":
      return {
        category: "response_too_large",
        code: "MCP_RESPONSE_BODY_LIMIT",
        retryable: false,
        owner: "provider_admin",
        message: "The MCP server's answer was larger than allowed.",
        operatorAction: "Ask for less (narrower arguments), or contact the provider."
      }
    case "network": {
      const code = outbound.code
      if (code !== undefined && dnsCodes.has(code)) {
        return {
          category: "dns_failure",
          code: `MCP_${code}`,
          retryable: code === "EAI_AGAIN" || code === "ESERVFAIL",
          phase: "NETWORK_DNS",
          owner: "organization_admin",
          message: `The MCP server's host name could not be resolved (${code}).`,
          operatorAction: "Check the host name in the connection's URL."
        }
      }
      if (code !== undefined && isTls(code)) {
        return {
          category: "tls_failure",
          code: `MCP_${code}`,
          retryable: false,
          phase: "NETWORK_TLS",
          owner: "provider_admin",
          message: `The TLS handshake with the MCP server failed (${code}).`,
          operatorAction: "Check the server's certificate: it must be valid for the host and from a public authority."
        }
      }
      return {
        category: "network_failure",
        code: code !== undefined && (tcpCodes.has(code) || code.startsWith("UND_ERR_")) ? `MCP_${code}` : "MCP_NETWORK_FAILURE",
        retryable: true,
        phase: "NETWORK_TCP",
        owner: "network_admin",
        message: code === undefined ? "The MCP server could not be reached." : `The MCP server could not be reached (${code}).`,
        operatorAction: "Check that the host exists, is up and accepts connections from this server."
      }
    }
  }
}

const fallback = (error: McpSessionError, phase: string | undefined): Classified => {
  if (phase === undefined) {
    return {
      category: "mcp_protocol_failure",
      code: error.stage === "initialize" ? "MCP_INITIALIZE" : "MCP_TRANSPORT",
      retryable: false,
      owner: "provider_admin",
      message: error.stage === "initialize" ? "The server did not complete an MCP initialize." : "The MCP exchange failed.",
      operatorAction: "Check that the URL is an MCP endpoint speaking Streamable HTTP."
    }
  }
  const auth = phase.startsWith("AUTH_")
  const protocol = phase.startsWith("MCP_") || phase.startsWith("CONTINUITY_")
  return {
    category: auth ? "oauth_failure" : protocol ? "mcp_protocol_failure" : "connection_failure",
    code: `MCP_${phase}`,
    retryable: phase === "NETWORK_TCP" || phase === "MCP_TRANSPORT",
    owner: auth ? "organization_admin" : "provider_admin",
    message: phase === "MCP_INITIALIZE"
      ? "The server did not complete an MCP initialize."
      : `The MCP exchange failed (${phase}).`,
    operatorAction: auth
      ? "Check the connection's OAuth settings and reconnect the account."
      : "Check that the URL is an MCP endpoint speaking Streamable HTTP."
  }
}

const classify = (error: McpSessionError, phase: string | undefined, exchange: Exchange | undefined): Classified => {
  const outbound = outboundErrorOf(error.cause)
  if (outbound !== undefined) return byOutbound(outbound)
  const status = httpStatusOf(error.cause)
  if (status !== undefined) {
    const refined = exchange?.response?.status === status && phase !== undefined ? byResponse(exchange, phase) : undefined
    return refined ?? byStatus(status)
  }
  // The SDK's "Unexpected content type" (its StreamableHTTPError with code -1), or a body that is not JSON-RPC.
  if (exchange?.response !== undefined && phase !== undefined && exchange.response.status >= 200 && exchange.response.status < 300) {
    const refined = byResponse(exchange, phase)
    if (refined !== undefined) return refined
  }
  // A JSON-RPC error can only come from the SDK's client, so the SDK is loaded when there is one.
  const sdk = mcpSdkIfLoaded()
  if (sdk !== undefined && error.cause instanceof sdk.McpError) {
    const { ErrorCode } = sdk
    const code = error.cause.code
    if (code === ErrorCode.RequestTimeout) return { ...timeout, jsonRpcCode: code }
    if (code === ErrorCode.ConnectionClosed && /connection closed/i.test(error.cause.message)) {
      return {
        category: "mcp_protocol_failure",
        code: "MCP_CONNECTION_CLOSED",
        retryable: true,
        owner: "provider_admin",
        message: "The MCP session closed before the answer came.",
        operatorAction: "Retry; check the server's health if it persists."
      }
    }
    if (code === ErrorCode.InvalidParams && phase === "MCP_TOOL_EXECUTION") {
      return {
        category: "mcp_tool_input_invalid",
        code: "MCP_INVALID_PARAMS",
        retryable: false,
        jsonRpcCode: code,
        owner: "member",
        message: `The MCP server refused the tool's arguments (JSON-RPC ${code}).`,
        operatorAction: "Check the arguments against the tool's input schema."
      }
    }
    if (code >= -32099 && code <= -32000) {
      return {
        category: "provider_declared_error",
        code: "MCP_PROVIDER_DECLARED_ERROR",
        retryable: false,
        jsonRpcCode: code,
        owner: "provider_admin",
        message: `The MCP server answered a server-defined JSON-RPC error (JSON-RPC ${code}).`,
        operatorAction: "Check the server's documentation for this error; contact the provider if it persists."
      }
    }
    return {
      category: "mcp_protocol_failure",
      code: code === ErrorCode.InvalidParams ? "MCP_INVALID_PARAMS" : `MCP_JSONRPC_${Math.abs(code)}`,
      retryable: false,
      jsonRpcCode: code,
      owner: "provider_admin",
      message: `The MCP server answered a JSON-RPC error ${code}.`,
      operatorAction: "Check the request and the server's documentation."
    }
  }
  if (/protocol version/i.test(error.message)) {
    return {
      category: "mcp_protocol_failure",
      code: "MCP_UNSUPPORTED_VERSION",
      retryable: false,
      phase: "MCP_VERSION",
      owner: "provider_admin",
      message: "The MCP server speaks a protocol version this server does not support.",
      operatorAction: "Ask the provider which MCP protocol versions the server supports."
    }
  }
  return fallback(error, phase)
}

/** The diagnostic of a session failure, with whose move it is. */
export const classifySessionError = (error: McpSessionError, context: DiagnosticContext) => {
  const phase = contextPhase(context)
  return finish(classify(error, phase, context.exchange), context, phase)
}

/** The diagnostic of a session failure. */
export const fromSessionError = (error: McpSessionError, context: DiagnosticContext): McpDiagnostic =>
  toDiagnostic(classifySessionError(error, context))
