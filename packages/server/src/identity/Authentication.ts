/**
 * The authentication middlewares: a session token or an API key becomes the `Actor` behind it (`Authentication`,
 * `OptionalAuthentication`) or the `MemberContext` of the organization it acts in (`MemberAuthentication`, which
 * also applies that organization's SSO enforcement to sessions and API keys: `SsoEnforcement.ts`). Each
 * request costs one statement, which resolves the credential with its person, membership and organization; the
 * API key's `lastUsedAt` is written off the request path.
 *
 * A security middleware wraps the endpoint's effect (the schema's Security.ts): each scheme's handler here resolves
 * the credential and provides the caller to that effect, with `MemberStanding` beside it (what platform/Authority.ts
 * reads the caller's standing again with when a write commits).
 *
 * `Orgplane-Read-Only: true` narrows the resolved credential to reads, here and nowhere else (`narrowed`): every
 * request that is not a GET or HEAD is refused with 403 `read_only_credential` before its handler runs.
 */
import {
  type Actor,
  type ApiKeyId,
  Authentication,
  CurrentActor,
  type Credential,
  CurrentMember,
  Forbidden,
  isReadOnlyMethod,
  isSessionOnly,
  type MemberContext,
  MemberAuthentication,
  OptionalAuthentication,
  OrganizationNotFound,
  readOnlyHeader,
  readOnlyMessage,
  readOnlyOf,
  type ServiceUnavailable,
  type SessionId,
  Unauthorized
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import type * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import { MemberStanding } from "../platform/Authority.js"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import * as Tracing from "../platform/Tracing.js"
import { presentedBearer, RefusedCredential, unauthorized } from "../platform/PresentedCredential.js"
import { orUnavailable } from "../platform/Sql.js"
import * as Metrics from "../platform/Metrics.js"
import { now } from "../platform/Time.js"
import { API_KEY_PREFIX } from "./ApiKeys.js"
import { ApiKeysRepository, parseScopes } from "./ApiKeysRepository.js"
import { MembershipsRepository, toCaller } from "./MembershipsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { admission, keyAdmission, type SessionAssurance } from "./SsoEnforcement.js"

const apiKeyAsBearer = Unauthorized.because(
  "session_unknown",
  "The bearer token is an API key, not a session token: send an API key as `X-API-Key: <key>`."
)

/**
 * The platform tries the `bearer` scheme, then, after any failure, `x-api-key`. A request that sent only a bearer
 * token must get the bearer's answer (404 without an organization, 503 when the database is down), not the 401 of
 * a missing API key: the bearer's failure is kept for the rest of the request, by the middleware that met it.
 */
const bearerFailures = <E>() => {
  const failures = new WeakMap<HttpServerRequest.HttpServerRequest, E>()
  return {
    remember: <A, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.tapError(effect, (error) =>
        Effect.map(Effect.service(HttpServerRequest.HttpServerRequest), (request) => {
          failures.set(request, error)
        })),
    /** A missing API key: the bearer token's failure when one was sent, else 401. */
    noApiKey: Effect.flatMap(
      Effect.service(HttpServerRequest.HttpServerRequest),
      (request): Effect.Effect<never, E | Unauthorized> => Effect.fail(failures.get(request) ?? unauthorized("credentials_missing"))
    )
  }
}

/** Sessions and API keys record their last use at most this often, so a busy one does not write on every request. */
const TOUCH_INTERVAL_MILLIS = 60_000
/** Bounds the memory of recent touches; past it, the map starts over (a few extra writes, nothing more). */
const MAX_REMEMBERED_TOUCHES = 10_000

/** A write refused to a credential the request narrowed to reads. */
const readOnlyRefusal = new Forbidden({ reason: "read_only_credential", message: readOnlyMessage })

/**
 * The credential as the request narrows it: with `Orgplane-Read-Only: true` (the request guard refused a value other
 * than `true` or `false`), marked read-only, and a request whose method is not a read (`isReadOnlyMethod`, the same
 * reading the MCP tools list operations by) is refused.
 */
const narrowed = <C extends Credential>(credential: C): Effect.Effect<C, Forbidden, HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    readOnlyOf(request.headers[readOnlyHeader]) !== true
      ? Effect.succeed(credential)
      : isReadOnlyMethod(request.method)
      ? Effect.succeed({ ...credential, readOnly: true })
      : Effect.fail(readOnlyRefusal))

/** The credential resolvers, sharing one set of background touches (run in the layer's scope). */
export const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const sessions = yield* SessionsRepository
  const apiKeys = yield* ApiKeysRepository
  // Touches run in the server's scope: they never hold up a response, and stop with the server.
  const touches = yield* FiberSet.make()
  const lastTouched = new Map<ApiKeyId | SessionId, number>()
  const idleMillis = Duration.toMillis(settings.sessionIdleTimeout)

  /**
   * Records in the background that a session or key was used at `at`, at most once per interval per credential (in
   * this process). A session's idle timeout is judged by it, so it is written before a minute passes.
   */
  const touch = (id: ApiKeyId | SessionId, lastUsedAt: Date | null, at: Date, write: Effect.Effect<void, unknown>) =>
    Effect.gen(function*() {
      const last = Math.max(lastUsedAt?.getTime() ?? 0, lastTouched.get(id) ?? 0)
      if (at.getTime() - last <= TOUCH_INTERVAL_MILLIS) return
      if (lastTouched.size >= MAX_REMEMBERED_TOUCHES) lastTouched.clear()
      lastTouched.set(id, at.getTime())
      yield* FiberSet.run(touches, Effect.ignore(write, { log: "Debug" }))
    })

  /** The session behind a bearer token, with what SSO enforcement reads of it. */
  const bearer = (token: Redacted.Redacted) =>
    Effect.gen(function*() {
      const value = yield* presentedBearer(yield* HttpServerRequest.HttpServerRequest, token)
      const at = yield* now
      const idleSince = new Date(at.getTime() - idleMillis)
      const tokenHash = crypto.hashToken(value)
      const found = yield* orUnavailable(sessions.resolve({ tokenHash, at, idleSince }))
      if (Option.isNone(found)) {
        const fate = yield* orUnavailable(sessions.fate({ tokenHash, at, idleSince }))
        // An API key sent as a bearer token, as curl users often do: say where it goes.
        if (Option.isNone(fate) && value.startsWith(`${API_KEY_PREFIX}_`)) return yield* apiKeyAsBearer
        return yield* unauthorized(
          Option.isNone(fate) ? "session_unknown" : fate.value.expired && !fate.value.revoked ? "session_expired" : "session_revoked"
        )
      }
      const { sessionCreatedAt, sessionId, sessionLastUsedAt } = found.value
      yield* touch(sessionId, sessionLastUsedAt ?? sessionCreatedAt, at, sessions.touch({ id: sessionId, at }))
      const credential = yield* narrowed({
        _tag: "Session",
        sessionId,
        ssoConnectionId: found.value.ssoConnectionId,
        authenticatedAt: sessionCreatedAt
      } as const)
      const actor = { ...toCaller(found.value), credential } satisfies Actor
      const assurance: SessionAssurance = found.value
      return { actor, assurance }
    })

  /** The API key's caller, with what SSO enforcement reads of it; `missing`: what an empty key answers. */
  const apiKey = <E>(key: Redacted.Redacted, missing: Effect.Effect<never, E, HttpServerRequest.HttpServerRequest>) =>
    Effect.gen(function*() {
      const value = Redacted.value(key).trim()
      if (value === "") return yield* missing
      const at = yield* now
      const keyHash = crypto.hashToken(value)
      const found = yield* orUnavailable(apiKeys.resolve({ keyHash, at }))
      if (Option.isNone(found)) {
        const fate = yield* orUnavailable(apiKeys.fate({ keyHash, at }))
        return yield* unauthorized(Option.isNone(fate) ? "api_key_unknown" : fate.value.expired ? "api_key_expired" : "api_key_inactive")
      }
      const { apiKeyId, keyOrganizationId, lastUsedAt } = found.value
      yield* touch(apiKeyId, lastUsedAt, at, apiKeys.touch({ organizationId: keyOrganizationId, id: apiKeyId, at }))
      const scopes = found.value.scopes === null ? null : parseScopes(found.value.scopes)
      const credential = yield* narrowed({ _tag: "ApiKey", apiKeyId, scopes } as const)
      const actor = { ...toCaller(found.value), credential } satisfies Actor
      const assurance: SessionAssurance = found.value
      return { actor, assurance }
    }).pipe(Metrics.signInOutcome("api_key"))

  /**
   * The actor as a member of the organization it acts in; 404 `organization_not_found` for a person without one (say
   * right after sign-up), whose message says how to create or join one.
   */
  const asMember = (actor: Actor): Effect.Effect<MemberContext, OrganizationNotFound> =>
    actor.organization === null || actor.membership === null
      ? Effect.fail(OrganizationNotFound.noOrganization())
      : Effect.succeed({ ...actor, _tag: "Member", organization: actor.organization, membership: actor.membership })

  /** A session as a member, if the organization it acts in admits it (SSO enforcement, `SsoEnforcement.ts`). */
  const admittedMember = (token: Redacted.Redacted) =>
    Effect.flatMap(bearer(token), ({ actor, assurance }) =>
      Effect.flatMap(asMember(actor), (member) =>
        Option.match(admission(member.organization, member.membership.role, assurance), {
          onNone: () => Effect.succeed(member),
          onSome: (refusal) => Effect.fail<Forbidden>(refusal)
        })))

  /** An API key as a member, if the organization admits how its maker authenticated (`SsoEnforcement.ts` `keyAdmission`). */
  const admittedKey = <E>(key: Redacted.Redacted, missing: Effect.Effect<never, E, HttpServerRequest.HttpServerRequest>) =>
    Effect.flatMap(apiKey(key, missing), ({ actor, assurance }) =>
      Effect.flatMap(asMember(actor), (member) =>
        Option.match(keyAdmission(member.organization, member.membership.role, assurance), {
          onNone: () => Effect.succeed(member),
          onSome: (refusal) => Effect.fail<Forbidden>(refusal)
        })))

  const actorFailures = bearerFailures<Unauthorized | ServiceUnavailable | Forbidden>()
  const memberFailures = bearerFailures<Unauthorized | ServiceUnavailable | OrganizationNotFound | Forbidden>()

  return {
    /** `Authentication` and `OptionalAuthentication`: the caller behind the credential. */
    actor: {
      bearer: (token: Redacted.Redacted) => actorFailures.remember(Effect.map(bearer(token), ({ actor }) => actor)),
      apiKey: (key: Redacted.Redacted) => Effect.map(apiKey(key, actorFailures.noApiKey), ({ actor }) => actor)
    },
    /** `MemberAuthentication`: the caller as a member of the organization it acts in, admitted by its SSO policy. */
    member: {
      bearer: (token: Redacted.Redacted) => memberFailures.remember(admittedMember(token)),
      apiKey: (key: Redacted.Redacted) => admittedKey(key, memberFailures.noApiKey)
    }
  } as const
})

/**
 * How a member's standing is read again when a write commits (platform/Authority.ts): the membership and the
 * credential this module resolved.
 */
export const memberStanding = Effect.map(Effect.service(MembershipsRepository), (memberships) =>
  MemberStanding.of((caller, at) =>
    memberships.standing({
      organizationId: caller.organization.id,
      membershipId: caller.membership.id,
      userId: caller.user.id,
      credential: caller.credential,
      at
    })))

/**
 * The three middlewares' scheme handlers, sharing one resolver (and one set of background touches), each as
 * `(endpoint's effect, credential) => effect`: the caller provided to the endpoint's effect, with `MemberStanding`
 * beside it. `optional` runs the endpoint without a caller when neither scheme finds one (whatever the reason: a bad
 * token, a database down), with `RefusedCredential` when one was sent and refused.
 */
export const makeMiddlewares = Effect.gen(function*() {
  const { actor, member } = yield* make
  const standing = yield* memberStanding
  // The organization the caller acts in names the request's span (platform/Tracing.ts); nothing with tracing off.
  const asActor = <A, E, R>(httpEffect: Effect.Effect<A, E, R>, caller: Actor) =>
    Effect.andThen(
      caller.organization === null ? Effect.void : Tracing.annotateOrganization(caller.organization.id),
      httpEffect.pipe(Effect.provideService(CurrentActor, caller), Effect.provideService(MemberStanding, standing))
    )
  const asMember = <A, E, R>(httpEffect: Effect.Effect<A, E, R>, caller: MemberContext) =>
    Effect.andThen(
      Tracing.annotateOrganization(caller.organization.id),
      httpEffect.pipe(Effect.provideService(CurrentMember, caller), Effect.provideService(MemberStanding, standing))
    )
  /**
   * The endpoint with the key's caller, or without a caller when the key finds none: with the refusal
   * (`RefusedCredential`) when a credential was sent. An endpoint that also serves anonymous callers refuses a key
   * itself where only a session may act (`POST /v1/invitations/accept`): this middleware declares no error.
   */
  const optionalKey = <A, E, R>(httpEffect: Effect.Effect<A, E, R>, key: Redacted.Redacted) =>
    Effect.matchEffect(actor.apiKey(key), {
      onFailure: (error) =>
        // A write with a credential narrowed to reads is refused, not run as if the credential were missing.
        error instanceof Forbidden || (error instanceof Unauthorized && error.reason !== "credentials_missing")
          ? Effect.provideService(httpEffect, RefusedCredential, error)
          : httpEffect,
      onSuccess: (caller) => asActor(httpEffect, caller)
    })
  return {
    standing,
    authentication: {
      bearer: <A, E, R>(httpEffect: Effect.Effect<A, E, R>, credential: Redacted.Redacted) =>
        Effect.flatMap(actor.bearer(credential), (caller) => asActor(httpEffect, caller)),
      apiKey: <A, E, R>(httpEffect: Effect.Effect<A, E, R>, credential: Redacted.Redacted, sessionOnly: boolean) =>
        Effect.flatMap(actor.apiKey(credential), (caller) => asActor(keyAdmitted(httpEffect, sessionOnly), caller))
    },
    optional: {
      // This middleware declares no error, so its bearer handler cannot fail over to `x-api-key` as the platform
      // does: it reads the key itself (as the platform decodes it: the header, or "" without one).
      bearer: <A, E, R>(httpEffect: Effect.Effect<A, E, R>, credential: Redacted.Redacted) =>
        Effect.matchEffect(actor.bearer(credential), {
          onFailure: (error) =>
            // The session resolved but was narrowed to reads: the endpoint answers the refusal (`RefusedCredential`).
            error instanceof Forbidden
              ? Effect.provideService(httpEffect, RefusedCredential, error)
              : Effect.flatMap(Effect.service(HttpServerRequest.HttpServerRequest), (request) =>
                optionalKey(httpEffect, Redacted.make(request.headers["x-api-key"] ?? ""))),
          onSuccess: (caller) => asActor(httpEffect, caller)
        }),
      apiKey: optionalKey
    },
    member: {
      bearer: <A, E, R>(httpEffect: Effect.Effect<A, E, R>, credential: Redacted.Redacted) =>
        Effect.flatMap(member.bearer(credential), (caller) => asMember(httpEffect, caller)),
      apiKey: <A, E, R>(httpEffect: Effect.Effect<A, E, R>, credential: Redacted.Redacted, sessionOnly: boolean) =>
        Effect.flatMap(member.apiKey(credential), (caller) => asMember(keyAdmitted(httpEffect, sessionOnly), caller))
    }
  } as const
})

/**
 * The three middlewares (`makeMiddlewares`), and `MemberStanding` for what runs outside them: what Server.ts
 * provides to the API's groups.
 */
export const layer = Layer.effectContext(
  Effect.map(makeMiddlewares, ({ authentication, member, optional, standing }) =>
    Context.make(
      Authentication,
      Authentication.of({
        bearer: (httpEffect, { credential }) => authentication.bearer(httpEffect, credential),
        apiKey: (httpEffect, { credential, endpoint }) => authentication.apiKey(httpEffect, credential, sessionOnlyEndpoint(endpoint))
      })
    ).pipe(
      Context.add(
        OptionalAuthentication,
        OptionalAuthentication.of({
          bearer: (httpEffect, { credential }) => optional.bearer(httpEffect, credential),
          apiKey: (httpEffect, { credential }) => optional.apiKey(httpEffect, credential)
        })
      ),
      Context.add(
        MemberAuthentication,
        MemberAuthentication.of({
          bearer: (httpEffect, { credential }) => member.bearer(httpEffect, credential),
          apiKey: (httpEffect, { credential, endpoint }) => member.apiKey(httpEffect, credential, sessionOnlyEndpoint(endpoint))
        })
      ),
      Context.add(MemberStanding, standing)
    ))
).pipe(Layer.provide([SessionsRepository.layer, ApiKeysRepository.layer, MembershipsRepository.layer]))

/** 403 `session_required`: an API key where only a person's session may act. */
const sessionRequired = () => new Forbidden({ reason: "session_required", message: "This action needs a signed-in session, not an API key." })

/**
 * Whether an endpoint is marked session-only (@orgplane/schema's `sessionOnly`): the middlewares refuse an API key
 * on it, once the key is resolved. Read once per endpoint.
 */
const sessionOnlyEndpoints = new WeakMap<object, boolean>()
const sessionOnlyEndpoint = (endpoint: HttpApiEndpoint.Top): boolean => {
  let known = sessionOnlyEndpoints.get(endpoint)
  if (known === undefined) sessionOnlyEndpoints.set(endpoint, known = isSessionOnly(endpoint.annotations))
  return known
}

/** The endpoint's effect for an API key: itself, or the key's refusal where only a session may act. */
const keyAdmitted = <A, E, R>(httpEffect: Effect.Effect<A, E, R>, sessionOnly: boolean): Effect.Effect<A, E | Forbidden, R> =>
  sessionOnly ? Effect.fail(sessionRequired()) : httpEffect

/**
 * The session behind the actor, for a handler that acts on it; API keys get 403 `session_required` (they cannot act
 * as a person signing in). A session-only endpoint's key is refused before its handler (`sessionOnly`), so there this
 * reads the session.
 */
export const sessionOf = (actor: Actor): Effect.Effect<SessionId, Forbidden> =>
  actor.credential._tag === "Session"
    ? Effect.succeed(actor.credential.sessionId)
    : Effect.fail(sessionRequired())

/** `sessionOf` the request's actor. */
export const currentSession = Effect.flatMap(Effect.service(CurrentActor), (actor) => Effect.map(sessionOf(actor), (sessionId) => ({ actor, sessionId })))
