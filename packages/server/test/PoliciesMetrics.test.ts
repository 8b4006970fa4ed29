/**
 * policies/ (DesktopPolicies, DesktopPoliciesRepository, Effective) and admin/ (Metrics, MetricsRepository) as
 * services, on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL): what http/AdminMetrics,
 * DesktopPolicies and PolicyChange tests check through HTTP that lives in the services. Every figure of the admin
 * metrics against answers computed by hand from a seeded instance (`seedInstance`; so those tests come first: the
 * figures are instance-wide), and who may read them; the enterprise plan before the role, the default
 * policy, partial updates, soft deletion, another organization's members, teams and policies answering 404, the
 * effective policy decided setting by setting; a policy table raised to admin refusing members.
 */
import { expect, layer } from "@effect/vitest"
import {
  type CreateDesktopPolicyRequest,
  type DesktopPolicy,
  DesktopPolicyId,
  DesktopPolicySwitches,
  type MemberContext,
  Policy,
  type Action
} from "@orgplane/schema"
import * as Clock from "effect/Clock"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Metrics } from "../src/admin/Metrics.js"
import { Members } from "../src/members/Members.js"
import * as Config from "../src/platform/Config.js"
import { Crypto } from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import { CursorKey } from "../src/platform/Keyset.js"
import { DesktopPolicies } from "../src/policies/DesktopPolicies.js"
import { Teams } from "../src/teams/Teams.js"
import { clockAt } from "./support/Clocks.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Seeded from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const settings = Config.layer({ dataDir: "memory" }).pipe(
  Layer.provide(Layer.succeed(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: {} })))
)

const TestLayer = Layer.mergeAll(Metrics.layer, DesktopPolicies.layer, Teams.layer, Members.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(Crypto.layer, IdGenerator.layer)),
  Layer.provideMerge(settings),
  Layer.provideMerge(Db.layer)
)

/** The error an effect fails with, as its plain members (`_tag` and the body: Effect 4 keeps `message` off the object's own). */
const plain = (error: object): object => ({ ...error, ..."message" in error ? { message: error.message } : {} })
const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), plain)

const insufficientRole = { _tag: "Forbidden", reason: "insufficient_role" }

// ---------------------------------------------------------------------------------------------------------------------
// Admin metrics

const NOW = Date.parse("2026-03-15T12:00:00Z")
const started = Date.now()
/** The test's clock: 2026-03-15T12:00Z plus the test's running time. */
const atNow = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, Clock.Clock, clockAt(() => NOW + (Date.now() - started)))

/** The instant `days` UTC days before 2026-03-15, at `time`. */
const day = (days: number, time = "12:00:00") => {
  const date = new Date(NOW - days * 86_400_000).toISOString().slice(0, 10)
  return `${date}T${time}Z`
}

/** The operator organization and its owner, whose only activity is a session of today. */
const operatorOrganization = Seeded.organization("free")
const operatorOwner = Seeded.member(operatorOrganization, "owner")
const ensureOperator = Effect.fn("PoliciesMetrics.ensureOperator")(function*() {
  const sql = yield* SqlClient.SqlClient
  if ((yield* sql`SELECT 1 FROM organizations WHERE id = ${operatorOrganization.id}`).length > 0) return
  yield* Seeded.seed(operatorOwner)
  const sessionId = operatorOwner.credential._tag === "Session" ? operatorOwner.credential.sessionId : ""
  yield* sql`UPDATE sessions SET created_at = ${new Date(NOW)} WHERE id = ${sessionId}`
  yield* sql`UPDATE users SET created_at = ${new Date("2025-10-01T00:00:00Z")} WHERE id = ${operatorOwner.user.id}`
  yield* sql`INSERT INTO instance_settings (key, value) VALUES ('operator_organization_id', ${operatorOrganization.id})`
})

/** The seeded instance, statement by statement (the embedded database takes one statement per call). */
const seedInstance = Effect.fn("PoliciesMetrics.seedInstance")(function*() {
  const sql = yield* SqlClient.SqlClient
  const opOrg = operatorOrganization.id
  const opMembership = operatorOwner.membership.id
  const partition = (from: string, to: string) =>
    [
      `CREATE TABLE IF NOT EXISTS telemetry_events_p${from.slice(0, 7).replace("-", "")} PARTITION OF telemetry_events FOR VALUES FROM ('${from}-01T00:00:00Z') TO ('${to}-01T00:00:00Z')`,
      []
    ] as const
  const user = (id: string, email: string, createdAt: string) =>
    [`INSERT INTO users (id, email, name, password_hash, created_at, updated_at) VALUES ($1, $2, $1, 'x', $3, $3)`, [id, email, createdAt]] as const
  const org = (id: string, plan: string) =>
    [`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES ($1, $1, $2, $3, $3)`, [id, plan, "2025-09-01T00:00:00Z"]] as const
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
  const statements: ReadonlyArray<readonly [string, ReadonlyArray<unknown>]> = [
    partition("2025-12", "2026-01"),
    partition("2026-01", "2026-02"),
    partition("2026-02", "2026-03"),
    partition("2026-03", "2026-04"),
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
  ]
  yield* Effect.forEach(statements, ([text, params]) => sql.unsafe(text, params), { discard: true })
})

// ---------------------------------------------------------------------------------------------------------------------
// Desktop policies

const switches = [
  "allowCustomProviders",
  "allowPartnerModel",
  "allowMultipleWorkspaces",
  "allowControlSettings",
  "allowManageExtensions",
  "allowBuiltInExtensions",
  "allowAlphaUpdates",
  "showWelcomePage"
] as const

/** An organization with an owner, an admin and a member, their rows written. */
const staffed = Effect.fn("PoliciesMetrics.staffed")(function*(plan: "free" | "enterprise" = "enterprise") {
  const organization = Seeded.organization(plan)
  const owner = Seeded.member(organization, "owner")
  const admin = Seeded.member(organization, "admin")
  const member = Seeded.member(organization, "member")
  yield* Seeded.seed(owner, admin, member)
  return { organization, owner, admin, member }
})

const idOf = (caller: MemberContext) => caller.membership.id
const policyId = () => Schema.decodeUnknownSync(DesktopPolicyId)(Db.newId("dpo"))
const request = (input: CreateDesktopPolicyRequest) => input
const policyNotFound = { _tag: "NotFound", error: "desktop_policy_not_found", message: "Desktop policy not found." }

layer(TestLayer, { timeout: 300_000, excludeTestServices: true })(`admin metrics and desktop policies on ${TestDatabase.kind}`, (it) => {
  it.effect("metrics: 0 median hours with 0 inviters, then every member of the summary as defined, from a seeded instance", () =>
    atNow(Effect.gen(function*() {
      const metrics = yield* Metrics
      yield* ensureOperator()
      const before = yield* metrics.summary(operatorOwner)
      expect(before.summary).toMatchObject({ inviters: 0, medianHoursToFirstInvite: 0 })

      yield* seedInstance()
      const { generatedAt, summary } = yield* metrics.summary(operatorOwner)
      expect(generatedAt.toISOString()).toMatch(/^2026-03-15T12:\d{2}:\d{2}\.\d{3}Z$/)
      const { activitySeries, ...counts } = summary
      expect({ ...counts }).toEqual({
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
      expect(activitySeries.map((point) => ({ ...point }))).toEqual(
        Array.from({ length: 30 }, (_, index) => {
          const key = day(29 - index).slice(0, 10)
          const [activeUsers, realActiveUsers, signups] = expected[key] ?? [0, 0, 0]
          return { day: key, activeUsers, realActiveUsers, signups }
        })
      )
    })))

  it.effect("metrics: owners and admins of the operator organization, by session or API key, read them; nobody else", () =>
    atNow(Effect.gen(function*() {
      const metrics = yield* Metrics
      yield* ensureOperator()
      const admin = Seeded.member(operatorOrganization, "admin")
      const member = Seeded.member(operatorOrganization, "member")
      const key = Seeded.member(operatorOrganization, "admin", { apiKey: { scopes: null } })
      const customer = Seeded.member(Seeded.organization("team"), "owner")
      yield* Seeded.seed(admin, member, key, customer)
      const now = yield* Clock.currentTimeMillis
      for (const caller of [operatorOwner, admin, key]) {
        const { generatedAt, summary } = yield* metrics.summary(caller)
        // Generated now, with a series of the 30 days ending that day, oldest first.
        expect(generatedAt.getTime()).toBeGreaterThanOrEqual(now)
        const today = Date.parse(`${generatedAt.toISOString().slice(0, 10)}T00:00:00Z`)
        expect(summary.activitySeries.map((point) => point.day)).toEqual(
          Array.from({ length: 30 }, (_, index) => new Date(today - (29 - index) * 86_400_000).toISOString().slice(0, 10))
        )
      }
      for (const caller of [member, customer]) {
        expect(yield* failure(metrics.summary(caller))).toEqual({
          _tag: "Forbidden",
          reason: "operator_only",
          message: "Only owners and admins of the operator organization may do this."
        })
      }
    })))

  it.effect("policies without the enterprise plan: 402 on every management operation whatever the role; the effective policy is the built-in defaults", () =>
    Effect.gen(function*() {
      const policies = yield* DesktopPolicies
      const org = yield* staffed("free")
      const id = policyId()
      const planRequired = {
        _tag: "PlanRequired",
        error: "enterprise_plan_required",
        feature: "desktop_policies",
        message: "This feature (desktop_policies) needs the enterprise plan."
      }
      for (const who of [org.owner, org.member]) {
        expect(yield* failure(policies.create(who, request({ policyName: "P", policy: {} })))).toEqual(planRequired)
        expect(yield* failure(policies.list(who, {}))).toEqual(planRequired)
        expect(yield* failure(policies.get(who, id))).toEqual(planRequired)
        expect(yield* failure(policies.update(who, id, { policyName: "Q" }))).toEqual(planRequired)
        expect(yield* failure(policies.remove(who, id))).toEqual(planRequired)
      }
      const { effectivePolicy } = yield* policies.effective(org.member)
      expect(effectivePolicy.policy).toEqual({
        ...Object.fromEntries(switches.map((key) => [key, true])),
        onboardingPrompts: [],
        onboardingPromptDescriptions: []
      })
      expect(effectivePolicy.decidedBy.allowAlphaUpdates).toEqual({ desktopPolicyId: null, policyName: "Built-in defaults", via: "default" })
    }))

  it.effect("policies: a default policy, all switches on, that cannot be deleted, disabled or assigned; a new document keeps every switch", () =>
    Effect.gen(function*() {
      const policies = yield* DesktopPolicies
      const org = yield* staffed()
      const listed = yield* policies.list(org.admin, {})
      expect(listed.items).toHaveLength(1)
      const fallback = listed.items[0]!
      expect(fallback).toMatchObject({ isDefault: true, isEnabled: true, priority: 0, memberIds: [], teamIds: [], deletedAt: null })
      for (const key of switches) expect(fallback.policy[key]).toBe(true)

      expect(yield* failure(policies.remove(org.owner, fallback.id))).toEqual({
        _tag: "Conflict",
        error: "default_policy_required",
        message: "The default desktop policy cannot be deleted."
      })
      expect(yield* failure(policies.update(org.owner, fallback.id, { isEnabled: false }))).toEqual({
        _tag: "Conflict",
        error: "default_policy_required",
        message: "The default desktop policy cannot be disabled."
      })
      const assigned = yield* failure(policies.update(org.owner, fallback.id, { priority: 5, memberIds: [idOf(org.member)] }))
      expect(assigned).toMatchObject({ _tag: "InvalidRequest" })
      expect("details" in assigned && Array.isArray(assigned.details) ? assigned.details.map((detail: { path: unknown }) => detail.path) : []).toEqual([
        ["priority"],
        ["memberIds"]
      ])

      const changed = (yield* policies.update(org.owner, fallback.id, { policy: { allowAlphaUpdates: false } })).desktopPolicy
      expect(changed.policy).toMatchObject({ allowAlphaUpdates: false, allowCustomProviders: true, showWelcomePage: true })
      expect((yield* policies.list(org.admin, {})).items.map((item) => item.id)).toEqual([fallback.id])
    }))

  it.effect("policies: created, read, partially updated and soft-deleted by owners and admins, not members", () =>
    Effect.gen(function*() {
      const policies = yield* DesktopPolicies
      const teams = yield* Teams
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed()
      const team = (yield* teams.create(org.owner, { name: "Platform" })).team
      expect(yield* failure(policies.create(org.member, request({ policyName: "P", policy: {} })))).toMatchObject(insufficientRole)

      const created = (yield* policies.create(org.admin, request({
        policyName: "Locked down",
        policy: { allowCustomProviders: false, onboardingPrompts: ["Set up", "Explore"], onboardingPromptDescriptions: ["", "Look"] },
        memberIds: [idOf(org.member), idOf(org.member)],
        teamIds: [team.id, team.id]
      }))).desktopPolicy
      expect(created).toMatchObject({
        organizationId: org.organization.id,
        policyName: "Locked down",
        isDefault: false,
        isEnabled: true,
        priority: 0,
        policy: { allowCustomProviders: false, onboardingPrompts: ["Set up", "Explore"], onboardingPromptDescriptions: ["", "Look"] },
        memberIds: [idOf(org.member)],
        teamIds: [team.id],
        createdByOrgMembershipId: idOf(org.admin),
        deletedAt: null
      })
      expect(created.id).toMatch(/^dpo_[0-9a-z]{26}$/)
      expect((yield* policies.get(org.owner, created.id)).desktopPolicy).toEqual(created)

      // Only what is sent changes; assignments sent replace the old ones.
      const renamed = (yield* policies.update(org.owner, created.id, { policyName: "Strict" })).desktopPolicy
      expect(renamed).toMatchObject({ ...omitUpdatedAt(created), policyName: "Strict" })
      const reassigned = (yield* policies.update(org.owner, created.id, { memberIds: [idOf(org.admin)], priority: 7, isEnabled: false })).desktopPolicy
      expect(reassigned).toMatchObject({ policyName: "Strict", memberIds: [idOf(org.admin)], teamIds: [team.id], priority: 7, isEnabled: false })
      expect(reassigned.policy).toEqual(created.policy)
      expect((yield* policies.update(org.owner, created.id, { teamIds: [] })).desktopPolicy.teamIds).toEqual([])

      const listed = yield* policies.list(org.admin, {})
      expect(listed.items.map((item) => [item.isDefault, item.id])).toEqual([[true, expect.any(String)], [false, created.id]])

      // Soft deletion: gone from reads, the record kept with deleted_at.
      expect(yield* failure(policies.remove(org.member, created.id))).toMatchObject(insufficientRole)
      yield* policies.remove(org.admin, created.id)
      expect(yield* failure(policies.get(org.owner, created.id))).toEqual(policyNotFound)
      expect(yield* failure(policies.update(org.owner, created.id, { policyName: "Back" }))).toEqual(policyNotFound)
      expect(yield* failure(policies.remove(org.owner, created.id))).toEqual(policyNotFound)
      expect((yield* policies.list(org.admin, {})).items).toHaveLength(1)
      const rows = yield* sql<{ deletedAt: Date | null; isEnabled: boolean }>`
        SELECT deleted_at, is_enabled FROM desktop_policies WHERE organization_id = ${org.organization.id} AND id = ${created.id}`
      expect(rows).toHaveLength(1)
      expect(rows[0]?.deletedAt).toBeInstanceOf(Date)
      expect(rows[0]?.isEnabled).toBe(false)

      // Members read their effective policy, and nothing else.
      expect(yield* failure(policies.list(org.member, {}))).toMatchObject(insufficientRole)
      expect((yield* policies.effective(org.member)).effectivePolicy.policy.allowAlphaUpdates).toBe(true)
    }))

  it.effect("policies: 404 for another organization's members, teams and policies, naming the ids", () =>
    Effect.gen(function*() {
      const policies = yield* DesktopPolicies
      const teams = yield* Teams
      const a = yield* staffed()
      const b = yield* staffed()
      const bTeam = (yield* teams.create(b.owner, { name: "Beta team" })).team
      const foreignMembers = yield* failure(policies.create(a.owner, request({
        policyName: "P",
        policy: {},
        memberIds: [idOf(a.member), idOf(b.member), idOf(b.admin)]
      })))
      expect(foreignMembers).toEqual({
        _tag: "NotFound",
        error: "member_not_found",
        message: `Not active members of this organization: ${idOf(b.member)}, ${idOf(b.admin)}.`
      })
      expect(yield* failure(policies.create(a.owner, request({ policyName: "P", policy: {}, teamIds: [bTeam.id] })))).toEqual({
        _tag: "NotFound",
        error: "team_not_found",
        message: `Not teams of this organization: ${bTeam.id}.`
      })

      const bPolicy = (yield* policies.create(b.owner, request({ policyName: "B", policy: {} }))).desktopPolicy
      expect(yield* failure(policies.get(a.owner, bPolicy.id))).toEqual(policyNotFound)
      expect(yield* failure(policies.update(a.owner, bPolicy.id, { policyName: "Taken" }))).toEqual(policyNotFound)
      expect(yield* failure(policies.remove(a.owner, bPolicy.id))).toEqual(policyNotFound)
      expect((yield* policies.get(b.owner, bPolicy.id)).desktopPolicy).toEqual(bPolicy)
      expect((yield* policies.list(a.owner, {})).items.map((item) => item.id)).not.toContain(bPolicy.id)
    }))

  it.effect("policies: each switch resolved by priority (ties: older first) across direct and team assignments, then the default", () =>
    Effect.gen(function*() {
      const policies = yield* DesktopPolicies
      const teams = yield* Teams
      const org = yield* staffed()
      const me = org.member
      const team = (yield* teams.create(org.owner, { name: "Devs", memberIds: [idOf(me)] })).team
      const otherTeam = (yield* teams.create(org.owner, { name: "Others" })).team
      const create = (input: CreateDesktopPolicyRequest) => Effect.map(policies.create(org.owner, input), (created) => created.desktopPolicy)

      // Nothing assigned yet: the default decides everything.
      const before = (yield* policies.effective(me)).effectivePolicy
      const fallback = (yield* policies.list(org.owner, {})).items[0]!
      for (const key of switches) {
        expect(before.policy[key]).toBe(true)
        expect(before.decidedBy[key]).toEqual({ desktopPolicyId: fallback.id, policyName: fallback.policyName, via: "default" })
      }
      yield* policies.update(org.owner, fallback.id, { policy: { allowPartnerModel: false } })

      const direct = yield* create({ policyName: "Direct", priority: 10, policy: { allowAlphaUpdates: false }, memberIds: [idOf(me)] })
      const viaTeam = yield* create({
        policyName: "Team",
        priority: 10,
        policy: { allowAlphaUpdates: true, showWelcomePage: false, onboardingPrompts: ["Hello", "Next"], onboardingPromptDescriptions: ["Start here"] },
        teamIds: [team.id]
      })
      const higher = yield* create({ policyName: "Higher", priority: 20, policy: { allowCustomProviders: false }, teamIds: [team.id] })
      yield* create({ policyName: "Disabled", priority: 100, isEnabled: false, policy: { allowCustomProviders: true }, memberIds: [idOf(me)] })
      yield* create({ policyName: "Not mine", priority: 1000, policy: { allowManageExtensions: false }, teamIds: [otherTeam.id], memberIds: [idOf(org.admin)] })

      const effective = (yield* policies.effective(me)).effectivePolicy
      const source = (policy: DesktopPolicy, via: string) => ({ desktopPolicyId: policy.id, policyName: policy.policyName, via })
      expect(effective.policy).toEqual({
        allowCustomProviders: false,
        allowPartnerModel: false,
        allowMultipleWorkspaces: true,
        allowControlSettings: true,
        allowManageExtensions: true,
        allowBuiltInExtensions: true,
        allowAlphaUpdates: false,
        showWelcomePage: false,
        onboardingPrompts: ["Hello", "Next"],
        onboardingPromptDescriptions: ["Start here", ""]
      })
      expect(effective.decidedBy).toMatchObject({
        allowCustomProviders: source(higher, "team"),
        allowPartnerModel: { desktopPolicyId: fallback.id, via: "default" },
        allowManageExtensions: { desktopPolicyId: fallback.id, via: "default" },
        allowAlphaUpdates: source(direct, "member"),
        showWelcomePage: source(viaTeam, "team"),
        onboardingPrompts: source(viaTeam, "team")
      })

      // The admin gets "Not mine" directly; the owner only the default.
      const admin = (yield* policies.effective(org.admin)).effectivePolicy
      expect([admin.policy.allowManageExtensions, admin.decidedBy.allowManageExtensions.via]).toEqual([false, "member"])
      const owner = (yield* policies.effective(org.owner)).effectivePolicy
      expect(owner.policy).toMatchObject({ allowManageExtensions: true, allowPartnerModel: false, allowCustomProviders: true })

      // Without the older tie-winner, the team policy decides; leaving the team hands it to the default.
      yield* policies.remove(org.owner, direct.id)
      const afterDelete = (yield* policies.effective(me)).effectivePolicy
      expect([afterDelete.policy.allowAlphaUpdates, afterDelete.decidedBy.allowAlphaUpdates]).toEqual([true, source(viaTeam, "team")])
      yield* teams.update(org.owner, team.id, { memberIds: [] })
      const alone = (yield* policies.effective(me)).effectivePolicy
      expect(alone.policy).toMatchObject({ allowAlphaUpdates: true, allowCustomProviders: true, showWelcomePage: true, onboardingPrompts: [] })
      expect(alone.decidedBy.allowAlphaUpdates.via).toBe("default")
      expect(DesktopPolicySwitches).toEqual(switches)
    }))

  it.effect("an action every member may take, raised to admin in the policy table, refuses members with 403 and lets admins past", () =>
    Effect.gen(function*() {
      const policies = yield* DesktopPolicies
      const members = yield* Members
      const org = yield* staffed()
      const cases: ReadonlyArray<readonly [Action, (caller: MemberContext) => Effect.Effect<unknown, object, SqlClient.SqlClient | CursorKey | IdGenerator>]> = [
        ["members.read", (caller) => members.list(caller, {})],
        ["desktopPolicies.readEffective", (caller) => policies.effective(caller)]
      ]
      for (const [action, use] of cases) {
        yield* use(org.member)
        const rule = Policy[action] as { role: string }
        const was = rule.role
        rule.role = "admin"
        const refused = yield* Effect.ensuring(
          Effect.gen(function*() {
            yield* use(org.admin)
            return yield* failure(use(org.member))
          }),
          Effect.sync(() => {
            rule.role = was
          })
        )
        expect(refused).toMatchObject({ ...insufficientRole, message: expect.stringContaining(action) })
        yield* use(org.member)
      }
    }))
})

const omitUpdatedAt = ({ updatedAt: _updatedAt, ...rest }: DesktopPolicy) => rest
