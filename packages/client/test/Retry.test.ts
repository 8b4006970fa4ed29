import { describe, expect, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll } from "vitest"
import {
  type ClientOptions,
  createClient,
  isRetryable,
  layerFetch,
  OrgplaneClient,
  OrgplaneConnectionError,
  OrgplaneError,
  VERSION,
  withIdempotencyKey
} from "../src/index.js"
import { RateLimited } from "@orgplane/schema"
import * as FakeServer from "./FakeServer.js"
import { rejection } from "./Helpers.js"

let fake: FakeServer.FakeServer
beforeAll(async () => {
  fake = await FakeServer.start()
})
afterAll(() => fake.close())

/** A Promise client on the fake server with tiny retry delays, closed after `f`. */
const withClient = async <A>(options: Omit<ClientOptions, "baseUrl">, f: (client: ReturnType<typeof createClient>) => Promise<A>) => {
  const client = createClient({ baseUrl: fake.url, retryDelay: 1, ...options })
  try {
    return await f(client)
  } finally {
    await client.close()
  }
}

/**
 * The test clock, recording when each sleep started on it would end: Effect 4's TestClock has no `sleeps()`, so
 * the tests read this list to know the client sleeps before moving the clock.
 */
const recordingSleeps = Effect.gen(function*() {
  const clock = yield* Clock.Clock
  const sleeps: Array<number> = []
  const recording: Clock.Clock = {
    currentTimeMillisUnsafe: () => clock.currentTimeMillisUnsafe(),
    currentTimeMillis: clock.currentTimeMillis,
    currentTimeNanosUnsafe: () => clock.currentTimeNanosUnsafe(),
    currentTimeNanos: clock.currentTimeNanos,
    monotonicTimeNanosUnsafe: () => clock.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: clock.monotonicTimeNanos,
    sleep: (duration) =>
      Effect.suspend(() => {
        sleeps.push(clock.currentTimeMillisUnsafe() + Duration.toMillis(duration))
        return clock.sleep(duration)
      })
  }
  /** Waits, on real time (the request goes over the network), until a sleep ending at `at` has started. */
  const sleepingUntil = (at: number) =>
    Effect.gen(function*() {
      for (let i = 0; i < 4000; i++) {
        if (sleeps.includes(at)) return
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
      throw new Error(`no sleep until ${at} on the test clock`)
    })
  return { sleeps, sleepingUntil, provide: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.provideService(effect, Clock.Clock, recording) }
})

const signIn = { payload: { email: "ada@example.com", password: "correct horse battery" } }
const createTeam = { payload: { name: "Platform" } }
const team = {
  team: {
    id: "tem_01m83wvtz7f20s4esa48r198h3",
    organizationId: "org_01m83wvtgjf20s4ertxw9er3jv",
    name: "Platform",
    memberIds: [],
    createdByOrgMembershipId: "om_01m83wvtj2f20s4es3fb4a2z3z",
    externalKey: null,
    scimConnectionId: null,
    createdAt: "2026-11-23T09:47:45.511Z",
    updatedAt: "2026-11-23T09:47:45.511Z"
  }
}
const keyInUse = { error: "idempotency_key_in_use", message: "A request with this Idempotency-Key is still running; retry after it ends." }
const keysSent = () => fake.requests.map((request) => request.headers["idempotency-key"])
const unavailable = { error: "service_unavailable", message: "The database does not answer." }

describe("retries", () => {
  it("retries a GET answered 503 until it succeeds", async () => {
    fake.script({ status: 503 }, { status: 503 }, { status: 200, body: FakeServer.health })
    const health = await withClient({ maxRetries: 2 }, (client) => client.system.health())
    expect(health).toEqual(FakeServer.health)
    expect(fake.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      "GET /health",
      "GET /health",
      "GET /health"
    ])
  })

  it("stops after maxRetries and reports the last answer", async () => {
    fake.script({ status: 503, body: unavailable }, { status: 503, body: unavailable }, { status: 200, body: FakeServer.health })
    const error = await rejection(withClient({ maxRetries: 1 }, (client) => client.system.ready()))
    expect(error).toBeInstanceOf(OrgplaneError)
    expect(error).toMatchObject({ status: 503, tag: "ServiceUnavailable", code: "service_unavailable", body: unavailable })
    expect(fake.requests).toHaveLength(2)
  })

  it("does not retry a GET whose error says it is not retryable, and still reports its body", async () => {
    const final = { error: "suite_a_api_error", message: "Reading the message failed: 404 ErrorItemNotFound", retryable: false }
    fake.script({ status: 502, body: final }, { status: 200, body: FakeServer.health })
    const error = await rejection(withClient({ maxRetries: 2 }, (client) => client.capabilities.readMailMessage({ path: { messageId: "AAMkAD=" } })))
    expect(error).toMatchObject({ status: 502, code: "suite_a_api_error", body: final })
    expect(fake.requests).toHaveLength(1)
  })

  it("does not retry a write without an Idempotency-Key (sign-in takes none) answered 503", async () => {
    fake.script({ status: 503, body: unavailable }, { status: 200, body: FakeServer.authResult })
    const error = await rejection(withClient({ maxRetries: 3 }, (client) => client.users.signIn(signIn)))
    // Repeating it could do its work twice: the 503 comes back as the API's error, with what the server sent.
    expect(error).toBeInstanceOf(OrgplaneError)
    expect(error).toMatchObject({ status: 503, tag: "ServiceUnavailable", code: "service_unavailable", body: unavailable })
    expect(keysSent()).toEqual([undefined])
  })

  it("sends a fresh Idempotency-Key with a credentialed write, and the same key with each of its retries", async () => {
    fake.script({ status: 503, body: unavailable }, { status: 502 }, { status: 201, body: team })
    const created = await withClient({ token: "tok_123", maxRetries: 2 }, (client) => client.teams.create(createTeam))
    expect(created.team.name).toBe("Platform")
    const [key, ...others] = keysSent()
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(others).toEqual([key, key])
    expect(fake.requests.map((request) => JSON.parse(request.body))).toEqual([createTeam.payload, createTeam.payload, createTeam.payload])

    fake.script({ status: 201, body: team })
    await withClient({ token: "tok_123" }, (client) => client.teams.create(createTeam))
    expect(keysSent()[0]).not.toBe(key)
  })

  it("retries a keyed write whose connection drops, and sends no key with reads", async () => {
    fake.script("drop", { status: 201, body: team }, { status: 200, body: { items: [], nextCursor: null } })
    await withClient({ token: "tok_123", maxRetries: 1 }, async (client) => {
      await client.teams.create(createTeam)
      await client.teams.list({ urlParams: {} })
    })
    const [first, second, read] = keysSent()
    expect(first).toBeTypeOf("string")
    expect(second).toBe(first)
    expect(read).toBeUndefined()
  })

  it.effect("retries a keyed write answered 409 idempotency_key_in_use once its Retry-After has passed", () =>
    Effect.gen(function*() {
      fake.script({ status: 409, headers: { "retry-after": "1" }, body: keyInUse }, { status: 201, body: team })
      // On the test clock, as "waits as long as Retry-After asks": not sent again a millisecond early.
      const start = yield* Clock.currentTimeMillis
      const clock = yield* recordingSleeps
      const creating = yield* Effect.forkChild(
        Effect.flatMap(OrgplaneClient, (client) => client.teams.create(createTeam)).pipe(
          Effect.provide(layerFetch({ baseUrl: fake.url, token: "tok_123", retryDelay: 1, maxRetries: 1 })),
          clock.provide
        )
      )
      yield* clock.sleepingUntil(start + 1000)
      yield* TestClock.adjust("999 millis")
      expect(fake.requests).toHaveLength(1)
      yield* TestClock.adjust("1 millis")
      expect((yield* Fiber.join(creating)).team.name).toBe("Platform")
      expect(fake.requests).toHaveLength(2)
      expect(keysSent()[1]).toBe(keysSent()[0])
    }))

  it("retries no other 409", async () => {
    const exists = { error: "team_exists", message: "A team with this name exists." }
    fake.script({ status: 409, body: exists }, { status: 201, body: team })
    const error = await rejection(withClient({ token: "tok_123", maxRetries: 2 }, (client) => client.teams.create(createTeam)))
    expect(error).toMatchObject({ status: 409, code: "team_exists" })
    expect(fake.requests).toHaveLength(1)
  })

  it("sends the caller's key (RequestOptions.idempotencyKey), on every retry", async () => {
    fake.script({ status: 503, body: unavailable }, { status: 201, body: team })
    await withClient({ token: "tok_123", maxRetries: 1 }, (client) => client.teams.create(createTeam, { idempotencyKey: "deploy-42/create-team" }))
    expect(keysSent()).toEqual(["deploy-42/create-team", "deploy-42/create-team"])
  })

  it("reports the 409 and 422 answers about a key as the API's errors", async () => {
    const reused = { error: "idempotency_key_reused", message: "This Idempotency-Key was used for another request." }
    fake.script({ status: 422, body: reused })
    const error = await rejection(withClient({ token: "tok_123" }, (client) => client.teams.create(createTeam, { idempotencyKey: "k" })))
    expect(error).toMatchObject({ status: 422, tag: "IdempotencyKeyReused", code: "idempotency_key_reused", body: reused })

    const lost = { error: "idempotency_response_lost", message: "A request with this Idempotency-Key made its change, but its answer was lost." }
    fake.script({ status: 409, body: lost })
    const conflict = await rejection(withClient({ token: "tok_123", maxRetries: 2 }, (client) => client.teams.create(createTeam)))
    expect(conflict).toMatchObject({ status: 409, tag: "IdempotencyConflict", code: "idempotency_response_lost" })
    expect(fake.requests).toHaveLength(1)
  })

  it("retries a POST answered 429, with the same body", async () => {
    fake.script({ status: 429, body: { error: "rate_limited", message: "slow down" } }, { status: 200, body: FakeServer.authResult })
    const result = await withClient({ maxRetries: 1 }, (client) => client.users.signIn(signIn))
    expect(result.session.token).toBe("session-token")
    expect(fake.requests.map((request) => request.method)).toEqual(["POST", "POST"])
    expect(JSON.parse(fake.requests[1]!.body)).toEqual(signIn.payload)
  })

  it.effect("waits as long as Retry-After asks", () =>
    Effect.gen(function*() {
      fake.script({ status: 429, headers: { "retry-after": "1" }, body: { error: "rate_limited", message: "slow down" } }, {
        status: 200,
        body: FakeServer.health
      })
      // On the test clock: once the 429 is in, the client sleeps until a second later (its backoff is 1 ms here).
      const start = yield* Clock.currentTimeMillis
      const clock = yield* recordingSleeps
      const calling = yield* Effect.forkChild(
        Effect.flatMap(OrgplaneClient, (client) => client.system.health()).pipe(
          Effect.provide(layerFetch({ baseUrl: fake.url, retryDelay: 1, maxRetries: 1 })),
          clock.provide
        )
      )
      yield* clock.sleepingUntil(start + 1000)
      yield* TestClock.adjust("999 millis")
      expect(fake.requests).toHaveLength(1)
      expect(clock.sleeps).toContain(start + 1000)
      yield* TestClock.adjust("1 millis")
      expect(yield* Fiber.join(calling)).toEqual(FakeServer.health)
      expect(fake.requests).toHaveLength(2)
    }))

  it("does not wait for a Retry-After of more than a minute", async () => {
    const limited = { error: "rate_limited", message: "Too many workspaces from this address." }
    fake.script({ status: 429, headers: { "retry-after": "3600" }, body: limited }, { status: 201, body: {} })
    const error = await rejection(
      withClient({ maxRetries: 2 }, (client) => client.bootstrap.workspace({ payload: { workspaceName: "Agents" } }))
    )
    expect(error).toBeInstanceOf(OrgplaneError)
    expect(error).toMatchObject({ status: 429, tag: "RateLimited", code: "rate_limited", body: limited })
    expect((error as OrgplaneError).headers["retry-after"]).toBe("3600")
    expect(fake.requests).toHaveLength(1)
  })

  it("gives the wait a 429 asks for as the error's retryAfterSeconds, in seconds or as a date", async () => {
    const limited = { error: "rate_limited", message: "Too many failed sign-ins; retry in 900 seconds." }
    fake.script({ status: 429, headers: { "retry-after": "900" }, body: limited })
    const error = await rejection(withClient({}, (client) => client.users.signIn(signIn)))
    expect(error).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 900 })
    fake.script({ status: 429, headers: { "retry-after": new Date(Date.now() + 600_000).toUTCString() }, body: limited })
    const dated = await rejection(withClient({}, (client) => client.users.signIn(signIn))) as OrgplaneError
    expect(dated.retryAfterSeconds).toBeGreaterThan(590)
    expect(dated.retryAfterSeconds).toBeLessThanOrEqual(600)
    fake.script({ status: 401, body: { error: "unauthorized", reason: "invalid_credentials", message: "Wrong email or password." } })
    expect(await rejection(withClient({}, (client) => client.users.signIn(signIn)))).toMatchObject({ status: 401, retryAfterSeconds: undefined })
  })

  it("retries a GET whose connection drops, but not a write without a key", async () => {
    fake.script("drop", { status: 200, body: FakeServer.health })
    expect(await withClient({ maxRetries: 1 }, (client) => client.system.health())).toEqual(FakeServer.health)
    expect(fake.requests).toHaveLength(2)

    fake.script("drop", { status: 200, body: FakeServer.authResult })
    const error = await rejection(withClient({ maxRetries: 1 }, (client) => client.users.signIn(signIn)))
    expect(error).toBeInstanceOf(OrgplaneConnectionError)
    expect(error).toMatchObject({ timedOut: false })
    expect(fake.requests).toHaveLength(1)
  })

  it("times out each attempt, and retries a GET that timed out", async () => {
    fake.script("hang")
    const error = await rejection(withClient({ timeout: 100, maxRetries: 0 }, (client) => client.system.health()))
    expect(error).toBeInstanceOf(OrgplaneConnectionError)
    expect(error).toMatchObject({ timedOut: true })

    fake.script({ status: 200, delayMs: 1_000, body: FakeServer.health }, { status: 200, body: { ok: true, version: "second" } })
    const health = await withClient({ timeout: 200, maxRetries: 1 }, (client) => client.system.health())
    expect(health.version).toBe("second")
    expect(fake.requests).toHaveLength(2)
  })

  it("cancels a request when its signal aborts", async () => {
    fake.script("hang")
    const controller = new AbortController()
    const abandoned = fake.abandoned()
    const error = await withClient({}, (client) => {
      const pending = rejection(client.system.health(undefined, { signal: controller.signal }))
      setTimeout(() => controller.abort(), 50)
      return pending
    })
    expect(error).toMatchObject({ name: "AbortError" })
    await abandoned
  })

  it("sends the credentials and the user agent", async () => {
    fake.script({ status: 200, body: FakeServer.health }, { status: 200, body: FakeServer.health })
    await withClient({ token: "tok_123", userAgent: "deploy-bot/2.1" }, (client) => client.system.health())
    await withClient({ apiKey: "opk_secret" }, (client) => client.system.health())
    const [withToken, withKey] = fake.requests
    expect(withToken!.headers.authorization).toBe("Bearer tok_123")
    expect(withToken!.headers["user-agent"]).toBe(`orgplane-client/${VERSION} deploy-bot/2.1`)
    expect(withToken!.headers["x-api-key"]).toBeUndefined()
    expect(withKey!.headers["x-api-key"]).toBe("opk_secret")
    expect(withKey!.headers.authorization).toBeUndefined()
  })

  it("decides what is retryable from the method and the status", () => {
    expect(isRetryable("POST", 429)).toBe(true)
    expect(isRetryable("GET", 503)).toBe(true)
    expect(isRetryable("DELETE", 500)).toBe(true)
    expect(isRetryable("GET", 408)).toBe(true)
    expect(isRetryable("POST", 503)).toBe(false)
    expect(isRetryable("PATCH", 502)).toBe(false)
    expect(isRetryable("POST", 503, true)).toBe(true)
    expect(isRetryable("PATCH", 500, true)).toBe(true)
    expect(isRetryable("POST", 409, true)).toBe(false)
    expect(isRetryable("GET", 404)).toBe(false)
    expect(isRetryable("GET", 501)).toBe(false)
  })
})

describe("retries in the Effect client", () => {
  const withEffectClient = <A, E>(options: Omit<ClientOptions, "baseUrl">, f: (client: OrgplaneClient["Service"]) => Effect.Effect<A, E>) =>
    Effect.flatMap(OrgplaneClient, f).pipe(Effect.provide(layerFetch({ baseUrl: fake.url, retryDelay: 1, ...options })))

  it.live("retries a GET answered 503, and not a POST", () =>
    Effect.gen(function*() {
      fake.script({ status: 503 }, { status: 503 }, { status: 200, body: FakeServer.health })
      const health = yield* withEffectClient({ maxRetries: 2 }, (client) => client.system.health())
      expect(health.version).toBe("9.9.9")
      expect(fake.requests).toHaveLength(3)

      fake.script({ status: 503, body: unavailable }, { status: 200, body: FakeServer.authResult })
      const error = yield* Effect.flip(withEffectClient({ maxRetries: 2 }, (client) => client.users.signIn(signIn)))
      expect(error).toMatchObject({ _tag: "ServiceUnavailable", error: "service_unavailable" })
      expect(fake.requests).toHaveLength(1)
    }))

  it.live("sends the key given with withIdempotencyKey, on every retry of the call", () =>
    Effect.gen(function*() {
      fake.script({ status: 503, body: unavailable }, { status: 201, body: team })
      const created = yield* withEffectClient({ token: "tok_123", maxRetries: 1 }, (client) =>
        client.teams.create(createTeam).pipe(withIdempotencyKey("import-7")))
      expect(created.team.id).toBe(team.team.id)
      expect(keysSent()).toEqual(["import-7", "import-7"])
    }))

  it.live("gives a RateLimited error the wait its answer's Retry-After asks for", () =>
    Effect.gen(function*() {
      fake.script({ status: 429, headers: { "retry-after": "900" }, body: { error: "rate_limited", message: "Too many failed sign-ins; retry in 900 seconds." } })
      const error = yield* Effect.flip(withEffectClient({}, (client) => client.users.signIn(signIn)))
      expect(error).toBeInstanceOf(RateLimited)
      expect(error).toMatchObject({ error: "rate_limited", retryAfterSeconds: 900 })
    }))

  it.live("reports a timeout as a transport failure", () =>
    Effect.gen(function*() {
      fake.script("hang")
      const error = yield* Effect.flip(withEffectClient({ timeout: "100 millis", maxRetries: 0 }, (client) => client.system.health()))
      expect(error).toMatchObject({ _tag: "HttpClientError", reason: { _tag: "TransportError" } })
    }))
})
