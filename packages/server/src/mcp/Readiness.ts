/**
 * Whether a caller's tool calls on a connection can run now, and if not why (pure). The order is the reference
 * service's (§1.2): an issuer review blocks everyone; a `per_member` connection needs the caller's own access
 * token; a `shared` one needs to be connected. Whether a grant reaches the caller is checked before this
 * (`Access.requireUsable`, or `forCaller` here for answers).
 */
import { notGranted } from "../access/Access.js"
import type { McpConnectionRow, McpMemberCredentialRow } from "./ConnectionsRepository.js"

export interface Readiness {
  readonly ready: boolean
  /** Why not, and what to do; null when ready. */
  readonly message: string | null
}

export const ISSUER_REVIEW = "An admin must review the connection's changed OAuth issuer before its tools can be used."
export const CONNECT_YOUR_ACCOUNT = "Connect your account before using this MCP's tools."
export const CONNECT_SHARED = "Connect this MCP before using its tools."

/** The connection's columns readiness reads. */
export type ReadinessRow = Pick<
  McpConnectionRow,
  "authType" | "credentialMode" | "apiKeyCiphertext" | "accessTokenCiphertext" | "connectedAt" | "oauthIssuerReviewRequiredAt"
>

/** Whether the shared credential is in place: an OAuth access token, an API key, or (`none`) a successful `initialize`. */
export const sharedConnected = (row: ReadinessRow): boolean => {
  switch (row.authType) {
    case "oauth":
      return row.accessTokenCiphertext !== null
    case "apikey":
      return row.apiKeyCiphertext !== null && row.connectedAt !== null
    case "none":
      return row.connectedAt !== null
  }
}

/** Whether calls made by the caller have a credential: the shared one, or the caller's own for `per_member`. */
export const connectedFor = (row: ReadinessRow, credential: Pick<McpMemberCredentialRow, "accessTokenCiphertext"> | undefined): boolean =>
  row.credentialMode === "per_member" ? credential?.accessTokenCiphertext != null : sharedConnected(row)

/** The readiness of `row` for a caller whose own credential on it is `credential` (none if they never connected). */
export const of = (row: ReadinessRow, credential: Pick<McpMemberCredentialRow, "accessTokenCiphertext"> | undefined): Readiness => {
  if (row.oauthIssuerReviewRequiredAt !== null) return { ready: false, message: ISSUER_REVIEW }
  if (row.credentialMode === "per_member") {
    return credential?.accessTokenCiphertext != null ? ready : { ready: false, message: CONNECT_YOUR_ACCOUNT }
  }
  return sharedConnected(row) ? ready : { ready: false, message: CONNECT_SHARED }
}

/** `of`, after the grant: a caller no grant reaches is not ready, whatever their role. */
export const forCaller = (
  row: ReadinessRow & Pick<McpConnectionRow, "name">,
  credential: Pick<McpMemberCredentialRow, "accessTokenCiphertext"> | undefined,
  granted: boolean
): Readiness => granted ? of(row, credential) : { ready: false, message: notGranted(row.name).message }

const ready: Readiness = { ready: true, message: null }
