/**
 * Password sign-in throttling across server processes on one Postgres database (Postgres only: the embedded database
 * is one process's). Two servers share one count: guesses alternating between them, or fired at both at once, get
 * exactly as many password checks as the limit allows, and a success on one clears the count the other reads.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import { afterAll, describe, expect, it } from "vitest"
import * as SharedPostgres from "../support/SharedPostgres.js"

const cleanup: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const step of cleanup.reverse()) await step()
}, 60_000)

const signIn = (url: string, email: string, password: string, address: string) =>
  Http.request(url, "POST", "/v1/auth/sign-in", { body: { email, password }, headers: { "x-forwarded-for": address } })

const count = (statuses: ReadonlyArray<number>, status: number) => statuses.filter((seen) => seen === status).length

describe.skipIf(!TestDatabase.onPostgres)("password sign-in throttling across server processes (Postgres)", () => {
  it("two servers share one count: alternating guesses, then guesses at once, get ten password checks in all", async () => {
    // The client address is read from X-Forwarded-For, as behind a proxy.
    const shared = await SharedPostgres.start(2, { trustProxy: true })
    cleanup.push(shared.close)
    const [a, b] = [shared.servers[0]!, shared.servers[1]!]
    const user = await Http.signUp(a.url, "Shared")

    // One after another, alternating servers: ten answered, then refused on both.
    const alternating: Array<number> = []
    for (let i = 0; i < 14; i++) alternating.push((await signIn(i % 2 === 0 ? a.url : b.url, user.email, "wrong password guess", "198.51.100.1")).status)
    expect(alternating).toEqual([...Array(10).fill(401), ...Array(4).fill(429)])

    // A success on one server clears the count the other reads (from another address: this one's pair is spent).
    expect((await signIn(b.url, user.email, user.password, "198.51.100.2")).status).toBe(200)

    // Thirty guesses from one new address, all at once, across both servers: exactly ten get a password check.
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) =>
      signIn(i % 2 === 0 ? a.url : b.url, user.email, "wrong password guess", "198.51.100.3").then((answer) => answer.status)))
    expect(count(burst, 401)).toBe(10)
    expect(count(burst, 429)).toBe(20)
  }, 120_000)
})
