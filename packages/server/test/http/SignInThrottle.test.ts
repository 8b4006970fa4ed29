/**
 * Password sign-in that cannot be guessed at (issue 43 item 1), through HTTP: failed sign-ins are counted per
 * account and client address (strict), per account (looser) and per address (credential stuffing); past a limit the
 * answer is 429 `rate_limited` with `Retry-After`, the same for an account that exists and one that does not; a
 * success clears the account's count; windows expire; the addresses an account signed in from keep working when
 * strangers exhaust its count; the audit log shows the throttling. Client addresses come from `X-Forwarded-For`
 * (the servers trust it), so one test speaks from many.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { addressBlock } from "../../src/platform/ClientAddress.js"
import * as RateLimits from "../../src/platform/RateLimiter.js"

const clock = new TestServer.ShiftedClock()
/** The defaults: 10 per account and address, 50 per account, 100 per address, in 15 minutes. */
let server: TestServer.RunningServer
/** Small limits, to reach the account's and the address's without hundreds of requests. */
let small: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ trustProxy: true, clock })
  small = await TestServer.start({
    trustProxy: true,
    clock,
    signInFailuresPerAccountAndAddress: 3,
    signInFailuresPerAccount: 6,
    signInFailuresPerAddress: 5
  })
})
afterAll(async () => {
  await server?.close()
  await small?.close()
})

let addresses = 0
/** A client address of its own, for one test's caller. */
const newAddress = () => `203.0.113.${++addresses}`

const signIn = (url: string, email: string, password: string, address: string, userAgent?: string) =>
  Http.request(url, "POST", "/v1/auth/sign-in", {
    body: { email, password },
    headers: { "x-forwarded-for": address, ...(userAgent === undefined ? {} : { "user-agent": userAgent }) }
  })

const statuses = async (count: number, attempt: () => Promise<Http.RawResponse>) => {
  const seen: Array<number> = []
  for (let i = 0; i < count; i++) seen.push((await attempt()).status)
  return seen
}

const repeat = <A>(count: number, value: A) => Array.from({ length: count }, () => value)

/** Whether a value of the OpenAPI document is a JSON object; `objectAt` insists on one, naming `what` when it is not. */
const isObject = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)
const objectAt = (value: unknown, what: string): Readonly<Record<string, unknown>> => {
  if (!isObject(value)) throw new Error(`${what}: not an object`)
  return value
}

describe("password sign-in throttling", () => {
  it("forty wrong passwords from one address: the eleventh on is 429 with Retry-After, and so is the right one, until the window ends", async () => {
    const user = await Http.signUp(server.url, "Guessed")
    const address = newAddress()
    const seen = await statuses(40, () => signIn(server.url, user.email, "wrong password guess", address))
    expect(seen).toEqual([...repeat(10, 401), ...repeat(30, 429)])

    const refused = await signIn(server.url, user.email, user.password, address)
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({ error: "rate_limited", message: expect.stringMatching(/^Too many failed sign-ins; retry in \d+ seconds\.$/) })
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(800)
    expect(retryAfter).toBeLessThanOrEqual(900)

    // No permanent lockout: the window ends.
    clock.advance(`${retryAfter} seconds`)
    expect((await signIn(server.url, user.email, user.password, address)).status).toBe(200)
  })

  it("answers an unknown email exactly as an account's: the same statuses at the same counts, the same bodies", async () => {
    const user = await Http.signUp(server.url, "Known")
    const [a, b] = [newAddress(), newAddress()]
    const known: Array<Http.RawResponse> = []
    const unknown: Array<Http.RawResponse> = []
    for (let i = 0; i < 12; i++) {
      known.push(await signIn(server.url, user.email, "wrong password guess", a))
      unknown.push(await signIn(server.url, `nobody.${addresses}@example.com`, "wrong password guess", b))
    }
    expect(known.map((answer) => answer.status)).toEqual([...repeat(10, 401), 429, 429])
    expect(unknown.map((answer) => answer.status)).toEqual(known.map((answer) => answer.status))
    // The same bodies and headers, but for the seconds left, which depend on when each window started.
    const shape = (answer: Http.RawResponse) => ({
      body: JSON.stringify(answer.body).replace(/\d+ seconds/, "N seconds"),
      retryAfter: answer.headers.get("retry-after")?.replace(/^\d+$/, "N") ?? null
    })
    expect(unknown.map(shape)).toEqual(known.map(shape))
  })

  it("a successful sign-in clears the account's count", async () => {
    const user = await Http.signUp(server.url, "Typo")
    const address = newAddress()
    expect(await statuses(9, () => signIn(server.url, user.email, "wrong password guess", address))).toEqual(repeat(9, 401))
    expect((await signIn(server.url, user.email, user.password, address)).status).toBe(200)
    // Ten more failures fit again; the eleventh does not.
    expect(await statuses(11, () => signIn(server.url, user.email, "wrong password guess", address))).toEqual([...repeat(10, 401), 429])
  })

  it("a stranger on another address cannot lock the owner out: the pair's limit stops the stranger first", async () => {
    const user = await Http.signUp(server.url, "Owner")
    const stranger = newAddress()
    expect(await statuses(15, () => signIn(server.url, user.email, "wrong password guess", stranger))).toEqual([...repeat(10, 401), ...repeat(5, 429)])
    expect((await signIn(server.url, user.email, user.password, newAddress())).status).toBe(200)
    // The stranger's own count is not the account's: it stays until its window ends.
    expect((await signIn(server.url, user.email, "wrong password guess", stranger)).status).toBe(429)
  })

  it("guessing from many addresses exhausts the account's count, but not for the addresses the account signed in from", async () => {
    const user = await Http.signUp(small.url, "Target")
    const home = newAddress()
    expect((await signIn(small.url, user.email, user.password, home)).status).toBe(200)
    // Three strangers, three guesses each: the third one's first guess is past the account's six.
    const [s1, s2, s3] = [newAddress(), newAddress(), newAddress()]
    expect(await statuses(4, () => signIn(small.url, user.email, "wrong password guess", s1))).toEqual([401, 401, 401, 429])
    expect(await statuses(3, () => signIn(small.url, user.email, "wrong password guess", s2))).toEqual([401, 401, 401])
    expect((await signIn(small.url, user.email, "wrong password guess", s3)).status).toBe(429)
    // Even the right password, from an address the account never signed in from.
    expect((await signIn(small.url, user.email, user.password, newAddress())).status).toBe(429)
    // Its own address keeps signing in (and its success clears the account's count for everyone).
    expect((await signIn(small.url, user.email, user.password, home)).status).toBe(200)
    expect((await signIn(small.url, user.email, "wrong password guess", s3)).status).toBe(401)
  })

  it("one address trying many accounts (credential stuffing) is stopped, and other addresses are not", async () => {
    const address = newAddress()
    const tried = await statuses(7, () => signIn(small.url, `stuffed.${Math.random().toString(36).slice(2)}@example.com`, "leaked password", address))
    expect(tried).toEqual([...repeat(5, 401), 429, 429])
    const user = await Http.signUp(small.url, "Stuffed")
    expect((await signIn(small.url, user.email, user.password, address)).status).toBe(429)
    expect((await signIn(small.url, user.email, user.password, newAddress())).status).toBe(200)
  })

  it("successful sign-ins from one address do not count against it", async () => {
    const address = newAddress()
    const user = await Http.signUp(small.url, "Office")
    expect(await statuses(8, () => signIn(small.url, user.email, user.password, address))).toEqual(repeat(8, 200))
    const other = await Http.signUp(small.url, "Colleague")
    expect(await statuses(4, () => signIn(small.url, other.email, "wrong password guess", address))).toEqual([401, 401, 401, 429])
  })

  it("the audit log's failed sign-ins show the throttling: once per address and window, with the address", async () => {
    const org = await Http.owner(server.url, "Watched")
    const address = newAddress()
    const seen = await statuses(14, () => signIn(server.url, org.email, "wrong password guess", address, "guesser/2"))
    expect(seen).toEqual([...repeat(10, 401), ...repeat(4, 429)])
    const { audit } = calls(server.url)
    const events = ok(await audit.listEvents({ token: org.token, query: { action: "session.create", outcome: "failed", limit: "100" } }), 200).items
    expect(events.filter((event) => event.reason === "invalid_password").length).toBe(10)
    const throttled = events.filter((event) => event.reason === "rate_limited")
    expect(throttled).toHaveLength(1)
    expect(throttled[0]).toMatchObject({
      outcome: "failed",
      category: "security",
      actor: { type: "user", id: org.user.id },
      via: { ip: address, userAgent: "guesser/2" },
      targets: [{ type: "user", id: org.user.id }]
    })
  })

  it("counts an IPv6 address by its /64: a guesser cannot step to the next address of its block", async () => {
    const user = await Http.signUp(small.url, "Six")
    const seen = await statuses(4, () => signIn(small.url, user.email, "wrong password guess", `2001:db8:${addresses}:1::${Math.floor(Math.random() * 0xffff).toString(16)}`))
    expect(seen).toEqual([401, 401, 401, 429])
    expect((await signIn(small.url, user.email, user.password, `2001:db8:${++addresses}:1::1`)).status).toBe(200)
  })

  it("the hourly job deletes the counts of windows that ended, and keeps the running ones", async () => {
    const shared = await TestServer.startSharingDatabase({ trustProxy: true })
    try {
      const user = await Http.signUp(shared.url, "Expired")
      expect((await signIn(shared.url, user.email, "wrong password guess", newAddress())).status).toBe(401)
      const count = () => shared.sql((sql) => Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM rate_limits`, ([row]) => row!.n))
      // The sign-up's address (sign-ups are limited per address), then the sign-in's pair, email and address.
      expect(await count()).toBe(4)
      expect(await shared.sql((sql) => RateLimits.deleteExpired({ now: new Date() }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))).toBe(0)
      expect(await count()).toBe(4)
      const later = new Date(Date.now() + Duration.toMillis(RateLimits.LONGEST_WINDOW) + 60_000)
      expect(await shared.sql((sql) => RateLimits.deleteExpired({ now: later }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))).toBe(4)
      expect(await count()).toBe(0)
    } finally {
      await shared.close()
    }
  })

  it("reads addresses into their blocks", () => {
    expect(addressBlock("203.0.113.9")).toBe("203.0.113.9")
    expect(addressBlock("::ffff:203.0.113.9")).toBe("203.0.113.9")
    expect(addressBlock("2001:db8:a:b:c:d:e:f")).toBe("2001:db8:a:b::/64")
    expect(addressBlock("2001:0DB8:000a::1")).toBe("2001:db8:a:0::/64")
    expect(addressBlock("2001:db8::")).toBe("2001:db8:0:0::/64")
    expect(addressBlock("::1")).toBe("0:0:0:0::/64")
    expect(addressBlock("fe80::1%eth0")).toBe("fe80:0:0:0::/64")
    expect(addressBlock("64:ff9b::192.0.2.33")).toBe("64:ff9b:0:0::/64")
    expect(addressBlock("unknown")).toBe("unknown")
  })

  it("the OpenAPI document declares the 429 of sign-in", async () => {
    const document = objectAt(Http.expectStatus("document", await Http.request(server.url, "GET", "/openapi.json"), 200), "the OpenAPI document")
    const signInPath = objectAt(objectAt(document["paths"], "its paths")["/v1/auth/sign-in"], "/v1/auth/sign-in")
    const signInOperation = objectAt(signInPath["post"], "its POST operation")
    expect(objectAt(signInOperation["responses"], "its responses")["429"]).toBeDefined()
    expect(signInOperation["description"]).toContain("429 `rate_limited`")
  })
})
