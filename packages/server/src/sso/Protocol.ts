/**
 * The protocol-neutral contract of SSO sign-in: what an engine (OIDC, SAML) does for a connection, the
 * stable failure it answers, and the profile the connection's mapping makes of what the provider sent.
 *
 * A flow (sso/SignIn.ts) creates a single-use intent, asks the engine for the provider's URL (`start`), and when the
 * provider answers (OIDC: `GET /v1/sso/oidc/callback`; SAML: the ACS), asks the engine to validate the answer
 * (`complete`), which gives the claims or attributes received. The flow then maps them (`profileOf`) and applies
 * the connection's rules, identically for every protocol.
 */
import type { SsoConnectionKind, SsoFailureCode, SsoMapping, SsoProfile } from "@orgplane/schema"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type { SsoConnectionRow } from "./SsoRepository.js"

/** A sign-in or test refused: a stable code (`SsoFailureCode`) and a readable message (never a secret). */
export class SsoFailureError extends Data.TaggedError("SsoFailureError")<{
  readonly code: SsoFailureCode
  readonly message: string
}> {}

export const failure = (code: SsoFailureCode, message: string) => new SsoFailureError({ code, message })

/** What a flow knows of one intent when it starts or completes it. */
export interface IntentSecrets {
  /** The signed `state` (OIDC) or `RelayState` (SAML) naming the intent. */
  readonly state: string
  readonly nonce: string
  /** The PKCE verifier (OIDC). */
  readonly codeVerifier: string
  /** A login hint for the provider (the email typed, or the testing admin's). */
  readonly loginHint: string | null
}

export interface Started {
  readonly url: string
  /** SAML: the AuthnRequest's id, kept on the intent for InResponseTo. */
  readonly samlRequestId?: string | undefined
}

/** The claims (OIDC) or attributes (SAML) received, with the subject (OIDC `sub`, SAML NameID). */
export interface Received {
  readonly subject: string
  readonly claims: Readonly<Record<string, unknown>>
  /**
   * What makes the answer single use beyond its intent (SAML: the assertion's ID, until it expires): the flow takes
   * it once per connection and refuses it again as `replayed`, so an IdP-initiated Response cannot be posted twice.
   */
  readonly singleUse?: { readonly id: string; readonly expiresAt: Date } | undefined
}

export interface ProtocolEngine {
  readonly kind: SsoConnectionKind
  /** The provider's URL for this intent. `base` is the server's public base URL. */
  readonly start: (
    connection: SsoConnectionRow,
    intent: IntentSecrets,
    base: string
  ) => Effect.Effect<Started, SsoFailureError>
  /** Validates the provider's answer (`params`: the callback's query, or the ACS form) for the intent. */
  readonly complete: (
    connection: SsoConnectionRow,
    intent: IntentSecrets & {
      readonly samlRequestId: string | null
      /** SAML: an unsolicited Response (no intent, no request id); only the SAML engine takes one. */
      readonly idpInitiated?: boolean | undefined
    },
    params: Readonly<Record<string, string>>,
    base: string
  ) => Effect.Effect<Received, SsoFailureError>
}

const text = (value: unknown): string | null => {
  if (typeof value === "string") return value.trim() === "" ? null : value.trim()
  if (Array.isArray(value) && typeof value[0] === "string") return text(value[0])
  return null
}

const bool = (value: unknown): boolean | null => {
  if (typeof value === "boolean") return value
  if (value === "true" || value === "false") return value === "true"
  return null
}

/** The person as the mapping reads them: each field from the claim or attribute the mapping names. */
export const profileOf = (received: Received, mapping: SsoMapping): SsoProfile => {
  const groups = received.claims[mapping.groups]
  return {
    subject: received.subject,
    email: text(received.claims[mapping.email])?.toLowerCase() ?? null,
    emailVerified: bool(received.claims["email_verified"]),
    name: text(received.claims[mapping.name]),
    givenName: text(received.claims[mapping.givenName]),
    familyName: text(received.claims[mapping.familyName]),
    groups: Array.isArray(groups) ? groups.filter((g): g is string => typeof g === "string") : typeof groups === "string" ? [groups] : []
  }
}
