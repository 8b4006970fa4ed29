/**
 * Policy.ts, who may do what: the role each action needs (a role may do what the roles below it may), the actions
 * only a key naming them may take, and the actions an endpoint requires, shown in the document.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApiEndpoint, OpenApi } from "effect/http-api"
import * as Policy from "../src/Policy.js"
import type { Role } from "../src/Organizations.js"

const roles: ReadonlyArray<Role> = ["member", "admin", "owner"]

describe("Policy", () => {
  it("gives each action the lowest role that may take it, each role what the roles below it may too", () => {
    expect(Policy.Roles).toEqual(roles)
    expect(Object.keys(Policy.Policy)).toEqual(Policy.Actions)
    for (const [at, role] of roles.entries()) {
      for (const [below, required] of roles.entries()) expect(Policy.hasRole(role, required), `${role} ${required}`).toBe(below <= at)
      expect(Policy.actionsOf(role)).toEqual(Policy.Actions.filter((action) => Policy.Policy[action].role === role))
      for (const action of Policy.Actions) {
        expect(Policy.allows(role, action), `${role} ${action}`).toBe(Policy.hasRole(role, Policy.Policy[action].role))
      }
    }
    expect(roles.map((role) => Policy.actionsOf(role).length)).toEqual([20, 31, 5])
    expect(Policy.actionsOf("owner")).toEqual(["audit.manage", "organizations.delete", "admin.claimOperator", "members.manageOwners", "members.transferOwnership"])
    expect(Policy.allows("member", "teams.manage")).toBe(false)
    expect(Policy.allows("admin", "teams.manage")).toBe(true)
    expect(Policy.allows("admin", "members.manageOwners")).toBe(false)
    expect(Policy.allows("member", "members.read")).toBe(true)
    expect(Policy.describeActions(["teams.manage", "members.read"]))
      .toBe("Policy: `teams.manage`, owners and admins; `members.read`, any member (403 `insufficient_role` otherwise).")
  })

  it("keeps the actions only a key that names them may take", () => {
    expect(Policy.KeyGuardedActions).toEqual([
      "apiKeys.manage",
      "members.manageOwners",
      "members.transferOwnership",
      "members.changeRole",
      "invitations.inviteAdmins",
      "audit.manage",
      "sso.manage",
      "scim.manage",
      "organizations.setPlan",
      "admin.claimOperator",
      "members.resetPassword",
      "admin.resetPasswords",
      "admin.manageUsers",
      "admin.readUsers",
      "admin.readOrganizations",
      "organizations.delete",
      "admin.deleteOrganizations"
    ])
    expect(Policy.ActionsExtension).toBe("x-orgplane-actions")
  })

  it("marks an endpoint with the actions it requires, as the document shows them", () => {
    const endpoint = HttpApiEndpoint.post("create", "/v1/teams").pipe(Policy.requires("teams.manage"))
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Override))).toEqual({ "x-orgplane-actions": ["teams.manage"] })
  })
})
