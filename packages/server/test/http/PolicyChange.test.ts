/**
 * A change to the policy table reaches every check as a 403: actions every member may take today (memory, telemetry,
 * the MCP presets, suite connections and capabilities) are checked by the same typed `authorize` as the others, so
 * raising one to `admin` refuses members with 403 `insufficient_role` (not a 500) while admins still get through.
 */
import { type Action, Policy } from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
let org: Awaited<ReturnType<typeof Http.staffed>>
beforeAll(async () => {
  server = await TestServer.start()
  org = await Http.staffed(server.url, "Policy")
})
afterAll(() => server.close())

/** Runs `use` with `action` needing the admin role; the policy table is the server's own (one module in this process). */
const raised = async (action: Action, use: () => Promise<void>) => {
  const rule = Policy[action] as { role: string }
  const was = rule.role
  rule.role = "admin"
  try {
    await use()
  } finally {
    rule.role = was
  }
}

interface Case {
  readonly action: Action
  readonly method: "GET" | "POST" | "DELETE"
  readonly path: string
  readonly body?: unknown
}

const cases: ReadonlyArray<Case> = [
  { action: "organizations.read", method: "GET", path: "/v1/organization" },
  { action: "memory.use", method: "GET", path: "/v1/memory" },
  { action: "memory.use", method: "POST", path: "/v1/memory", body: { content: "Deploys go out on Tuesdays." } },
  {
    action: "telemetry.ingest",
    method: "POST",
    path: "/v1/telemetry/ingest",
    body: { events: [{ type: "user.active", timestamp: "2020-01-01T00:00:00Z" }] }
  },
  { action: "mcp.read", method: "GET", path: "/v1/mcp-connections/presets" },
  { action: "capabilities.use", method: "GET", path: "/v1/capabilities/suite-a/connection" },
  { action: "capabilities.use", method: "POST", path: "/v1/capabilities/suite-b/connection/connect" },
  { action: "capabilities.use", method: "DELETE", path: "/v1/capabilities/suite-a/connection" },
  { action: "capabilities.use", method: "GET", path: "/v1/capabilities/suite-a/mail-message/AAMkAD1" }
]

describe("an action raised to admin in the policy table", () => {
  it.each(cases.map((c) => [`${c.method} ${c.path}`, c] as const))("%s refuses members with 403 and lets admins past the check", async (_, c) => {
    const call = (token: string) => Http.request(server.url, c.method, c.path, { token, body: c.body })
    const before = await call(org.member.token)
    expect(before.status).not.toBe(403)
    await raised(c.action, async () => {
      const member = await call(org.member.token)
      expect([member.status, member.body]).toEqual([403, { reason: "insufficient_role", message: expect.stringContaining(c.action) }])
      const admin = await call(org.admin.token)
      expect(admin.status).not.toBe(403)
      expect(admin.status).toBeLessThan(500)
    })
    expect((await call(org.member.token)).status).toBe(before.status)
  })
})
