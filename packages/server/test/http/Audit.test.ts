/**
 * The audit log through HTTP: an event per change, written with the change (and not for one that rolled back or was
 * replayed), the caller and how it came in, the targets, refusals as `denied`, filters and paging, tenancy, and
 * what owners, admins and members may read.
 */
import type { AuditEventPage } from "@orgplane/schema"
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AuditRepository } from "../../src/audit/AuditRepository.js"
import { audit as partitions } from "../../src/audit/Partitions.js"
import * as Retention from "../../src/audit/Retention.js"
import { AuditRecorder } from "../../src/platform/AuditRecorder.js"
import * as Config from "../../src/platform/Config.js"
import { IdGenerator } from "../../src/platform/Ids.js"
import { monthOf } from "../../src/platform/MonthlyPartitions.js"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let org: Awaited<ReturnType<typeof Http.staffed>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
  org = await Http.staffed(server.url, "Audited")
})
afterAll(() => server.close())

const { get } = Http.verbs(() => server.url)
const { apiKeys, audit, members, teams, users } = calls(() => server.url)

/** The organization's events of one action, newest first, as its owner reads them. */
const eventsOf = async (action: string, token = org.owner.token) =>
  ok(await audit.listEvents({ token, query: { action } }), 200).items

/** A page's cursor, which it must have. */
const cursorOf = (page: typeof AuditEventPage.Encoded): string => {
  if (page.nextCursor === null) throw new Error("expected a page with a cursor")
  return page.nextCursor
}

describe("an event per change", () => {
  it("records who created a team, through which session, from where, with the created team as its target", async () => {
    const created = await teams.create({ token: org.admin.token, payload: { name: "Platform" }, headers: { "user-agent": "audit-test/1.0" } })
    expect(created.status).toBe(201)
    const team = ok(created, 201).team
    const [event, ...others] = await eventsOf("team.create")
    expect(others).toEqual([])
    expect(event).toMatchObject({
      organizationId: org.organizationId,
      action: "team.create",
      category: "change",
      outcome: "succeeded",
      actor: { type: "user", id: org.admin.user.id, membershipId: org.admin.membership.id, label: `Admin <${org.admin.email}>` },
      via: { ssoConnectionId: null, ip: "127.0.0.1", userAgent: "audit-test/1.0" },
      targets: [{ type: "team", id: team.id }],
      reason: null,
      requestId: created.headers.get("x-request-id")
    })
    expect(event.id).toMatch(/^aev_[0-9a-z]{26}$/)
    expect(event.via.credentialId).toMatch(/^ses_/)
    expect(await audit.getEvent({ token: org.admin.token, path: { eventId: event.id } })).toMatchObject({ status: 200, body: { event } })

    // A change of it names it from the path.
    await teams.update({ token: org.owner.token, path: { teamId: team.id }, payload: { name: "Infrastructure" } })
    const [renamed] = await eventsOf("team.update")
    expect([renamed.actor.id, renamed.targets]).toEqual([org.owner.user.id, [{ type: "team", id: team.id }]])
  })

  it("records an API key as the actor when one acts, and never the key itself", async () => {
    const key = ok(await apiKeys.create({ token: org.owner.token, payload: { name: "automation" } }), 201)
    const [issued] = await eventsOf("api_key.create")
    expect(issued.targets).toEqual([{ type: "api_key", id: key.apiKey.id }])
    expect(JSON.stringify(issued)).not.toContain(key.key)
    const created = ok(await teams.create({ apiKey: key.key, payload: { name: "Automated" } }), 201)
    const [event] = await eventsOf("team.create")
    expect(event).toMatchObject({
      actor: { type: "api_key", id: key.apiKey.id, membershipId: org.owner.membership.id },
      via: { credentialId: key.apiKey.id },
      targets: [{ type: "team", id: created.team.id }]
    })
  })

  it("records nothing for a change that failed, and one event for a write replayed with its Idempotency-Key", async () => {
    const before = (await eventsOf("team.create")).length
    ok(await teams.create({ token: org.owner.token, payload: { name: "Unique" } }), 201)
    expect((await teams.create({ token: org.owner.token, payload: { name: "Unique" } })).status).toBe(409)
    expect((await teams.create({ token: org.owner.token, payload: { name: "" } })).status).toBe(400)
    expect((await eventsOf("team.create")).length).toBe(before + 1)

    const headers = { "idempotency-key": `audit-${Math.random()}` }
    const first = await teams.create({ token: org.owner.token, payload: { name: "Once" }, headers })
    const again = await teams.create({ token: org.owner.token, payload: { name: "Once" }, headers })
    expect([first.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"])
    const firstTeam = ok(first, 201).team
    const events = await eventsOf("team.create")
    expect(events.length).toBe(before + 2)
    expect(events.filter((event) => event.targets.some((target) => target.id === firstTeam.id)).length).toBe(1)
  })

  it("records a refused privileged attempt as denied, with the refusal, and nothing changed", async () => {
    const refused = await members.changeRole({ token: org.member.token, path: { memberId: org.admin.membership.id }, payload: { role: "member" } })
    expect(refused.status).toBe(403)
    const refusedBody = refusal(refused, 403)
    const [event] = ok(await audit.listEvents({ token: org.owner.token, query: { action: "member.role.update", outcome: "denied" } }), 200).items
    expect(event).toMatchObject({
      outcome: "denied",
      reason: "reason" in refusedBody ? refusedBody.reason : "a 403 without a reason",
      actor: { id: org.member.user.id, membershipId: org.member.membership.id },
      targets: [{ type: "member", id: org.admin.membership.id }]
    })
    expect(await eventsOf("member.role.update").then((events) => events.filter((event) => event.outcome === "succeeded"))).toEqual([])
  })

  it("records a sign-in in the organization the session acts in, with the session, and a wrong password as failed", async () => {
    const before = (await eventsOf("session.create")).length
    const signedIn = await users.signIn({ payload: { email: org.member.email, password: org.member.password } })
    expect(signedIn.status).toBe(200)
    const wrong = await users.signIn({ payload: { email: org.member.email, password: "not the password at all" }, headers: { "user-agent": "guesser/1" } })
    expect(wrong.status).toBe(401)
    // An unknown email concerns no organization: nothing is recorded anywhere for it.
    expect((await users.signIn({ payload: { email: "nobody-here@example.com", password: "whatever it is" } })).status).toBe(401)
    const all = await eventsOf("session.create")
    expect(all.length).toBe(before + 2)
    const [failed] = all.filter((event) => event.outcome === "failed")
    expect(failed).toMatchObject({
      outcome: "failed",
      reason: "invalid_password",
      category: "security",
      actor: { type: "user", id: org.member.user.id, membershipId: null, label: `Member <${org.member.email}>` },
      via: { credentialId: null, userAgent: "guesser/1" },
      targets: [{ type: "user", id: org.member.user.id }],
      requestId: wrong.headers.get("x-request-id")
    })
    expect(JSON.stringify(failed)).not.toContain("not the password at all")
    const failedOnly = ok(await audit.listEvents({ token: org.owner.token, query: { outcome: "failed" } }), 200)
    expect(failedOnly.items.map((event) => event.id)).toEqual([failed.id])
    const events = all.filter((event) => event.outcome === "succeeded")
    expect(events.length).toBe(before + 1)
    expect(events[0]).toMatchObject({
      category: "security",
      actor: { type: "user", id: org.member.user.id, label: `Member <${org.member.email}>` },
      requestId: signedIn.headers.get("x-request-id")
    })
    expect(events[0].via.credentialId).toMatch(/^ses_/)
    expect(events[0].targets).toEqual([{ type: "session", id: events[0].via.credentialId }, { type: "user", id: org.member.user.id }])
  })

  it("records an update's changed fields before and after, and nothing else of the resource", async () => {
    const team = ok(await teams.create({ token: org.owner.token, payload: { name: "Before" } }), 201).team
    ok(await teams.update({ token: org.owner.token, path: { teamId: team.id }, payload: { name: "After" } }), 200)
    const [renamed] = (await eventsOf("team.update")).filter((event) => event.targets[0]?.id === team.id)
    expect(renamed.changes).toEqual({ before: { name: "Before" }, after: { name: "After" }, changedFields: ["name"] })

    const member = { memberId: org.member.membership.id }
    const promoted = await members.changeRole({ token: org.owner.token, path: member, payload: { role: "admin" } })
    expect(promoted.status).toBe(200)
    await members.changeRole({ token: org.owner.token, path: member, payload: { role: "member" } })
    const [demotion, promotion] = (await eventsOf("member.role.update")).filter((event) => event.outcome === "succeeded")
    expect(promotion.changes).toEqual({ before: { role: "member" }, after: { role: "admin" }, changedFields: ["role"] })
    expect(demotion.changes).toEqual({ before: { role: "admin" }, after: { role: "member" }, changedFields: ["role"] })
    // A creation has its target, not changes; the filters find an update by the credential that made it.
    const [created] = (await eventsOf("team.create")).filter((event) => event.targets[0]?.id === team.id)
    expect(created.changes).toBeNull()
    const credentialId = renamed.via.credentialId
    expect(credentialId).toMatch(/^ses_/)
    const byCredential = ok(await audit.listEvents({ token: org.owner.token, query: { credentialId: credentialId ?? "", action: "team.*" } }), 200)
    expect(byCredential.items.map((event) => event.id)).toContain(renamed.id)
    expect(byCredential.items.every((event) => event.via.credentialId === renamed.via.credentialId)).toBe(true)
  })

  it("records a new organization in its own log, by its owner", async () => {
    const founder = await Http.owner(server.url, "Founded")
    const [event] = await eventsOf("organization.create", founder.token)
    expect(event).toMatchObject({
      organizationId: founder.organization.id,
      actor: { type: "user", id: founder.user.id, membershipId: founder.membership.id },
      targets: [{ type: "organization", id: founder.organization.id }, { type: "member", id: founder.membership.id }]
    })
  })
})

describe("the subject of every event", () => {
  it("names the subject of an action that has no path id: the caller, their session, their organization", async () => {
    // An organization of its own: the export below would be another test's event.
    const own = await Http.owner(server.url, "Subjects")
    const person = await Http.join(server.url, own.token, "admin", "Changer")
    const byTarget = async (targetId: string, action: string) =>
      ok(await audit.listEvents({ token: own.token, query: { targetId, action } }), 200).items
    const user = { type: "user", id: person.user.id }
    const organization = { type: "organization", id: own.organization.id }

    // Joining: the invitation's acceptance names who joined.
    const [joined] = await byTarget(person.user.id, "invitation.accept")
    expect(joined.targets).toContainEqual(user)

    // A person's own password: their account.
    const password = { currentPassword: person.password, newPassword: "another correct horse battery" }
    expect((await users.changePassword({ token: person.token, payload: password })).status).toBe(200)
    const [changed] = await byTarget(person.user.id, "user.password.change")
    expect([changed?.outcome, changed?.targets]).toEqual(["succeeded", [user]])

    // The log's settings: the organization, refused or changed.
    expect((await audit.setSettings({ token: person.token, payload: { retentionDays: 90 } })).status).toBe(403)
    // Within the 365 days the retention test needs as the longest anyone keeps.
    ok(await audit.setSettings({ token: own.token, payload: { retentionDays: 200 } }), 200)
    const settings = await byTarget(own.organization.id, "audit.settings.update")
    expect(settings.map((event) => [event.outcome, event.targets])).toEqual([["succeeded", [organization]], ["denied", [organization]]])

    // Taking the log away: the organization's log.
    ok(await audit.exportEvents({ token: own.token, query: { format: "ndjson", action: "team.create" } }), 200)
    const [exported] = await byTarget(own.organization.id, "audit.export")
    expect(exported.targets).toEqual([organization])

    // Signing out: the session that ended (the one the event came through), and whose it was.
    const signedIn = ok(await users.signIn({ payload: { email: person.email, password: password.newPassword } }), 200)
    expect((await users.signOut({ token: signedIn.session.token })).status).toBe(204)
    const [ended] = await byTarget(person.user.id, "session.revoke")
    expect(ended.via.credentialId).toMatch(/^ses_/)
    expect(ended.targets).toEqual([{ type: "session", id: ended.via.credentialId }, user])
  })
})

describe("reading the log", () => {
  it("filters by action family, actor, target, outcome and time, pages with a cursor, and follows the log oldest first", async () => {
    const token = org.owner.token
    const list = async (query: Parameters<typeof audit.listEvents>[0]["query"]) => ok(await audit.listEvents({ token, ...(query === undefined ? {} : { query }) }), 200)
    const team = ok(await teams.create({ token: org.admin.token, payload: { name: "Filtered" } }), 201).team
    await teams.delete({ token: org.admin.token, path: { teamId: team.id } })
    const family = (await list({ action: "team.*" })).items
    expect(new Set(family.map((event) => event.action.split(".")[0]))).toEqual(new Set(["team"]))
    expect(family[0].action).toBe("team.delete")
    const about = (await list({ targetId: team.id })).items
    expect(about.map((event) => event.action)).toEqual(["team.delete", "team.create"])
    const byAdmin = (await list({ actorId: org.admin.user.id })).items
    expect(byAdmin.every((event) => event.actor.id === org.admin.user.id)).toBe(true)
    expect(byAdmin.length).toBeGreaterThanOrEqual(2)
    const denied = (await list({ outcome: "denied" })).items
    expect(denied.every((event) => event.outcome === "denied")).toBe(true)

    const all = (await list({ limit: "100" })).items
    const oldestFirst = (await list({ limit: "100", order: "asc" })).items
    expect(oldestFirst.map((event) => event.id)).toEqual([...all].reverse().map((event) => event.id))
    const pages: Array<string> = []
    let cursor: string | null = null
    do {
      const page: typeof AuditEventPage.Encoded = await list({ limit: "2", ...(cursor === null ? {} : { cursor }) })
      pages.push(...page.items.map((event) => event.id))
      cursor = page.nextCursor
    } while (cursor !== null)
    expect(pages).toEqual(all.map((event) => event.id))
    const other = await audit.listEvents({ token, query: { limit: "2", order: "asc", cursor: cursorOf(await list({ limit: "2" })) } })
    expect(other.status).toBe(400)

    const last = all[0]
    const at = (await list({ from: last.occurredAt })).items
    expect(at.map((event) => event.id)).toContain(last.id)
    const before = (await list({ to: last.occurredAt })).items
    expect(before.map((event) => event.id)).not.toContain(last.id)

    // Following: an oldest-first page always has a cursor; asked again, it answers what came since (nothing, then
    // the next change) and a cursor to go on from.
    const followed = await list({ limit: "100", order: "asc", action: "team.*" })
    expect(followed.nextCursor).not.toBeNull()
    const idle = await audit.listEvents({ token, query: { limit: "100", order: "asc", action: "team.*", cursor: cursorOf(followed) } })
    const idlePage = ok(idle, 200)
    expect([idle.status, idlePage.items, idlePage.nextCursor]).toEqual([200, [], followed.nextCursor])
    const next = ok(await teams.create({ token, payload: { name: "Followed" } }), 201).team
    const since = await list({ limit: "100", order: "asc", action: "team.*", cursor: cursorOf(idlePage) })
    expect(since.items.map((event) => [event.action, event.targets[0]?.id])).toEqual([["team.create", next.id]])
    expect(since.nextCursor).not.toBe(idlePage.nextCursor)
  })

  it("is for owners and admins; another organization's events are missing, like unknown ones", async () => {
    expect((await audit.listEvents({ token: org.member.token })).status).toBe(403)
    const [event] = await eventsOf("team.create")
    const stranger = await Http.owner(server.url, "Elsewhere")
    expect((await audit.getEvent({ token: stranger.token, path: { eventId: event.id } })).body).toMatchObject({ error: "audit_event_not_found" })
    const theirs = ok(await audit.listEvents({ token: stranger.token, query: { limit: "100" } }), 200).items
    expect(theirs.every((item) => item.organizationId === stranger.organization.id)).toBe(true)
    expect((await audit.getEvent({ token: org.owner.token, path: { eventId: "aev_01jc0000000000000000000000" } })).status).toBe(404)
    expect((await audit.listEvents({ token: org.owner.token, query: { action: "Team" } })).status).toBe(400)
  })

  it("exports as NDJSON and CSV, oldest first, with spreadsheet formulas defused", async () => {
    // A person whose name a spreadsheet would run: their events' actor label starts with "=".
    const sneaky = await Http.join(server.url, org.owner.token, "admin", "Sneaky")
    ok(await users.updateMe({ token: sneaky.token, payload: { name: "=HYPERLINK(\"http://evil.example\",\"x\")" } }), 200)
    ok(await teams.create({ token: sneaky.token, payload: { name: "Sneaky, \"quoted\"" } }), 201)
    const ndjson = await audit.exportEvents({ token: org.owner.token, query: { format: "ndjson", action: "team.*" } })
    expect([ndjson.status, ndjson.headers.get("content-type"), ndjson.headers.get("cache-control")]).toEqual([200, "application/x-ndjson", "no-store"])
    const lines = ndjson.text.trimEnd().split("\n").map((line): unknown => JSON.parse(line))
    const listed = ok(await audit.listEvents({ token: org.owner.token, query: { action: "team.*", order: "asc", limit: "100" } }), 200).items
    expect(lines).toEqual(listed)

    const csv = await audit.exportEvents({ token: org.owner.token, query: { format: "csv", action: "team.create" } })
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    const rows = csv.text.trimEnd().split("\r\n")
    expect(rows[0]).toBe(
      "\"id\",\"occurredAt\",\"action\",\"category\",\"outcome\",\"actorType\",\"actorId\",\"actorMembershipId\",\"actorLabel\",\"credentialId\",\"ssoConnectionId\",\"ip\",\"userAgent\",\"targets\",\"changedFields\",\"changes\",\"reason\",\"requestId\",\"channel\",\"planHash\""
    )
    expect(rows.length).toBe(1 + (await eventsOf("team.create")).length)
    const last = rows.at(-1)!
    expect(last).toContain(`"'=HYPERLINK(""http://evil.example"",""x"") <${sneaky.email}>"`)
    expect(last).toContain(`"team:`)
    expect((await audit.exportEvents({ token: org.member.token, query: { format: "csv" } })).status).toBe(403)
    // A format the API does not have: sent as it is.
    expect((await get("/v1/audit/export?format=xml", { token: org.owner.token })).status).toBe(400)
    // Taking the log away is itself logged, with what was taken; the refused attempt as denied.
    const exports = await eventsOf("audit.export")
    expect(exports.map((event) => [event.outcome, event.reason])).toEqual([
      ["denied", "insufficient_role"],
      ["succeeded", "format=csv&action=team.create"],
      ["succeeded", "format=ndjson&action=team.*"]
    ])
    expect(exports[1]).toMatchObject({ category: "access", actor: { id: org.owner.user.id }, requestId: csv.headers.get("x-request-id") })
  })

  it("exports 100,000 events of an organization whole and in order, batch by batch", async () => {
    const big = await Http.owner(server.url, "Big")
    const total = 100_000
    // In batches, each well inside the statement timeout on a loaded machine.
    for (let from = 1; from <= total; from += 25_000) {
      await server.sql((sql) =>
        sql`INSERT INTO audit_events (organization_id, id, occurred_at, action, category, outcome, actor_type, actor_id, targets, target_ids)
            SELECT ${big.organization.id}, 'aev_' || lpad(to_hex(n), 26, '0'),
                   -- Milliseconds, as the server writes them (JavaScript dates): Postgres's now() has microseconds.
                   date_trunc('milliseconds', now()) - interval '1 day' + n * interval '1 millisecond',
                   'team.update', 'change', 'succeeded', 'user', ${big.user.id}, '[]'::jsonb, '{}'::text[]
            FROM generate_series(${from}::int, ${from + 24_999}::int) AS n`)
    }
    const response = await fetch(new URL("/v1/audit/export?format=ndjson&action=team.update", server.url), {
      headers: { authorization: `Bearer ${big.token}` }
    })
    expect(response.status).toBe(200)
    // Read as it arrives, holding one line at a time.
    let count = 0
    let previous = ""
    let ordered = true
    let rest = ""
    const decoder = new TextDecoder()
    const reader = response.body!.getReader()
    for (let read = await reader.read(); !read.done; read = await reader.read()) {
      const text = rest + decoder.decode(read.value, { stream: true })
      const parts = text.split("\n")
      rest = parts.pop()!
      for (const line of parts) {
        const { id } = JSON.parse(line)
        if (id <= previous) ordered = false
        previous = id
        count++
      }
    }
    expect([count, ordered, rest]).toEqual([total, true, ""])
  }, 120_000)

  it("lists the catalog of actions", async () => {
    const types = ok(await audit.listEventTypes({ token: org.admin.token }), 200).items
    expect(types).toContainEqual({ action: "member.role.update", category: "change", description: "A member's role was changed." })
    expect(new Set(types.map((type) => type.action)).size).toBe(types.length)
  })
})

describe("retention", () => {
  const DAY = 24 * 60 * 60 * 1000
  /** Old events written straight to the table, as time would have left them. */
  const backdated = (organizationId: string, actorId: string, daysAgo: number, count: number) =>
    server.sql((sql) =>
      sql`INSERT INTO audit_events (organization_id, id, occurred_at, action, category, outcome, actor_type, actor_id)
          SELECT ${organizationId}, 'aev_old' || ${daysAgo} || '_' || n || '_' || substr(md5(random()::text), 1, 8),
                 now() - ${daysAgo} * interval '1 day', 'team.update', 'change', 'succeeded', 'user', ${actorId}
          FROM generate_series(1, ${count}) AS n`)
  const count = (organizationId: string, daysAgo: number) =>
    server.sql((sql) =>
      Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM audit_events WHERE organization_id = ${organizationId} AND occurred_at < now() - ${daysAgo} * interval '1 day'`,
        ([row]) => row!.n
      ))

  it("keeps 365 days unless an owner sets another; the daily job deletes older events per organization and says so", async () => {
    const short = await Http.staffed(server.url, "Short memory")
    const long = await Http.owner(server.url, "Long memory")
    expect((await audit.getSettings({ token: short.admin.token })).body).toEqual({ settings: { retentionDays: 365, updatedAt: null } })
    expect((await audit.setSettings({ token: short.admin.token, payload: { retentionDays: 30 } })).status).toBe(403)
    expect((await audit.setSettings({ token: short.owner.token, payload: { retentionDays: 3 } })).status).toBe(400)
    const set = await audit.setSettings({ token: short.owner.token, payload: { retentionDays: 30 } })
    expect([set.status, ok(set, 200).settings.retentionDays]).toEqual([200, 30])
    const [changed] = ok(await audit.listEvents({ token: short.owner.token, query: { action: "audit.settings.update" } }), 200).items
    expect(changed).toMatchObject({ category: "security", actor: { id: short.owner.user.id } })

    const now = new Date()
    await server.sql((sql) => Effect.provideService(partitions.createRange(monthOf(new Date(now.getTime() - 400 * DAY)), monthOf(now)), SqlClient.SqlClient, sql))
    await backdated(short.organizationId, short.owner.user.id, 40, 3)
    await backdated(long.organization.id, long.user.id, 40, 2)
    await backdated(long.organization.id, long.user.id, 400, 1)

    const result = await server.sql((sql) =>
      Retention.apply(now).pipe(
        Effect.provide(AuditRepository.layer),
        Effect.provide(AuditRecorder.layer.pipe(Layer.provide(Config.layer()))),
        Effect.provide(IdGenerator.layer),
        Effect.provideService(SqlClient.SqlClient, sql)
      )
    )
    expect(result.deleted).toEqual(expect.arrayContaining([
      { organizationId: short.organizationId, events: 3 },
      { organizationId: long.organization.id, events: 1 }
    ]))
    expect([await count(short.organizationId, 35), await count(long.organization.id, 35), await count(long.organization.id, 365)]).toEqual([0, 2, 0])
    // Whole months before the longest retention anyone keeps (365 days) are gone as partitions.
    expect(result.dropped).toContain(partitions.partitionName(monthOf(new Date(now.getTime() - 400 * DAY))))
    for (const [token, organizationId] of [[short.owner.token, short.organizationId], [long.token, long.organization.id]] as const) {
      const [applied] = ok(await audit.listEvents({ token, query: { action: "audit.retention.apply" } }), 200).items
      expect(applied).toMatchObject({
        organizationId,
        targets: [{ type: "organization", id: organizationId }],
        category: "change",
        actor: { type: "system", id: "system:audit-retention", membershipId: null, label: null },
        via: { credentialId: null, ip: null }
      })
    }
    // Nothing left to delete: the next run deletes nothing and records nothing.
    const again = await server.sql((sql) =>
      Retention.apply(now).pipe(
        Effect.provide(AuditRepository.layer),
        Effect.provide(AuditRecorder.layer.pipe(Layer.provide(Config.layer()))),
        Effect.provide(IdGenerator.layer),
        Effect.provideService(SqlClient.SqlClient, sql)
      )
    )
    expect(again.deleted.filter(({ organizationId }) => organizationId === short.organizationId || organizationId === long.organization.id)).toEqual([])
  })
})
