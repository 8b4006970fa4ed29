/**
 * The audit log through HTTP: an event per change, written with the change (and not for one that rolled back or was
 * replayed), the caller and how it came in, the targets, refusals as `denied`, filters and paging, tenancy, and
 * what owners, admins and members may read.
 */
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

const { del, get, patch, post } = Http.verbs(() => server.url)
const put = (path: string, options: Http.Options) => Http.request(server.url, "PUT", path, options)

/** The organization's events of one action, newest first, as its owner reads them. */
const eventsOf = async (action: string, token = org.owner.token) =>
  Http.expectStatus<{ items: Array<any>; nextCursor: string | null }>("list", await get(`/v1/audit/events?action=${action}`, { token }), 200).items

describe("an event per change", () => {
  it("records who created a team, through which session, from where, with the created team as its target", async () => {
    const created = await post("/v1/teams", { token: org.admin.token, body: { name: "Platform" }, headers: { "user-agent": "audit-test/1.0" } })
    expect(created.status).toBe(201)
    const [event, ...others] = await eventsOf("team.create")
    expect(others).toEqual([])
    expect(event).toMatchObject({
      organizationId: org.organizationId,
      action: "team.create",
      category: "change",
      outcome: "succeeded",
      actor: { type: "user", id: org.admin.user.id, membershipId: org.admin.membership.id, label: `Admin <${org.admin.email}>` },
      via: { ssoConnectionId: null, ip: "127.0.0.1", userAgent: "audit-test/1.0" },
      targets: [{ type: "team", id: created.body.team.id }],
      reason: null,
      requestId: created.headers.get("x-request-id")
    })
    expect(event.id).toMatch(/^aev_[0-9a-z]{26}$/)
    expect(event.via.credentialId).toMatch(/^ses_/)
    expect(await get(`/v1/audit/events/${event.id}`, { token: org.admin.token })).toMatchObject({ status: 200, body: { event } })

    // A change of it names it from the path.
    await patch(`/v1/teams/${created.body.team.id}`, { token: org.owner.token, body: { name: "Infrastructure" } })
    const [renamed] = await eventsOf("team.update")
    expect([renamed.actor.id, renamed.targets]).toEqual([org.owner.user.id, [{ type: "team", id: created.body.team.id }]])
  })

  it("records an API key as the actor when one acts, and never the key itself", async () => {
    const key = Http.expectStatus("key", await post("/v1/api-keys", { token: org.owner.token, body: { name: "automation" } }), 201)
    const [issued] = await eventsOf("api_key.create")
    expect(issued.targets).toEqual([{ type: "api_key", id: key.apiKey.id }])
    expect(JSON.stringify(issued)).not.toContain(key.key)
    const created = Http.expectStatus("team", await post("/v1/teams", { apiKey: key.key, body: { name: "Automated" } }), 201)
    const [event] = await eventsOf("team.create")
    expect(event).toMatchObject({
      actor: { type: "api_key", id: key.apiKey.id, membershipId: org.owner.membership.id },
      via: { credentialId: key.apiKey.id },
      targets: [{ type: "team", id: created.team.id }]
    })
  })

  it("records nothing for a change that failed, and one event for a write replayed with its Idempotency-Key", async () => {
    const before = (await eventsOf("team.create")).length
    Http.expectStatus("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Unique" } }), 201)
    expect((await post("/v1/teams", { token: org.owner.token, body: { name: "Unique" } })).status).toBe(409)
    expect((await post("/v1/teams", { token: org.owner.token, body: { name: "" } })).status).toBe(400)
    expect((await eventsOf("team.create")).length).toBe(before + 1)

    const headers = { "idempotency-key": `audit-${Math.random()}` }
    const first = await post("/v1/teams", { token: org.owner.token, body: { name: "Once" }, headers })
    const again = await post("/v1/teams", { token: org.owner.token, body: { name: "Once" }, headers })
    expect([first.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"])
    const events = await eventsOf("team.create")
    expect(events.length).toBe(before + 2)
    expect(events.filter((event) => event.targets.some((target: any) => target.id === first.body.team.id)).length).toBe(1)
  })

  it("records a refused privileged attempt as denied, with the refusal, and nothing changed", async () => {
    const refused = await patch(`/v1/members/${org.admin.membership.id}`, { token: org.member.token, body: { role: "member" } })
    expect(refused.status).toBe(403)
    const [event] = await get("/v1/audit/events?action=member.role.update&outcome=denied", { token: org.owner.token }).then((response) => response.body.items)
    expect(event).toMatchObject({
      outcome: "denied",
      reason: refused.body.reason,
      actor: { id: org.member.user.id, membershipId: org.member.membership.id },
      targets: [{ type: "member", id: org.admin.membership.id }]
    })
    expect(await eventsOf("member.role.update").then((events) => events.filter((event) => event.outcome === "succeeded"))).toEqual([])
  })

  it("records a sign-in in the organization the session acts in, with the session, and a wrong password as failed", async () => {
    const before = (await eventsOf("session.create")).length
    const signedIn = await post("/v1/auth/sign-in", { body: { email: org.member.email, password: org.member.password } })
    expect(signedIn.status).toBe(200)
    const wrong = await post("/v1/auth/sign-in", { body: { email: org.member.email, password: "not the password at all" }, headers: { "user-agent": "guesser/1" } })
    expect(wrong.status).toBe(401)
    // An unknown email concerns no organization: nothing is recorded anywhere for it.
    expect((await post("/v1/auth/sign-in", { body: { email: "nobody-here@example.com", password: "whatever it is" } })).status).toBe(401)
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
    const failedOnly = await get("/v1/audit/events?outcome=failed", { token: org.owner.token })
    expect(failedOnly.body.items.map((event: any) => event.id)).toEqual([failed.id])
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
    const team = Http.expectStatus("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Before" } }), 201).team
    Http.expectStatus("rename", await patch(`/v1/teams/${team.id}`, { token: org.owner.token, body: { name: "After" } }), 200)
    const [renamed] = (await eventsOf("team.update")).filter((event) => event.targets[0]?.id === team.id)
    expect(renamed.changes).toEqual({ before: { name: "Before" }, after: { name: "After" }, changedFields: ["name"] })

    const promoted = await patch(`/v1/members/${org.member.membership.id}`, { token: org.owner.token, body: { role: "admin" } })
    expect(promoted.status).toBe(200)
    await patch(`/v1/members/${org.member.membership.id}`, { token: org.owner.token, body: { role: "member" } })
    const [demotion, promotion] = (await eventsOf("member.role.update")).filter((event) => event.outcome === "succeeded")
    expect(promotion.changes).toEqual({ before: { role: "member" }, after: { role: "admin" }, changedFields: ["role"] })
    expect(demotion.changes).toEqual({ before: { role: "admin" }, after: { role: "member" }, changedFields: ["role"] })
    // A creation has its target, not changes; the filters find an update by the credential that made it.
    const [created] = (await eventsOf("team.create")).filter((event) => event.targets[0]?.id === team.id)
    expect(created.changes).toBeNull()
    const byCredential = await get(`/v1/audit/events?credentialId=${renamed.via.credentialId}&action=team.*`, { token: org.owner.token })
    expect(byCredential.body.items.map((event: any) => event.id)).toContain(renamed.id)
    expect(byCredential.body.items.every((event: any) => event.via.credentialId === renamed.via.credentialId)).toBe(true)
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
      Http.expectStatus<{ items: Array<any> }>("events", await get(`/v1/audit/events?targetId=${targetId}&action=${action}`, { token: own.token }), 200).items
    const user = { type: "user", id: person.user.id }
    const organization = { type: "organization", id: own.organization.id }

    // Joining: the invitation's acceptance names who joined.
    const [joined] = await byTarget(person.user.id, "invitation.accept")
    expect(joined.targets).toContainEqual(user)

    // A person's own password: their account.
    const password = { currentPassword: person.password, newPassword: "another correct horse battery" }
    expect((await post("/v1/me/password", { token: person.token, body: password })).status).toBe(200)
    const [changed] = await byTarget(person.user.id, "user.password.change")
    expect([changed?.outcome, changed?.targets]).toEqual(["succeeded", [user]])

    // The log's settings: the organization, refused or changed.
    expect((await put("/v1/audit/settings", { token: person.token, body: { retentionDays: 90 } })).status).toBe(403)
    // Within the 365 days the retention test needs as the longest anyone keeps.
    Http.expectStatus("settings", await put("/v1/audit/settings", { token: own.token, body: { retentionDays: 200 } }), 200)
    const settings = await byTarget(own.organization.id, "audit.settings.update")
    expect(settings.map((event) => [event.outcome, event.targets])).toEqual([["succeeded", [organization]], ["denied", [organization]]])

    // Taking the log away: the organization's log.
    Http.expectStatus("export", await get("/v1/audit/export?format=ndjson&action=team.create", { token: own.token }), 200)
    const [exported] = await byTarget(own.organization.id, "audit.export")
    expect(exported.targets).toEqual([organization])

    // Signing out: the session that ended (the one the event came through), and whose it was.
    const signedIn = Http.expectStatus<{ session: { token: string } }>(
      "sign-in",
      await post("/v1/auth/sign-in", { body: { email: person.email, password: password.newPassword } }),
      200
    )
    expect((await post("/v1/auth/sign-out", { token: signedIn.session.token })).status).toBe(204)
    const [ended] = await byTarget(person.user.id, "session.revoke")
    expect(ended.via.credentialId).toMatch(/^ses_/)
    expect(ended.targets).toEqual([{ type: "session", id: ended.via.credentialId }, user])
  })
})

describe("reading the log", () => {
  it("filters by action family, actor, target, outcome and time, pages with a cursor, and follows the log oldest first", async () => {
    const team = Http.expectStatus("team", await post("/v1/teams", { token: org.admin.token, body: { name: "Filtered" } }), 201).team
    await del(`/v1/teams/${team.id}`, { token: org.admin.token })
    const family = (await get("/v1/audit/events?action=team.*", { token: org.owner.token })).body.items
    expect(new Set(family.map((event: any) => event.action.split(".")[0]))).toEqual(new Set(["team"]))
    expect(family[0].action).toBe("team.delete")
    const about = (await get(`/v1/audit/events?targetId=${team.id}`, { token: org.owner.token })).body.items
    expect(about.map((event: any) => event.action)).toEqual(["team.delete", "team.create"])
    const byAdmin = (await get(`/v1/audit/events?actorId=${org.admin.user.id}`, { token: org.owner.token })).body.items
    expect(byAdmin.every((event: any) => event.actor.id === org.admin.user.id)).toBe(true)
    expect(byAdmin.length).toBeGreaterThanOrEqual(2)
    const denied = (await get("/v1/audit/events?outcome=denied", { token: org.owner.token })).body.items
    expect(denied.every((event: any) => event.outcome === "denied")).toBe(true)

    const all = (await get("/v1/audit/events?limit=100", { token: org.owner.token })).body.items
    const oldestFirst = (await get("/v1/audit/events?limit=100&order=asc", { token: org.owner.token })).body.items
    expect(oldestFirst.map((event: any) => event.id)).toEqual([...all].reverse().map((event: any) => event.id))
    const pages: Array<string> = []
    let cursor: string | null = null
    do {
      const page: any = (await get(`/v1/audit/events?limit=2${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`, { token: org.owner.token })).body
      pages.push(...page.items.map((event: any) => event.id))
      cursor = page.nextCursor
    } while (cursor !== null)
    expect(pages).toEqual(all.map((event: any) => event.id))
    const other = await get(`/v1/audit/events?limit=2&order=asc&cursor=${encodeURIComponent((await get("/v1/audit/events?limit=2", { token: org.owner.token })).body.nextCursor)}`, { token: org.owner.token })
    expect(other.status).toBe(400)

    const last = all[0]
    const at = (await get(`/v1/audit/events?from=${encodeURIComponent(last.occurredAt)}`, { token: org.owner.token })).body.items
    expect(at.map((event: any) => event.id)).toContain(last.id)
    const before = (await get(`/v1/audit/events?to=${encodeURIComponent(last.occurredAt)}`, { token: org.owner.token })).body.items
    expect(before.map((event: any) => event.id)).not.toContain(last.id)

    // Following: an oldest-first page always has a cursor; asked again, it answers what came since (nothing, then
    // the next change) and a cursor to go on from.
    const followed = await get("/v1/audit/events?limit=100&order=asc&action=team.*", { token: org.owner.token })
    expect(followed.body.nextCursor).not.toBeNull()
    const idle = await get(`/v1/audit/events?limit=100&order=asc&action=team.*&cursor=${encodeURIComponent(followed.body.nextCursor)}`, { token: org.owner.token })
    expect([idle.status, idle.body.items, idle.body.nextCursor]).toEqual([200, [], followed.body.nextCursor])
    const next = Http.expectStatus("team", await post("/v1/teams", { token: org.owner.token, body: { name: "Followed" } }), 201).team
    const since = await get(`/v1/audit/events?limit=100&order=asc&action=team.*&cursor=${encodeURIComponent(idle.body.nextCursor)}`, { token: org.owner.token })
    expect(since.body.items.map((event: any) => [event.action, event.targets[0].id])).toEqual([["team.create", next.id]])
    expect(since.body.nextCursor).not.toBe(idle.body.nextCursor)
  })

  it("is for owners and admins; another organization's events are missing, like unknown ones", async () => {
    expect((await get("/v1/audit/events", { token: org.member.token })).status).toBe(403)
    const [event] = await eventsOf("team.create")
    const stranger = await Http.owner(server.url, "Elsewhere")
    expect((await get(`/v1/audit/events/${event.id}`, { token: stranger.token })).body.error).toBe("audit_event_not_found")
    const theirs = (await get("/v1/audit/events?limit=100", { token: stranger.token })).body.items
    expect(theirs.every((item: any) => item.organizationId === stranger.organization.id)).toBe(true)
    expect((await get("/v1/audit/events/aev_01jc0000000000000000000000", { token: org.owner.token })).status).toBe(404)
    expect((await get("/v1/audit/events?action=Team", { token: org.owner.token })).status).toBe(400)
  })

  it("exports as NDJSON and CSV, oldest first, with spreadsheet formulas defused", async () => {
    // A person whose name a spreadsheet would run: their events' actor label starts with "=".
    const sneaky = await Http.join(server.url, org.owner.token, "admin", "Sneaky")
    Http.expectStatus("rename", await patch("/v1/me", { token: sneaky.token, body: { name: "=HYPERLINK(\"http://evil.example\",\"x\")" } }), 200)
    Http.expectStatus("team", await post("/v1/teams", { token: sneaky.token, body: { name: "Sneaky, \"quoted\"" } }), 201)
    const ndjson = await get("/v1/audit/export?format=ndjson&action=team.*", { token: org.owner.token })
    expect([ndjson.status, ndjson.headers.get("content-type"), ndjson.headers.get("cache-control")]).toEqual([200, "application/x-ndjson", "no-store"])
    const lines = ndjson.text.trimEnd().split("\n").map((line) => JSON.parse(line))
    const listed = (await get("/v1/audit/events?action=team.*&order=asc&limit=100", { token: org.owner.token })).body.items
    expect(lines).toEqual(listed)

    const csv = await get("/v1/audit/export?format=csv&action=team.create", { token: org.owner.token })
    expect(csv.headers.get("content-type")).toBe("text/csv; charset=utf-8")
    const rows = csv.text.trimEnd().split("\r\n")
    expect(rows[0]).toBe(
      "\"id\",\"occurredAt\",\"action\",\"category\",\"outcome\",\"actorType\",\"actorId\",\"actorMembershipId\",\"actorLabel\",\"credentialId\",\"ssoConnectionId\",\"ip\",\"userAgent\",\"targets\",\"changedFields\",\"changes\",\"reason\",\"requestId\",\"channel\""
    )
    expect(rows.length).toBe(1 + (await eventsOf("team.create")).length)
    const last = rows.at(-1)!
    expect(last).toContain(`"'=HYPERLINK(""http://evil.example"",""x"") <${sneaky.email}>"`)
    expect(last).toContain(`"team:`)
    expect((await get("/v1/audit/export?format=csv", { token: org.member.token })).status).toBe(403)
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
    const types = (await get("/v1/audit/event-types", { token: org.admin.token })).body.items
    expect(types).toContainEqual({ action: "member.role.update", category: "change", description: "A member's role was changed." })
    expect(new Set(types.map((type: any) => type.action)).size).toBe(types.length)
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
    expect((await get("/v1/audit/settings", { token: short.admin.token })).body).toEqual({ settings: { retentionDays: 365, updatedAt: null } })
    expect((await put("/v1/audit/settings", { token: short.admin.token, body: { retentionDays: 30 } })).status).toBe(403)
    expect((await put("/v1/audit/settings", { token: short.owner.token, body: { retentionDays: 3 } })).status).toBe(400)
    const set = await put("/v1/audit/settings", { token: short.owner.token, body: { retentionDays: 30 } })
    expect([set.status, set.body.settings.retentionDays]).toEqual([200, 30])
    const [changed] = (await get("/v1/audit/events?action=audit.settings.update", { token: short.owner.token })).body.items
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
      const [applied] = (await get("/v1/audit/events?action=audit.retention.apply", { token })).body.items
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
