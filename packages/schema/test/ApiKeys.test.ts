/**
 * ApiKeys.ts: the document's examples of keys decode and encode back unchanged, the requests and scopes taken and
 * refused, and the scopes a key is given (an area's `.*` expanded and collapsed, a key's defaults by role).
 */
import { describe, expect, it } from "@effect/vitest"
import * as ApiKeys from "../src/ApiKeys.js"
import type { Role } from "../src/Organizations.js"
import { Actions, allows } from "../src/Policy.js"
import { examplesAt, examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("ApiKeys", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ApiKeys.ApiKey, examplesOfComponent("ApiKey"))
    roundTrips(ApiKeys.ApiKeyPage, examplesOfComponent("ApiKeyPage"))
    roundTrips(ApiKeys.CreateApiKeyRequest, examplesAt("POST /v1/api-keys request"))
    roundTrips(ApiKeys.CreatedApiKey, examplesAt("POST /v1/api-keys 201"))
  })

  it("takes the key requests and scopes it documents and refuses the others", () => {
    takes(ApiKeys.CreateApiKeyRequest, [
      { name: "CI deploys" },
      { name: " CI ", expiresAt: "2027-01-31T10:20:00+01:00", scopes: ["teams.*", "members.read"] },
      { name: "CI", scopes: ["admin.*"] }
    ])
    refuses(ApiKeys.CreateApiKeyRequest, [
      { name: "" },
      { name: "x".repeat(65) },
      { name: "CI", scopes: [] },
      { name: "CI", scopes: ["teams.delete"] },
      { name: "CI", scopes: ["*"] },
      { name: "CI", scopes: Array.from({ length: 101 }, () => "teams.read") },
      { name: "CI", expiresAt: "2027-01-31" }
    ])
    takes(ApiKeys.ApiKeyScopeRequest, ["members.read", "members.*"])
    refuses(ApiKeys.ApiKeyScopeRequest, ["members", "nothing.*", 1])
  })

  it("expands an area's scope to its actions and collapses a whole area back to it", () => {
    expect(ApiKeys.expandScopes([])).toEqual([])
    expect(ApiKeys.expandScopes(["teams.*"])).toEqual(["teams.read", "teams.manage"])
    // In the policy table's order, each action once.
    expect(ApiKeys.expandScopes(["teams.*", "teams.read", "members.read"])).toEqual(["members.read", "teams.read", "teams.manage"])
    expect(ApiKeys.expandScopes(["admin.*", "apiKeys.manage"])).toEqual([
      "apiKeys.manage",
      "admin.readMetrics",
      "admin.readUsers",
      "admin.manageUsers",
      "admin.readOrganizations",
      "admin.deleteOrganizations",
      "admin.claimOperator",
      "admin.resetPasswords"
    ])
    expect(ApiKeys.expandScopes([...Actions])).toEqual(Actions)
    expect(ApiKeys.collapseScopes([])).toEqual([])
    expect(ApiKeys.collapseScopes(["teams.read", "teams.manage"])).toEqual(["teams.*"])
    expect(ApiKeys.collapseScopes(["members.read", "teams.read", "teams.manage"])).toEqual(["members.read", "teams.*"])
    expect(ApiKeys.collapseScopes(ApiKeys.expandScopes(["admin.*", "apiKeys.manage"]))).toEqual(["apiKeys.*", "admin.*"])
    expect(ApiKeys.collapseScopes(["teams.read"])).toEqual(["teams.read"])
    const areas = new Set(Actions.map((action) => `${action.slice(0, action.indexOf("."))}.*`))
    expect(ApiKeys.collapseScopes(Actions)).toEqual([...areas])
  })

  it("gives a key made without scopes what its maker's role allows, but for the actions only a naming scope grants", () => {
    const leftOut = (role: Role) => {
      const defaults = ApiKeys.defaultScopes((action) => allows(role, action))
      return Actions.filter((action) => allows(role, action) && !defaults.includes(action))
    }
    expect(leftOut("member")).toEqual([])
    expect(ApiKeys.defaultScopes((action) => allows("member", action))).toEqual(Actions.filter((action) => allows("member", action)))
    expect(leftOut("admin")).toEqual([
      "members.changeRole",
      "invitations.inviteAdmins",
      "sso.manage",
      "scim.manage",
      "apiKeys.manage",
      "organizations.setPlan",
      "admin.readUsers",
      "admin.manageUsers",
      "admin.readOrganizations",
      "admin.deleteOrganizations",
      "members.resetPassword",
      "admin.resetPasswords"
    ])
    expect(leftOut("owner")).toEqual([
      "members.changeRole",
      "invitations.inviteAdmins",
      "sso.manage",
      "scim.manage",
      "apiKeys.manage",
      "audit.manage",
      "organizations.delete",
      "organizations.setPlan",
      "admin.readUsers",
      "admin.manageUsers",
      "admin.readOrganizations",
      "admin.deleteOrganizations",
      "admin.claimOperator",
      "members.resetPassword",
      "admin.resetPasswords",
      "members.manageOwners",
      "members.transferOwnership"
    ])
    expect(ApiKeys.defaultScopes(() => true)).not.toContain("apiKeys.manage")
  })
})
