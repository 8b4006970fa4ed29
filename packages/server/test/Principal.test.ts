/**
 * Services act for a principal: a member (checked against the policy table) or the system itself, for background
 * work with no HTTP caller. Exercised through a real service on a real database.
 */
import * as NodeCrypto from "node:crypto"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Membership, Organization, type OrganizationId } from "@orgplane/schema"
import { TestDatabase } from "@orgplane/testkit"
import { Effect, Exit, Layer } from "effect"
import { IdGenerator } from "../src/platform/Ids.js"
import { CursorKey } from "../src/platform/Keyset.js"
import * as Principal from "../src/platform/Principal.js"
import { Teams } from "../src/teams/Teams.js"

const at = new Date("2026-01-01T00:00:00Z")
const organization = new Organization({
  id: "org_01m7xsja0me4fs7gc4ed0s22av" as OrganizationId,
  name: "Acme",
  plan: "free",
  provisional: false,
  createdAt: at
})

const Services = Teams.layer.pipe(Layer.provideMerge(Layer.mergeAll(IdGenerator.Live, Layer.succeed(CursorKey, NodeCrypto.randomBytes(32)))), Layer.provideMerge(TestDatabase.layer))

describe("principals", () => {
  it.layer(Services, { timeout: 60_000 })((it) => {
    it.effect("the system acts without an HTTP caller: it passes the policy and is recorded as no member", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organization.id}, 'Acme', 'free', ${at}, ${at})`
        const teams = yield* Teams
        const system = Principal.system("directory-sync", organization)
        const { team } = yield* teams.create(system, { name: "Synced" })
        expect(team).toMatchObject({ organizationId: organization.id, name: "Synced", createdByOrgMembershipId: null })
        expect(Principal.auditIdentity(system)).toBe("system:directory-sync")
        const listed = yield* teams.list(system, {})
        expect(listed.items.map((item) => item.name)).toEqual(["Synced"])
      }))

    it.effect("a member principal is held to the policy table", () =>
      Effect.gen(function*() {
        const teams = yield* Teams
        const membership = new Membership({ id: "om_01m7xsja0se4fs7gcbg0w73xhy" as never, organizationId: organization.id, userId: null, role: "member", createdAt: at })
        const member = { _tag: "Member" as const, organization, membership, user: null as never, credential: { _tag: "Session" as const, sessionId: "ses_01m7xsja0se4fs7gcbg0w73xhy" as never, ssoConnectionId: null, authenticatedAt: new Date() } }
        const denied = yield* Effect.exit(teams.create(member, { name: "Nope" }))
        expect(denied).toEqual(Exit.fail(expect.objectContaining({ reason: "insufficient_role" })))
        expect(Principal.can(member, "teams.read")).toBe(true)
        expect(Principal.can({ ...member, membership: new Membership({ ...membership, role: "admin" }) }, "teams.manage")).toBe(true)
        expect(Principal.can(member, "members.transferOwnership")).toBe(false)
      }))
  })
})
