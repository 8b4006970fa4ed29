import { describe, expect, it } from "@effect/vitest"
import * as Members from "../src/Members.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const Members3 = effect3("Members")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("Members on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    // No known difference. OwnershipTransfer's `previousOwner` describes a class member (annotateKey): neither Effect
    // 3's document nor Effect 4 writes that description (a class is a transformation: see
    // withoutTransformedMemberDescriptions).
    const names = sameSchemas(Members, Members3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names.length).toBe(10)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Members.Member, Members3.Member, examplesOfComponent("Member"))
    roundTrips(Members.MemberPage, Members3.MemberPage, examplesOfComponent("MemberPage"))
    roundTrips(Members.MemberResponse, Members3.MemberResponse, examplesOfComponent("MemberResponse"))
    roundTrips(Members.OwnershipTransfer, Members3.OwnershipTransfer, examplesOfComponent("OwnershipTransfer"))
    roundTrips(Members.MemberDirectorySettings, Members3.MemberDirectorySettings, examplesOfComponent("MemberDirectorySettings"))
    roundTrips(Members.MemberDirectorySettingsResponse, Members3.MemberDirectorySettingsResponse, examplesOfComponent("MemberDirectorySettingsResponse"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Members.MemberListQuery, Members3.MemberListQuery, [
      {}, { role: "admin", q: "grace", includeRemoved: "false" }, { q: "  grace  " }, { limit: "20", cursor: "c" },
      { role: "boss" }, { q: "" }, { q: "x".repeat(256) }, { includeRemoved: "yes" }, { limit: "101" }, { cursor: "" }
    ])
    sameOn(Members.ChangeRoleRequest, Members3.ChangeRoleRequest, [{ role: "owner" }, { role: "member" }, { role: "boss" }, {}])
    sameOn(Members.MemberPath, Members3.MemberPath, [{ memberId: "om_01m6dsg7e0e149zv53hej0fvry" }, { memberId: "usr_01m6dsg7e0fp28mz11s94rrak7" }, { memberId: "om_x" }])
    sameOn(Members.UpdateMemberDirectorySettingsRequest, Members3.UpdateMemberDirectorySettingsRequest, [
      { emailsVisibleToMembers: true }, { emailsVisibleToMembers: false }, { emailsVisibleToMembers: "true" }, {}
    ])
    sameOn(Members.Member, Members3.Member, [
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", name: null, role: "member", createdAt: "2026-11-02T09:30:00Z", removedAt: null },
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", userId: null, name: "Ada", email: null, role: "owner", createdAt: "2026-11-02T09:30:00Z", removedAt: "2026-11-03T09:30:00+02:00", suspendedAt: null },
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", name: null, role: "member", createdAt: "2026-11-02", removedAt: null },
      { id: "om_01m6dsg7e0e149zv53hej0fvry", organizationId: "org_01m6dsg7e0f3e93sqmgd9q3mye", name: null, role: "member", createdAt: "2026-11-02T09:30:00Z" }
    ])
  })
})
