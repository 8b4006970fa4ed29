/**
 * Who operates the instance (issue 43 item 2): never whoever arrives first. The operator organization comes from
 * configuration (`ORGPLANE_OPERATOR_ORGANIZATION_ID`) or from the one-time setup token (`ORGPLANE_SETUP_TOKEN`, or the
 * one the server prints at start-up when nothing names the operator), redeemed by an owner of a real organization;
 * a workspace bootstrapped anonymously never operates it. Each case on a fresh server, over HTTP.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Logger from "effect/Logger"
import { describe, expect, it } from "vitest"

const SETUP_TOKEN = "opsetup_operator-test-setup-token-0123456789"

const withServer = async (options: TestServer.Options, use: (url: string) => Promise<void>) => {
  const server = await TestServer.start(options)
  try {
    await use(server.url)
  } finally {
    await server.close()
  }
}

/** An anonymous agent's workspace, first on the instance, claimed as owner by a person who signed up. */
const bootstrapped = async (url: string) => {
  const { bootstrap } = calls(url)
  const workspace = ok(await bootstrap.workspace({ payload: { workspaceName: "Agent Space" } }), 201)
  const claimer = await Http.signUp(url, "Claimer")
  const [link] = workspace.claimLinks
  const claimed = await bootstrap.acceptClaim({ token: claimer.token, payload: { token: link.token } })
  expect(claimed.status, claimed.text).toBe(200)
  return { ...claimer, organizationId: workspace.organization.id }
}

const setPlan = (url: string, token: string, organizationId: string, plan: string) =>
  Http.request(url, "PATCH", `/v1/admin/organizations/${organizationId}/plan`, { token, body: { plan } })
const metrics = (url: string, token: string) => Http.request(url, "GET", "/v1/admin/metrics", { token })
const claim = (url: string, token: string, setupToken: string) => calls(url).admin.claimOperator({ token, payload: { setupToken } })

const operatorOnly = { reason: "operator_only", message: "Only owners and admins of the operator organization may do this." }

describe("the instance's operator", { timeout: 60_000 }, () => {
  it("is not a workspace bootstrapped anonymously and claimed, though it was the instance's first organization", () =>
    withServer({ setupToken: SETUP_TOKEN }, async (url) => {
      const claimer = await bootstrapped(url)
      const customer = await Http.owner(url, "Customer")
      const refused = await setPlan(url, claimer.token, customer.organization.id, "free")
      expect([refused.status, refused.body]).toEqual([403, operatorOnly])
      expect((await metrics(url, claimer.token)).status).toBe(403)
      // Nor does the setup token make it the operator: its claim links were an anonymous agent's to hand out.
      const ineligible = await claim(url, claimer.token, SETUP_TOKEN)
      expect([ineligible.status, ineligible.body]).toEqual([409, expect.objectContaining({ error: "operator_not_eligible" })])
      // The real operator, arriving later, still can.
      const operator = await Http.owner(url, "Operator")
      expect((await claim(url, operator.token, SETUP_TOKEN)).status).toBe(200)
      expect((await setPlan(url, operator.token, customer.organization.id, "enterprise")).status).toBe(200)
    }))

  it("is not the first organization created by sign-up either", () =>
    withServer({ setupToken: SETUP_TOKEN }, async (url) => {
      const first = await Http.owner(url, "First")
      const second = await Http.owner(url, "Second")
      expect((await setPlan(url, first.token, second.organization.id, "free")).status).toBe(403)
      expect((await metrics(url, first.token)).status).toBe(403)
    }))

  it("is the organization whose owner redeems the setup token, once: then it changes plans and reads metrics", () =>
    withServer({ setupToken: SETUP_TOKEN }, async (url) => {
      const operator = await Http.owner(url, "Operator")
      const customer = await Http.owner(url, "Customer")
      const wrong = await claim(url, operator.token, `${SETUP_TOKEN}x`)
      expect([wrong.status, wrong.body]).toEqual([403, expect.objectContaining({ reason: "setup_token_invalid" })])
      // An admin is not enough: the owner chooses the organization that operates the instance.
      const admin = await Http.join(url, operator.token, "admin", "Admin")
      const notOwner = await claim(url, admin.token, SETUP_TOKEN)
      expect([notOwner.status, notOwner.body]).toEqual([403, expect.objectContaining({ reason: "insufficient_role" })])

      const claimed = await claim(url, operator.token, SETUP_TOKEN)
      expect(claimed.status, claimed.text).toBe(200)
      expect(ok(claimed, 200).organization).toMatchObject({ id: operator.organization.id })
      expect((await setPlan(url, operator.token, customer.organization.id, "enterprise")).status).toBe(200)
      expect((await metrics(url, operator.token)).status).toBe(200)
      // The operator's admins operate it too; the customer does not.
      expect((await metrics(url, admin.token)).status).toBe(200)
      expect((await setPlan(url, customer.token, operator.organization.id, "free")).status).toBe(403)

      // The token worked once: nobody takes the instance with it again.
      const again = await claim(url, customer.token, SETUP_TOKEN)
      expect([again.status, again.body]).toEqual([409, expect.objectContaining({ error: "operator_exists" })])
      // The operator's log says who made it the operator, and who tried before (newest first).
      const organization = { type: "organization", id: operator.organization.id }
      const events = ok(await calls(url).audit.listEvents({ query: { action: "instance.operator.claim" }, token: operator.token }), 200).items
      expect(events.map((event) => [event.outcome, event.actor.id, event.reason, event.targets])).toEqual([
        ["succeeded", operator.user.id, null, [organization]],
        ["denied", admin.user.id, "insufficient_role", [organization]],
        ["denied", operator.user.id, "setup_token_invalid", [organization]]
      ])
    }))

  it("is claimed with the token the server logs at its start when nothing names the operator", async () => {
    const lines: Array<string> = []
    const logger = Logger.make(({ message }) => lines.push((Array.isArray(message) ? message : [message]).join(" ")))
    await withServer({ setupToken: undefined, logger }, async (url) => {
      const line = lines.find((text) => text.includes("admin claim-operator"))
      expect(line, lines.join("\n")).toBeDefined()
      const printed = /admin claim-operator ([^\s`]+)/.exec(line!)![1]!
      const operator = await Http.owner(url, "Operator")
      expect((await claim(url, operator.token, "opsetup_not-the-printed-one-0123456789abcdef")).status).toBe(403)
      expect((await claim(url, operator.token, printed)).status).toBe(200)
      expect((await metrics(url, operator.token)).status).toBe(200)
    })
  })

  it("acts on its plain members' and other organizations' accounts by its admins, on its owners and admins by its owners only", () =>
    withServer({ setupToken: SETUP_TOKEN }, async (url) => {
      const owner = await Http.operator(url, "Operator", SETUP_TOKEN)
      const admin = await Http.join(url, owner.token, "admin", "Admin")
      const otherAdmin = await Http.join(url, owner.token, "admin", "Other Admin")
      const otherOwner = await Http.join(url, owner.token, "admin", "Other Owner")
      const member = await Http.join(url, owner.token, "member", "Member")
      expect((await Http.request(url, "PATCH", `/v1/members/${otherOwner.membership.id}`, { token: owner.token, body: { role: "owner" } })).status).toBe(200)
      const customer = await Http.owner(url, "Customer")
      const act = (token: string, userId: string, what: "disable" | "enable" | "password-reset" | "delete") =>
        what === "delete"
          ? Http.request(url, "DELETE", `/v1/admin/users/${userId}`, { token })
          : Http.request(url, "POST", `/v1/admin/users/${userId}/${what}`, { token })

      // An admin of the operator organization: not on its owners and admins, whatever the operation (the reset
      // refused it already).
      for (const target of [owner, otherOwner, otherAdmin]) {
        for (const what of ["disable", "enable", "password-reset", "delete"] as const) {
          const refused = await act(admin.token, target.user.id, what)
          expect([refused.status, refused.body], `${what} ${target.user.name}: ${refused.text}`).toEqual([403, expect.objectContaining({ reason: "insufficient_role" })])
        }
      }
      expect((await Http.request(url, "POST", "/v1/auth/sign-in", { body: { email: owner.email, password: owner.password } })).status).toBe(200)
      // On its plain members and on other organizations' people, all of it.
      for (const target of [member, customer]) {
        expect((await act(admin.token, target.user.id, "disable")).status).toBe(200)
        expect((await act(admin.token, target.user.id, "enable")).status).toBe(200)
        expect((await act(admin.token, target.user.id, "password-reset")).status).toBe(201)
      }
      expect((await act(admin.token, member.user.id, "delete")).status).toBe(200)
      // An owner: on its admins and on its other owners too.
      for (const target of [otherAdmin, otherOwner]) {
        expect((await act(owner.token, target.user.id, "disable")).status).toBe(200)
        expect((await act(owner.token, target.user.id, "enable")).status).toBe(200)
      }
      expect((await act(owner.token, otherAdmin.user.id, "delete")).status).toBe(200)
    }))

  it("lists the instance's accounts and organizations with an admin's key only when a scope names it", () =>
    withServer({ setupToken: SETUP_TOKEN }, async (url) => {
      const owner = await Http.operator(url, "Operator", SETUP_TOKEN)
      const admin = await Http.join(url, owner.token, "admin", "Admin")
      const made = Http.expectStatus<{ key: string; apiKey: { scopes: Array<string> } }>(
        "a key",
        await Http.request(url, "POST", "/v1/api-keys", { token: admin.token, body: { name: "dashboard" } }),
        201
      )
      expect(made.apiKey.scopes).toContain("admin.readMetrics")
      for (const path of ["/v1/admin/users", "/v1/admin/organizations"]) {
        const refused = await Http.request(url, "GET", path, { apiKey: made.key })
        expect([refused.status, refused.body], path).toEqual([403, expect.objectContaining({ reason: "insufficient_scope" })])
      }
      // The instance's counts stay a default key's.
      expect((await Http.request(url, "GET", "/v1/admin/metrics", { apiKey: made.key })).status).toBe(200)
      const named = Http.expectStatus<{ key: string }>(
        "a key naming them",
        await Http.request(url, "POST", "/v1/api-keys", { token: admin.token, body: { name: "people", scopes: ["admin.readUsers", "admin.readOrganizations"] } }),
        201
      )
      for (const path of ["/v1/admin/users", "/v1/admin/organizations"]) {
        expect((await Http.request(url, "GET", path, { apiKey: named.key })).status, path).toBe(200)
      }
    }))

  it("changes a plan after a recent sign-in only, as its other writes", async () => {
    const clock = new TestServer.ShiftedClock()
    await withServer({ setupToken: SETUP_TOKEN, clock }, async (url) => {
      const operator = await Http.operator(url, "Operator", SETUP_TOKEN)
      const customer = await Http.owner(url, "Customer")
      clock.advance("3 hours")
      const stale = await setPlan(url, operator.token, customer.organization.id, "enterprise")
      expect([stale.status, stale.body], stale.text).toEqual([403, expect.objectContaining({ reason: "recent_authentication_required" })])
      const signedIn = Http.expectStatus<{ session: { token: string } }>(
        "signing in again",
        await Http.request(url, "POST", "/v1/auth/sign-in", { body: { email: operator.email, password: operator.password } }),
        200
      )
      expect((await setPlan(url, signedIn.session.token, customer.organization.id, "enterprise")).status).toBe(200)
    })
  })

  it("takes ten setup token guesses an hour from one address and a hundred from all, then answers 429 with Retry-After", () =>
    withServer({ setupToken: SETUP_TOKEN, trustProxy: true }, async (url) => {
      const operator = await Http.owner(url, "Operator")
      const from = (address: string, setupToken: string) =>
        Http.request(url, "POST", "/v1/admin/operator", { token: operator.token, headers: { "x-forwarded-for": address }, body: { setupToken } })
      for (let guess = 0; guess < 10; guess++) {
        const wrong = await from("198.51.100.1", `opsetup_guess-${guess}-0123456789abcdefghijklmnop`)
        expect([wrong.status, wrong.body]).toEqual([403, expect.objectContaining({ reason: "setup_token_invalid" })])
      }
      const throttled = await from("198.51.100.1", SETUP_TOKEN)
      expect([throttled.status, throttled.body], throttled.text).toEqual([429, expect.objectContaining({ error: "rate_limited" })])
      expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(3500)
      // Spread over addresses, a hundred in all (ten already counted).
      for (let guess = 0; guess < 90; guess++) {
        const wrong = await from(`198.51.100.${10 + Math.floor(guess / 9)}`, `opsetup_spread-${guess}-0123456789abcdefghijklmnop`)
        expect(wrong.status, wrong.text).toBe(403)
      }
      const everywhere = await from("203.0.113.7", SETUP_TOKEN)
      expect([everywhere.status, everywhere.body], everywhere.text).toEqual([429, expect.objectContaining({ error: "rate_limited" })])
    }))
})
