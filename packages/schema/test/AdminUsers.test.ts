/** AdminUsers.ts: the instance's accounts as the operator lists and changes them, their examples and refusals. */
import { describe, it } from "@effect/vitest"
import * as AdminUsers from "../src/AdminUsers.js"
import { examplesOfComponent } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

const user = {
  id: "usr_01m6dsg7e0fp28mz11s94rrak7",
  email: "ada@acme.example",
  name: "Ada Lovelace",
  createdAt: "2026-11-02T09:30:00.000Z",
  emailVerified: false,
  disabledAt: null,
  organizationCount: 1
}

describe("AdminUsers", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(AdminUsers.AdminUser, examplesOfComponent("AdminUser"))
    roundTrips(AdminUsers.AdminUserPage, examplesOfComponent("AdminUserPage"))
    roundTrips(AdminUsers.AdminUserResponse, examplesOfComponent("AdminUserResponse"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(AdminUsers.AdminUser, [
      user,
      { ...user, organizationCount: 0, disabledAt: "2026-11-03T09:30:00Z" }
    ])
    refuses(AdminUsers.AdminUser, [
      { ...user, organizationCount: -1 },
      { ...user, organizationCount: 1.5 },
      { ...user, organizationCount: "1" },
      { ...user, disabledAt: "yesterday" }
    ])
    takes(AdminUsers.AdminUserListQuery, [
      {},
      { email: " acme.example ", disabled: "false" },
      { disabled: "true", limit: "100" }
    ])
    refuses(AdminUsers.AdminUserListQuery, [
      { email: "" },
      { disabled: "no" },
      { limit: "101" },
      { email: "x".repeat(256) }
    ])
    takes(AdminUsers.AdminUserPath, [{ userId: user.id }])
    refuses(AdminUsers.AdminUserPath, [{ userId: "org_01m6dsg7e0f3e93sqmgd9q3mye" }])
  })
})
