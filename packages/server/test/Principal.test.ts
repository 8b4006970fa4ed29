/**
 * platform/Principal.ts: services act for a principal, a member (held to the policy table, and an API key to its
 * scopes) or the system itself, for background work with no HTTP caller. Reached through `authorize` (what a
 * service such as `Teams.create` calls), without the teams area, with the refusals' words (403 bodies clients show),
 * for every action.
 */
import { describe, expect, it } from "@effect/vitest"
import { Actions, Membership, Policy } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as TestClock from "effect/testing/TestClock"
import * as Principal from "../src/platform/Principal.js"
import * as Members from "./support/Members.js"

const organization = Members.organization()

describe("principals", () => {
  it.effect("the system acts without an HTTP caller: it passes the policy and is recorded as no member", () =>
    Effect.gen(function*() {
      const system = Principal.system("directory-sync", organization)
      for (const action of Actions) yield* Principal.authorize(system, action)
      expect(Principal.actingMembershipId(system)).toBeNull()
      expect(Principal.auditIdentity(system)).toBe("system:directory-sync")
    }))

  it.effect("a member principal is held to the policy table", () =>
    Effect.gen(function*() {
      const member = Members.member(organization, "member")
      const denied = yield* Effect.exit(Principal.authorize(member, "teams.manage"))
      expect(Exit.isFailure(denied) && Exit.findErrorOption(denied)).toMatchObject({ value: { reason: "insufficient_role" } })
      expect(Principal.can(member, "teams.read")).toBe(true)
      expect(Principal.can({ ...member, membership: new Membership({ ...member.membership, role: "admin" }) }, "teams.manage")).toBe(true)
      expect(Principal.can(member, "members.transferOwnership")).toBe(false)
      expect(Principal.actingMembershipId(member)).toBe(member.membership.id)
      expect(Principal.auditIdentity(member)).toBe(member.membership.id)
    }))

  it.effect("an API key is held to its scopes within its maker's role: insufficient_scope, not insufficient_role", () =>
    Effect.gen(function*() {
      const key = Members.member(organization, "admin", { apiKey: { scopes: ["teams.read"] } })
      expect(Principal.can(key, "teams.read")).toBe(true)
      const scope = yield* Effect.flip(Principal.authorize(key, "teams.manage"))
      expect(scope).toMatchObject({ reason: "insufficient_scope" })
      expect(scope.message).toBe(
        `This API key's scopes do not include teams.manage: make a key with that scope (POST /v1/api-keys with "scopes") from a session.`
      )
      // Beyond the maker's role, the role answers whatever the scopes say.
      expect(yield* Effect.flip(Principal.authorize(key, "members.transferOwnership"))).toMatchObject({ reason: "insufficient_role" })
      // A key made before scopes takes its maker's whole role.
      expect(Principal.can(Members.member(organization, "admin", { apiKey: { scopes: null } }), "teams.manage")).toBe(true)
    }))

  it("words its refusals by the role the action needs, or the scope the key lacks, for every action", () => {
    expect(Principal.insufficientRole("members.read").message).toBe("This action requires the member role or higher (members.read).")
    expect(Principal.insufficientRole("teams.manage").message).toBe("This action requires the admin role or higher (teams.manage).")
    expect(Principal.insufficientRole("audit.manage").message).toBe("This action requires the owner role or higher (audit.manage).")
    for (const action of Actions) {
      expect(Principal.insufficientRole(action).message).toBe(`This action requires the ${Policy[action].role} role or higher (${action}).`)
      expect(Principal.insufficientScope(action).message).toBe(
        `This API key's scopes do not include ${action}: make a key with that scope (POST /v1/api-keys with "scopes") from a session.`
      )
    }
  })

  it("records the actions a member was allowed once asked to (recordGrants), and only those", () => {
    const member = Members.member(organization, "admin")
    expect(Principal.can(member, "teams.read")).toBe(true)
    const granted = Principal.recordGrants(member)
    expect([...granted]).toEqual([])
    Principal.can(member, "teams.manage")
    Principal.can(member, "members.transferOwnership")
    Principal.can(Members.member(organization, "admin"), "apiKeys.manage")
    expect([...granted]).toEqual(["teams.manage"])
  })

  it.effect("requireEnterprise: 402 naming the feature unless the organization is on the enterprise plan", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip(Principal.requireEnterprise(Members.member(organization, "owner"), "sso"))
      expect(refused).toMatchObject({ _tag: "PlanRequired", feature: "sso", message: "This feature (sso) needs the enterprise plan." })
      yield* Principal.requireEnterprise(Members.member(Members.organization("enterprise"), "member"), "scim")
    }))

  it.effect("requireRecentAuthentication: a session signed in longer ago than allowed is refused; keys and the system pass", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.parse("2026-03-01T12:00:00Z"))
      const recent = Members.member(organization, "owner", { authenticatedAt: new Date("2026-03-01T11:56:00Z") })
      const stale = Members.member(organization, "owner", { authenticatedAt: new Date("2026-03-01T11:54:59Z") })
      yield* Principal.requireRecentAuthentication(recent, Duration.minutes(5))
      const refused = yield* Effect.flip(Principal.requireRecentAuthentication(stale, Duration.minutes(5), "send the password"))
      expect(refused).toMatchObject({
        reason: "recent_authentication_required",
        message: "This action needs a recent sign-in (within 5m): sign in again, then retry, or send the password."
      })
      expect((yield* Effect.flip(Principal.requireRecentAuthentication(stale, Duration.hours(0.05)))).message).toBe(
        "This action needs a recent sign-in (within 3m): sign in again, then retry."
      )
      yield* Principal.requireRecentAuthentication(Members.member(organization, "owner", { apiKey: { scopes: null } }), Duration.minutes(5))
      yield* Principal.requireRecentAuthentication(Principal.system("job", organization), Duration.minutes(5))
    }))
})
