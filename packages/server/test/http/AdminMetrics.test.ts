/**
 * GET /v1/admin/metrics: every member of the summary against answers computed by hand from a seeded instance, on a
 * server whose clock reads 2026-03-15T12:00Z (plus the test's running time), and who may read it.
 */
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const NOW = Date.parse("2026-03-15T12:00:00Z")

/** The instant `days` UTC days before 2026-03-15, at `time`. */
const day = (days: number, time = "12:00:00") => {
  const date = new Date(NOW - days * 86_400_000).toISOString().slice(0, 10)
  return `${date}T${time}Z`
}

let fixture: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let operator: Awaited<ReturnType<typeof Http.owner>>

/** Statements run one by one (the embedded database takes one statement per call). */
const run = (statements: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]>) =>
  fixture.sql((sql: SqlClient.SqlClient) => Effect.forEach(statements, ([text, params]) => sql.unsafe(text, params), { discard: true }))

const partition = (from: string, to: string) =>
  [
    `CREATE TABLE IF NOT EXISTS telemetry_events_p${from.slice(0, 7).replace("-", "")} PARTITION OF telemetry_events FOR VALUES FROM ('${from}-01T00:00:00Z') TO ('${to}-01T00:00:00Z')`,
    []
  ] as const

beforeAll(async () => {
  const clock = new TestServer.ShiftedClock()
  clock.offsetMillis = NOW - Date.now()
  fixture = await TestServer.startSharingDatabase({ clock })
  // The operator organization (its owner redeemed the setup token) and its owner, whose sign-up session is today's activity.
  operator = await Http.operator(fixture.url, "Operator")
  const op = operator.user.id
  const opOrg = operator.organization.id
  const opMembership = operator.membership.id
  const at = (iso: string) => iso
  const user = (id: string, email: string, createdAt: string) =>
    [`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ($1, $2, $1, 'x', $3, $3)`, [id, email, createdAt]] as const
  const org = (id: string, plan: string) =>
    [`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ($1, $1, $2, $3, $3)`, [id, plan, at("2025-09-01T00:00:00Z")]] as const
  const member = (id: string, organizationId: string, userId: string | null, role: string, removedAt: string | null = null) =>
    [
      `INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at, removed_at) VALUES ($1, $2, $3, $4, $5, $5, $6)`,
      [id, organizationId, userId, role, "2025-09-01T00:00:00Z", removedAt]
    ] as const
  const session = (id: string, userId: string, createdAt: string) =>
    [
      `INSERT INTO sessions (id, user_id, token_hash, created_at, expires_at) VALUES ($1, $2, $1, $3, $4)`,
      [id, userId, createdAt, "2030-01-01T00:00:00Z"]
    ] as const
  let events = 0
  const event = (organizationId: string, membershipId: string, userId: string | null, type: string, occurredAt: string, sessionId: string | null) =>
    [
      `INSERT INTO telemetry_events (organization_id, id, membership_id, user_id, event_type, occurred_at, source, session_id, received_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'app', $7, $6)`,
      [organizationId, `tev_${++events}`, membershipId, userId, type, occurredAt, sessionId]
    ] as const
  const worker = (id: string, organizationId: string, userId: string, destination: string, deletedAt: string | null = null) =>
    [
      `INSERT INTO workers (id, organization_id, created_by_user_id, name, destination, status, created_at, updated_at, deleted_at)
       VALUES ($1, $2, $3, $1, $4, 'ready', $5, $5, $6)`,
      [id, organizationId, userId, destination, "2026-01-01T00:00:00Z", deletedAt]
    ] as const
  const invitation = (id: string, organizationId: string, membershipId: string, createdAt: string) =>
    [
      `INSERT INTO invitations (id, organization_id, email, role, token_hash, delivery, status, created_by_membership_id, created_at, updated_at, expires_at)
       VALUES ($1, $2, $1 || '@example.com', 'member', $1, 'shown', 'pending', $3, $4, $4, '2030-01-01T00:00:00Z')`,
      [id, organizationId, membershipId, createdAt]
    ] as const
  const sso = (organizationId: string, domain: string, verifiedAt: string | null) =>
    [
      `INSERT INTO sso_domains (organization_id, domain, verified_at, created_at, updated_at)
       VALUES ($1, $2, $3, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`,
      [organizationId, domain, verifiedAt]
    ] as const

  await run([
    partition("2025-12", "2026-01"),
    partition("2026-01", "2026-02"),
    partition("2026-02", "2026-03"),
    partition("2026-03", "2026-04"),
    [`UPDATE users SET created_at = '2025-10-01T00:00:00Z' WHERE id = $1`, [op]],
    [`UPDATE organizations SET plan = 'free' WHERE id = $1`, [opOrg]],
    // People: created on known instants around the 7- and 30-day limits (now − 7d = 03-08 12:00, now − 30d = 02-13 12:00).
    user("u1", "u1@example.com", "2025-11-01T00:00:00Z"),
    user("u2", "u2@example.com", day(0, "08:00:00")),
    user("u3", "u3@example.com", day(5, "10:00:00")),
    user("u4", "u4@example.com", day(7, "11:00:00")),
    user("u5", "u5@acme.test", day(29, "13:00:00")),
    user("u6", "u6@ACME.test", day(30, "11:00:00")),
    user("u7", "u7@acme.test", "2026-01-01T00:00:00Z"),
    user("u8", "u8@free.test", "2026-01-01T00:00:00Z"),
    user("u9", "u9@acme.test", "2026-01-01T00:00:00Z"),
    user("u10", "u10@example.com", day(1, "23:30:00")),
    org("org_team", "team"),
    org("org_ent", "enterprise"),
    org("org_free", "free"),
    // The operator organization: an admin, a member, a removed admin.
    member("m_op_u1", opOrg, "u1", "admin"),
    member("m_op_u2", opOrg, "u2", "member"),
    member("m_op_u3", opOrg, "u3", "admin", "2026-03-01T00:00:00Z"),
    // Team plan: u2 and u4 active, u1 removed.
    member("m_team_u4", "org_team", "u4", "owner"),
    member("m_team_u2", "org_team", "u2", "member"),
    member("m_team_u1", "org_team", "u1", "member", "2026-02-01T00:00:00Z"),
    // Enterprise plan with the verified domain acme.test: u5 and u6 active, u7 removed.
    member("m_ent_u5", "org_ent", "u5", "owner"),
    member("m_ent_u6", "org_ent", "u6", "member"),
    member("m_ent_u7", "org_ent", "u7", "member", "2026-02-01T00:00:00Z"),
    sso("org_ent", "acme.test", "2026-01-02T00:00:00Z"),
    // Free plan with an unverified domain; u9's domain is verified, but by an organization u9 is not in.
    member("m_free_u8", "org_free", "u8", "owner"),
    member("m_free_u9", "org_free", "u9", "member"),
    member("m_free_setup", "org_free", null, "owner"),
    sso("org_free", "free.test", null),
    // Workers: the deleted one is not counted.
    worker("wrk_1", opOrg, "u1", "cloud"),
    worker("wrk_2", opOrg, "u1", "local"),
    worker("wrk_3", "org_ent", "u5", "cloud"),
    worker("wrk_4", "org_free", "u8", "local", "2026-03-01T00:00:00Z"),
    worker("wrk_5", "org_free", "u9", "local"),
    // Invitations: first ones 5.5 h (op), 48.33 h (u1), before the account (u5: 0) and 3.83 h (u8) after sign-up.
    invitation("i_op_1", opOrg, opMembership, "2025-10-01T05:30:00Z"),
    invitation("i_op_2", opOrg, opMembership, "2026-01-01T00:00:00Z"),
    invitation("i_u1", opOrg, "m_op_u1", "2025-11-03T00:20:00Z"),
    invitation("i_u5", "org_ent", "m_ent_u5", day(29, "12:00:00")),
    invitation("i_u8", "org_free", "m_free_u8", "2026-01-01T03:50:00Z"),
    invitation("i_setup", "org_free", "m_free_setup", "2026-01-01T00:00:00Z"),
    // Activity. u1: any event today, a task with a session 3 days ago.
    event(opOrg, "m_op_u1", "u1", "app.opened", day(0, "09:00:00"), null),
    event(opOrg, "m_op_u1", "u1", "task.completed", day(3, "10:00:00"), "s1"),
    // u2: a session at the last second of yesterday.
    session("ses_u2", "u2", day(1, "23:59:59")),
    // u3: a task at today's first instant; a task without a session 10 days ago (active, not task activity).
    event(opOrg, "m_op_u2", "u3", "task.started", day(0, "00:00:00"), "s3"),
    event(opOrg, "m_op_u2", "u3", "task.failed", day(10, "10:00:00"), null),
    // u4: a task on the series' first day, a session 60 days ago.
    event("org_team", "m_team_u4", "u4", "task.completed", day(29, "00:30:00"), "s4"),
    session("ses_u4", "u4", day(60)),
    // u5: two sessions on one day, the day before the series.
    session("ses_u5a", "u5", day(30, "12:00:00")),
    session("ses_u5b", "u5", day(30, "20:00:00")),
    // u6: a session on the 7-day window's first day, an event on the 90-day window's first day.
    session("ses_u6", "u6", day(6, "05:00:00")),
    event("org_ent", "m_ent_u6", "u6", "app.opened", day(89, "01:00:00"), null),
    // u7: a session the day before the 7-day window, an event the day before the 90-day window.
    session("ses_u7", "u7", day(7, "23:00:00")),
    event("org_ent", "m_ent_u7", "u7", "app.opened", day(90, "23:00:00"), null),
    // u8: two tasks on one day.
    event("org_free", "m_free_u8", "u8", "task.started", day(2, "10:00:00"), "s8"),
    event("org_free", "m_free_u8", "u8", "task.completed", day(2, "11:00:00"), "s8"),
    // Not counted: an event without a person, and one after today.
    event("org_free", "m_free_setup", null, "worker.heartbeat", day(0, "10:00:00"), null),
    event(opOrg, "m_op_u2", "u10", "app.opened", "2026-03-16T00:00:00Z", null)
  ])
})
afterAll(() => fixture.close())

describe("GET /v1/admin/metrics", () => {
  it("answers every member of the summary as defined, from a seeded instance", async () => {
    const response = await calls(fixture.url).admin.metrics({ token: operator.token })
    expect(response.status).toBe(200)
    const { summary, generatedAt } = ok(response, 200)
    expect(generatedAt).toMatch(/^2026-03-15T12:\d{2}:\d{2}\.\d{3}Z$/)
    const { activitySeries, ...counts } = summary
    expect(counts).toEqual({
      totalUsers: 11,
      totalOrganizations: 4,
      verifiedUsers: 2,
      recentUsers7d: 3,
      recentUsers30d: 5,
      totalWorkers: 4,
      cloudWorkers: 2,
      localWorkers: 2,
      usersWithWorkers: 3,
      usersWithoutWorkers: 8,
      paidUsers: 4,
      unpaidUsers: 7,
      billingUnavailableUsers: 0,
      adminCount: 2,
      activeUsers1d: 3,
      activeUsers7d: 6,
      activeUsers30d: 8,
      realActiveUsers1d: 1,
      realActiveUsers7d: 3,
      realActiveUsers30d: 4,
      recurringUsers: 4,
      inviters: 4,
      medianHoursToFirstInvite: 4.65,
      billingLoaded: true
    })
    const expected: Record<string, [number, number, number]> = {
      "2026-03-15": [3, 1, 1],
      "2026-03-14": [1, 0, 1],
      "2026-03-13": [1, 1, 0],
      "2026-03-12": [1, 1, 0],
      "2026-03-10": [0, 0, 1],
      "2026-03-09": [1, 0, 0],
      "2026-03-08": [1, 0, 1],
      "2026-03-05": [1, 0, 0],
      "2026-02-14": [1, 1, 1]
    }
    expect(activitySeries).toHaveLength(30)
    expect(activitySeries[0]?.day).toBe("2026-02-14")
    expect(activitySeries[29]?.day).toBe("2026-03-15")
    expect(activitySeries).toEqual(
      Array.from({ length: 30 }, (_, index) => {
        const key = day(29 - index).slice(0, 10)
        const [activeUsers, realActiveUsers, signups] = expected[key] ?? [0, 0, 0]
        return { day: key, activeUsers, realActiveUsers, signups }
      })
    )
  })
})

describe("who may read the metrics", () => {
  let server: TestServer.RunningServer
  const clock = new TestServer.ShiftedClock()
  let owner: Awaited<ReturnType<typeof Http.owner>>
  beforeAll(async () => {
    server = await TestServer.start({ clock })
    owner = await Http.operator(server.url, "Operator")
  })
  afterAll(() => server.close())

  it("owners and admins of the operator organization, by session or API key; nobody else", async () => {
    const admin = await Http.join(server.url, owner.token, "admin", "Operator Admin")
    const member = await Http.join(server.url, owner.token, "member", "Operator Member")
    const customer = await Http.owner(server.url, "Customer")
    const { admin: operations, apiKeys } = calls(server.url)
    const key = ok(await apiKeys.create({ token: owner.token, payload: { name: "metrics" } }), 201).key
    for (const credentials of [{ token: owner.token }, { token: admin.token }, { apiKey: key }]) {
      const allowed = await operations.metrics(credentials)
      expect(allowed.status).toBe(200)
    }
    for (const token of [member.token, customer.token]) {
      const denied = await operations.metrics({ token })
      expect(denied.status).toBe(403)
      expect(denied.body).toEqual({ reason: "operator_only", message: "Only owners and admins of the operator organization may do this." })
    }
    const anonymous = await operations.metrics({})
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatchObject({ error: "unauthorized" })
  })

  it("answers a summary generated now, in UTC with Z, with a series of the 30 days ending that day, oldest first", async () => {
    const before = clock.currentTimeMillisUnsafe()
    const response = await calls(server.url).admin.metrics({ token: owner.token })
    const after = clock.currentTimeMillisUnsafe()
    expect(response.status).toBe(200)
    const { summary, generatedAt } = ok(response, 200)
    expect(generatedAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
    // Now on the server's clock: between the moments the request was sent and answered.
    expect(Date.parse(generatedAt)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(generatedAt)).toBeLessThanOrEqual(after)
    const today = Date.parse(`${generatedAt.slice(0, 10)}T00:00:00Z`)
    expect(summary.activitySeries.map((point) => point.day)).toEqual(
      Array.from({ length: 30 }, (_, index) => new Date(today - (29 - index) * 86_400_000).toISOString().slice(0, 10))
    )
    // The owner signed up and signed in (a session) today: a signup and an active person on the last point.
    expect(summary.activitySeries[29]?.signups).toBeGreaterThanOrEqual(1)
    expect(summary.activitySeries[29]?.activeUsers).toBe(summary.activeUsers1d)
    expect(summary.activeUsers1d).toBeGreaterThanOrEqual(1)
  })
})

describe("an instance where nobody has invited anyone yet", () => {
  let server: TestServer.RunningServer
  beforeAll(async () => {
    server = await TestServer.start()
  })
  afterAll(() => server.close())

  it("answers 0 median hours to the first invitation (a number, as the spec has it), with 0 inviters", async () => {
    const owner = await Http.operator(server.url, "Operator")
    const { admin } = calls(server.url)
    const before = await admin.metrics({ token: owner.token })
    expect(before.status).toBe(200)
    expect(ok(before, 200).summary).toMatchObject({ inviters: 0, medianHoursToFirstInvite: 0 })
    // The first invitation, made within the hour of signing up: one inviter, still 0 hours.
    await Http.join(server.url, owner.token, "member")
    const after = await admin.metrics({ token: owner.token })
    expect(ok(after, 200).summary).toMatchObject({ inviters: 1, medianHoursToFirstInvite: 0 })
  })
})
