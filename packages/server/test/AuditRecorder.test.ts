/**
 * platform/AuditRecorder.ts: the events a handler's operation writes, through real HTTP on a fresh database (the
 * embedded one, or Postgres with DATABASE_URL), on the test-only API of test/support/WritesServer.ts whose write
 * handlers run inside `around(action, Authority.around(handler))`, as HttpErrors.group wraps them: an event per
 * change and the subject of every event, without an area of the server; `changesOf`; and, on Postgres, concurrent
 * changes (http/Audit.test.ts, AuditChanges.test.ts and AuditConcurrency.test.ts hold the same over the whole server).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { changesOf } from "../src/platform/AuditRecorder.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { asMember, Fixture, request } from "./support/WritesServer.js"

interface Row {
  readonly id: string
  readonly action: string
  readonly category: string
  readonly outcome: string
  readonly actorType: string
  readonly actorId: string
  readonly actorMembershipId: string | null
  readonly actorLabel: string | null
  readonly credentialId: string | null
  readonly ssoConnectionId: string | null
  readonly ip: string | null
  readonly userAgent: string | null
  readonly targets: unknown
  readonly targetIds: ReadonlyArray<string>
  readonly changes: unknown
  readonly reason: string | null
  readonly requestId: string | null
}

/** The organization's events, oldest first (the JSON columns parsed). */
const eventsOf = (organizationId: string, action?: string) =>
  Effect.flatMap(Effect.service(Fixture), ({ sql }) =>
    Effect.map(
      sql<Row>`SELECT id, action, category, outcome, actor_type, actor_id, actor_membership_id, actor_label, credential_id, sso_connection_id,
                 ip, user_agent, targets::text AS targets, target_ids, changes::text AS changes, reason, request_id
               FROM audit_events WHERE organization_id = ${organizationId} AND (${action ?? null}::text IS NULL OR action = ${action ?? null})
               ORDER BY occurred_at, id`,
      (rows) =>
        rows.map((row) => ({
          ...row,
          targets: JSON.parse(String(row.targets)),
          changes: row.changes === null ? null : JSON.parse(String(row.changes))
        }))
    ))

const labelOf = (member: ReturnType<typeof Members.member>) => `${member.user.name} <${member.user.email}>`

layer(Fixture.layer(Layer.unwrap(TestDatabase.layer({ migrated: true })), { audited: true }), { timeout: 120_000, excludeTestServices: true })(
  `audit events on ${TestDatabase.kind}`,
  (it) => {
    describe("an event per change", () => {
      it.effect("records who created a team, through which session, from where, with the created team as its target", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const admin = Members.member(Members.organization(), "admin")
          const made = yield* request(url, "POST", "/teams", yield* asMember(admin), { name: "Platform" })
          expect(made.status).toBe(201)
          const events = yield* eventsOf(admin.organization.id)
          expect(events.length).toBe(1)
          const credential = admin.credential._tag === "Session" ? admin.credential.sessionId : "a session"
          expect(events[0]).toMatchObject({
            action: "team.create",
            category: "change",
            outcome: "succeeded",
            actorType: "user",
            actorId: admin.user.id,
            actorMembershipId: admin.membership.id,
            actorLabel: labelOf(admin),
            credentialId: credential,
            ssoConnectionId: null,
            userAgent: "writes-test/1.0",
            targets: [{ type: "team", id: made.body.team!.id }],
            targetIds: [made.body.team!.id],
            changes: null,
            reason: null
          })
          expect(events[0]!.ip).toMatch(/127\.0\.0\.1$/)
          expect(events[0]!.id).toMatch(/^aev_/)
          expect(events[0]!.requestId).toEqual(expect.any(String))
        }))

      it.effect("records an API key as the actor when one acts", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const key = Members.member(Members.organization(), "admin", { apiKey: { scopes: null } })
          const keyId = key.credential._tag === "ApiKey" ? key.credential.apiKeyId : "a key"
          expect((yield* request(url, "POST", "/teams", yield* asMember(key), { name: "Keyed" })).status).toBe(201)
          const [event] = yield* eventsOf(key.organization.id)
          expect(event).toMatchObject({ actorType: "api_key", actorId: keyId, actorMembershipId: key.membership.id, credentialId: keyId })
        }))

      it.effect("records nothing for a change that failed", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const admin = Members.member(Members.organization(), "admin")
          const caller = yield* asMember(admin)
          expect((yield* request(url, "POST", "/teams", caller, { name: "Twice" })).status).toBe(201)
          expect((yield* request(url, "POST", "/teams", caller, { name: "twice" })).status).toBe(409)
          expect((yield* eventsOf(admin.organization.id)).map((event) => event.outcome)).toEqual(["succeeded"])
        }))

      it.effect("records a refused privileged attempt as denied, with the refusal, and nothing changed; a refusal at commit too", () =>
        Effect.gen(function*() {
          const { sql, url } = yield* Fixture
          const organization = Members.organization()
          const member = Members.member(organization, "member")
          const refused = yield* request(url, "POST", "/teams", yield* asMember(member), { name: "Nope" })
          expect(refused.status).toBe(403)
          const [denied] = yield* eventsOf(organization.id)
          expect(denied).toMatchObject({
            action: "team.create",
            outcome: "denied",
            reason: "insufficient_role",
            actorId: member.user.id,
            actorMembershipId: member.membership.id,
            targets: []
          })
          // Removed while the write ran: refused at commit, recorded as denied, the change rolled back with its event.
          const admin = Members.member(organization, "admin")
          const caller = yield* asMember(admin)
          yield* sql`UPDATE memberships SET removed_at = now() WHERE id = ${admin.membership.id}`
          expect((yield* request(url, "POST", "/teams", caller, { name: "Late" })).status).toBe(403)
          const mine = (yield* eventsOf(organization.id)).filter((event) => event.actorMembershipId === admin.membership.id)
          expect(mine.map((event) => [event.outcome, event.reason])).toEqual([["denied", "membership_removed"]])
          expect(yield* sql`SELECT id FROM teams WHERE organization_id = ${organization.id}`).toEqual([])
        }))

      it.effect("records nothing for a credential that stopped working (401 is no denial)", () =>
        Effect.gen(function*() {
          const { sql, url } = yield* Fixture
          const admin = Members.member(Members.organization(), "admin")
          const caller = yield* asMember(admin)
          yield* sql`UPDATE users SET disabled_at = now() WHERE id = ${admin.user.id}`
          expect((yield* request(url, "POST", "/teams", caller, { name: "Gone" })).status).toBe(401)
          expect(yield* eventsOf(admin.organization.id)).toEqual([])
        }))

      it.effect("records an update's changed fields before and after, with the path's id as its target", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const admin = Members.member(Members.organization(), "admin")
          const caller = yield* asMember(admin)
          const made = yield* request(url, "POST", "/teams", caller, { name: "Before" })
          const renamed = yield* request(url, "PATCH", `/teams/${made.body.team!.id}`, caller, { name: "After" })
          expect(renamed.status).toBe(200)
          const [update] = yield* eventsOf(admin.organization.id, "team.update")
          expect(update).toMatchObject({
            outcome: "succeeded",
            targets: [{ type: "team", id: made.body.team!.id }],
            changes: { before: { name: "Before" }, after: { name: "After" }, changedFields: ["name"] }
          })
        }))

      it.effect("records a wrong password as failed in each organization of the person it named, and nothing for an unknown one", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const person = Members.member(Members.organization(), "member")
          yield* asMember(person)
          const elsewhere = Members.organization()
          const { sql } = yield* Fixture
          yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${elsewhere.id}, 'Elsewhere', 'free', now(), now())`
          yield* sql`INSERT INTO memberships (id, organization_id, user_id, role, created_at, updated_at)
                     VALUES (${Members.membershipId()}, ${elsewhere.id}, ${person.user.id}, 'member', now(), now())`
          const wrong = yield* request(url, "POST", "/sign-in-failed", "nobody", { email: person.user.email })
          expect(wrong.status).toBe(401)
          expect((yield* request(url, "POST", "/sign-in-failed", "nobody", { email: "nobody-here@example.com" })).status).toBe(401)
          for (const organizationId of [person.organization.id, elsewhere.id]) {
            const events = yield* eventsOf(organizationId)
            expect(events).toMatchObject([{
              action: "session.create",
              category: "security",
              outcome: "failed",
              reason: "invalid_password",
              actorType: "user",
              actorId: person.user.id,
              actorMembershipId: null,
              actorLabel: labelOf(person),
              credentialId: null,
              userAgent: "writes-test/1.0",
              targets: [{ type: "user", id: person.user.id }]
            }])
          }
        }))
    })

    describe("the subject of every event", () => {
      it.effect("names the subject of an action that has no path id: the organization, the session and the caller; written after an operation that changed nothing", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const owner = Members.member(Members.organization(), "owner")
          const caller = yield* asMember(owner)
          expect((yield* request(url, "PUT", "/audit-settings", caller)).status).toBe(204)
          expect((yield* request(url, "POST", "/sign-out", caller)).status).toBe(204)
          const events = yield* eventsOf(owner.organization.id)
          const session = owner.credential._tag === "Session" ? owner.credential.sessionId : "a session"
          expect(events.map((event) => [event.action, event.outcome, event.targets])).toEqual([
            ["audit.settings.update", "succeeded", [{ type: "organization", id: owner.organization.id }]],
            ["session.revoke", "succeeded", [{ type: "session", id: session }, { type: "user", id: owner.user.id }]]
          ])
          // A refusal names it too.
          const member = Members.member(owner.organization, "member")
          expect((yield* request(url, "PUT", "/audit-settings", yield* asMember(member))).status).toBe(403)
          const [denied] = yield* eventsOf(owner.organization.id, "audit.settings.update").pipe(Effect.map((all) => all.filter((event) => event.outcome === "denied")))
          expect(denied?.targets).toEqual([{ type: "organization", id: owner.organization.id }])
        }))

      it.effect("records background work as the system, with its job", () =>
        Effect.gen(function*() {
          const { recorder, sql } = yield* Fixture
          const organization = Members.organization()
          yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organization.id}, 'System', 'free', now(), now())`
          const user = Members.userId()
          yield* recorder.recordSystem({
            organizationId: organization.id,
            job: "admin-reset-password",
            action: "user.password.reset_link.create",
            targets: [user]
          }).pipe(Effect.provide(IdGenerator.layer))
          expect(yield* eventsOf(organization.id)).toMatchObject([{
            outcome: "succeeded",
            actorType: "system",
            actorId: "system:admin-reset-password",
            actorMembershipId: null,
            ip: null,
            requestId: null,
            targets: [{ type: "user", id: user }]
          }])
        }))
    })

    describe("attempts outside a declared operation", () => {
      it.effect("records a failed attempt on its own, by someone not identified, with no request outside one", () =>
        Effect.gen(function*() {
          const { recorder, sql } = yield* Fixture
          const organization = Members.organization()
          yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organization.id}, 'Sso', 'enterprise', now(), now())`
          const user = Members.userId()
          yield* recorder.recordFailedAttempt({
            organizationId: organization.id,
            action: "session.create",
            reason: "sso_assertion_invalid",
            label: "ada@acme.example",
            ssoConnectionId: null,
            targets: [user]
          }).pipe(Effect.provide(IdGenerator.layer))
          expect(yield* eventsOf(organization.id)).toMatchObject([{
            action: "session.create",
            category: "security",
            outcome: "failed",
            reason: "sso_assertion_invalid",
            actorType: "anonymous",
            actorId: "anonymous",
            actorMembershipId: null,
            actorLabel: "ada@acme.example",
            ip: null,
            userAgent: null,
            targets: [{ type: "user", id: user }]
          }])
        }))
    })

    describe.skipIf(TestDatabase.postgresUrl === undefined)("concurrent changes (Postgres)", () => {
      it.effect("records one event per committed change, and none for the ones that lost", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const owner = Members.member(Members.organization(), "owner")
          const caller = yield* asMember(owner)
          const answers = yield* Effect.forEach(Array.from({ length: 12 }), () => request(url, "POST", "/teams", caller, { name: "Contested" }), {
            concurrency: "unbounded"
          })
          expect(answers.map((answer) => answer.status).sort()).toEqual([201, ...Array.from({ length: 11 }, () => 409)])
          const winner = answers.find((answer) => answer.status === 201)!.body.team!.id
          expect((yield* eventsOf(owner.organization.id, "team.create")).map((event) => event.targets)).toEqual([[{ type: "team", id: winner }]])
          const many = yield* Effect.forEach(Array.from({ length: 20 }, (_, i) => i), (i) => request(url, "POST", "/teams", caller, { name: `Team ${i}` }), {
            concurrency: "unbounded"
          })
          expect(many.every((answer) => answer.status === 201)).toBe(true)
          const recorded = yield* eventsOf(owner.organization.id, "team.create")
          expect(recorded.length).toBe(21)
          for (const answer of many) {
            expect(recorded.filter((event) => event.targetIds.includes(answer.body.team!.id)).length).toBe(1)
          }
        }))
    })
  }
)


describe("changesOf", () => {
  const cases: ReadonlyArray<readonly [Record<string, unknown>, Record<string, unknown>, ReadonlyArray<string>?]> = [
    [
      { id: "tem_1", name: "Before", externalKey: null, updatedAt: "2026-01-01T00:00:00.000Z", memberIds: ["om_1"] },
      { id: "tem_1", name: "After", externalKey: "eng", updatedAt: "2026-01-02T00:00:00.000Z", memberIds: ["om_1"] }
    ],
    [
      { oidc: { issuer: "https://a.example", clientSecret: "old-secret-value" }, hasApiKey: false },
      { oidc: { issuer: "https://b.example", clientSecret: "new-secret-value" }, hasApiKey: true },
      ["apiKey"]
    ],
    [{ description: "short" }, { description: "x".repeat(5000) }],
    [{ name: "same" }, { name: "same" }],
    [{ nested: [{ password: "p", token: "t", list: [1, 2] }] }, { nested: [{ password: "q", token: null, list: [1, 3] }], privateKey: "k" }, ["apiKey", "privateKey"]]
  ]

  it("keeps the fields that changed, before and after, and not updatedAt", () => {
    expect(changesOf(cases[0]![0], cases[0]![1])).toEqual({
      before: { name: "Before", externalKey: null },
      after: { name: "After", externalKey: "eng" },
      changedFields: ["name", "externalKey"]
    })
  })

  it("redacts a secret by its name at any depth, keeps flags about secrets, and names secrets the resource never shows", () => {
    const changes = changesOf(cases[1]![0], cases[1]![1], cases[1]![2])
    expect(changes).toEqual({
      before: { oidc: { issuer: "https://a.example", clientSecret: "[redacted]" }, hasApiKey: false, apiKey: "[redacted]" },
      after: { oidc: { issuer: "https://b.example", clientSecret: "[redacted]" }, hasApiKey: true, apiKey: "[redacted]" },
      changedFields: ["oidc", "hasApiKey", "apiKey"]
    })
    expect(JSON.stringify(changes)).not.toMatch(/secret-value/)
  })

  it("shows a long value by its size, and an unchanged resource as no changed fields", () => {
    expect(changesOf(cases[2]![0], cases[2]![1])).toEqual({
      before: { description: "short" },
      after: { description: "[omitted: 5002 bytes]" },
      changedFields: ["description"]
    })
    expect(changesOf(cases[3]![0], cases[3]![1])).toEqual({ before: {}, after: {}, changedFields: [] })
  })

  it("redacts secrets inside lists of objects, and names a secret that appears as redacted on both sides", () => {
    expect(changesOf(cases[4]![0], cases[4]![1], cases[4]![2])).toEqual({
      before: { nested: [{ password: "[redacted]", token: "[redacted]", list: [1, 2] }], privateKey: null, apiKey: "[redacted]" },
      after: { nested: [{ password: "[redacted]", token: null, list: [1, 3] }], privateKey: "[redacted]", apiKey: "[redacted]" },
      changedFields: ["nested", "privateKey", "apiKey"]
    })
  })
})
