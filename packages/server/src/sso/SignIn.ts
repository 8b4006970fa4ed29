/**
 * The protocol-neutral SSO flow: tests and sign-ins as single-use intents (5 minutes), the provider's answer
 * validated by the connection's engine (`Protocol.ts`), then the same rules for every protocol: the mapped email
 * must be present, not unverified, and of a verified domain of the connection; a test completes only for the admin
 * who started it and never signs anyone in; a sign-in links the provider's subject to a person (JIT membership with
 * the connection's role and teams), refuses an identity directory sync deprovisioned, and gives a one-time code
 * (2 minutes) that `exchange` turns into a session recording the connection and organization. A single-use value
 * of the answer (a SAML assertion's ID) is taken once per connection; an IdP-initiated SAML Response, which no
 * intent awaits, is validated first and then given an intent spent at once. A code is exchanged only while the
 * identity it stands for still leads to its account: a take-back or a reset in between ends it.
 */
import {
  Conflict,
  type MemberContext,
  RateLimited,
  SsoTestReport,
  type SsoCallbackQuery,
  type SsoConnectionId,
  type SsoFailureCode,
  type SsoProfile,
  isSsoReturnTo,
  SsoSignInFailed,
  type UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { Accounts } from "../identity/Accounts.js"
import { sessionOf } from "../identity/Authentication.js"
import { IdentityLinksRepository } from "../identity/IdentityLinksRepository.js"
import { domainOf, SsoEnforcement } from "../identity/SsoEnforcement.js"
import { toUser, UsersRepository } from "../identity/UsersRepository.js"
import { AuditRecorder } from "../platform/AuditRecorder.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { CursorKey } from "../platform/Keyset.js"
import { signState, stateKeyOf, verifyState } from "../platform/OAuthState.js"
import { RateLimiter } from "../platform/RateLimiter.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import * as Metrics from "../platform/Metrics.js"
import { now } from "../platform/Time.js"
import { IntentsRepository, type SsoIntentRow } from "./IntentsRepository.js"
import { Jit } from "./Jit.js"
import { newCodeVerifier, newNonce, oidcEngine } from "./Oidc.js"
import { failure, profileOf, type ProtocolEngine, type Received, SsoFailureError } from "./Protocol.js"
import { samlEngine } from "./SamlEngine.js"
import { connectionNotFound, Sso, toTestReport } from "./Sso.js"
import { type ConnectionDomainRow, type SsoConnectionRow, SsoRepository, type StoredTest } from "./SsoRepository.js"

/** How long an intent waits for the provider's answer. */
export const INTENT_TTL = Duration.minutes(5)
/** How long a sign-in's one-time code may wait for its exchange. */
export const EXCHANGE_TTL = Duration.minutes(2)
/** Discovery and sign-in starts per client address and minute. */
const STARTS_PER_MINUTE = 30

const CODE_PREFIX = "ssx"

const refused = (error: SsoFailureError) => new SsoSignInFailed({ code: error.code, message: error.message })

/** The absolute URL of a sign-in's `returnTo` (the schema allows loopback URLs and paths of this server only). */
export const returnToUrl = (returnTo: string, base: string) => new URL(returnTo, `${base}/`).href

const make = Effect.gen(function*() {
  const connections = yield* SsoRepository
  const intents = yield* IntentsRepository
  const links = yield* IdentityLinksRepository
  const users = yield* UsersRepository
  const accounts = yield* Accounts
  const crypto = yield* Crypto
  const limiter = yield* RateLimiter
  const sso = yield* Sso
  const enforcement = yield* SsoEnforcement
  const jit = yield* Jit
  const recorder = yield* AuditRecorder
  const stateKey = stateKeyOf(yield* CursorKey, "orgplane/sso-state")
  const oidc = yield* oidcEngine
  const saml = yield* samlEngine
  /** The engines by kind (see docs/ARCHITECTURE.md, SSO). */
  const engines: Partial<Record<SsoConnectionRow["kind"], ProtocolEngine>> = { oidc, saml }

  const engineOf = (connection: SsoConnectionRow): Effect.Effect<ProtocolEngine, SsoFailureError> => {
    const engine = engines[connection.kind]
    return engine === undefined
      ? Effect.fail(failure("response_invalid", `Sign-in through ${connection.kind} connections is not available on this server yet.`))
      : Effect.succeed(engine)
  }

  const limit = Effect.fn("SignIn.limit")(function*(address: string) {
    const decision = yield* orUnavailable(limiter.hit(`sso-start:${address}`, STARTS_PER_MINUTE, Duration.minutes(1)))
    if (!decision.allowed) {
      return yield* RateLimited.after(decision.retryAfterSeconds, `Too many SSO requests; retry in ${decision.retryAfterSeconds} seconds.`)
    }
  })

  /** A new intent: its row (the PKCE verifier encrypted) and what the engine needs. */
  const newIntent = Effect.fn("SignIn.newIntent")(function*(
    connection: SsoConnectionRow,
    purpose: "test" | "sign_in",
    options: { readonly userId: UserId | null; readonly loginHint: string | null; readonly returnTo: string | null }
  ) {
    const id = yield* makeId("ssi")
    const at = yield* now
    const codeVerifier = newCodeVerifier()
    const row: SsoIntentRow = {
      id,
      organizationId: connection.organizationId,
      connectionId: connection.id,
      purpose,
      configRevision: connection.configRevision,
      nonce: newNonce(),
      codeVerifierCiphertext: yield* Effect.orDie(crypto.encrypt(codeVerifier, bind(SecretColumns.ssoCodeVerifier, connection.organizationId, id))),
      samlRequestId: null,
      userId: options.userId,
      loginHint: options.loginHint,
      returnTo: options.returnTo,
      createdAt: at,
      expiresAt: new Date(at.getTime() + Duration.toMillis(INTENT_TTL)),
      consumedAt: null,
      exchangeCodeHash: null,
      exchangeUserId: null,
      exchangeExpiresAt: null,
      exchangedAt: null,
      exchangeSubject: null
    }
    return { row, secrets: { state: signState(stateKey, connection.organizationId, id), nonce: row.nonce, codeVerifier, loginHint: options.loginHint } }
  })

  // Tests

  const startTest = Effect.fn("SignIn.startTest")(function*(principal: MemberContext, id: SsoConnectionId, base: string) {
    yield* sso.allowed(principal)
    yield* sessionOf(principal)
    const organizationId = principal.organization.id
    const found = yield* orUnavailable(connections.findConnection({ organizationId, id }))
    if (Option.isNone(found)) return yield* connectionNotFound()
    const connection = found.value
    if (connection.kind === "oidc" && connection.oidcClientSecretCiphertext === null) {
      return yield* new Conflict({
        error: "sso_client_secret_required",
        message: "The connection has no client secret (it was migrated from the single-connection model): set oidc.clientSecret with PATCH first."
      })
    }
    const engine = yield* Effect.mapError(engineOf(connection), (error) => new Conflict({ error: "sso_kind_mismatch", message: error.message }))
    const { row, secrets } = yield* newIntent(connection, "test", { userId: principal.user.id, loginHint: principal.user.email, returnTo: null })
    const pending: StoredTest = {
      id: row.id,
      configRevision: connection.configRevision,
      status: "pending",
      startedAt: row.createdAt.toISOString(),
      completedAt: null,
      claimsJson: null,
      profile: null,
      failure: null
    }
    // The provider is asked for its URL before anything is stored: a provider that fails records a failed test.
    const started = yield* Effect.result(engine.start(connection, secrets, base))
    yield* transaction(Effect.gen(function*() {
      const locked = yield* connections.lockConnection({ organizationId, id })
      if (Option.isNone(locked)) return yield* connectionNotFound()
      yield* intents.insert(row)
      if (Result.isSuccess(started) && started.success.samlRequestId !== undefined) {
        yield* intents.setSamlRequestId({ organizationId, id: row.id }, started.success.samlRequestId)
      }
      yield* connections.updateConnection({
        ...locked.value,
        lastTest: Result.isSuccess(started)
          ? pending
          : { ...pending, status: "failed", completedAt: row.createdAt.toISOString(), failure: { code: started.failure.code, message: started.failure.message } }
      })
      yield* intents.prune(organizationId, new Date(row.createdAt.getTime() - Duration.toMillis(Duration.hours(1))))
    }))
    const test = toTestReport(id, (yield* orUnavailable(connections.findConnection({ organizationId, id }))).pipe(Option.getOrThrow).lastTest!)
    return { test, authorizationUrl: Result.isSuccess(started) ? started.success.url : "", expiresAt: row.expiresAt }
  })

  // Sign-in

  const discover = Effect.fn("SignIn.discover")(function*(address: string, email: string) {
    yield* limit(address)
    const domain = domainOf(email)
    const connection = domain === undefined ? Option.none() : yield* orUnavailable(connections.activeForDomain(domain))
    const required = domain !== undefined && Option.isSome(connection) && Option.isSome(yield* orUnavailable(enforcement.forDomain(domain)))
    return Option.match(connection, {
      onNone: () => ({ method: "password" as const, connectionId: null, required: false }),
      onSome: (found) => ({ method: "sso" as const, connectionId: found.id, required })
    })
  })

  const start = Effect.fn("SignIn.start")(function*(address: string, input: { readonly email: string; readonly returnTo?: string | undefined }, base: string) {
    yield* limit(address)
    const domain = domainOf(input.email)
    const found = domain === undefined ? Option.none() : yield* orUnavailable(connections.activeForDomain(domain))
    if (Option.isNone(found)) {
      return yield* new SsoSignInFailed({
        code: "email_domain_not_verified",
        message: `No active SSO connection serves ${domain ?? "this email's domain"}: sign in with a password, or ask an administrator.`
      })
    }
    const connection = found.value
    const engine = yield* Effect.mapError(engineOf(connection), refused)
    const { row, secrets } = yield* newIntent(connection, "sign_in", { userId: null, loginHint: input.email.trim(), returnTo: input.returnTo === undefined ? null : returnToUrl(input.returnTo, base) })
    const started = yield* Effect.mapError(engine.start(connection, secrets, base), refused)
    yield* orUnavailable(transaction(Effect.gen(function*() {
      yield* intents.insert(row)
      if (started.samlRequestId !== undefined) yield* intents.setSamlRequestId({ organizationId: row.organizationId, id: row.id }, started.samlRequestId)
    })))
    return { authorizationUrl: started.url, expiresAt: row.expiresAt }
  })

  /** The checks every completion makes on the mapped profile, whatever its purpose; `domains`: the connection's. */
  const checkProfile = Effect.fn("SignIn.checkProfile")(function*(connection: SsoConnectionRow, profile: SsoProfile, domains: ReadonlyArray<ConnectionDomainRow>) {
    if (profile.email === null) {
      return yield* failure("email_missing", `The provider sent no \`${connection.mapping.email}\` claim (the mapping's email): add it to the scopes or claims it releases, or change the mapping.`)
    }
    if (profile.emailVerified === false) return yield* failure("email_not_verified", `The provider says ${profile.email} is not verified.`)
    const domain = domainOf(profile.email)
    if (!domains.some((d) => d.domain === domain && d.verified)) {
      return yield* failure(
        "email_domain_not_verified",
        `${profile.email} is not of a verified domain of this connection (${domains.filter((d) => d.verified).map((d) => d.domain).join(", ") || "none verified"}).`
      )
    }
    return profile.email
  })

  /**
   * Spends the intent the signed state names, in a transaction: unknown, spent or expired intents are refused. With
   * `connectionId` (the SAML ACS names its connection), an intent of another connection is refused (and not spent).
   */
  const spend = Effect.fn("SignIn.spend")(function*(state: string, connectionId?: SsoConnectionId) {
    const named = verifyState(stateKey, state)
    if (named === undefined) return yield* failure("replayed", "The state is not one this server issued (or was tampered with): start again.")
    const key = { organizationId: named.organizationId, id: named.authorizationId as SsoIntentRow["id"] }
    return yield* orUnavailable(transaction(Effect.gen(function*() {
      const intent = yield* intents.lock(key)
      if (connectionId !== undefined && Option.isSome(intent) && intent.value.connectionId !== connectionId) {
        return yield* failure("destination_mismatch", "This sign-in was started for another connection: its Response belongs at that connection's ACS URL.")
      }
      if (Option.isNone(intent) || intent.value.consumedAt !== null) {
        return yield* failure("replayed", "This sign-in was already completed (or is unknown): start again.")
      }
      const at = yield* now
      yield* intents.consume(key, at)
      if (intent.value.expiresAt.getTime() <= at.getTime()) {
        return { intent: intent.value, expired: true as const }
      }
      return { intent: intent.value, expired: false as const }
    })))
  })

  /** Records the test's outcome on its connection (if it is still the connection's latest test). */
  const recordTest = Effect.fn("SignIn.recordTest")(function*(
    connection: SsoConnectionRow,
    intent: SsoIntentRow,
    outcome: { readonly received: Received | null; readonly profile: SsoProfile | null; readonly failure: SsoFailureError | null }
  ) {
    const at = yield* now
    const test: StoredTest = {
      id: intent.id,
      configRevision: intent.configRevision,
      status: outcome.failure === null ? "succeeded" : "failed",
      startedAt: intent.createdAt.toISOString(),
      completedAt: at.toISOString(),
      claimsJson: outcome.received === null ? null : JSON.stringify(outcome.received.claims),
      profile: outcome.profile,
      failure: outcome.failure === null ? null : { code: outcome.failure.code, message: outcome.failure.message }
    }
    yield* orUnavailable(connections.recordTest(connection.organizationId, connection.id, test))
    return new SsoTestReport({ ...toTestReport(connection.id, test) })
  })

  /** Gives a completed sign-in its one-time code, for the person the provider's `subject` signed in. */
  const issueCode = Effect.fn("SignIn.issueCode")(function*(intent: SsoIntentRow, userId: UserId, subject: string) {
    const code = yield* crypto.newToken(CODE_PREFIX)
    const at = yield* now
    yield* orUnavailable(intents.setExchange(
      { organizationId: intent.organizationId, id: intent.id },
      { hash: crypto.hashToken(code), userId, subject, expiresAt: new Date(at.getTime() + Duration.toMillis(EXCHANGE_TTL)) }
    ))
    return code
  })

  /**
   * Completes the intent the provider's answer names: `params` is what the provider sent (the callback's query, or
   * the ACS's form), `state` the intent's signed state (OIDC `state`, SAML `RelayState`). Protocol-neutral: the
   * SAML ACS calls this with its engine's answer.
   */
  const complete = Effect.fn("SignIn.complete")(function*(state: string, params: Readonly<Record<string, string>>, base: string, connectionId?: SsoConnectionId) {
    const { expired, intent } = yield* spend(state, connectionId)
    const found = yield* orUnavailable(connections.findConnection({ organizationId: intent.organizationId, id: intent.connectionId }))
    if (Option.isNone(found)) return yield* failure("replayed", "The connection of this sign-in was deleted.")
    const connection = found.value
    const codeVerifier = intent.codeVerifierCiphertext === null
      ? ""
      : yield* Effect.orDie(crypto.decrypt(intent.codeVerifierCiphertext, bind(SecretColumns.ssoCodeVerifier, intent.organizationId, intent.id)))
    const secrets = { state, nonce: intent.nonce, codeVerifier, loginHint: intent.loginHint, samlRequestId: intent.samlRequestId }

    const validated = yield* Effect.result(Effect.gen(function*() {
      if (expired) return yield* failure("intent_expired", "This sign-in took longer than 5 minutes: start again.")
      if (intent.configRevision !== connection.configRevision) {
        return yield* failure("configuration_changed", "The connection changed since this sign-in started: start again.")
      }
      if (intent.purpose === "sign_in" && connection.state !== "active") {
        return yield* failure("email_domain_not_verified", "The connection is no longer active: start again.")
      }
      const engine = yield* engineOf(connection)
      return yield* engine.complete(connection, secrets, params, base)
    }))
    return yield* conclude(connection, intent, yield* once(connection, validated))
  })

  /** The answer taken once: a single-use value (a SAML assertion's ID) the connection already took is a replay. */
  const once = Effect.fn("SignIn.once")(function*(connection: SsoConnectionRow, validated: Result.Result<Received, SsoFailureError>) {
    if (Result.isFailure(validated) || validated.success.singleUse === undefined) return validated
    const { expiresAt, id } = validated.success.singleUse
    const taken = yield* orUnavailable(intents.takeAssertion({ organizationId: connection.organizationId, connectionId: connection.id }, { id, expiresAt, at: yield* now }))
    return taken ? validated : Result.fail(failure("replayed", "This assertion was already used to sign in: sign in again at the identity provider."))
  })

  /**
   * A sign-in through the connection that failed, in its organization's audit log (`session.create`, `failed`,
   * the failure's code): by someone not identified, labelled with the email the provider vouched for when its
   * answer was valid (a forged or replayed one names no one).
   */
  const failedSignIn = (connection: SsoConnectionRow, profile: SsoProfile | null, error: SsoFailureError) =>
    recorder.recordFailedAttempt({
      organizationId: connection.organizationId,
      action: "session.create",
      reason: error.code,
      label: profile?.email ?? null,
      ssoConnectionId: connection.id,
      targets: [connection.id]
    })

  /**
   * What a validated (or refused) answer of the provider gives for its intent: the mapping and the connection's
   * rules, then a test's report, or a sign-in's one-time code.
   */
  const conclude = Effect.fn("SignIn.conclude")(function*(connection: SsoConnectionRow, intent: SsoIntentRow, outcome: Result.Result<Received, SsoFailureError>) {
    const received = Result.isSuccess(outcome) ? outcome.success : null
    const profile = received === null ? null : profileOf(received, connection.mapping)
    const checked: Result.Result<string, SsoFailureError> = Result.isFailure(outcome)
      ? Result.fail(outcome.failure)
      : yield* Effect.result(checkProfile(connection, profile!, yield* orUnavailable(connections.connectionDomains(connection.organizationId, [connection.id]))))

    if (intent.purpose === "test") {
      let failed = Result.isFailure(checked) ? checked.failure : null
      if (failed === null && profile !== null && intent.userId !== null) {
        const admin = yield* orUnavailable(users.findById(intent.userId))
        const linked = yield* orUnavailable(links.find({ organizationId: connection.organizationId, connectionId: connection.id, subject: profile.subject }))
        const same = Option.isSome(linked)
          ? linked.value.userId === intent.userId
          : Option.isSome(admin) && admin.value.email.toLowerCase() === profile.email
        if (!same) {
          failed = failure("identity_mismatch", `The test was completed as ${profile.email ?? profile.subject}, not by the administrator who started it: sign in at the provider as yourself.`)
        }
      }
      const test = yield* recordTest(connection, intent, { received, profile, failure: failed })
      return { _tag: "test" as const, test, failure: failed }
    }

    if (Result.isFailure(checked)) {
      yield* failedSignIn(connection, profile, checked.failure)
      yield* Metrics.recordSignIn(connection.kind, checked.failure.code, connection.organizationId)
      return { _tag: "sign_in" as const, intent, failure: checked.failure, code: null }
    }
    const person = yield* Effect.result(jit.personFor(connection, received!, profile!, checked.success))
    if (Result.isFailure(person)) {
      if (person.failure instanceof SsoFailureError) {
        yield* failedSignIn(connection, profile, person.failure)
        yield* Metrics.recordSignIn(connection.kind, person.failure.code, connection.organizationId)
        return { _tag: "sign_in" as const, intent, failure: person.failure, code: null }
      }
      return yield* Effect.fail(person.failure)
    }
    const code = yield* issueCode(intent, person.success, received!.subject)
    yield* Metrics.recordSignIn(connection.kind, "success", connection.organizationId)
    return { _tag: "sign_in" as const, intent, failure: null, code }
  })

  /** `GET /v1/sso/oidc/callback`: the JSON answer, or the browser sent to the sign-in's `returnTo`. */
  const oidcCallback = Effect.fn("SignIn.oidcCallback")(function*(query: SsoCallbackQuery, base: string) {
    const { state, ...rest } = query
    const params: Record<string, string> = { state }
    for (const [name, value] of Object.entries(rest)) if (typeof value === "string") params[name] = value
    return yield* answer(complete(state, params, base))
  })

  /**
   * A SAML Response the IdP sent unsolicited (no InResponseTo) to the connection's ACS: taken only by an active
   * connection with `allowIdpInitiated` (the engine checks the RelayState against the allow-list). The Response is
   * validated before anything is stored; then a sign-in intent, spent at once, carries its one-time code, with the
   * RelayState as `returnTo` when it is one (a loopback URL or a path on this server).
   */
  const completeIdpInitiated = Effect.fn("SignIn.completeIdpInitiated")(function*(connection: SsoConnectionRow, params: Readonly<Record<string, string>>, base: string) {
    if (connection.saml?.allowIdpInitiated !== true) {
      return yield* failure("idp_initiated_not_allowed", "IdP-initiated sign-in is not enabled for this connection: start the sign-in from orgplane.")
    }
    const relayState = params.RelayState ?? ""
    if (relayState !== "" && !isSsoReturnTo(relayState)) {
      return yield* failure("relay_state_not_allowed", "An IdP-initiated RelayState must be a loopback URL or a path on this server (where the browser goes next).")
    }
    if (connection.state !== "active") return yield* failure("email_domain_not_verified", "The connection is not active: IdP-initiated sign-in needs an active connection.")
    const engine = yield* engineOf(connection)
    const received = yield* engine.complete(connection, { state: "", nonce: "", codeVerifier: "", loginHint: null, samlRequestId: null, idpInitiated: true }, params, base)
    const validated = yield* once(connection, Result.succeed(received))
    if (Result.isFailure(validated)) return yield* validated.failure
    const { row } = yield* newIntent(connection, "sign_in", { userId: null, loginHint: null, returnTo: relayState === "" ? null : returnToUrl(relayState, base) })
    yield* orUnavailable(intents.insert({ ...row, consumedAt: row.createdAt }))
    return yield* conclude(connection, row, validated)
  })

  /** A completion as the browser gets it: the JSON answer, or a redirect to the sign-in's `returnTo`. */
  const answer = Effect.fn("SignIn.answer")(function*<E, R>(completion: Effect.Effect<Effect.Success<ReturnType<typeof conclude>>, E, R>) {
    const done = yield* Effect.mapError(completion, (error) => error instanceof SsoFailureError ? refused(error) : error as Exclude<E, SsoFailureError>)
    if (done._tag === "test") {
      return {
        purpose: "test" as const,
        ok: done.failure === null,
        test: done.test,
        code: null,
        failure: done.failure === null ? null : { code: done.failure.code, message: done.failure.message }
      }
    }
    if (done.intent.returnTo !== null) {
      const target = new URL(done.intent.returnTo)
      if (done.code !== null) target.searchParams.set("code", done.code)
      else {
        target.searchParams.set("error", done.failure!.code)
        target.searchParams.set("error_description", done.failure!.message)
      }
      return HttpServerResponse.redirect(target.href, { status: 302, headers: { "cache-control": "no-store" } })
    }
    if (done.failure !== null) return yield* refused(done.failure)
    return { purpose: "sign_in" as const, ok: true, test: null, code: done.code, failure: null }
  })

  /** A one-time code → a session acting in the connection's organization, recording what authenticated it. */
  const exchange = Effect.fn("SignIn.exchange")(function*(code: string) {
    const at = yield* now
    const intent = yield* orUnavailable(intents.exchange(crypto.hashToken(code.trim()), at))
    if (intent === undefined || intent.exchangeUserId === null) {
      return yield* new SsoSignInFailed({ code: "replayed" satisfies SsoFailureCode, message: "This code was used, expired (2 minutes) or never issued: sign in again." })
    }
    // The identity the code stands for must still lead to the account: a take-back or a reset since ended it.
    const linked = intent.exchangeSubject === null
      ? Option.none()
      : yield* orUnavailable(links.find({ organizationId: intent.organizationId, connectionId: intent.connectionId, subject: intent.exchangeSubject }))
    if (!Option.exists(linked, (link) => link.userId === intent.exchangeUserId)) {
      return yield* new SsoSignInFailed({ code: "replayed", message: "The identity this code was issued for no longer signs in to that account: sign in again." })
    }
    const user = yield* orUnavailable(users.findById(intent.exchangeUserId))
    if (Option.isNone(user)) return yield* new SsoSignInFailed({ code: "replayed", message: "The person of this code no longer exists: sign in again." })
    const session = yield* orUnavailable(accounts.startSession(user.value, intent.organizationId, {
      connectionId: intent.connectionId,
      organizationId: intent.organizationId
    }))
    return { user: toUser(user.value), session }
  })

  return { startTest, discover, start, complete, completeIdpInitiated, answer, oidcCallback, exchange } as const
})

export class SignIn extends Context.Service<SignIn>()("@orgplane/server/sso/SignIn", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      SsoRepository.layer,
      IntentsRepository.layer,
      IdentityLinksRepository.layer,
      UsersRepository.layer,
      Accounts.layer,
      RateLimiter.layer,
      Sso.layer,
      SsoEnforcement.layer,
      Jit.layer
    ])
  )
}
