/**
 * The authentication middlewares on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL),
 * without serving HTTP: each scheme's handler is called as the platform calls it (the endpoint's effect, the
 * credential it decoded, inside a request), and what it provides to the endpoint is read there: the caller
 * (`CurrentMember`, `CurrentActor`) and `MemberStanding` beside it. Covered: sessions and API keys resolved with
 * their person, membership and organization, the refusals (401, 404 `organization_not_found`, 403
 * `sso_session_required`), the bearer's failure a request keeps for its missing API key, the optional middleware
 * running the endpoint without a caller, the background `lastUsedAt` writes, and `sessionOf`.
 */
import { expect, layer } from "@effect/vitest"
import {
  type Actor,
  ApiKeyId,
  Authentication,
  CurrentActor,
  CurrentMember,
  MemberAuthentication,
  MembershipId,
  OptionalAuthentication,
  type OrganizationId,
  SessionId,
  type UserId
} from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { ApiKeysRepository } from "../src/identity/ApiKeysRepository.js"
import * as Authn from "../src/identity/Authentication.js"
import { MembershipsRepository } from "../src/identity/MembershipsRepository.js"
import { SessionsRepository } from "../src/identity/SessionsRepository.js"
import { MemberStanding } from "../src/platform/Authority.js"
import * as Config from "../src/platform/Config.js"
import { Crypto } from "../src/platform/Crypto.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const day = 24 * 3_600_000

/** The middlewares' scheme handlers, as the layer gives them to the platform (built once, in the test layer's scope). */
class Middlewares extends Context.Service<Middlewares, Effect.Success<typeof Authn.makeMiddlewares>>()("test/IdentityAuthentication/Middlewares") {}
const middlewares = Effect.service(Middlewares)

const settings = Config.layer({ dataDir: "memory" }).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)
const platform = Crypto.layer.pipe(Layer.provideMerge(settings))
const testLayer = Layer.mergeAll(
  Authn.layer,
  Layer.effect(Middlewares, Authn.makeMiddlewares).pipe(Layer.provide([SessionsRepository.layer, ApiKeysRepository.layer, MembershipsRepository.layer])),
  SessionsRepository.layer,
  ApiKeysRepository.layer
).pipe(
  Layer.provideMerge(Layer.mergeAll(Db.layer, platform))
)

/** A request with these headers. */
const requestWith = (headers: Record<string, string>) => HttpServerRequest.fromWeb(new Request("http://orgplane.test/probe", { headers }))

/** What the endpoint saw: its caller and whether `MemberStanding` was beside it. */
interface Seen<A> {
  readonly caller: Option.Option<A>
  readonly standing: boolean
}

/**
 * What the test's surroundings give as `MemberStanding` (the test's layer has the real one too): the endpoint
 * sees another only when the middleware provided it.
 */
const ambientStanding = MemberStanding.of(() => Effect.die("the middleware did not provide MemberStanding"))

/** An endpoint that records what the middleware provided. */
const probe = <I, A>(key: Context.Key<I, A>) => {
  const seen: Array<Seen<A>> = []
  const effect = Effect.gen(function*() {
    const standing = yield* Effect.serviceOption(MemberStanding)
    seen.push({ caller: yield* Effect.serviceOption(key), standing: Option.isSome(standing) && standing.value !== ambientStanding })
    return HttpServerResponse.text("ok")
  })
  return { seen, effect }
}

/** A person with a session (token in clear), a membership (or none) and an organization. */
const person = Effect.fn("test.person")(function*(email: string, options: { readonly organizationId?: OrganizationId; readonly role?: "owner" | "admin" | "member"; readonly createdAt?: Date } = {}) {
  const crypto = yield* Crypto
  const sessions = yield* SessionsRepository
  const userId: UserId = yield* Db.insertUser(email)
  const membershipId = options.organizationId === undefined
    ? undefined
    : Schema.decodeUnknownSync(MembershipId)(yield* Db.insertMembership(options.organizationId, userId, options.role ?? "owner"))
  const token = yield* crypto.newToken("ops")
  const sessionId = Schema.decodeUnknownSync(SessionId)(Db.newId("ses"))
  const createdAt = options.createdAt ?? new Date()
  yield* sessions.insert({
    id: sessionId,
    userId,
    tokenHash: crypto.hashToken(token),
    activeOrganizationId: null,
    createdAt,
    expiresAt: new Date(createdAt.getTime() + day),
    ipAddress: null,
    userAgent: null
  })
  return { userId, membershipId, sessionId, token }
})

/** An API key (in clear) of the member. */
const keyOf = Effect.fn("test.keyOf")(function*(organizationId: OrganizationId, membershipId: MembershipId, scopes: ReadonlyArray<"members.read" | "teams.read"> | null) {
  const crypto = yield* Crypto
  const keys = yield* ApiKeysRepository
  const key = yield* crypto.newToken("opk")
  const id = Schema.decodeUnknownSync(ApiKeyId)(Db.newId("apk"))
  yield* keys.insert({
    id,
    organizationId,
    membershipId,
    name: "probe",
    prefix: key.slice(0, 12),
    keyHash: crypto.hashToken(key),
    createdAt: new Date(),
    expiresAt: null,
    ssoConnectionId: null,
    authenticatedOrganizationId: null,
    scopes,
    parentApiKeyId: null
  })
  return { id, key }
})

const inRequest = (request: HttpServerRequest.HttpServerRequest) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, request), Effect.provideService(MemberStanding, ambientStanding))
const bearerRequest = (token: string) => requestWith({ authorization: `Bearer ${token}` })

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`identity authentication on ${TestDatabase.kind}`, (it) => {
  it.effect("MemberAuthentication: a session becomes its member, with MemberStanding beside it; the standing reads again", () =>
    Effect.gen(function*() {
      const middleware = (yield* middlewares).member
      const organizationId = yield* Db.insertOrganization({ name: "Acme" })
      const ada = yield* person("authn-ada@acme.test", { organizationId, role: "admin" })
      const { effect, seen } = probe(CurrentMember)
      const response = yield* middleware.bearer(effect, Redacted.make(ada.token)).pipe(inRequest(bearerRequest(ada.token)))
      expect(response.status).toBe(200)
      const member = Option.getOrThrow(seen[0]!.caller)
      expect(member).toMatchObject({
        _tag: "Member",
        user: { id: ada.userId, email: "authn-ada@acme.test" },
        organization: { id: organizationId, name: "Acme" },
        membership: { id: ada.membershipId, role: "admin", organizationId },
        credential: { _tag: "Session", sessionId: ada.sessionId, ssoConnectionId: null }
      })
      expect(seen[0]!.standing).toBe(true)
      const standing = (yield* middlewares).standing
      expect(yield* standing(member, new Date())).toEqual({ role: "admin", credential: true })
      const sessions = yield* SessionsRepository
      yield* sessions.revoke({ id: ada.sessionId, at: new Date() })
      expect(yield* standing(member, new Date())).toEqual({ role: "admin", credential: false })
      // Revoked: 401.
      const refused = yield* Effect.flip(middleware.bearer(effect, Redacted.make(ada.token)).pipe(inRequest(bearerRequest(ada.token))))
      expect(refused).toMatchObject({ _tag: "Unauthorized" })
      expect(seen).toHaveLength(1)
    }))

  it.effect("MemberAuthentication: refusals; a request that sent only a bearer token gets the bearer's answer", () =>
    Effect.gen(function*() {
      const middleware = (yield* middlewares).member
      const { effect, seen } = probe(CurrentMember)
      const lonely = yield* person("authn-lonely@acme.test")
      // Not the Bearer scheme, or an unknown token: 401.
      const basic = requestWith({ authorization: `Basic ${lonely.token}` })
      expect(yield* Effect.flip(middleware.bearer(effect, Redacted.make(lonely.token)).pipe(inRequest(basic))))
        .toMatchObject({ _tag: "Unauthorized" })
      expect(yield* Effect.flip(middleware.bearer(effect, Redacted.make("ops_unknown")).pipe(inRequest(bearerRequest("ops_unknown")))))
        .toMatchObject({ _tag: "Unauthorized" })
      expect(yield* Effect.flip(middleware.bearer(effect, Redacted.make("")).pipe(inRequest(bearerRequest("")))))
        .toMatchObject({ _tag: "Unauthorized" })
      // A person in no organization: 404, and the missing API key of the same request answers the same.
      const request = bearerRequest(lonely.token)
      const notFound = yield* Effect.flip(middleware.bearer(effect, Redacted.make(lonely.token)).pipe(inRequest(request)))
      expect(notFound).toMatchObject({ _tag: "OrganizationNotFound" })
      const missingKey = yield* Effect.flip(middleware.apiKey(effect, Redacted.make(""), false).pipe(inRequest(request)))
      expect(missingKey).toBe(notFound)
      // Another request with no credential at all: 401.
      expect(yield* Effect.flip(middleware.apiKey(effect, Redacted.make(""), false).pipe(inRequest(requestWith({})))))
        .toMatchObject({ _tag: "Unauthorized" })
      // An unknown key: 401 whatever the bearer said.
      expect(yield* Effect.flip(middleware.apiKey(effect, Redacted.make("opk_unknown"), false).pipe(inRequest(request))))
        .toMatchObject({ _tag: "Unauthorized" })
      expect(seen).toHaveLength(0)
    }))

  it.effect("MemberAuthentication: an API key becomes its maker's member context with its scopes; its use is recorded off the request", () =>
    Effect.gen(function*() {
      const middleware = (yield* middlewares).member
      const organizationId = yield* Db.insertOrganization({ name: "Keyed" })
      const bob = yield* person("authn-bob@keyed.test", { organizationId, role: "member" })
      const key = yield* keyOf(organizationId, bob.membershipId!, ["members.read"])
      const { effect, seen } = probe(CurrentMember)
      // On a session-only endpoint the key is resolved, then refused: 403 session_required, the endpoint not run.
      const sessionOnly = yield* Effect.flip(middleware.apiKey(effect, Redacted.make(key.key), true).pipe(inRequest(requestWith({ "x-api-key": key.key }))))
      expect(sessionOnly).toMatchObject({ _tag: "Forbidden", reason: "session_required" })
      expect(seen).toHaveLength(0)
      yield* middleware.apiKey(effect, Redacted.make(key.key), false).pipe(inRequest(requestWith({ "x-api-key": key.key })))
      expect(Option.getOrThrow(seen[0]!.caller)).toMatchObject({
        organization: { id: organizationId },
        membership: { id: bob.membershipId, role: "member" },
        credential: { _tag: "ApiKey", apiKeyId: key.id, scopes: ["members.read"] }
      })
      expect(seen[0]!.standing).toBe(true)
      const sql = yield* SqlClient.SqlClient
      let touched: ReadonlyArray<{ lastUsedAt: Date | null }> = []
      for (let attempt = 0; attempt < 50; attempt++) {
        touched = yield* sql<{ lastUsedAt: Date | null }>`SELECT last_used_at FROM api_keys WHERE organization_id = ${organizationId} AND id = ${key.id}`
        if (touched[0]?.lastUsedAt !== null) break
        yield* Effect.sleep(100)
      }
      expect(touched[0]?.lastUsedAt).toBeInstanceOf(Date)
      // A key made before scopes takes its maker's whole role.
      const old = yield* keyOf(organizationId, bob.membershipId!, null)
      yield* middleware.apiKey(effect, Redacted.make(old.key), false).pipe(inRequest(requestWith({ "x-api-key": old.key })))
      expect(Option.getOrThrow(seen[1]!.caller).credential).toEqual({ _tag: "ApiKey", apiKeyId: old.id, scopes: null })
    }))

  it.effect("MemberAuthentication: an organization requiring SSO refuses password sessions and keys made in them", () =>
    Effect.gen(function*() {
      const middleware = (yield* middlewares).member
      const organizationId = yield* Db.insertOrganization({ name: "Strict" })
      yield* Db.insertSso({ organizationId, domain: "strict.test", policy: { requireSso: true, ownersPasswordFallback: false } })
      const cy = yield* person("cy@strict.test", { organizationId, role: "member" })
      const { effect, seen } = probe(CurrentMember)
      const refused = yield* Effect.flip(middleware.bearer(effect, Redacted.make(cy.token)).pipe(inRequest(bearerRequest(cy.token))))
      expect(refused).toMatchObject({ _tag: "Forbidden", reason: "sso_session_required" })
      const key = yield* keyOf(organizationId, cy.membershipId!, ["members.read"])
      const keyRefused = yield* Effect.flip(middleware.apiKey(effect, Redacted.make(key.key), false).pipe(inRequest(requestWith({ "x-api-key": key.key }))))
      expect(keyRefused).toMatchObject({ _tag: "Forbidden", reason: "sso_session_required" })
      // A guest outside the organization's domains is admitted.
      const guest = yield* person("guest@elsewhere.test", { organizationId, role: "member" })
      yield* middleware.bearer(effect, Redacted.make(guest.token)).pipe(inRequest(bearerRequest(guest.token)))
      expect(Option.getOrThrow(seen[0]!.caller).user.email).toBe("guest@elsewhere.test")
    }))

  it.effect("Authentication: any signed-in caller, with or without an organization; sessionOf", () =>
    Effect.gen(function*() {
      const middleware = (yield* middlewares).authentication
      const lonely = yield* person("authn-actor@acme.test")
      const { effect, seen } = probe(CurrentActor)
      yield* middleware.bearer(effect, Redacted.make(lonely.token)).pipe(inRequest(bearerRequest(lonely.token)))
      const actor: Actor = Option.getOrThrow(seen[0]!.caller)
      expect(actor).toMatchObject({ user: { id: lonely.userId }, organization: null, membership: null, credential: { _tag: "Session", sessionId: lonely.sessionId } })
      expect(yield* Authn.sessionOf(actor)).toBe(lonely.sessionId)
      expect(yield* Authn.currentSession.pipe(Effect.provideService(CurrentActor, actor))).toEqual({ actor, sessionId: lonely.sessionId })
      // An unknown token, then no key: the bearer's 401.
      const request = bearerRequest("ops_nobody")
      expect(yield* Effect.flip(middleware.bearer(effect, Redacted.make("ops_nobody")).pipe(inRequest(request))))
        .toMatchObject({ _tag: "Unauthorized" })
      expect(yield* Effect.flip(middleware.apiKey(effect, Redacted.make(""), false).pipe(inRequest(request))))
        .toMatchObject({ _tag: "Unauthorized" })
      // An API key's actor has no session.
      const organizationId = yield* Db.insertOrganization({ name: "Actors" })
      const dee = yield* person("authn-dee@actors.test", { organizationId })
      const key = yield* keyOf(organizationId, dee.membershipId!, null)
      yield* middleware.apiKey(effect, Redacted.make(key.key), false).pipe(inRequest(requestWith({ "x-api-key": key.key })))
      const keyed = Option.getOrThrow(seen[1]!.caller)
      expect(keyed).toMatchObject({ organization: { id: organizationId }, credential: { _tag: "ApiKey", apiKeyId: key.id } })
      expect(yield* Effect.flip(Authn.sessionOf(keyed))).toMatchObject({
        _tag: "Forbidden",
        reason: "session_required",
        message: "This action needs a signed-in session, not an API key."
      })
    }))

  it.effect("OptionalAuthentication: the caller when a credential resolves, else the endpoint runs without one", () =>
    Effect.gen(function*() {
      const middleware = (yield* middlewares).optional
      const { effect, seen } = probe(CurrentActor)
      const anonymous = requestWith({})
      // The platform calls the bearer's handler first (with "" when no token was sent): without a caller, it runs the endpoint.
      yield* middleware.bearer(effect, Redacted.make("")).pipe(inRequest(anonymous))
      expect(seen[0]).toEqual({ caller: Option.none(), standing: false })
      yield* middleware.bearer(effect, Redacted.make("")).pipe(inRequest(requestWith({ "x-api-key": "opk_unknown" })))
      expect(seen[1]).toEqual({ caller: Option.none(), standing: false })
      const eve = yield* person("authn-eve@acme.test")
      yield* middleware.bearer(effect, Redacted.make(eve.token)).pipe(inRequest(bearerRequest(eve.token)))
      expect(Option.getOrThrow(seen[2]!.caller)).toMatchObject({ user: { id: eve.userId } })
      expect(seen[2]!.standing).toBe(true)
      // A bad token beside a good API key: the key's caller (the key is tried after the bearer fails).
      const organizationId = yield* Db.insertOrganization({ name: "Optional" })
      const hal = yield* person("authn-hal@optional.test", { organizationId })
      const key = yield* keyOf(organizationId, hal.membershipId!, ["members.read"])
      yield* middleware.bearer(effect, Redacted.make("ops_bad")).pipe(
        inRequest(requestWith({ authorization: "Bearer ops_bad", "x-api-key": key.key }))
      )
      expect(Option.getOrThrow(seen[3]!.caller)).toMatchObject({ user: { id: hal.userId }, credential: { _tag: "ApiKey", apiKeyId: key.id } })
      // The `x-api-key` scheme's own handler, should the platform call it.
      yield* middleware.apiKey(effect, Redacted.make(key.key)).pipe(inRequest(requestWith({ "x-api-key": key.key })))
      expect(Option.getOrThrow(seen[4]!.caller)).toMatchObject({ credential: { _tag: "ApiKey", apiKeyId: key.id } })
      yield* middleware.apiKey(effect, Redacted.make("opk_unknown")).pipe(inRequest(anonymous))
      expect(seen[5]).toEqual({ caller: Option.none(), standing: false })
      // The endpoint's own failure is its own, not a missing caller.
      const failing = Effect.fail("endpoint failed" as const)
      expect(yield* Effect.flip(middleware.bearer(failing, Redacted.make("")).pipe(inRequest(anonymous)))).toBe("endpoint failed")
    }))

  it.effect("the layer gives the platform the three middlewares and MemberStanding", () =>
    Effect.gen(function*() {
      expect(Object.keys(yield* Authentication).sort()).toEqual(["apiKey", "bearer"])
      expect(Object.keys(yield* MemberAuthentication).sort()).toEqual(["apiKey", "bearer"])
      expect(Object.keys(yield* OptionalAuthentication).sort()).toEqual(["apiKey", "bearer"])
      expect(typeof (yield* MemberStanding)).toBe("function")
    }))

  it.effect("Sessions record their use at most once a minute; an idle session ends", () =>
    Effect.gen(function*() {
      const middleware = (yield* middlewares).authentication
      const sql = yield* SqlClient.SqlClient
      const { effect } = probe(CurrentActor)
      // Signed in two minutes ago and never used since: the first request records its use.
      const fay = yield* person("authn-fay@acme.test", { createdAt: new Date(Date.now() - 120_000) })
      yield* middleware.bearer(effect, Redacted.make(fay.token)).pipe(inRequest(bearerRequest(fay.token)))
      let lastUsed: Date | null = null
      for (let attempt = 0; attempt < 50 && lastUsed === null; attempt++) {
        const rows = yield* sql<{ lastUsedAt: Date | null }>`SELECT last_used_at FROM sessions WHERE id = ${fay.sessionId}`
        lastUsed = rows[0]?.lastUsedAt ?? null
        if (lastUsed === null) yield* Effect.sleep(100)
      }
      expect(lastUsed).toBeInstanceOf(Date)
      // Used eight days ago (beyond the 7-day idle timeout): no longer a session.
      const gus = yield* person("authn-gus@acme.test", { createdAt: new Date(Date.now() - 20 * 3_600_000) })
      yield* sql`UPDATE sessions SET created_at = ${new Date(Date.now() - 8 * day)}, expires_at = ${new Date(Date.now() + day)} WHERE id = ${gus.sessionId}`
      expect(yield* Effect.flip(middleware.bearer(effect, Redacted.make(gus.token)).pipe(inRequest(bearerRequest(gus.token)))))
        .toMatchObject({ _tag: "Unauthorized" })
    }))
})
