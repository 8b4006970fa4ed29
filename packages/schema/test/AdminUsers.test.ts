import { describe, expect, it } from "@effect/vitest"
import * as AdminUsers from "../src/AdminUsers.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { countsAsDocumented } from "./people.js"
import { effect3 } from "./effect3.js"

const AdminUsers3 = effect3("AdminUsers")
const OpenApiExamples3 = effect3("OpenApiExamples")

const user = {
  id: "usr_01m6dsg7e0fp28mz11s94rrak7",
  email: "ada@acme.example",
  name: "Ada Lovelace",
  createdAt: "2026-11-02T09:30:00.000Z",
  emailVerified: false,
  disabledAt: null,
  organizationCount: 1
}

describe("AdminUsers on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(AdminUsers, AdminUsers3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, for the OpenAPI normalisation step: `organizationCount` (countsAsDocumented).
      AdminUser: (schema) => countsAsDocumented(schema, 1)
    })
    expect(names.sort()).toEqual(["AdminUser", "AdminUserListQuery", "AdminUserPage", "AdminUserPath", "AdminUserResponse"])
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(AdminUsers.AdminUser, AdminUsers3.AdminUser, examplesOfComponent("AdminUser"))
    roundTrips(AdminUsers.AdminUserPage, AdminUsers3.AdminUserPage, examplesOfComponent("AdminUserPage"))
    roundTrips(AdminUsers.AdminUserResponse, AdminUsers3.AdminUserResponse, examplesOfComponent("AdminUserResponse"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(AdminUsers.AdminUser, AdminUsers3.AdminUser, [
      user, { ...user, organizationCount: 0, disabledAt: "2026-11-03T09:30:00Z" },
      { ...user, organizationCount: -1 }, { ...user, organizationCount: 1.5 }, { ...user, organizationCount: "1" }, { ...user, disabledAt: "yesterday" }
    ])
    sameOn(AdminUsers.AdminUserListQuery, AdminUsers3.AdminUserListQuery, [
      {}, { email: " acme.example ", disabled: "false" }, { disabled: "true", limit: "100" },
      { email: "" }, { disabled: "no" }, { limit: "101" }, { email: "x".repeat(256) }
    ])
    sameOn(AdminUsers.AdminUserPath, AdminUsers3.AdminUserPath, [{ userId: user.id }, { userId: "org_01m6dsg7e0f3e93sqmgd9q3mye" }])
  })
})
