/**
 * Roles.ts: what `GET /v1/roles` and the document say each role may do, read from the policy table (each role's own
 * actions), with the notes the table cannot say.
 */
import { describe, expect, it } from "@effect/vitest"
import { actionsOf, Policy } from "../src/Policy.js"
import * as Roles from "../src/Roles.js"
import { roundTrips } from "./support/Decoding.js"
import { examplesOfComponent } from "./support/SavedDocument.js"

describe("Roles", () => {
  it("describes each role by what the policy table gives it, lowest first", () => {
    expect(Roles.RoleCapabilities.map(({ description, role }) => [role, description])).toEqual([
      ["member", "Works in the organization."],
      ["admin", "Runs the organization day to day. Everything a member may do, and:"],
      ["owner", "Answers for the organization. Everything an admin may do, and:"]
    ])
    for (const { capabilities, role } of Roles.RoleCapabilities) {
      expect(capabilities.slice(0, actionsOf(role).length), role).toEqual(actionsOf(role).map((action) => Policy[action].capability))
    }
    expect(Roles.RoleCapabilities[2]?.capabilities.at(-1)).toBe("an organization always keeps at least one owner: the last one can be neither demoted nor removed")
    expect(Roles.RolesDescription).toMatch(/^Roles are ordered `owner` > `admin` > `member`; a role may do everything the roles below it may\.\n\n- `member`: Works in the organization\. read the organization's members and their roles; /)
    for (const { role } of Roles.RoleCapabilities) expect(Roles.RolesDescription).toContain(`\n- \`${role}\`: `)
  })

  it("gives RoleInfo's examples and the whole list as the document shows them", () => {
    roundTrips(Roles.RoleInfo, examplesOfComponent("RoleInfo"))
    roundTrips(Roles.RoleList, [{ items: Roles.RoleCapabilities }])
  })
})
