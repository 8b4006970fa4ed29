/**
 * The audit area's reading side on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * the partitions made ahead, the log listed, filtered, followed and exported for owners, another organization's
 * events never found, the settings, retention (rows past an organization's retention, whole months nobody keeps)
 * and the pseudonymising of a deleted person's events; the stream signature a receiver set up for 0.1.0 still checks.
 * Events are written by platform/AuditRecorder.ts's `recordSystem`, as the daily jobs write theirs.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import type { AuditAction, OrganizationId } from "@orgplane/schema"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as SqlClient from "effect/sql/SqlClient"
import { Audit, csvCell } from "../src/audit/Audit.js"
import { AuditRepository } from "../src/audit/AuditRepository.js"
import * as Partitions from "../src/audit/Partitions.js"
import * as Retention from "../src/audit/Retention.js"
import { signatureHeader } from "../src/audit/StreamSignature.js"
import { AuditRecorder } from "../src/platform/AuditRecorder.js"
import * as Config from "../src/platform/Config.js"
import { IdGenerator } from "../src/platform/Ids.js"
import { monthOf } from "../src/platform/MonthlyPartitions.js"
import { clockAt } from "./support/Clocks.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const testLayer = Layer.mergeAll(Audit.layer, AuditRepository.layer, AuditRecorder.layer).pipe(
  Layer.provideMerge(Layer.effectDiscard(Partitions.ensureAhead)),
  Layer.provideMerge(Layer.mergeAll(Db.layer, IdGenerator.layer, Config.layer()))
)

const DAY = 24 * 60 * 60 * 1000

/** An organization with an owner and a member, seeded. */
const staffed = Effect.gen(function*() {
  const organization = Members.organization()
  const owner = Members.member(organization, "owner")
  const member = Members.member(organization, "member")
  yield* Members.seed(owner, member)
  return { organization, owner, member }
})

const record = (organizationId: OrganizationId, action: AuditAction, reason: string) =>
  AuditRecorder.use((recorder) => recorder.recordSystem({ organizationId, job: "test", action, reason }))

/** Moves the organization's events with `reason` back by `days` (into an older month's partition, made first). */
const age = (organizationId: OrganizationId, reason: string, days: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const at = new Date(Date.now() - days * DAY)
    yield* Partitions.audit.create(monthOf(at))
    yield* sql`UPDATE audit_events SET occurred_at = ${at} WHERE organization_id = ${organizationId} AND reason = ${reason}`
  })

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`audit on ${TestDatabase.kind}`, (it) => {
  it.effect("makes the current month's partition and the next ones ahead", () =>
    Effect.gen(function*() {
      const month = monthOf(new Date())
      const names = (yield* Partitions.audit.list).map(({ name }) => name)
      expect(names).toEqual(expect.arrayContaining([0, 1, 2].map((ahead) => Partitions.audit.partitionName(month + ahead))))
    }))

  it.effect("lists, filters, follows and gets an organization's events for its owners; a member or another organization gets nothing", () =>
    Effect.gen(function*() {
      const audit = yield* Audit
      const { member, organization, owner } = yield* staffed
      const other = yield* staffed
      yield* record(organization.id, "audit.retention.apply", "first")
      yield* Effect.sleep("2 millis")
      yield* record(organization.id, "audit.export", "second")
      yield* Effect.sleep("2 millis")
      yield* record(other.organization.id, "audit.export", "elsewhere")
      const newest = yield* audit.list(owner, {})
      expect(newest.items.map((event) => event.reason)).toEqual(["second", "first"])
      expect(newest.items[0]).toMatchObject({ action: "audit.export", outcome: "succeeded", actor: { type: "system", id: "system:test" } })
      expect((yield* audit.list(owner, { action: "audit.retention.*" })).items.map((event) => event.reason)).toEqual(["first"])
      expect((yield* audit.list(owner, { action: "audit.export" })).items.map((event) => event.reason)).toEqual(["second"])
      const followed = yield* audit.list(owner, { order: "asc", limit: 1 })
      expect(followed.items.map((event) => event.reason)).toEqual(["first"])
      const next = yield* audit.list(owner, { order: "asc", limit: 1, cursor: followed.nextCursor ?? "" })
      expect(next.items.map((event) => event.reason)).toEqual(["second"])
      // A follower's page always carries a cursor: for what comes next.
      const end = yield* audit.list(owner, { order: "asc", limit: 1, cursor: next.nextCursor ?? "" })
      expect(end.items).toEqual([])
      expect(end.nextCursor).toEqual(expect.any(String))
      const first = newest.items[1]
      if (first === undefined) return expect.unreachable()
      expect((yield* audit.get(owner, first.id)).event).toEqual(first)
      expect(yield* Effect.flip(audit.get(other.owner, first.id))).toMatchObject({ _tag: "NotFound", error: "audit_event_not_found", message: "Audit event not found." })
      expect(yield* Effect.flip(audit.list(member, {}))).toMatchObject({ _tag: "Forbidden" })
      expect((yield* audit.types(owner)).items).toContainEqual(expect.objectContaining({ action: "audit.export", category: "access" }))
    }))

  it.effect("exports the events under the filters as CSV or NDJSON, oldest first, a formula never a formula", () =>
    Effect.gen(function*() {
      const audit = yield* Audit
      const { organization, owner } = yield* staffed
      yield* record(organization.id, "audit.export", "=HYPERLINK(\"x\")")
      yield* Effect.sleep("2 millis")
      yield* record(organization.id, "audit.export", "plain \"quoted\"")
      const text = (stream: Stream.Stream<Uint8Array, unknown>) =>
        Effect.map(Stream.runCollect(stream), (chunks) => chunks.map((bytes) => new TextDecoder().decode(bytes)).join(""))
      const csv = yield* text(yield* audit.exportEvents(owner, { format: "csv" }))
      const lines = csv.split("\r\n")
      expect(lines[0]).toMatch(/^"id","occurredAt","action",/)
      expect(lines[1]).toContain("\"'=HYPERLINK(\"\"x\"\")\"")
      expect(lines[2]).toContain("\"plain \"\"quoted\"\"\"")
      expect(lines).toHaveLength(4)
      const ndjson = yield* text(yield* audit.exportEvents(owner, { format: "ndjson", action: "audit.export" }))
      expect(ndjson.trim().split("\n").map((line) => JSON.parse(line).reason)).toEqual(["=HYPERLINK(\"x\")", "plain \"quoted\""])
      expect(csvCell(null)).toBe("\"\"")
      expect(csvCell("-1")).toBe("\"'-1\"")
    }))

  it.effect("exports an event stamped in the millisecond the export begins (its upper bound is exclusive)", () =>
    Effect.gen(function*() {
      const audit = yield* Audit
      const { organization, owner } = yield* staffed
      // One instant for the event and the export: the same millisecond, made sure of.
      const instant = Date.now()
      const sameMillisecond = Effect.provideService(Clock.Clock, clockAt(() => instant))
      yield* sameMillisecond(record(organization.id, "audit.export", "just now"))
      const ndjson = yield* sameMillisecond(Effect.flatMap(
        audit.exportEvents(owner, { format: "ndjson", action: "audit.export" }),
        (stream) => Stream.runCollect(stream)
      ))
      const reasons = ndjson.map((bytes) => new TextDecoder().decode(bytes)).join("").trim().split("\n").map((line) => JSON.parse(line).reason)
      expect(reasons).toContain("just now")
    }))

  it.effect("keeps the default settings until an owner sets the retention", () =>
    Effect.gen(function*() {
      const audit = yield* Audit
      const { member, owner } = yield* staffed
      expect((yield* audit.getSettings(owner)).settings).toMatchObject({ retentionDays: 365, updatedAt: null })
      const { settings } = yield* audit.setSettings(owner, { retentionDays: 30 })
      expect(settings).toMatchObject({ retentionDays: 30, updatedAt: expect.any(Date) })
      expect((yield* audit.getSettings(owner)).settings).toEqual(settings)
      expect(yield* Effect.flip(audit.getSettings(member))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_role" })
      expect(yield* Effect.flip(audit.setSettings(member, { retentionDays: 90 }))).toMatchObject({ _tag: "Forbidden" })
    }))

  it.effect("deletes each organization's events past its retention and records it; drops months nobody keeps", () =>
    Effect.gen(function*() {
      const audit = yield* Audit
      const { organization, owner } = yield* staffed
      yield* audit.setSettings(owner, { retentionDays: 30 })
      yield* record(organization.id, "audit.export", "old")
      yield* record(organization.id, "audit.export", "recent")
      yield* age(organization.id, "old", 40)
      yield* age(organization.id, "recent", 10)
      const ancient = Partitions.audit.partitionName(monthOf(new Date(Date.now() - 800 * DAY)))
      yield* Partitions.audit.create(monthOf(new Date(Date.now() - 800 * DAY)))
      const { deleted, dropped } = yield* Retention.apply(new Date())
      expect(deleted).toContainEqual({ organizationId: organization.id, events: 1 })
      expect(dropped).toContain(ancient)
      const left = (yield* audit.list(owner, {})).items
      expect(left.map((event) => event.reason)).toContain("recent")
      expect(left.map((event) => event.reason)).not.toContain("old")
      expect(left[0]).toMatchObject({ action: "audit.retention.apply", actor: { id: "system:audit-retention" } })
      expect(left[0]?.reason).toMatch(/^deleted 1 events before .* \(retention 30 days\)$/)
      // A second run finds nothing more.
      expect((yield* Retention.apply(new Date())).deleted.find((entry) => entry.organizationId === organization.id)).toBeUndefined()
    }))

  it.effect("names a deleted person by their pseudonym in the events they made", () =>
    Effect.gen(function*() {
      const repository = yield* AuditRepository
      const sql = yield* SqlClient.SqlClient
      const { member, organization, owner } = yield* staffed
      yield* record(organization.id, "audit.export", "theirs")
      yield* sql`UPDATE audit_events SET actor_id = ${member.user.id}, actor_label = 'Ada <ada@acme.example>'
                 WHERE organization_id = ${organization.id} AND reason = 'theirs'`
      const changed = yield* repository.pseudonymise({
        organizationId: organization.id,
        userId: member.user.id,
        membershipIds: [member.membership.id],
        pseudonym: "deleted-user-1",
        redacted: "[redacted]"
      })
      expect(changed).toBe(1)
      expect((yield* (yield* Audit).list(owner, {})).items[0]?.actor.label).toBe("deleted-user-1")
    }))
})

describe("an audit stream's signature", () => {
  it("signs the time with the body, as 0.1.0 signed them (a receiver's check keeps working)", () => {
    // What 0.1.0's server sent for these deliveries.
    const signedBy010 = [
      ["s3cret", "{\"events\":[]}", 1_700_000_000, "t=1700000000,v1=41b4d3f6c59a79e37d083fb3cbe77f82807c4369fd469fb70cfa75e02d2e2775"],
      ["ünïcode", "", 0, "t=0,v1=f0fe31a23589f7c67d1928fd329f3c4db01f541dd9a5bd153ecde3cc4c6c7264"]
    ] as const
    for (const [secret, body, at, header] of signedBy010) expect(signatureHeader(secret, body, at)).toBe(header)
    expect(signatureHeader("s3cret", "x", 12)).toMatch(/^t=12,v1=[0-9a-f]{64}$/)
  })
})
