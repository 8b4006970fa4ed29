/**
 * Sign-up limited per client address (issue 44 item 4): every attempt counts, a taken email's 409 included, so the
 * `email_taken` answer cannot test a list of emails faster than the limit, nor sign-up make accounts in bulk. Past the
 * limit the answer is 429 `rate_limited` with `Retry-After`; other addresses are not affected; an IPv6 /64 is one
 * address; the window ends. Client addresses come from `X-Forwarded-For` (the server trusts it).
 */
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const clock = new TestServer.ShiftedClock()
let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ trustProxy: true, clock, signUpsPerHour: 3 })
})
afterAll(async () => {
  await server?.close()
})

const { invitations } = calls(() => server.url)

let emails = 0
const newEmail = () => `probe.${++emails}.${Math.random().toString(36).slice(2, 8)}@example.com`

const signUp = (email: string, address: string) =>
  Http.request(server.url, "POST", "/v1/auth/sign-up", {
    body: { email, password: "correct horse battery", name: "Prober" },
    headers: { "x-forwarded-for": address }
  })

describe("sign-up throttling", () => {
  it("fifty sign-ups probing emails from one address: the fourth on is 429 with Retry-After, taken emails counted alike; another address still signs up", async () => {
    const taken = newEmail()
    expect((await signUp(taken, "198.51.100.7")).status).toBe(201)
    const seen: Array<number> = []
    for (let i = 0; i < 50; i++) seen.push((await signUp(i % 2 === 0 ? taken : newEmail(), "198.51.100.7")).status)
    expect(seen.slice(0, 2)).toEqual([409, 201])
    expect(new Set(seen.slice(2))).toEqual(new Set([429]))

    const refused = await signUp(newEmail(), "198.51.100.7")
    expect(refused.body).toEqual({ error: "rate_limited", message: expect.stringMatching(/^Too many sign-ups from this address; retry in \d+ seconds\.$/) })
    const retryAfter = Number(refused.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(3500)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    // Refused before the email is looked at: a taken one is answered alike.
    expect((await signUp(taken, "198.51.100.7")).status).toBe(429)

    expect((await signUp(newEmail(), "198.51.100.8")).status).toBe(201)

    clock.advance(`${retryAfter} seconds`)
    expect((await signUp(newEmail(), "198.51.100.7")).status).toBe(201)
  })

  it("counts an IPv6 /64 as one address", async () => {
    const statuses: Array<number> = []
    for (let i = 1; i <= 5; i++) statuses.push((await signUp(newEmail(), `2001:db8:44:1::${i.toString(16)}`)).status)
    expect(statuses).toEqual([201, 201, 201, 429, 429])
    expect((await signUp(newEmail(), "2001:db8:44:2::1")).status).toBe(201)
  })

  it("counts an invitation accepted with signUp as a sign-up from its address: one's own invitations make no more accounts, nor tell more of them apart (issue 55, item 7)", async () => {
    const owner = await Http.owner(server.url, "Inviter")
    const taken = newEmail()
    expect((await signUp(taken, "198.51.100.20")).status).toBe(201)
    const accept = async (email: string, address: string) => {
      // A new invitation, or the email's pending one refreshed (its new token).
      const invited = await invitations.create({ token: owner.token, payload: { email, role: "member" } })
      expect([200, 201], invited.text).toContain(invited.status)
      const { inviteToken } = ok(invited, invited.status)
      if (inviteToken === null) throw new Error(`the invitation shows no token: ${invited.text}`)
      return invitations.accept({
        payload: { token: inviteToken, signUp: { name: "Invited", password: "correct horse battery" } },
        headers: { "x-forwarded-for": address }
      })
    }
    // From one address: its sign-up above, then two acceptances (an account made, an address that has one), then 429.
    const made = await accept(newEmail(), "198.51.100.20")
    const exists = await accept(taken, "198.51.100.20")
    expect([made.status, exists.status]).toEqual([200, 409])
    expect(ok(made, 200)).not.toHaveProperty("error")
    expect(refusal(exists, 409)).toMatchObject({ error: "account_exists" })
    const refused = await accept(newEmail(), "198.51.100.20")
    expect(refusal(refused, 429), refused.text).toMatchObject({ error: "rate_limited" })
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500)
    const probe = await accept(taken, "198.51.100.20")
    expect(refusal(probe, 429)).toMatchObject({ error: "rate_limited" })
    // And sign-up from there is refused too: one count. Another address accepts.
    expect((await signUp(newEmail(), "198.51.100.20")).status).toBe(429)
    expect((await accept(newEmail(), "198.51.100.21")).status).toBe(200)
  })
})
