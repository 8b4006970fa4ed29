import { describe, expect, it } from "@effect/vitest"
import { Context, Option } from "effect"
import { HttpApiEndpoint, OpenApi } from "effect/http-api"
import * as Policy from "../src/Policy.js"
import type { Role } from "../src/Organizations.js"
import { as010, guardedSince010 } from "./changes.js"
import { effect3 } from "./effect3.js"

const Policy3 = effect3("Policy")

const roles: ReadonlyArray<Role> = ["member", "admin", "owner"]

describe("Policy on Effect 4", () => {
  it("keeps the Effect 3 policy table and what is derived from it, but for the changes made since (changes.ts)", () => {
    expect(as010(Policy.Policy)).toEqual(Policy3.Policy)
    expect(Policy.Roles).toEqual(Policy3.Roles)
    expect(as010(Policy.Actions)).toEqual(Policy3.Actions)
    // Issue 55: actions a key made without scopes took, now only when a scope names them (changes.ts).
    expect(as010(Policy.KeyGuardedActions).filter((action) => !guardedSince010.includes(action))).toEqual(Policy3.KeyGuardedActions)
    expect(Policy.ActionsExtension).toBe(Policy3.ActionsExtension)
    for (const role of roles) {
      expect(as010(Policy.actionsOf(role))).toEqual(Policy3.actionsOf(role))
      for (const required of roles) expect(Policy.hasRole(role, required)).toBe(Policy3.hasRole(role, required))
      for (const action of as010(Policy.Actions)) expect(Policy.allows(role, action), `${role} ${action}`).toBe(Policy3.allows(role, action))
    }
    expect(Policy.allows("member", "teams.manage")).toBe(false)
    expect(Policy.describeActions(["teams.manage", "members.read"])).toBe(Policy3.describeActions(["teams.manage", "members.read"]))
  })

  it("marks an endpoint with the actions it requires, as the document shows them", () => {
    const endpoint = HttpApiEndpoint.post("create", "/v1/teams").pipe(Policy.requires("teams.manage"))
    expect(Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Override))).toEqual({ "x-orgplane-actions": ["teams.manage"] })
  })
})
