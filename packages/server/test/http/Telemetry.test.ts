/** Telemetry ingest: what is kept and dropped, dimensions, monthly partitions and their retention. */
import { invalid } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as Json from "../../../../packages/testkit/src/Json.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Partitions from "../../src/telemetry/Partitions.js"
import { monthOf, partitionName, startOf } from "../../src/telemetry/Partitions.js"
import * as Retention from "../../src/telemetry/Retention.js"

type Shared = Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
/** Longer than the default 13 months, whose partitions the test template already has: start-up must create these. */
const RETENTION = 20
let server: Shared
beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ telemetryRetentionMonths: RETENTION })
})
afterAll(async () => {
  await server?.close()
})

const ingest = (body: unknown, auth: Http.Options = {}, url = server.url) =>
  Http.request(url, "POST", "/v1/telemetry/ingest", { ...auth, body })

const HOUR = 60 * 60 * 1000
const iso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString()
const event = (type: string, extra: Record<string, unknown> = {}) => ({ type, timestamp: iso(-HOUR), ...extra })

interface Row {
  readonly id: string
  readonly eventType: string
  readonly membershipId: string
  readonly userId: string | null
  readonly source: string | null
  readonly sessionId: string | null
  readonly durationMs: number | null
  readonly success: boolean | null
  readonly partition: string
  readonly occurredAt: Date
}

const events = (organizationId: string, shared: Shared = server) =>
  shared.sql((sql) =>
    sql<Row>`
      SELECT id, event_type, membership_id, user_id, source, session_id, duration_ms, success, occurred_at,
             tableoid::regclass::text AS partition
      FROM telemetry_events WHERE organization_id = ${organizationId} ORDER BY occurred_at, id`
  )

const dimensions = (organizationId: string) =>
  server.sql((sql) =>
    sql<{ source: string; sessionId: string; dimensionType: string; dimensionValue: string; dimensionLabel: string; metadata: unknown }>`
      SELECT source, session_id, dimension_type, dimension_value, dimension_label, metadata
      FROM telemetry_session_dimensions WHERE organization_id = ${organizationId}
      ORDER BY source, session_id, dimension_type`
  )

describe("telemetry ingest", () => {
  it("answers 204 with no body for 50 events and 400 invalid_request for 51 or none", async () => {
    const org = await Http.owner(server.url)
    const fifty = Array.from({ length: 50 }, () => event("session.active"))
    const accepted = await ingest({ events: fifty }, { token: org.token })
    expect(accepted.status).toBe(204)
    expect(accepted.text).toBe("")
    expect(await events(org.organization.id)).toHaveLength(50)

    for (const body of [{ events: [...fifty, event("session.active")] }, { events: [] }, {}]) {
      const refused = await ingest(body, { token: org.token })
      expect(refused.status).toBe(400)
      const { details, error } = invalid(refused)
      expect(error).toBe("invalid_request")
      expect(details.some((detail) => detail.path[0] === "events")).toBe(true)
    }
    expect(await events(org.organization.id)).toHaveLength(50)
  })

  it("answers 400 for a missing or malformed timestamp and members of the wrong type, naming each, and stores nothing", async () => {
    const org = await Http.owner(server.url)
    const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<unknown>]> = [
      [{ type: "user.active" }, [0, "timestamp"]],
      [{ type: "user.active", timestamp: "2026-11-22" }, [0, "timestamp"]],
      [{ type: "user.active", timestamp: "yesterday" }, [0, "timestamp"]],
      [{ type: "user.active", timestamp: "2026-11-22T10:00:00" }, [0, "timestamp"]],
      [{ type: "user.active", timestamp: 1700000000000 }, [0, "timestamp"]],
      [event("task.completed", { durationMs: "5" }), [0, "durationMs"]],
      [event("task.completed", { durationMs: 86_400_001 }), [0, "durationMs"]],
      [event("task.completed", { durationMs: 1.5 }), [0, "durationMs"]],
      [event("task.completed", { success: "yes" }), [0, "success"]],
      [event("", {}), [0, "type"]],
      [event("x".repeat(65), {}), [0, "type"]],
      [event("task.completed", { source: "s".repeat(33) }), [0, "source"]],
      [event("task.completed", { sessionId: "s".repeat(129) }), [0, "sessionId"]],
      [event("task.completed", { sessionId: "s", dimensions: Array.from({ length: 9 }, () => ({ type: "a", label: "b" })) }), [0, "dimensions"]],
      [event("task.completed", { sessionId: "s", dimensions: [{ type: "1abc", label: "b" }] }), [0, "dimensions", 0, "type"]],
      [event("task.completed", { sessionId: "s", dimensions: [{ type: "a", label: "b", value: "-x" }] }), [0, "dimensions", 0, "value"]],
      [event("task.completed", { sessionId: "s", dimensions: [{ type: "a", label: "   " }] }), [0, "dimensions", 0, "label"]],
      [event("task.completed", { sessionId: "s", dimensions: [{ type: "a", label: "b", metadata: { big: "x".repeat(4100) } }] }), [0, "dimensions", 0, "metadata"]],
      [event("task.completed", { sessionId: "s", dimensions: [{ type: "a", label: "b", metadata: [1] }] }), [0, "dimensions", 0, "metadata"]]
    ]
    for (const [bad, path] of cases) {
      const response = await ingest({ events: [event("user.active"), bad] }, { token: org.token })
      expect(response.status, JSON.stringify(bad).slice(0, 200)).toBe(400)
      const { details, error } = invalid(response)
      expect(error).toBe("invalid_request")
      const paths = details.map((detail) => JSON.stringify(detail.path))
      expect(paths, JSON.stringify(bad).slice(0, 200)).toContain(JSON.stringify(["events", 1, ...path.slice(1)]))
    }
    const several = await ingest({ events: [{ type: "user.active" }, event("task.failed", { success: 1 })] }, { token: org.token })
    expect(invalid(several).details.map((detail) => detail.path)).toEqual(
      expect.arrayContaining([["events", 0, "timestamp"], ["events", 1, "success"]])
    )
    expect(await events(org.organization.id)).toHaveLength(0)
  })

  it("drops unknown event types and unknown members, and keeps the recognized fields", async () => {
    const org = await Http.owner(server.url)
    const types = ["user.active", "session.active", "session.started", "session.ended", "task.started", "task.completed", "task.failed"]
    const response = await ingest({
      events: [
        ...types.map((type) => event(type)),
        event("page.viewed"),
        event("USER.ACTIVE"),
        event("task.completed", {
          durationMs: 43_200_000,
          success: true,
          sessionId: "ses-1",
          source: "app",
          prompt: "secret text",
          organizationId: "org_01m7xsja0me4fs7gc4ed0s22av",
          membershipId: "om_01m7xsja0me4fs7gc4ed0s22av"
        })
      ],
      extra: true
    }, { token: org.token })
    expect(response.status).toBe(204)
    const stored = await events(org.organization.id)
    expect(stored.map((row) => row.eventType).sort()).toEqual([...types, "task.completed"].sort())
    const detailed = stored.find((row) => row.durationMs !== null)!
    expect(detailed).toMatchObject({
      eventType: "task.completed",
      durationMs: 43_200_000,
      success: true,
      sessionId: "ses-1",
      source: "app",
      membershipId: org.membership.id,
      userId: org.user.id
    })
    expect(detailed.id).toMatch(/^tev_/)
    const columns = await server.sql((sql) =>
      sql<{ columnName: string }>`SELECT column_name FROM information_schema.columns WHERE table_name = 'telemetry_events'`
    )
    expect(columns.map((column) => column.columnName)).not.toContain("prompt")

    // Only unknown types: still 204, nothing stored.
    const other = await Http.owner(server.url)
    expect((await ingest({ events: [event("page.viewed"), event("click")] }, { token: other.token })).status).toBe(204)
    expect(await events(other.organization.id)).toHaveLength(0)
  })

  it("stores the sources app and worker, and any other source as none", async () => {
    const org = await Http.owner(server.url)
    const sent = ["app", "worker", "desktop", "APP", ""]
    expect((await ingest({ events: sent.map((source) => event("user.active", { source, sessionId: source })) }, { token: org.token })).status)
      .toBe(204)
    const stored = await events(org.organization.id)
    expect(Object.fromEntries(stored.map((row) => [row.sessionId ?? "(none)", row.source]))).toEqual({
      app: "app",
      worker: "worker",
      desktop: null,
      APP: null,
      "(none)": null
    })
  })

  it("takes organization and member from the credentials: a session or an API key; 401 without", async () => {
    const org = await Http.staffed(server.url)
    expect((await ingest({ events: [event("user.active")] }, { token: org.member.token })).status).toBe(204)
    const key = await Http.apiKey(server.url, org.admin.token, undefined, "worker")
    expect((await ingest({ events: [event("task.started", { source: "worker" })] }, { apiKey: key.key })).status).toBe(204)
    const stored = await events(org.organizationId)
    expect(stored.map((row) => [row.eventType, row.membershipId, row.userId])).toEqual([
      ["user.active", org.member.membership.id, org.member.user.id],
      ["task.started", org.admin.membership.id, org.admin.user.id]
    ])

    for (const auth of [{}, { token: "ops_nonsense" }, { apiKey: "opk_nonsense" }]) {
      const response = await ingest({ events: [event("user.active")] }, auth)
      expect(response.status).toBe(401)
      expect(Json.at(response.body, "error")).toBe("unauthorized")
    }
    // Credentials first: a bad body without credentials is still 401.
    expect((await ingest({ events: [] })).status).toBe(401)
    // A person without an organization.
    const alone = await Http.signUp(server.url)
    expect((await ingest({ events: [event("user.active")] }, { token: alone.token })).body).toMatchObject({ error: "organization_not_found" })
  })

  it("drops events older than the retention window or more than 24 hours ahead", async () => {
    const org = await Http.owner(server.url)
    const now = new Date()
    const firstKept = startOf(monthOf(now) - RETENTION)
    const response = await ingest({
      events: [
        { type: "user.active", timestamp: new Date(firstKept.getTime() - 1).toISOString(), sessionId: "too-old" },
        { type: "user.active", timestamp: firstKept.toISOString(), sessionId: "oldest-kept" },
        { type: "user.active", timestamp: iso(23 * HOUR), sessionId: "tomorrow" },
        { type: "user.active", timestamp: iso(25 * HOUR), sessionId: "too-far" },
        { type: "user.active", timestamp: "1970-01-01T00:00:00Z", sessionId: "epoch" },
        { type: "user.active", timestamp: "9999-12-31T23:59:59Z", sessionId: "far-future" }
      ]
    }, { token: org.token })
    expect(response.status).toBe(204)
    const stored = await events(org.organization.id)
    expect(stored.map((row) => row.sessionId)).toEqual(["oldest-kept", "tomorrow"])
    expect(stored[0]!.partition).toBe(partitionName(monthOf(firstKept)))
  })

  it("stores events spread over several months in their months' partitions", async () => {
    const org = await Http.owner(server.url)
    const now = new Date()
    const month = monthOf(now)
    const inMonth = (m: number, day: number) => new Date(Date.UTC(Math.floor(m / 12), m % 12, day, 12)).toISOString()
    const sent = [
      { type: "session.started", timestamp: inMonth(month - 2, 28), sessionId: "a" },
      { type: "session.started", timestamp: inMonth(month - 1, 1), sessionId: "b" },
      { type: "session.started", timestamp: new Date(Date.UTC(Math.floor(month / 12), month % 12, 1)).toISOString(), sessionId: "c" },
      // The last millisecond of the month before, written with an offset.
      { type: "session.started", timestamp: offsetText(new Date(startOf(month).getTime() - 1)), sessionId: "d" }
    ]
    expect((await ingest({ events: sent }, { token: org.token })).status).toBe(204)
    const stored = await events(org.organization.id)
    expect(Object.fromEntries(stored.map((row) => [row.sessionId, row.partition]))).toEqual({
      a: partitionName(month - 2),
      b: partitionName(month - 1),
      c: partitionName(month),
      d: partitionName(month - 1)
    })
  })

  it("upserts dimensions per source, session and type, deriving a value when none was sent or stored", async () => {
    const org = await Http.owner(server.url)
    const derived = (type: string, slug: string, label: string) =>
      `${slug}-${createHash("sha256").update(`${type}:${label.trim().toLowerCase()}`).digest("hex").slice(0, 10)}`

    const first = await ingest({
      events: [
        event("session.started", {
          source: "app",
          sessionId: "s1",
          dimensions: [
            { type: "Project", label: "  Café Déjà Vu!  ", metadata: { color: "blue" }, ignored: true },
            { type: "model", label: "GPT", value: "gpt-4o" },
            { type: "empty", label: "!!!" }
          ]
        }),
        // No session: dimensions are not stored.
        event("session.started", { source: "app", dimensions: [{ type: "orphan", label: "x" }] }),
        // Another source, not app or worker: "unknown".
        event("session.started", { source: "cli", sessionId: "s1", dimensions: [{ type: "project", label: "Other", value: "other" }] }),
        // An unknown event type: dropped with its dimensions.
        event("page.viewed", { sessionId: "s1", dimensions: [{ type: "dropped", label: "x" }] })
      ]
    }, { token: org.token })
    expect(first.status).toBe(204)
    expect(await dimensions(org.organization.id)).toEqual([
      { source: "app", sessionId: "s1", dimensionType: "empty", dimensionValue: derived("empty", "dimension", "!!!"), dimensionLabel: "!!!", metadata: null },
      { source: "app", sessionId: "s1", dimensionType: "model", dimensionValue: "gpt-4o", dimensionLabel: "GPT", metadata: null },
      {
        source: "app",
        sessionId: "s1",
        dimensionType: "project",
        dimensionValue: derived("project", "cafe-deja-vu", "Café Déjà Vu!"),
        dimensionLabel: "Café Déjà Vu!",
        metadata: { color: "blue" }
      },
      { source: "unknown", sessionId: "s1", dimensionType: "project", dimensionValue: "other", dimensionLabel: "Other", metadata: null }
    ])

    // Without a value the stored one stays while the label and metadata change; a value sent replaces it. Within one
    // batch the last one wins, and a value sent earlier in the batch is not lost to a later one without.
    const second = await ingest({
      events: [
        event("session.active", { source: "app", sessionId: "s1", dimensions: [{ type: "project", label: "Renamed" }] }),
        event("session.active", { source: "app", sessionId: "s1", dimensions: [{ type: "model", label: "Claude", value: "claude" }] }),
        event("session.active", { source: "app", sessionId: "s1", dimensions: [{ type: "model", label: "Claude 2" }] })
      ]
    }, { token: org.token })
    expect(second.status).toBe(204)
    const after = await dimensions(org.organization.id)
    expect(after.find((row) => row.source === "app" && row.dimensionType === "project")).toMatchObject({
      dimensionValue: derived("project", "cafe-deja-vu", "Café Déjà Vu!"),
      dimensionLabel: "Renamed",
      metadata: null
    })
    expect(after.find((row) => row.dimensionType === "model")).toMatchObject({ dimensionValue: "claude", dimensionLabel: "Claude 2" })
    expect(after).toHaveLength(4)
  })
})

/** The instant as local time at +05:30. */
const offsetText = (date: Date) => `${new Date(date.getTime() + 5.5 * HOUR).toISOString().slice(0, 23)}+05:30`

describe("telemetry partitions and retention", () => {
  const partitions = (shared: Shared) =>
    shared.sql((sql) =>
      sql<{ name: string }>`
        SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'telemetry_events'::regclass ORDER BY c.relname`.pipe(Effect.map((rows) => rows.map((row) => row.name)))
    )

  it("creates the retention window and the next month's partitions at start-up", async () => {
    const month = monthOf(new Date())
    const expected = Array.from({ length: RETENTION + 2 }, (_, index) => partitionName(month - RETENTION + index))
    expect(await partitions(server)).toEqual(expect.arrayContaining(expected))
  })

  it("drops whole partitions older than the window, and keeps the rows of the others", async () => {
    const shared = await TestServer.startSharingDatabase({ telemetryRetentionMonths: 2 })
    try {
      const org = await Http.owner(shared.url)
      const month = monthOf(new Date())
      const sent = [0, 1, 2].map((back) => ({
        type: "user.active",
        timestamp: new Date(Date.UTC(Math.floor((month - back) / 12), (month - back) % 12, 10)).toISOString(),
        sessionId: `back-${back}`
      }))
      expect((await ingest({ events: sent }, { token: org.token }, shared.url)).status).toBe(204)
      expect((await events(org.organization.id, shared)).map((row) => row.sessionId).sort()).toEqual(["back-0", "back-1", "back-2"])

      // A month later with a window of 1: the current month and the one before stay, the two before go.
      const later = startOf(month + 1)
      const before = await partitions(shared)
      const dropped = await shared.sql((sql) =>
        Retention.dropExpired({ now: later, months: 1 }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      )
      expect(dropped).toEqual(expect.arrayContaining([partitionName(month - 2), partitionName(month - 1)]))
      expect([...dropped].sort()).toEqual(before.filter((name) => Partitions.monthOfPartition(name)! < month))
      expect((await events(org.organization.id, shared)).map((row) => row.sessionId)).toEqual(["back-0"])
      const left = await partitions(shared)
      expect(left).toEqual(expect.arrayContaining([partitionName(month), partitionName(month + 1)]))
      expect(left).not.toContain(partitionName(month - 1))

      // Run again: nothing more to drop.
      expect(await shared.sql((sql) =>
        Retention.dropExpired({ now: later, months: 1 }).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      )).toEqual([])
    } finally {
      await shared.close()
    }
  })

  it("creates a month's partition on the first ingest into it, and again after it was dropped", async () => {
    const clock = new TestServer.ShiftedClock()
    const shared = await TestServer.startSharingDatabase({ clock, sessionTtl: "400 days", sessionIdleTimeout: "400 days" })
    try {
      const org = await Http.owner(shared.url)
      // Three months later, nothing of that month exists yet.
      clock.advance("92 days")
      const at = new Date(clock.currentTimeMillisUnsafe())
      const name = partitionName(monthOf(at))
      expect(await partitions(shared)).not.toContain(name)
      expect((await ingest({ events: [{ type: "user.active", timestamp: at.toISOString() }] }, { token: org.token }, shared.url)).status).toBe(204)
      expect((await events(org.organization.id, shared)).map((row) => row.partition)).toEqual([name])

      // Dropped behind this process's back (another process's retention with another clock): created again.
      await shared.sql((sql) => sql.unsafe(`DROP TABLE ${name}`))
      expect((await ingest({ events: [{ type: "user.active", timestamp: at.toISOString() }] }, { token: org.token }, shared.url)).status).toBe(204)
      expect((await events(org.organization.id, shared)).map((row) => row.partition)).toEqual([name])
    } finally {
      await shared.close()
    }
  })

  it.runIf(TestDatabase.onPostgres)("concurrent first ingests of a new month all succeed (Postgres only)", async () => {
    const clock = new TestServer.ShiftedClock()
    const shared = await TestServer.startSharingDatabase({ clock, sessionTtl: "400 days", sessionIdleTimeout: "400 days" })
    const second = await TestServer.start({
      clock,
      sessionTtl: "400 days",
      sessionIdleTimeout: "400 days",
      database: (await import("effect")).Layer.succeedContext(
        (await shared.sql((sql) => Effect.context<SqlClient.SqlClient>().pipe(Effect.provideService(SqlClient.SqlClient, sql))))
      )
    })
    try {
      const org = await Http.owner(shared.url)
      clock.advance("92 days")
      const at = new Date(clock.currentTimeMillisUnsafe()).toISOString()
      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          ingest({ events: [{ type: "user.active", timestamp: at }] }, { token: org.token }, index % 2 === 0 ? shared.url : second.url))
      )
      expect(responses.map((response) => response.status)).toEqual(Array(8).fill(204))
      expect(await events(org.organization.id, shared)).toHaveLength(8)

      // The race itself, many times over: creating one new partition from many connections at once never fails.
      for (let month = monthOf(new Date()) + 24; month < monthOf(new Date()) + 27; month++) {
        await shared.sql((sql) =>
          Effect.all(Array.from({ length: 8 }, () => Partitions.create(month)), { concurrency: "unbounded" }).pipe(
            Effect.provideService(SqlClient.SqlClient, sql)
          )
        )
      }
      expect(await partitions(shared)).toContain(partitionName(monthOf(new Date()) + 26))
    } finally {
      await second.close()
      await shared.close()
    }
  })
})
