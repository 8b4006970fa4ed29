/**
 * The OIDC engine: openid-client (a certified relying party) over the outbound guard. Discovery (openid-client
 * refuses a document naming another issuer) or manual endpoints; PKCE S256, state and nonce on every request; the
 * code exchanged with the connection's client authentication; the ID token validated by openid-client, its
 * signature included (`enableNonRepudiationChecks`); userinfo read when the ID token lacks the mapped email. Every
 * failure becomes a stable `SsoFailureCode`.
 */
import type { SsoFailureCode } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as NodeCrypto from "node:crypto"
import type * as OpenId from "openid-client"
import { Crypto } from "../platform/Crypto.js"
import { lazily } from "../platform/Lazy.js"
import { Outbound, OutboundError } from "../platform/Outbound.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { failure, type IntentSecrets, type ProtocolEngine, type Received, type SsoFailureError } from "./Protocol.js"
import { oidcRedirectUrl } from "./Sso.js"
import type { SsoConnectionRow, StoredOidc } from "./SsoRepository.js"

/** openid-client: loaded by the first OIDC sign-in or test, not at start-up. */
const library = lazily(() => import("openid-client"))

/** The library's words, without anything a provider could make long. */
const said = (error: unknown): string => {
  const messages: Array<string> = []
  let current: unknown = error
  for (let i = 0; i < 3 && current instanceof Error; i++) {
    messages.push(current.message)
    current = current.cause
  }
  return messages.join(": ").slice(0, 300)
}

/** Whether the outbound guard (or the network under it) failed the request. */
const unreachable = (error: unknown): OutboundError | true | undefined => {
  let current: unknown = error
  for (let i = 0; i < 5 && current !== undefined && current !== null; i++) {
    if (current instanceof OutboundError) return current
    if (current instanceof TypeError && /fetch|network/i.test(current.message)) return true
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

const codeOf = (error: unknown): string | undefined => (error as { code?: unknown } | null)?.code as string | undefined

/** Which step failed decides how a library error reads. */
type Step = "discovery" | "exchange" | "userinfo"

/** openid-client's error as a stable code and a readable message (test/IdpOidc.test.ts lists what it answers). */
export const classify = (error: unknown, step: Step, issuer: string): SsoFailureError => {
  const network = unreachable(error)
  if (network !== undefined) {
    const detail = network === true ? said(error) : network.message
    return failure("idp_unreachable", `The identity provider at ${new URL(issuer).origin} could not be reached (${step}): ${detail}`)
  }
  const code = codeOf(error)
  const words = said(error)
  const as = (failureCode: SsoFailureCode, message: string) => failure(failureCode, `${message} (${words})`)
  if (step === "discovery") {
    if (code === "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED") {
      return as("issuer_mismatch", `The discovery document at ${issuer} names another issuer than the connection's`)
    }
    return as("discovery_invalid", `The discovery document of ${issuer} is not a usable OpenID Provider configuration`)
  }
  if (code === "OAUTH_AUTHORIZATION_RESPONSE_ERROR") {
    const answer = error as OpenId.AuthorizationResponseError
    const description = answer.error_description === undefined ? "" : `: ${answer.error_description.slice(0, 200)}`
    return failure("idp_error", `The identity provider answered ${answer.error.slice(0, 100)}${description}`)
  }
  if (code === "OAUTH_JWT_CLAIM_COMPARISON_FAILED") {
    if (/"iss"/.test(words)) return as("issuer_mismatch", "The ID token was issued by another issuer than the connection's")
    if (/"aud"/.test(words)) return as("audience_mismatch", "The ID token is for another client than the connection's")
    if (/nonce/.test(words)) return as("nonce_mismatch", "The ID token's nonce is not the one this sign-in sent")
    return as("response_invalid", "The ID token's claims do not match this sign-in")
  }
  if (code === "OAUTH_JWT_TIMESTAMP_CHECK_FAILED") return as("token_expired", "The ID token is expired or not yet valid")
  if (code === "OAUTH_KEY_SELECTION_FAILED") return as("signature_invalid", "The ID token is signed by a key the provider does not publish")
  if (code === "OAUTH_INVALID_RESPONSE" || code === "OAUTH_JWS_SIGNATURE_VALIDATION_FAILED") {
    if (/"alg"|signature/i.test(words)) return as("signature_invalid", "The ID token's signature does not verify")
    if (/"state"/.test(words)) return as("replayed", "The answer's state is not this sign-in's")
    if (/"iss"/.test(words)) return as("issuer_mismatch", "The answer names another issuer than the connection's")
    return as("response_invalid", "The identity provider's answer is not valid")
  }
  if (code === "OAUTH_RESPONSE_BODY_ERROR") {
    const oauthError = (error as { error?: unknown }).error
    if (oauthError === "invalid_grant") return as("replayed", "The provider refused the authorization code (used already, or expired)")
    return as("idp_error", `The provider's token endpoint refused the exchange${typeof oauthError === "string" ? ` (${oauthError.slice(0, 100)})` : ""}`)
  }
  return as(step === "userinfo" ? "idp_error" : "response_invalid", `The identity provider's answer could not be used (${step})`)
}

export const oidcEngine = Effect.gen(function*() {
  const outbound = yield* Outbound
  const crypto = yield* Crypto
  // Every request to a provider goes through the guard: https to public addresses unless private mode.
  const guarded = outbound.fetchWith({ destination: "user", timeout: "10 seconds", maxBodyBytes: 1024 * 1024 })
  const customFetch: OpenId.CustomFetch = (url, options) => guarded(url, options as RequestInit)

  /** The client secret, decrypted (a connection without one cannot be tested: the flow checks that first). */
  const secretOf = (connection: SsoConnectionRow): Effect.Effect<string, SsoFailureError> =>
    connection.oidcClientSecretCiphertext === null
      ? Effect.fail(failure("response_invalid", "The connection has no client secret: set one."))
      : Effect.mapError(
        crypto.decrypt(connection.oidcClientSecretCiphertext, bind(SecretColumns.ssoClientSecret, connection.organizationId, connection.id)),
        () => failure("response_invalid", "The connection's stored client secret cannot be read (the encryption keys changed): set it again.")
      )

  const configurationOf = (client: typeof OpenId, settings: StoredOidc, secret: string, base: string) =>
    Effect.tryPromise({
      try: async () => {
        const auth = settings.tokenEndpointAuthMethod === "client_secret_post" ? client.ClientSecretPost(secret) : client.ClientSecretBasic(secret)
        const metadata = { client_secret: secret, redirect_uris: [oidcRedirectUrl(base)] }
        const insecure = (url: string) => new URL(url).protocol === "http:"
        const config = settings.endpoints === null
          ? await client.discovery(new URL(settings.issuer), settings.clientId, metadata, auth, {
            [client.customFetch]: customFetch,
            ...(insecure(settings.issuer) ? { execute: [client.allowInsecureRequests] } : {})
          })
          : new client.Configuration(
            {
              issuer: settings.issuer,
              authorization_endpoint: settings.endpoints.authorization,
              token_endpoint: settings.endpoints.token,
              jwks_uri: settings.endpoints.jwks,
              ...(settings.endpoints.userinfo === null ? {} : { userinfo_endpoint: settings.endpoints.userinfo })
            },
            settings.clientId,
            metadata,
            auth
          )
        config[client.customFetch] = customFetch
        if (settings.endpoints !== null && Object.values(settings.endpoints).some((url) => url !== null && insecure(url))) {
          client.allowInsecureRequests(config)
        }
        client.enableNonRepudiationChecks(config)
        return config
      },
      catch: (error) => classify(error, "discovery", settings.issuer)
    })

  const settingsOf = (connection: SsoConnectionRow) =>
    connection.oidc === null
      ? Effect.fail(failure("response_invalid", "The connection is not an OIDC connection."))
      : Effect.succeed(connection.oidc)

  const start: ProtocolEngine["start"] = Effect.fn("Oidc.start")(function*(connection: SsoConnectionRow, intent: IntentSecrets, base: string) {
    const settings = yield* settingsOf(connection)
    const client = yield* library
    const config = yield* configurationOf(client, settings, yield* secretOf(connection), base)
    const challenge = yield* Effect.promise(() => client.calculatePKCECodeChallenge(intent.codeVerifier))
    const url = yield* Effect.try({
      try: () =>
        client.buildAuthorizationUrl(config, {
          redirect_uri: oidcRedirectUrl(base),
          scope: settings.scopes.join(" "),
          state: intent.state,
          nonce: intent.nonce,
          code_challenge: challenge,
          code_challenge_method: "S256",
          ...(intent.loginHint === null ? {} : { login_hint: intent.loginHint })
        }),
      catch: (error) => classify(error, "discovery", settings.issuer)
    })
    return { url: url.href }
  })

  const complete: ProtocolEngine["complete"] = Effect.fn("Oidc.complete")(function*(
    connection: SsoConnectionRow,
    intent: Parameters<ProtocolEngine["complete"]>[1],
    params: Readonly<Record<string, string>>,
    base: string
  ) {
    const settings = yield* settingsOf(connection)
    const client = yield* library
    const config = yield* configurationOf(client, settings, yield* secretOf(connection), base)
    const callback = new URL(oidcRedirectUrl(base))
    for (const [name, value] of Object.entries(params)) callback.searchParams.set(name, value)
    const tokens = yield* Effect.tryPromise({
      try: () =>
        client.authorizationCodeGrant(config, callback, {
          pkceCodeVerifier: intent.codeVerifier,
          expectedState: intent.state,
          expectedNonce: intent.nonce,
          idTokenExpected: true
        }),
      catch: (error) => classify(error, "exchange", settings.issuer)
    })
    const claims = tokens.claims()
    if (claims === undefined) return yield* failure("response_invalid", "The provider answered no ID token.")
    let merged: Record<string, unknown> = { ...claims }
    const userinfo = config.serverMetadata().userinfo_endpoint
    if (merged[connection.mapping.email] === undefined && userinfo !== undefined) {
      const info = yield* Effect.tryPromise({
        try: () => client.fetchUserInfo(config, tokens.access_token, claims.sub),
        catch: (error) => classify(error, "userinfo", settings.issuer)
      })
      merged = { ...info, ...merged }
    }
    return { subject: claims.sub, claims: merged } satisfies Received
  })

  return { kind: "oidc", start, complete } satisfies ProtocolEngine
})

/**
 * A fresh verifier, state-independent: what an intent stores (encrypted) for its token exchange. 32 random bytes in
 * base64url, as openid-client's `randomPKCECodeVerifier` and `randomNonce` draw them (RFC 7636 4.1).
 */
export const newCodeVerifier = () => NodeCrypto.randomBytes(32).toString("base64url")
export const newNonce = () => NodeCrypto.randomBytes(32).toString("base64url")

