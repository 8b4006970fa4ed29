/**
 * Who operates the instance (issue 43 item 2): never whoever arrives first. The operator organization comes from
 * configuration (`ORGPLANE_OPERATOR_ORGANIZATION_ID`) or from the one-time setup token (`ORGPLANE_SETUP_TOKEN`, or the
 * one the server prints at start-up when nothing names the operator), redeemed by an owner of a real organization;
 * a workspace bootstrapped anonymously never operates it. Each case on a fresh server, over HTTP.
 */
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
  const workspace = await Http.request(url, "POST", "/v1/bootstrap/workspace", { body: { workspaceName: "Agent Space" } })
  expect(workspace.status, workspace.text).toBe(201)
  const claimer = await Http.signUp(url, "Claimer")
  const claimed = await Http.request(url, "POST", "/v1/bootstrap/claims/accept", { token: claimer.token, body: { token: workspace.body.claimLinks[0].token } })
  expect(claimed.status, claimed.text).toBe(200)
  return { ...claimer, organizationId: workspace.body.organization.id as string }
}

const setPlan = (url: string, token: string, organizationId: string, plan: string) =>
  Http.request(url, "PATCH", `/v1/admin/organizations/${organizationId}/plan`, { token, body: { plan } })
const metrics = (url: string, token: string) => Http.request(url, "GET", "/v1/admin/metrics", { token })
const claim = (url: string, token: string, setupToken: string) =>
  Http.request(url, "POST", "/v1/admin/operator", { token, body: { setupToken } })

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
      expect([ineligible.status, ineligible.body.error]).toEqual([409, "operator_not_eligible"])
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
      expect([wrong.status, wrong.body.reason]).toEqual([403, "setup_token_invalid"])
      // An admin is not enough: the owner chooses the organization that operates the instance.
      const admin = await Http.join(url, operator.token, "admin", "Admin")
      const notOwner = await claim(url, admin.token, SETUP_TOKEN)
      expect([notOwner.status, notOwner.body.reason]).toEqual([403, "insufficient_role"])

      const claimed = await claim(url, operator.token, SETUP_TOKEN)
      expect(claimed.status, claimed.text).toBe(200)
      expect(claimed.body.organization).toMatchObject({ id: operator.organization.id })
      expect((await setPlan(url, operator.token, customer.organization.id, "enterprise")).status).toBe(200)
      expect((await metrics(url, operator.token)).status).toBe(200)
      // The operator's admins operate it too; the customer does not.
      expect((await metrics(url, admin.token)).status).toBe(200)
      expect((await setPlan(url, customer.token, operator.organization.id, "free")).status).toBe(403)

      // The token worked once: nobody takes the instance with it again.
      const again = await claim(url, customer.token, SETUP_TOKEN)
      expect([again.status, again.body.error]).toEqual([409, "operator_exists"])
      // The operator's log says who made it the operator, and who tried before (newest first).
      const organization = { type: "organization", id: operator.organization.id }
      const events = (await Http.request(url, "GET", "/v1/audit/events?action=instance.operator.claim", { token: operator.token })).body.items
      expect(events.map((event: any) => [event.outcome, event.actor.id, event.reason, event.targets])).toEqual([
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
})
