/**
 * A write's authority is checked where it commits, on Postgres (the embedded database runs one statement at a
 * time): writes already under way when their caller is removed or demoted, or their API key revoked, either commit
 * before that change or are refused. The races run on the test-only API of test/support/WritesServer.ts (its writes insert teams, whose foreign key to the organization waits for the
 * organization's row): the test's own connection holds that row, each write waits for it after its request was
 * authenticated and authorized, the change commits meanwhile, then the writes go on. The writes run inside the audit
 * recorder too, as HttpErrors.group wraps them: a refusal at commit is recorded as denied.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schedule from "effect/Schedule"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Database from "../src/platform/Database.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { type Answer, asMember, Fixture, request } from "./support/WritesServer.js"

/** Enough connections for nine writes waiting at once, the holder, and the change. */
const database = Layer.unwrap(Effect.map(
  TestDatabase.postgresUrl === undefined ? Effect.die("Postgres only") : TestDatabase.freshPostgres(TestDatabase.postgresUrl, { migrated: true }),
  (url) => Database.layerUrl(Redacted.make(url), { maxConnections: 16 })
))

/** Holds `statement`'s row locks in a transaction of its own until released; `waiters` waits for that many blocked. */
const hold = Effect.fn("AuthorityConcurrency.hold")(function*(sql: SqlClient.SqlClient, statement: string, parameters: ReadonlyArray<string>) {
  const release = yield* Deferred.make<void>()
  const locked = yield* Deferred.make<void>()
  const holder = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
    yield* sql.unsafe(statement, parameters)
    yield* Deferred.succeed(locked, undefined)
    yield* Deferred.await(release)
  })))
  yield* Deferred.await(locked)
  const waiters = (count: number) =>
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`.pipe(
      Effect.flatMap(([row]) => (row!.n >= count ? Effect.void : Effect.fail("waiting"))),
      Effect.retry(Schedule.spaced("20 millis")),
      Effect.orDie
    )
  return { waiters, release: Effect.andThen(Deferred.succeed(release, undefined), Fiber.join(holder)) }
})

const nine = (url: string, caller: string) =>
  Effect.forkChild(Effect.forEach(Array.from({ length: 9 }, (_, i) => i), (i) =>
    request(url, "POST", "/teams", caller, { name: `Raced ${i} ${Math.random().toString(36).slice(2, 8)}` }), { concurrency: "unbounded" }))

const madeBy = (sql: SqlClient.SqlClient, membershipId: string) =>
  Effect.map(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM teams WHERE created_by_membership_id = ${membershipId}`, ([row]) => row!.n)

const statuses = (answers: ReadonlyArray<Answer>) => answers.map((answer) => [answer.status, answer.body.reason ?? answer.body.error])

describe.skipIf(TestDatabase.postgresUrl === undefined)("authority checked at commit, under concurrent changes (Postgres)", () => {
  layer(Fixture.layer(database, { audited: true }), { timeout: 120_000, excludeTestServices: true })("races", (it) => {
    it.effect("a removed admin's writes under way are refused (403 membership_removed), and made nothing", () =>
      Effect.gen(function*() {
        const { sql, url } = yield* Fixture
        for (let round = 0; round < 2; round++) {
          const admin = Members.member(Members.organization(), "admin")
          const caller = yield* asMember(admin)
          const held = yield* hold(sql, "SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [admin.organization.id])
          const writes = yield* nine(url, caller)
          yield* held.waiters(9)
          yield* sql`UPDATE memberships SET removed_at = now() WHERE id = ${admin.membership.id}`
          yield* held.release
          const answers = yield* Fiber.join(writes)
          expect(statuses(answers)).toEqual(answers.map(() => [403, "membership_removed"]))
          expect(yield* madeBy(sql, admin.membership.id)).toBe(0)
          // The audit log says what happened: nine refusals, no success (rolled back with the write).
          const audited = yield* sql<{ readonly outcome: string; readonly n: number }>`SELECT outcome, count(*)::int AS n FROM audit_events
            WHERE organization_id = ${admin.organization.id} AND actor_membership_id = ${admin.membership.id} AND action = 'team.create' GROUP BY outcome`
          expect(audited).toEqual([{ outcome: "denied", n: 9 }])
        }
      }))

    it.effect("a demoted admin's writes under way are refused (403 insufficient_role)", () =>
      Effect.gen(function*() {
        const { sql, url } = yield* Fixture
        const admin = Members.member(Members.organization(), "admin")
        const caller = yield* asMember(admin)
        const held = yield* hold(sql, "SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [admin.organization.id])
        const writes = yield* nine(url, caller)
        yield* held.waiters(9)
        yield* sql`UPDATE memberships SET role = 'member' WHERE id = ${admin.membership.id}`
        yield* held.release
        const answers = yield* Fiber.join(writes)
        expect(statuses(answers)).toEqual(answers.map(() => [403, "insufficient_role"]))
        expect(yield* madeBy(sql, admin.membership.id)).toBe(0)
      }))

    it.effect("writes under way with an API key revoked meanwhile are refused (401)", () =>
      Effect.gen(function*() {
        const { sql, url } = yield* Fixture
        const admin = Members.member(Members.organization(), "admin", { apiKey: { scopes: ["teams.manage"] } })
        const caller = yield* asMember(admin)
        const held = yield* hold(sql, "SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [admin.organization.id])
        const writes = yield* nine(url, caller)
        yield* held.waiters(9)
        yield* sql`DELETE FROM api_keys WHERE membership_id = ${admin.membership.id}`
        yield* held.release
        const answers = yield* Fiber.join(writes)
        expect(statuses(answers)).toEqual(answers.map(() => [401, "credential_revoked"]))
        expect(yield* madeBy(sql, admin.membership.id)).toBe(0)
      }))

    it.effect("a removal racing the writes: each either committed before it (201) or was refused after it, never both", () =>
      Effect.gen(function*() {
        const { sql, url } = yield* Fixture
        const admin = Members.member(Members.organization(), "admin")
        const caller = yield* asMember(admin)
        const held = yield* hold(sql, "SELECT id FROM organizations WHERE id = $1 FOR UPDATE", [admin.organization.id])
        const writes = yield* nine(url, caller)
        yield* held.waiters(9)
        yield* held.release
        // The removal waits for the writes that read the membership (FOR SHARE) at their commit, and refuses the rest.
        yield* sql`UPDATE memberships SET removed_at = now() WHERE id = ${admin.membership.id}`
        const answers = yield* Fiber.join(writes)
        const made = answers.filter((answer) => answer.status === 201).length
        expect(statuses(answers).every(([status, reason]) => status === 201 || (status === 403 && reason === "membership_removed"))).toBe(true)
        expect(yield* madeBy(sql, admin.membership.id)).toBe(made)
      }))
  })
})
