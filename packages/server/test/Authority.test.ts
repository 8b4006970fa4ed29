/**
 * platform/Authority.ts: a write's authority is checked where it commits, through real HTTP on a fresh database (the
 * embedded one, or Postgres with DATABASE_URL), on a test-only API whose write handlers are wrapped with
 * `Authority.around` as HttpErrors.group wraps them (test/support/WritesServer.ts). The caller is resolved as the
 * request starts and its rows are then changed under it, which is what a change committed while the write ran
 * leaves: the write is refused with the answer a new request would get, and nothing it made stays. A write that
 * changed its caller's own authority (`changedHere`) commits; reads take no part.
 *
 * The races are AuthorityConcurrency.test.ts's (Postgres); here each refusal is reached without a race.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { asMember, Fixture, request } from "./support/WritesServer.js"

const teamsOf = (organizationId: string) =>
  Effect.flatMap(Effect.service(Fixture), ({ sql }) =>
    Effect.map(sql<{ readonly name: string }>`SELECT name FROM teams WHERE organization_id = ${organizationId} ORDER BY name`, (rows) => rows.map((row) => row.name)))

const name = () => `Team ${Math.random().toString(36).slice(2, 8)}`

layer(Fixture.layer(Layer.unwrap(TestDatabase.layer({ migrated: true }))), { timeout: 120_000, excludeTestServices: true })(
  `authority checked at commit on ${TestDatabase.kind}`,
  (it) => {
    describe("a member", () => {
      it.effect("whose standing holds writes: the check at commit passes", () =>
        Effect.gen(function*() {
          const { url } = yield* Fixture
          const admin = Members.member(Members.organization(), "admin")
          const caller = yield* asMember(admin)
          const made = yield* request(url, "POST", "/teams", caller, { name: "Platform" })
          expect(made.status).toBe(201)
          expect(yield* teamsOf(admin.organization.id)).toEqual(["Platform"])
        }))

      it.effect("removed or suspended while the write ran is refused (403 membership_removed); a read still answers", () =>
        Effect.gen(function*() {
          const { sql, url } = yield* Fixture
          for (const column of ["removed_at", "suspended_at"] as const) {
            const admin = Members.member(Members.organization(), "admin")
            const caller = yield* asMember(admin)
            yield* sql`UPDATE memberships SET ${sql(column)} = now() WHERE id = ${admin.membership.id}`
            const refused = yield* request(url, "POST", "/teams", caller, { name: name() })
            expect([refused.status, refused.body]).toEqual([403, {
              reason: "membership_removed",
              message: "You are no longer a member of this organization (removed or suspended while this request ran): nothing was changed."
            }])
            expect(yield* teamsOf(admin.organization.id)).toEqual([])
            expect((yield* request(url, "GET", "/teams", caller)).status).toBe(200)
          }
        }))

      it.effect("demoted while the write ran is refused for the action it was allowed (403 insufficient_role)", () =>
        Effect.gen(function*() {
          const { sql, url } = yield* Fixture
          const admin = Members.member(Members.organization(), "admin")
          const caller = yield* asMember(admin)
          yield* sql`UPDATE memberships SET role = 'member' WHERE id = ${admin.membership.id}`
          const refused = yield* request(url, "POST", "/teams", caller, { name: name() })
          expect([refused.status, refused.body]).toEqual([403, {
            reason: "insufficient_role",
            message: "This action requires the admin role or higher (teams.manage)."
          }])
          expect(yield* teamsOf(admin.organization.id)).toEqual([])
          // A demotion to a role that still allows the action does not refuse it.
          const owner = Members.member(Members.organization(), "owner")
          const demoted = yield* asMember(owner)
          yield* sql`UPDATE memberships SET role = 'admin' WHERE id = ${owner.membership.id}`
          expect((yield* request(url, "POST", "/teams", demoted, { name: "Kept" })).status).toBe(201)
        }))

      it.effect("whose credential stopped working while the write ran is refused (401): a session signed out, an API key revoked, an account disabled or deleted", () =>
        Effect.gen(function*() {
          const { sql, url } = yield* Fixture
          const changes = [
            (admin: ReturnType<typeof Members.member>) =>
              admin.credential._tag === "Session" ? sql`UPDATE sessions SET revoked_at = now() WHERE id = ${admin.credential.sessionId}` : Effect.die("a session"),
            (admin: ReturnType<typeof Members.member>) =>
              admin.credential._tag === "Session" ? sql`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = ${admin.credential.sessionId}` : Effect.die("a session"),
            (admin: ReturnType<typeof Members.member>) => sql`UPDATE users SET disabled_at = now() WHERE id = ${admin.user.id}`,
            (admin: ReturnType<typeof Members.member>) => sql`UPDATE users SET deleted_at = now() WHERE id = ${admin.user.id}`
          ]
          for (const change of changes) {
            const admin = Members.member(Members.organization(), "admin")
            const caller = yield* asMember(admin)
            yield* change(admin)
            const refused = yield* request(url, "POST", "/teams", caller, { name: name() })
            expect([refused.status, refused.body.error, refused.body.reason]).toEqual([401, "unauthorized", "credential_revoked"])
            expect(yield* teamsOf(admin.organization.id)).toEqual([])
          }
          const key = Members.member(Members.organization(), "admin", { apiKey: { scopes: null } })
          const keyed = yield* asMember(key)
          yield* sql`DELETE FROM api_keys WHERE membership_id = ${key.membership.id}`
          const refused = yield* request(url, "POST", "/teams", keyed, { name: name() })
          expect([refused.status, refused.body.error, refused.body.reason]).toEqual([401, "unauthorized", "credential_revoked"])
          expect(yield* teamsOf(key.organization.id)).toEqual([])
        }))

      it.effect("the write that changed its caller's own authority commits (changedHere): leaving, revoking its own key", () =>
        Effect.gen(function*() {
          const { sql, url } = yield* Fixture
          const member = Members.member(Members.organization(), "member")
          const left = yield* request(url, "POST", "/leave", yield* asMember(member))
          expect(left.status).toBe(204)
          const [row] = yield* sql<{ readonly removed: boolean }>`SELECT removed_at IS NOT NULL AS removed FROM memberships WHERE id = ${member.membership.id}`
          expect(row?.removed).toBe(true)
          const key = Members.member(Members.organization(), "admin", { apiKey: { scopes: null } })
          expect((yield* request(url, "DELETE", "/own-key", yield* asMember(key))).status).toBe(204)
          expect(yield* sql`SELECT id FROM api_keys WHERE membership_id = ${key.membership.id}`).toEqual([])
        }))
    })

    describe("a directory or a worker", () => {
      it.effect("whose SCIM token was revoked while the write ran is refused with a SCIM 401 and its challenge", () =>
        Effect.gen(function*() {
          const { callers, sql, url } = yield* Fixture
          const organization = Members.organization("enterprise")
          yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organization.id}, 'Directory', 'enterprise', now(), now())`
          const directory = { _tag: "Scim" as const, client: Members.scimClient(organization), live: true }
          callers.set("directory", directory)
          expect((yield* request(url, "POST", "/teams", "directory", { name: "Synced" })).status).toBe(201)
          directory.live = false
          const refused = yield* request(url, "POST", "/teams", "directory", { name: "Refused" })
          expect(refused.status).toBe(401)
          expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="orgplane SCIM", error="invalid_token"')
          expect(refused.body).toMatchObject({ status: "401", detail: "This SCIM token was revoked while the request ran: nothing was changed." })
          expect(yield* teamsOf(organization.id)).toEqual(["Synced"])
        }))

      it.effect("whose worker token was revoked while the write ran is refused (401) and records nothing", () =>
        Effect.gen(function*() {
          const { callers, sql, url } = yield* Fixture
          const organization = Members.organization()
          yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organization.id}, 'Workers', 'free', now(), now())`
          const worker = { _tag: "Worker" as const, worker: Members.workerCaller(organization), live: false }
          callers.set("worker", worker)
          const refused = yield* request(url, "POST", "/teams", "worker", { name: "Beat" })
          expect([refused.status, refused.body.error, refused.body.reason]).toEqual([401, "unauthorized", "credential_revoked"])
          expect(yield* teamsOf(organization.id)).toEqual([])
        }))
    })
  }
)
