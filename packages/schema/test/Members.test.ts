/** Members.ts: an organization's members and their directory: the document's examples, requests taken and refused. */
import { describe, it } from "@effect/vitest"
import * as Members from "../src/Members.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Members", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Members.Member, examplesOfComponent("Member"))
    roundTrips(Members.MemberPage, examplesOfComponent("MemberPage"))
    roundTrips(Members.MemberResponse, examplesOfComponent("MemberResponse"))
    roundTrips(Members.OwnershipTransfer, examplesOfComponent("OwnershipTransfer"))
    roundTrips(Members.MemberDirectorySettings, examplesOfComponent("MemberDirectorySettings"))
    roundTrips(Members.MemberDirectorySettingsResponse, examplesOfComponent("MemberDirectorySettingsResponse"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Members.MemberListQuery, [
      {},
      { role: "admin", q: "grace", includeRemoved: "false" },
      { q: "  grace  " },
      { limit: "20", cursor: "c" }
    ])
    refuses(Members.MemberListQuery, [
      { role: "boss" },
      { q: "" },
      { q: "x".repeat(256) },
      { includeRemoved: "yes" },
      { limit: "101" },
      { cursor: "" }
    ])
    takes(Members.ChangeRoleRequest, [{ role: "owner" }, { role: "member" }])
    refuses(Members.ChangeRoleRequest, [{ role: "boss" }, {}])
    takes(Members.MemberPath, [{ memberId: "om_01m6dsg7e0e149zv53hej0fvry" }])
    refuses(Members.MemberPath, [{ memberId: "usr_01m6dsg7e0fp28mz11s94rrak7" }, { memberId: "om_x" }])
    takes(Members.UpdateMemberDirectorySettingsRequest, [
      { emailsVisibleToMembers: true },
      { emailsVisibleToMembers: false }
    ])
    refuses(Members.UpdateMemberDirectorySettingsRequest, [
      { emailsVisibleToMembers: "true" },
      {}
    ])
    takes(Members.Member, [
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", name: null, role: "member", createdAt: "2026-11-02T09:30:00Z", removedAt: null },
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", userId: null, name: "Ada", email: null, role: "owner", createdAt: "2026-11-02T09:30:00Z", removedAt: "2026-11-03T09:30:00+02:00", suspendedAt: null }
    ])
    refuses(Members.Member, [
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", name: null, role: "member", createdAt: "2026-11-02", removedAt: null },
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", name: null, role: "member", createdAt: "2026-11-02T09:30:00Z" }
    ])
  })
})
