/**
 * What failed in an exchange with an MCP server, as the API reports it (`McpDiagnostic`): a category and code a
 * program can branch on, whose move it is (`operatorAction`), whether retrying can help, and where the request went
 * (origin and a hash of the path, never the path itself: paths can carry identifiers). Provider text never goes
 * into a diagnostic's message: it may carry anything, and the message is shown to admins.
 *
 * The classification follows the reference (§1.6): the phase of a request (ExchangePhase), the HTTP table
 * (HttpClassification), the error table (SessionErrors), provider tool errors (ToolErrors) and the one-sentence
 * diagnosis of a tool call's inspection (ToolCallDiagnosis). This module holds what they share: the context, the
 * classification before it is finished, and finishing it, with the reassignment of a member's move to the
 * organization admin on a shared credential.
 */
import type { McpDiagnostic } from "@orgplane/schema"
import * as NodeCrypto from "node:crypto"
import { originOf } from "../platform/Outbound.js"
import { phaseOf } from "./ExchangePhase.js"
import type { Exchange } from "./Inspection.js"

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
export const providerIdentifier = (value: unknown): string | undefined => {
  const text = typeof value === "number" && Number.isFinite(value) ? String(value) : value
  return typeof text === "string" && /^[A-Za-z0-9][A-Za-z0-9_.:/@+=-]{0,127}$/.test(text) ? text : undefined
}

export const providerRequestIdOf = (headers: ReadonlyArray<readonly [string, string]>): string | undefined => {
  for (const name of providerRequestIdHeaders) {
    const found = headers.find(([header]) => header.toLowerCase() === name)
    const value = found === undefined ? undefined : providerIdentifier(found[1].trim())
    if (value !== undefined) return value
  }
  return undefined
}

/** A classification before it is finished: the diagnostic's own fields, and whose move it is. */
export type Classified =
  & Pick<McpDiagnostic, "category" | "code" | "operatorAction" | "message" | "retryable">
  & Partial<Pick<McpDiagnostic, "httpStatus" | "jsonRpcCode" | "phase" | "providerRequestId" | "providerStatus" | "providerCode" | "payloadBytes">>
  & { readonly owner: ActionOwner }

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

/** The diagnostic of a classification in its context: the move reassigned, the phase, the request id, where it went. */
export const finish = (classified: Classified, context: DiagnosticContext, phase: string | undefined): McpDiagnostic & { readonly owner: ActionOwner } => {
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

/** The phase the caller named, else the one of the exchange it recorded. */
export const contextPhase = (context: DiagnosticContext) =>
  context.phase ?? (context.exchange === undefined ? undefined : phaseOf(context.exchange, context.url))

/** Strips the internal `owner` from a diagnostic (what the API answers). */
export const toDiagnostic = ({ owner: _owner, ...diagnostic }: McpDiagnostic & { readonly owner?: ActionOwner }): McpDiagnostic => diagnostic

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
