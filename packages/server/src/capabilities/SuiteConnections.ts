/**
 * A member's own delegated connection to a suite: connect (an authorization code flow with PKCE S256 against the
 * organization's OAuth client, with the scopes the enabled features need), the callback (signed state, code
 * exchange, tokens stored encrypted), status, disconnect; and the access token a capability acts with
 * (`use`), refreshed before it expires with compare-and-set on `credential_version`, as MCP credentials are
 * (with the same timing rules, platform/TokenTiming.ts): the loser of a refresh race uses the winner's token.
 *
 * The protocol work is the MCP SDK's OAuth client helpers (`startAuthorization`, `exchangeAuthorization`,
 * `refreshAuthorization`) over the suite's configured endpoints, every request through the outbound guard as a
 * user-supplied destination, within 15 seconds and 64 KiB. Nothing outside the database happens in a transaction.
 */
import { InvalidGrantError, OAuthError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import type { AuthorizationServerMetadata, OAuthClientInformationMixed } from "@modelcontextprotocol/sdk/shared/auth.js"
import {
  Conflict,
  type InvalidRequest,
  type McpOAuthCallbackQuery,
  type MemberContext,
  NeedsConnection,
  type NeedsConnectionReason,
  type Suite,
  SuiteApiError,
  SuiteConnection,
  type SuiteConnectResult,
  type SuiteFeature
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { exchangeAuthorization, refreshAuthorization, startAuthorization } from "../integrations/mcp/McpSdk.js"
import { Crypto } from "../platform/Crypto.js"
import { CursorKey } from "../platform/Keyset.js"
import { AUTHORIZATION_TTL, badState, callbackRefused, checkCallback } from "../platform/OAuthCallback.js"
import { signState, stateKeyOf } from "../platform/OAuthState.js"
import { Outbound } from "../platform/Outbound.js"
import { authorize } from "../platform/Principal.js"
import { bind, bindTokens, SecretColumns, SuiteTokens, type TokenBindings } from "../platform/SecretColumns.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { encryptTokens } from "../platform/StoredCredential.js"
import { now } from "../platform/Time.js"
import { awaitOtherRefresh, expired, expiring } from "../platform/TokenTiming.js"
import { suiteCallbackUrl } from "./SuiteClients.js"
import { type CredentialKey, type SuiteClientRow, type SuiteCredential, SuiteRepository } from "./SuiteRepository.js"
import { apiErrorCode, authorizationExtras, endpointsOf, featuresOf, grants, needs, scopesFor, suiteName } from "./Suites.js"

/** Token endpoint requests: the reference's 15 seconds and 64 KiB. */
const TOKEN_REQUEST = { destination: "user" as const, timeout: Duration.seconds(15), maxBodyBytes: 64 * 1024 }


const connectPath = (suite: Suite) => `POST /v1/capabilities/${suite}/connection/connect`

const needsConnection = (suite: Suite, reason: NeedsConnectionReason, message: string) => new NeedsConnection({ message, suite, reason })

/** The token endpoint's errors that say it failed, not that it refused (RFC 6749 §4.1.2.1's, also sent by token endpoints). */
const TRANSIENT_OAUTH_ERRORS = new Set(["server_error", "temporarily_unavailable"])

/** The token endpoint refused the organization's client itself: an admin's to fix. */
const clientRefused = (error: unknown): error is OAuthError =>
  error instanceof OAuthError && (error.errorCode === "invalid_client" || error.errorCode === "unauthorized_client")

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 200)

/** The suite's endpoints as the SDK's helpers take an authorization server, and the organization's client. */
export const oauthOf = (client: SuiteClientRow, secret: string | undefined) => {
  const endpoints = endpointsOf(client)
  const method = secret === undefined ? "none" : "client_secret_post"
  const metadata: AuthorizationServerMetadata = {
    issuer: new URL(endpoints.authorizationEndpoint).origin,
    authorization_endpoint: endpoints.authorizationEndpoint,
    token_endpoint: endpoints.tokenEndpoint,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: [method]
  }
  const clientInformation: OAuthClientInformationMixed = {
    client_id: client.clientId,
    ...(secret === undefined ? {} : { client_secret: secret }),
    token_endpoint_auth_method: method
  }
  return { metadata, clientInformation }
}

/** What a capability acts with: the member's access token and the suite's API. */
export interface Use {
  readonly key: CredentialKey
  readonly client: SuiteClientRow
  readonly token: string
  readonly apiBaseUrl: string
}

const make = Effect.gen(function*() {
  const repository = yield* SuiteRepository
  const crypto = yield* Crypto
  const stateKey = stateKeyOf(yield* CursorKey, "orgplane/suite-oauth-state")
  const fetchFn = (yield* Outbound).fetchWith(TOKEN_REQUEST)

  const keyOf = (member: MemberContext, suite: Suite): CredentialKey => ({
    organizationId: member.organization.id,
    suite,
    membershipId: member.membership.id
  })

  const tokenBindingsOf = (key: CredentialKey) => bindTokens(SuiteTokens, key.organizationId, key.suite, key.membershipId)

  const findClient = (member: MemberContext, suite: Suite) =>
    Effect.map(orUnavailable(repository.findClient({ organizationId: member.organization.id, suite })), Option.getOrUndefined)

  /** The client's secret; one that does not decrypt is 500 `stored_credential_unreadable` (an admin sets it again). */
  const secretOf = (client: SuiteClientRow) =>
    client.clientSecretCiphertext === null
      ? Effect.succeed(undefined)
      : crypto.decrypt(client.clientSecretCiphertext, bind(SecretColumns.suiteClientSecret, client.organizationId, client.suite))

  /** A member's stored token; one that does not decrypt (logged once) is the member's to fix: connect again. */
  const decryptToken = (key: CredentialKey, token: keyof TokenBindings, ciphertext: string) =>
    Effect.mapError(
      crypto.decrypt(ciphertext, tokenBindingsOf(key)[token]),
      () => needsConnection(key.suite, "reconnect_required", `Your stored token for the ${suiteName(key.suite)} cannot be decrypted with this server's encryption keys: connect again with ${connectPath(key.suite)}.`)
    )

  /** The token of a credential read back after another refresh won, if it is usable. */
  const readBack = (key: CredentialKey) =>
    Effect.gen(function*() {
      const current = Option.getOrUndefined(yield* orUnavailable(repository.findCredential(key)))
      if (current === undefined || current.credentialHealth !== "ready" || expired(current, yield* now)) {
        return yield* Effect.fail(needsConnection(key.suite, "reconnect_required", `Your connection to the ${suiteName(key.suite)} is no longer usable: connect again with ${connectPath(key.suite)}.`))
      }
      return yield* decryptToken(key, "access", current.accessTokenCiphertext)
    })

  /**
   * Refreshes a credential read at `credential.credentialVersion`; the access token to use: the new one, the one a
   * concurrent refresh stored, or (when the suite could not be reached) the current one while it is still valid.
   */
  const refresh = (client: SuiteClientRow, key: CredentialKey, credential: SuiteCredential) =>
    Effect.gen(function*() {
      const at = yield* now
      const suite = key.suite
      const current = () =>
        expired(credential, at)
          ? Effect.fail(needsConnection(suite, "reconnect_required", `Your token for the ${suiteName(suite)} expired and cannot be refreshed: connect again with ${connectPath(suite)}.`))
          : decryptToken(key, "access", credential.accessTokenCiphertext)
      if (credential.refreshTokenCiphertext === null) return yield* current()
      const refreshToken = yield* decryptToken(key, "refresh", credential.refreshTokenCiphertext)
      const { clientInformation, metadata } = oauthOf(client, yield* secretOf(client))
      const answer = yield* Effect.result(Effect.tryPromise({
        try: () => refreshAuthorization(metadata.issuer, { metadata, clientInformation, refreshToken, fetchFn }),
        catch: (error) => error
      }))
      if (Result.isFailure(answer)) {
        const error = answer.failure
        if (error instanceof InvalidGrantError) {
          // Rotation: a concurrent refresh may have spent this refresh token; its write is the credential to use.
          if (Option.isSome(yield* awaitOtherRefresh(orUnavailable(repository.findCredential(key)), credential.credentialVersion))) return yield* readBack(key)
          const marked = yield* orUnavailable(repository.markReconnectRequired(key, credential.credentialVersion, "refresh_rejected", yield* now))
          if (!marked) return yield* readBack(key)
          return yield* Effect.fail(needsConnection(
            suite,
            "reconnect_required",
            `The ${suiteName(suite)} refused to refresh your connection (invalid_grant: revoked or expired): connect again with ${connectPath(suite)}.`
          ))
        }
        yield* Effect.logWarning(`${suite} token refresh failed: ${describe(error)}`)
        // Still valid for a moment: use it; the next call tries again.
        if (!expired(credential, at)) return yield* current()
        const failing = `Refreshing your token for the ${suiteName(suite)} failed`
        return yield* Effect.fail(new SuiteApiError({
          error: apiErrorCode(suite),
          message: clientRefused(error)
            ? `${failing}: the suite refused the organization's OAuth client (${error.errorCode}); an admin checks its client id and secret.`
            : error instanceof OAuthError
            ? `${failing}: the token endpoint answered ${error.errorCode}.`
            : `${failing}: the token endpoint did not answer (${describe(error)}).`,
          retryable: !clientRefused(error)
        }))
      }
      const tokens = yield* Effect.orDie(
        Effect.provideService(encryptTokens(answer.success, at, credential.grantedScopes, tokenBindingsOf(key)), Crypto, crypto)
      )
      if (yield* orUnavailable(repository.compareAndSet(key, credential.credentialVersion, tokens, yield* now))) return answer.success.access_token
      return yield* readBack(key)
    })

  /**
   * The access token of `credential` for `features` (refreshed first when it expires within a minute), or 409
   * `needs_connection` saying why not: a feature is disabled, the member has not connected, the suite refused the
   * stored tokens, or a scope a feature needs was not granted.
   */
  const tokenFor = (
    client: SuiteClientRow,
    key: CredentialKey,
    credential: SuiteCredential | undefined,
    features: ReadonlyArray<SuiteFeature>
  ) =>
    Effect.gen(function*() {
      const suite = key.suite
      for (const feature of features) {
        if (!client.features.includes(feature)) {
          return yield* Effect.fail(needsConnection(suite, "feature_disabled", `An administrator has disabled ${needs[feature].what} (\`${feature}\`) for the ${suiteName(suite)}.`))
        }
      }
      if (credential === undefined) {
        return yield* Effect.fail(needsConnection(suite, "not_connected", `You have not connected your account at the ${suiteName(suite)}: connect it with ${connectPath(suite)}.`))
      }
      if (credential.credentialHealth === "reconnect_required") {
        return yield* Effect.fail(needsConnection(
          suite,
          "reconnect_required",
          `The ${suiteName(suite)} refused your stored connection (${credential.credentialHealthReason ?? "rejected"}): connect again with ${connectPath(suite)}.`
        ))
      }
      for (const feature of features) {
        const { need, what } = needs[feature]
        if (!grants(suite, credential.grantedScopes, feature)) {
          return yield* Effect.fail(needsConnection(
            suite,
            "scope_missing",
            `Your connection to the ${suiteName(suite)} is missing the ${need.label} permission ${what} need: connect again with ${connectPath(suite)} to grant it.`
          ))
        }
      }
      return expiring(credential, yield* now)
        ? yield* refresh(client, key, credential)
        : yield* decryptToken(key, "access", credential.accessTokenCiphertext)
    })

  /** What a capability of `feature` acts with, or 409 `needs_connection` saying why not (`tokenFor`, or no client). */
  const use = Effect.fn("SuiteConnections.use")(function*(member: MemberContext, suite: Suite, feature: SuiteFeature) {
    const client = yield* findClient(member, suite)
    if (client === undefined) {
      return yield* Effect.fail(needsConnection(
        suite,
        "suite_not_configured",
        `The ${suiteName(suite)} is not set up in this organization: an admin configures its OAuth client (PUT /v1/capabilities/${suite}/client).`
      ))
    }
    const key = keyOf(member, suite)
    const credential = Option.getOrUndefined(yield* orUnavailable(repository.findCredential(key)))
    const token = yield* tokenFor(client, key, credential, [feature])
    return { key, client, token, apiBaseUrl: endpointsOf(client).apiBaseUrl } satisfies Use
  })

  /**
   * After the suite refused `used.token` with 401: a token to retry with once (a newer stored one, or a refreshed
   * one), or 409 `needs_connection` with the credential marked `reconnect_required`.
   */
  const renew = Effect.fn("SuiteConnections.renew")(function*(used: Use) {
    const suite = used.key.suite
    const stored = Option.getOrUndefined(yield* orUnavailable(repository.findCredential(used.key)))
    const refused = needsConnection(suite, "reconnect_required", `The ${suiteName(suite)} refused your stored token: connect again with ${connectPath(suite)}.`)
    if (stored === undefined || stored.credentialHealth !== "ready") return yield* Effect.fail(refused)
    const current = yield* decryptToken(used.key, "access", stored.accessTokenCiphertext)
    if (current !== used.token) return { ...used, token: current }
    if (stored.refreshTokenCiphertext !== null) {
      const renewed = yield* refresh(used.client, used.key, { ...stored, tokenExpiresAt: new Date(0) }).pipe(
        Effect.catchTag("SuiteApiError", () => Effect.succeed(undefined))
      )
      if (renewed !== undefined && renewed !== used.token) return { ...used, token: renewed }
    }
    yield* orUnavailable(repository.markReconnectRequired(used.key, stored.credentialVersion, "token_rejected", yield* now))
    return yield* Effect.fail(refused)
  })

  /** Marks the credential `reconnect_required`: the suite refused even a renewed token. */
  const markRejected = Effect.fn("SuiteConnections.markRejected")(function*(used: Use) {
    const stored = Option.getOrUndefined(yield* orUnavailable(repository.findCredential(used.key)))
    if (stored === undefined) return
    yield* orUnavailable(repository.markReconnectRequired(used.key, stored.credentialVersion, "token_rejected", yield* now))
  })

  const status = Effect.fn("SuiteConnections.status")(function*(member: MemberContext, suite: Suite) {
    yield* authorize(member, "capabilities.use")
    const client = yield* findClient(member, suite)
    const credential = Option.getOrUndefined(yield* orUnavailable(repository.findCredential(keyOf(member, suite))))
    const granted = credential?.grantedScopes ?? []
    return new SuiteConnection({
      suite,
      configured: client !== undefined,
      status: credential === undefined ? "not_connected" : credential.credentialHealth === "ready" ? "connected" : "reconnect_required",
      grantedScopes: granted,
      features: featuresOf[suite].map((feature) => ({
        feature,
        enabled: client?.features.includes(feature) ?? false,
        granted: credential !== undefined && grants(suite, granted, feature)
      })),
      connectedAt: credential?.connectedAt ?? null,
      accessTokenExpiresAt: credential?.tokenExpiresAt ?? null
    })
  })

  const connect = Effect.fn("SuiteConnections.connect")(function*(member: MemberContext, suite: Suite, baseUrl: string) {
    yield* authorize(member, "capabilities.use")
    const client = yield* findClient(member, suite)
    if (client === undefined || client.features.length === 0) {
      return yield* Effect.fail(new Conflict({
        error: "suite_not_configured",
        message: client === undefined
          ? `The ${suiteName(suite)} is not set up in this organization: an admin configures its OAuth client first (PUT /v1/capabilities/${suite}/client).`
          : `No capability of the ${suiteName(suite)} is enabled: an admin enables one first (PUT /v1/capabilities/${suite}/client).`
      }))
    }
    const scopes = scopesFor(suite, client.features)
    // Connected with every enabled feature's scopes, and usable (refreshed first when about to expire).
    const key = keyOf(member, suite)
    const credential = Option.getOrUndefined(yield* orUnavailable(repository.findCredential(key)))
    const usable = yield* tokenFor(client, key, credential, client.features).pipe(
      Effect.as(true),
      Effect.catchTags({ NeedsConnection: () => Effect.succeed(false), SuiteApiError: () => Effect.succeed(false) })
    )
    if (usable) return { status: "connected", authorizeUrl: null, scopes } satisfies SuiteConnectResult

    const { clientInformation, metadata } = oauthOf(client, yield* secretOf(client))
    const redirectUri = suiteCallbackUrl(baseUrl)
    const authorizationId = (yield* crypto.newToken("soa")).replace(/\./g, "")
    const started = yield* Effect.promise(() =>
      startAuthorization(metadata.issuer, {
        metadata,
        clientInformation,
        redirectUrl: redirectUri,
        scope: scopes.join(" "),
        state: signState(stateKey, member.organization.id, authorizationId)
      })
    )
    const url = started.authorizationUrl
    // The SDK asks for consent whenever `offline_access` is asked; suite-a gives a refresh token without it.
    if (suite === "suite-a") url.searchParams.delete("prompt")
    for (const [name, value] of Object.entries(authorizationExtras(suite))) url.searchParams.set(name, value)
    const verifier = yield* Effect.orDie(crypto.encrypt(started.codeVerifier, bind(SecretColumns.suiteCodeVerifier, key.organizationId, authorizationId)))
    const at = yield* now
    yield* transaction(Effect.gen(function*() {
      yield* repository.deleteExpiredAuthorizations(key, at)
      yield* repository.insertAuthorization({
        organizationId: key.organizationId,
        id: authorizationId,
        suite,
        membershipId: key.membershipId,
        codeVerifierCiphertext: verifier,
        redirectUri,
        clientId: client.clientId,
        requestedScopes: scopes,
        createdAt: at,
        expiresAt: new Date(at.getTime() + Duration.toMillis(AUTHORIZATION_TTL)),
        usedAt: null
      })
    }))
    return { status: "needs_auth", authorizeUrl: url.toString(), scopes } satisfies SuiteConnectResult
  })

  const callback = Effect.fn("SuiteConnections.callback")(function*(query: McpOAuthCallbackQuery) {
    const { at, authorization, authorizationKey, code } = yield* checkCallback({
      query,
      key: stateKey,
      find: (key) => orUnavailable(repository.findAuthorization(key)),
      spend: (key, at) => transaction(repository.spendAuthorization(key, at)),
      who: (authorization) => `The ${suiteName(authorization.suite)}`,
      unknown: "its suite client or member was removed"
    })
    const suite = authorization.suite
    const client = Option.getOrUndefined(yield* orUnavailable(repository.findClient({ organizationId: authorization.organizationId, suite })))
    if (client === undefined || client.clientId !== authorization.clientId) {
      return yield* Effect.fail(badState("The suite's OAuth client changed since this authorization started: start again with connect.", "oauth_client_changed"))
    }
    const { clientInformation, metadata } = oauthOf(client, yield* secretOf(client))
    const verifier = yield* crypto.decrypt(
      authorization.codeVerifierCiphertext,
      bind(SecretColumns.suiteCodeVerifier, authorization.organizationId, authorization.id)
    )
    const tokens = yield* Effect.tryPromise({
      try: () =>
        exchangeAuthorization(metadata.issuer, {
          metadata,
          clientInformation,
          authorizationCode: code,
          codeVerifier: verifier,
          redirectUri: authorization.redirectUri,
          fetchFn
        }),
      catch: (cause) => cause
    }).pipe(Effect.catch((cause): Effect.Effect<never, InvalidRequest | SuiteApiError> =>
      cause instanceof OAuthError && !TRANSIENT_OAUTH_ERRORS.has(cause.errorCode)
        ? Effect.fail(callbackRefused("code", "oauth_code_rejected", `The ${suiteName(suite)} refused the code (${cause.errorCode}): start again with connect.`))
        : Effect.fail(new SuiteApiError({
          error: apiErrorCode(suite),
          message: `The ${suiteName(suite)}'s token endpoint failed (${cause instanceof OAuthError ? cause.errorCode : describe(cause)}): start again with connect.`,
          retryable: true
        }))
    ))
    const key: CredentialKey = { organizationId: authorization.organizationId, suite, membershipId: authorization.membershipId }
    const encrypted = yield* Effect.orDie(
      Effect.provideService(encryptTokens(tokens, at, authorization.requestedScopes, tokenBindingsOf(key)), Crypto, crypto)
    )
    yield* transaction(Effect.gen(function*() {
      if (!(yield* repository.spendAuthorization(authorizationKey, at))) {
        return yield* Effect.fail(badState("This authorization was already used: start again with connect.", "oauth_authorization_used"))
      }
      yield* repository.storeCredential(key, encrypted, at)
    }))
    return {
      ok: true,
      suite,
      status: "connected",
      grantedFeatures: client.features.filter((feature) => grants(suite, encrypted.grantedScopes, feature))
    } as const
  })

  const disconnect = Effect.fn("SuiteConnections.disconnect")(function*(member: MemberContext, suite: Suite) {
    yield* authorize(member, "capabilities.use")
    const removed = yield* transaction(repository.dropCredential(keyOf(member, suite)))
    return { ok: true, removed } as const
  })

  return { use, renew, markRejected, status, connect, callback, disconnect } as const
})

export class SuiteConnections extends Context.Service<SuiteConnections>()("@orgplane/server/capabilities/SuiteConnections", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(SuiteRepository.layer))
}
