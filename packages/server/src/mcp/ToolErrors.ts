/**
 * Provider tool errors: a tool result with `isError: true` as a diagnostic, and the provider's text for the log.
 */
import type { McpDiagnostic } from "@orgplane/schema"
import { type ActionOwner, type Classified, type DiagnosticContext, finish, providerIdentifier } from "./Diagnostics.js"

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
    code: providerIdentifier(record["code"]) ?? (typeof record["error"] === "string" ? providerIdentifier(record["error"]) : undefined) ?? nested.code,
    requestId: providerIdentifier(record["requestId"]) ?? providerIdentifier(record["transactionId"]) ?? providerIdentifier(record["request_id"]) ?? nested.requestId,
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
