/**
 * The telemetry area's service, repository, partitions and retention on a fresh migrated database (the embedded one,
 * or Postgres with DATABASE_URL): ingest keeps the recognized events inside the window, in their months' partitions,
 * with their sessions' dimensions; start-up creates the window's partitions; retention drops whole months; a
 * partition dropped behind the process's back is created again. http/Telemetry.test.ts holds the same behaviour over
 * HTTP; the cases here are its cases, called on the service.
 */
import { expect, layer } from "@effect/vitest"
import { IngestTelemetryRequest, type MemberContext } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { createHash } from "node:crypto"
import * as Config from "../src/platform/Config.js"
import { IdGenerator } from "../src/platform/Ids.js"
import { deriveValue, futureToleranceMs, Telemetry } from "../src/telemetry/Telemetry.js"
import * as Partitions from "../src/telemetry/Partitions.js"
import * as Retention from "../src/telemetry/Retention.js"
import { TelemetryRepository } from "../src/telemetry/TelemetryRepository.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const RETENTION = 2

const testLayer = Telemetry.layerWithoutDependencies.pipe(
  Layer.provideMerge(Layer.mergeAll(TelemetryRepository.layer, Partitions.Partitions.layer)),
  Layer.provideMerge(Layer.mergeAll(Db.layer, IdGenerator.layer, Config.layer({ telemetryRetentionMonths: RETENTION })))
)

const HOUR = 60 * 60 * 1000
const iso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString()
const event = (type: string, extra: Record<string, unknown> = {}) => ({ type, timestamp: iso(-HOUR), ...extra })
const request = Schema.decodeUnknownSync(IngestTelemetryRequest)

const ingest = (caller: MemberContext, body: unknown) => Telemetry.use((telemetry) => telemetry.ingest(caller, request(body)))

const events = (organizationId: string) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ eventType: string; membershipId: string; userId: string | null; source: string | null; sessionId: string | null; durationMs: number | null; success: boolean | null; partition: string }>`
      SELECT event_type, membership_id, user_id, source, session_id, duration_ms, success, tableoid::regclass::text AS partition
      FROM telemetry_events WHERE organization_id = ${organizationId} ORDER BY occurred_at, id`)

const dimensions = (organizationId: string) =>
  SqlClient.SqlClient.use((sql) =>
    sql<{ source: string; sessionId: string; dimensionType: string; dimensionValue: string; dimensionLabel: string; metadata: unknown }>`
      SELECT source, session_id, dimension_type, dimension_value, dimension_label, metadata
      FROM telemetry_session_dimensions WHERE organization_id = ${organizationId}
      ORDER BY source, session_id, dimension_type`)

const partitionNames = Effect.map(Partitions.list, (partitions) => partitions.map(({ name }) => name))

const member = Effect.gen(function*() {
  const caller = Members.member(Members.organization(), "member")
  yield* Members.seed(caller)
  return caller
})

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`telemetry on ${TestDatabase.kind}`, (it) => {
  it.effect("creates the retention window and the next month's partitions at start-up", () =>
    Effect.gen(function*() {
      const month = Partitions.monthOf(new Date())
      expect(yield* partitionNames).toEqual(expect.arrayContaining(
        [month - 2, month - 1, month, month + 1].map(Partitions.partitionName)
      ))
    }))

  it.effect("keeps the recognized events with their members, for the caller's organization and member; drops the rest", () =>
    Effect.gen(function*() {
      const caller = yield* member
      yield* ingest(caller, {
        events: [
          event("task.completed", { source: "app", sessionId: "s1", durationMs: 1200, success: true, extra: "dropped" }),
          event("task.failed", { source: "worker" }),
          event("user.active", { source: "cli", sessionId: "" }),
          event("page.viewed", { source: "app" }),
          { type: "user.active", timestamp: iso(futureToleranceMs + HOUR) },
          { type: "user.active", timestamp: Partitions.startOf(Partitions.monthOf(new Date()) - RETENTION - 1).toISOString() }
        ]
      })
      const rows = yield* events(caller.organization.id)
      expect(rows.map(({ partition: _, ...row }) => row).sort((a, b) => a.eventType.localeCompare(b.eventType))).toEqual([
        { eventType: "task.completed", membershipId: caller.membership.id, userId: caller.user.id, source: "app", sessionId: "s1", durationMs: 1200, success: true },
        { eventType: "task.failed", membershipId: caller.membership.id, userId: caller.user.id, source: "worker", sessionId: null, durationMs: null, success: null },
        { eventType: "user.active", membershipId: caller.membership.id, userId: caller.user.id, source: null, sessionId: null, durationMs: null, success: null }
      ])
      // Nothing kept: nothing written, no error.
      yield* ingest(caller, { events: [event("page.viewed")] })
      expect(yield* events(caller.organization.id)).toHaveLength(3)
    }))

  it.effect("stores events spread over several months in their months' partitions", () =>
    Effect.gen(function*() {
      const caller = yield* member
      const month = Partitions.monthOf(new Date())
      const sent = [0, 1, 2].map((back) => ({
        type: "user.active",
        timestamp: new Date(Date.UTC(Math.floor((month - back) / 12), (month - back) % 12, 10)).toISOString(),
        sessionId: `back-${back}`
      }))
      yield* ingest(caller, { events: sent })
      const rows = yield* events(caller.organization.id)
      expect(rows.map((row) => [row.sessionId, row.partition])).toEqual(
        [2, 1, 0].map((back) => [`back-${back}`, Partitions.partitionName(month - back)])
      )
    }))

  it.effect("upserts dimensions per source, session and type, deriving a value when none was sent or stored", () =>
    Effect.gen(function*() {
      const caller = yield* member
      const organizationId = caller.organization.id
      const derived = (type: string, slug: string, label: string) =>
        `${slug}-${createHash("sha256").update(`${type}:${label.trim().toLowerCase()}`).digest("hex").slice(0, 10)}`
      yield* ingest(caller, {
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
          event("session.started", { source: "app", dimensions: [{ type: "orphan", label: "x" }] }),
          event("session.started", { source: "cli", sessionId: "s1", dimensions: [{ type: "project", label: "Other", value: "other" }] }),
          event("page.viewed", { sessionId: "s1", dimensions: [{ type: "dropped", label: "x" }] })
        ]
      })
      expect(yield* dimensions(organizationId)).toEqual([
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
      yield* ingest(caller, {
        events: [
          event("session.active", { source: "app", sessionId: "s1", dimensions: [{ type: "project", label: "Renamed" }] }),
          event("session.active", { source: "app", sessionId: "s1", dimensions: [{ type: "model", label: "Claude", value: "claude" }] }),
          event("session.active", { source: "app", sessionId: "s1", dimensions: [{ type: "model", label: "Claude 2" }] })
        ]
      })
      const after = yield* dimensions(organizationId)
      expect(after.find((row) => row.source === "app" && row.dimensionType === "project")).toMatchObject({
        dimensionValue: derived("project", "cafe-deja-vu", "Café Déjà Vu!"),
        dimensionLabel: "Renamed",
        metadata: null
      })
      expect(after.find((row) => row.dimensionType === "model")).toMatchObject({ dimensionValue: "claude", dimensionLabel: "Claude 2" })
      expect(after).toHaveLength(4)
      expect(deriveValue("t", "x".repeat(300))).toHaveLength(128)
    }))

  it.effect("creates a month's partition again on ingest after it was dropped behind the process's back", () =>
    Effect.gen(function*() {
      const caller = yield* member
      const sql = yield* SqlClient.SqlClient
      const month = Partitions.monthOf(new Date())
      // The previous month: dropped while the process believes it exists, then written to.
      yield* sql.unsafe(`DROP TABLE ${Partitions.partitionName(month - 1)}`)
      const timestamp = new Date(Date.UTC(Math.floor((month - 1) / 12), (month - 1) % 12, 12)).toISOString()
      yield* ingest(caller, { events: [{ type: "user.active", timestamp, sessionId: "again" }] })
      expect((yield* events(caller.organization.id)).map((row) => [row.sessionId, row.partition])).toEqual([
        ["again", Partitions.partitionName(month - 1)]
      ])
    }))

  it.effect("drops whole partitions older than the window, and keeps the rows of the others", () =>
    Effect.gen(function*() {
      const caller = yield* member
      const month = Partitions.monthOf(new Date())
      yield* ingest(caller, {
        events: [0, 1, 2].map((back) => ({
          type: "user.active",
          timestamp: new Date(Date.UTC(Math.floor((month - back) / 12), (month - back) % 12, 10)).toISOString(),
          sessionId: `back-${back}`
        }))
      })
      // A month later with a window of 1: the current month and the one before stay, the two before go.
      const later = Partitions.startOf(month + 1)
      const before = yield* partitionNames
      const dropped = yield* Retention.dropExpired({ now: later, months: 1 })
      expect(dropped).toEqual(expect.arrayContaining([Partitions.partitionName(month - 2), Partitions.partitionName(month - 1)]))
      expect([...dropped].sort()).toEqual(before.filter((name) => (Partitions.monthOfPartition(name) ?? month) < month))
      expect((yield* events(caller.organization.id)).map((row) => row.sessionId)).toEqual(["back-0"])
      const left = yield* partitionNames
      expect(left).toEqual(expect.arrayContaining([Partitions.partitionName(month), Partitions.partitionName(month + 1)]))
      expect(left).not.toContain(Partitions.partitionName(month - 1))
      expect(yield* Retention.dropExpired({ now: later, months: 1 })).toEqual([])
      // The job's run at the clock's time makes the window's partitions again once the process forgets the dropped
      // months (as the job does for those it drops itself).
      yield* (yield* Partitions.Partitions).forget([month - 2, month - 1])
      yield* Retention.run
      expect(yield* partitionNames).toEqual(expect.arrayContaining(
        [month - 2, month - 1, month, month + 1].map(Partitions.partitionName)
      ))
      expect(Retention.firstKeptMonth(new Date("2026-11-22T00:00:00Z"), 13)).toBe(Partitions.monthOf(new Date("2025-10-01T00:00:00Z")))
    }))
})
