/**
 * What failed in an exchange with an MCP server, as the API reports it (`McpDiagnostic`): a category and code a
 * program can branch on, whose move it is (`operatorAction`), whether retrying can help, and where the request went
 * (origin and a hash of the path, never the path itself: paths can carry identifiers). Provider text never goes
 * into a diagnostic's message: it may carry anything, and the message is shown to admins.
 *
 * The classification follows the reference (§1.6): the phase from the last request's URL and body, the HTTP table
 * (session expiry, negotiation, OAuth challenges, provider denials, html and other content types), the error table
 * (guard refusals, DNS/TLS/TCP codes, timeouts, JSON-RPC codes, protocol versions), provider tool errors (`isError`
 * results), the reassignment of a member's move to the organization admin on a shared credential, and the
 * one-sentence diagnosis of a tool call's inspection.
 */
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import type { McpDiagnostic } from "@orgplane/schema"
import * as NodeCrypto from "node:crypto"
import { originOf } from "../platform/Outbound.js"
import { type Capture, type Exchange, mediaTypeOf } from "./Inspection.js"
import { httpStatusOf, type McpSessionError, outboundErrorOf } from "./Session.js"

/** Whose move it is. Not a member of the API's diagnostic (the spec's shape): it decides `operatorAction`'s text and goes to the log. */
export type ActionOwner = "orgplane" | "network_admin" | "provider_admin" | "organization_admin" | "member"

/** The credential the exchange used, when the caller knows it (the tool runner does). */
export interface CredentialContext {
  /** `shared`: the organization's own credential (a member cannot fix it); `per_member`: the caller's. */
  readonly mode: "shared" | "per_member"
  readonly authType: "none" | "apikey" | "oauth"
}

export interface DiagnosticContext {
  readonly referenceId: string
  /** The MCP endpoint the exchange was with. */
  readonly url: string
  /** Where in the exchange it failed, when the caller knows (for example `MCP_INITIALIZE`); else from `exchange`. */
  readonly phase?: string | undefined
  /** The last HTTP exchange seen (the tool runner's inspector records it): refines the HTTP classification. */
  readonly exchange?: Exchange | undefined
  readonly credential?: CredentialContext | undefined
}

/** `sha256:` and the first 16 hex digits of the SHA-256 of the URL's path. */
export const pathHash = (url: string): string => {
  const path = URL.canParse(url) ? new URL(url).pathname : ""
  return `sha256:${NodeCrypto.createHash("sha256").update(path).digest("hex").slice(0, 16)}`
}

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

const isMcpPhase = (phase: string | undefined) => phase !== undefined && phase.startsWith("MCP_")

/** Where a provider's own request id can be found, in order. */
export const providerRequestIdHeaders = [
  "x-ms-request-id",
  "x-ms-correlation-request-id",
  "x-servicenow-request-id",
  "x-correlation-id",
  "x-transaction-id",
  "request-id",
  "x-request-id"
] as const

/** Provider-chosen identifiers shown only when they look like identifiers (no free text reaches a diagnostic). */
const identifier = (value: unknown): string | undefined => {
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value
  return typeof text === "string" && /^[A-Za-z0-9][A-Za-z0-9_.:/@+=-]{0,127}$/.test(text) ? text : undefined
}

export const providerRequestIdOf = (headers: ReadonlyArray<readonly [string, string]>): string | undefined => {
  for (const name of providerRequestIdHeaders) {
    const found = headers.find(([header]) => header.toLowerCase() === name)
    const value = found === undefined ? undefined : identifier(found[1].trim())
    if (value !== undefined) return value
  }
  return undefined
}

type Classified =
  & Pick<McpDiagnostic, "category" | "code" | "operatorAction" | "message" | "retryable">
  & Partial<Pick<McpDiagnostic, "httpStatus" | "jsonRpcCode" | "phase" | "providerRequestId" | "providerStatus" | "providerCode" | "payloadBytes">>
  & { readonly owner: ActionOwner }

/** The classification by status alone (no exchange recorded): the first classification, kept for callers without one. */
const byStatus = (status: number): Classified => {
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
const byResponse = (exchange: Exchange, phase: string): Classified | undefined => {
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
  if (error.cause instanceof McpError) {
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

/** The move a shared credential's failure needs is the organization admin's: a member cannot fix it. */
const reassign = (classified: Classified, credential: CredentialContext | undefined): Classified => {
  if (classified.owner !== "member" || credential === undefined) return classified
  if (credential.mode === "per_member") return classified
  if (classified.category === "mcp_tool_input_invalid") return classified
  return {
    ...classified,
    owner: "organization_admin",
    operatorAction: credential.authType === "apikey"
      ? "Ask an organization admin to update the connection's API key."
      : "Ask an organization admin to reconnect the organization's account for this connection."
  }
}

const finish = (classified: Classified, context: DiagnosticContext, phase: string | undefined): McpDiagnostic & { readonly owner: ActionOwner } => {
  const { owner, ...rest } = reassign(classified, context.credential)
  const requestId = context.exchange?.response === undefined ? undefined : providerRequestIdOf(context.exchange.response.headers)
  const finalPhase = rest.phase ?? phase
  return {
    referenceId: context.referenceId,
    ...rest,
    ...(finalPhase === undefined ? {} : { phase: finalPhase }),
    ...(rest.providerRequestId === undefined && requestId !== undefined ? { providerRequestId: requestId } : {}),
    outbound: { origin: originOf(context.url), pathHash: pathHash(context.url) },
    owner
  }
}

const contextPhase = (context: DiagnosticContext) =>
  context.phase ?? (context.exchange === undefined ? undefined : phaseOf(context.exchange, context.url))

/** Strips the internal `owner` from a diagnostic (what the API answers). */
export const toDiagnostic = ({ owner: _owner, ...diagnostic }: McpDiagnostic & { readonly owner?: ActionOwner }): McpDiagnostic => diagnostic

/** The diagnostic of a session failure, with whose move it is. */
export const classifySessionError = (error: McpSessionError, context: DiagnosticContext) => {
  const phase = contextPhase(context)
  return finish(classify(error, phase, context.exchange), context, phase)
}

/** The diagnostic of a session failure. */
export const fromSessionError = (error: McpSessionError, context: DiagnosticContext): McpDiagnostic =>
  toDiagnostic(classifySessionError(error, context))

/** The whole run ran out of time (the lifecycle deadline, beyond the per-request timeouts). */
export const deadline = (context: DiagnosticContext) =>
  finish({
    category: "request_timeout",
    code: "MCP_LIFECYCLE_DEADLINE",
    retryable: true,
    owner: "provider_admin",
    message: "The MCP exchange did not finish before its deadline.",
    operatorAction: "Retry later; check that the server is up."
  }, context, contextPhase(context))

/** A provider tool error's details, and its text for the log (never for the response). */
export interface ToolErrorDiagnosis {
  readonly diagnostic: McpDiagnostic & { readonly owner: ActionOwner }
  /** The tool's own text, sanitized and at most 512 characters: for the server log only. */
  readonly providerText: string
}

const invalidCategories = new Set(["invalid_arguments", "invalid_params", "validation_error"])

const integerStatus = (value: unknown): number | undefined => {
  const number = typeof value === "string" && /^\d{3}$/.test(value.trim()) ? Number(value.trim()) : value
  return typeof number === "number" && Number.isInteger(number) && number >= 100 && number <= 599 ? number : undefined
}

interface ProviderFields {
  readonly status?: number | undefined
  readonly code?: string | undefined
  readonly requestId?: string | undefined
  readonly category?: string | undefined
}

const fieldsOf = (value: unknown): ProviderFields => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return {}
  const record = value as Record<string, unknown>
  const nested = record["error"] !== null && typeof record["error"] === "object" ? fieldsOf(record["error"]) : {}
  return {
    status: integerStatus(record["status"]) ?? integerStatus(record["statusCode"]) ?? integerStatus(record["httpStatus"]) ?? nested.status,
    code: identifier(record["code"]) ?? (typeof record["error"] === "string" ? identifier(record["error"]) : undefined) ?? nested.code,
    requestId: identifier(record["requestId"]) ?? identifier(record["transactionId"]) ?? identifier(record["request_id"]) ?? nested.requestId,
    category: typeof record["category"] === "string" ? record["category"] : nested.category
  }
}

/** Control characters out, whitespace collapsed, bearer credentials masked, at most `max` characters. */
export const sanitize = (text: string, max = 512): string =>
  text.replace(/[\u0000-\u001f\u007f]+/g, " ").replace(/\b(bearer)\s+[^\s"',;]+/gi, "$1 [redacted]").replace(/\s+/g, " ").trim().slice(0, max)

/**
 * The diagnostic of a tool result with `isError: true` (the tool ran and failed): invalid arguments, a provider
 * 403 or 429, or a tool error, with the provider's status, code and request id read from `structuredContent`, JSON
 * text content or a leading status ("403 Forbidden: …"), and `payloadBytes` the size of the serialized content.
 */
export const fromToolResult = (result: unknown, context: DiagnosticContext): ToolErrorDiagnosis => {
  const record = (result !== null && typeof result === "object" ? result : {}) as { content?: unknown; structuredContent?: unknown }
  const content = Array.isArray(record.content) ? record.content : []
  const texts = content.flatMap((item: unknown) =>
    item !== null && typeof item === "object" && (item as { type?: unknown }).type === "text" && typeof (item as { text?: unknown }).text === "string"
      ? [(item as { text: string }).text]
      : []
  )
  const text = texts.join("\n")
  const structured = fieldsOf(record.structuredContent)
  let fromText: ProviderFields = {}
  const first = texts[0]?.trim()
  if (first !== undefined && first.startsWith("{")) {
    try {
      fromText = fieldsOf(JSON.parse(first))
    } catch {
      fromText = {}
    }
  }
  const leading = first === undefined ? undefined : integerStatus(/^(\d{3})\b/.exec(first)?.[1])
  const providerStatus = structured.status ?? fromText.status ?? leading
  const providerCode = structured.code ?? fromText.code
  const providerRequestId = structured.requestId ?? fromText.requestId
  const category = structured.category ?? fromText.category
  const payloadBytes = Buffer.byteLength(JSON.stringify(record.content ?? []), "utf8")
  const invalid = (category !== undefined && invalidCategories.has(category)) || /^(Input validation error: Invalid arguments for tool|MCP error -32602\b)/.test(text.trim())
  const details = {
    ...(providerStatus === undefined ? {} : { providerStatus }),
    ...(providerCode === undefined ? {} : { providerCode }),
    ...(providerRequestId === undefined ? {} : { providerRequestId }),
    payloadBytes
  }
  const phase = providerStatus === undefined ? "MCP_TOOL_EXECUTION" : "PROVIDER_EXECUTION"
  const classified: Classified = invalid
    ? {
      category: "mcp_tool_input_invalid",
      code: "MCP_PROVIDER_INVALID_PARAMS",
      retryable: false,
      owner: "member",
      message: "The tool refused its arguments.",
      operatorAction: "Check the arguments against the tool's input schema.",
      ...details,
      phase: "MCP_TOOL_EXECUTION"
    }
    : providerStatus === 403
    ? {
      category: "provider_policy_denied",
      code: "MCP_PROVIDER_HTTP_403",
      retryable: false,
      owner: "provider_admin",
      message: "The provider behind the tool denied the request (403).",
      operatorAction: "Check the permissions of the account or key the connection uses at the provider.",
      ...details,
      phase
    }
    : providerStatus === 429
    ? {
      category: "provider_throttled",
      code: "MCP_PROVIDER_HTTP_429",
      retryable: true,
      owner: "provider_admin",
      message: "The provider behind the tool is rate-limiting requests (429).",
      operatorAction: "Wait and retry; ask the provider for a higher limit if it persists.",
      ...details,
      phase
    }
    : {
      category: "provider_tool_error",
      code: "MCP_PROVIDER_TOOL_ERROR",
      retryable: false,
      owner: "provider_admin",
      message: providerStatus === undefined ? "The tool ran and reported an error." : `The tool ran and reported an error (provider status ${providerStatus}).`,
      operatorAction: "Check the arguments and the provider's state; the server log has the tool's text under the reference id.",
      ...details,
      phase
    }
  return { diagnostic: finish(classified, context, phase), providerText: sanitize(text) }
}

/** Where a tool call ended, for `inspection.diagnosis`. */
export type DiagnosisLayer = "network" | "mcp_connection" | "remote_http" | "mcp_tool" | "internal"

const connectionPhase = (phase: string | undefined) =>
  phase !== undefined &&
  (phase.startsWith("AUTH_") || phase.startsWith("CONTINUITY_") ||
    ["HTTP_ROUTING", "MCP_TRANSPORT", "MCP_VERSION", "MCP_INITIALIZE", "MCP_INITIALIZED", "MCP_TOOL_DISCOVERY"].includes(phase))

/** The layer and sentence of `inspection.diagnosis`: success, or where the failure happened. */
export const diagnose = (capture: Pick<Capture, "request" | "response">, diagnostic: McpDiagnostic | undefined): { readonly layer: DiagnosisLayer; readonly summary: string } => {
  if (diagnostic === undefined) return { layer: "mcp_tool", summary: "The tool ran and answered a result." }
  const blocked = diagnostic.category === "security_blocked"
  if (capture.request === undefined) {
    if (blocked) return { layer: "internal", summary: "The outbound guard refused the destination: the tool call was not sent." }
    if (diagnostic.phase?.startsWith("NETWORK_")) {
      return { layer: "network", summary: "The MCP server could not be reached: the tool call was not sent." }
    }
    if (connectionPhase(diagnostic.phase) || diagnostic.httpStatus !== undefined || diagnostic.category === "request_timeout") {
      return { layer: "mcp_connection", summary: `Opening the MCP session failed (${diagnostic.code}): the tool call was not sent.` }
    }
    return { layer: "internal", summary: "The call failed inside this server before the tool call was sent." }
  }
  if (capture.response === undefined) {
    if (blocked) return { layer: "internal", summary: "The outbound guard refused the tool call's destination." }
    if (diagnostic.category === "request_timeout") return { layer: "network", summary: "The remote MCP did not respond to the tool call before the deadline." }
    if (diagnostic.category === "response_too_large") {
      return { layer: "network", summary: "The remote MCP's answer to the tool call was larger than allowed, and was not read." }
    }
    return { layer: "network", summary: "The tool call was sent, but no response came back." }
  }
  const status = capture.response.status
  if (status < 200 || status >= 300) return { layer: "remote_http", summary: `The remote MCP returned HTTP ${status} to the tool call.` }
  if (diagnostic.phase === "MCP_TOOL_EXECUTION" || diagnostic.phase === "PROVIDER_EXECUTION") {
    return { layer: "mcp_tool", summary: `The tool ran and failed: a provider or tool failure (${diagnostic.code}).` }
  }
  return { layer: "mcp_tool", summary: `The remote MCP answered, but not with a result this server accepts (${diagnostic.code}).` }
}
