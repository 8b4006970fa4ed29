import { describe, expect, it } from "@effect/vitest"
import { AdminApi } from "../src/AdminApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { accountDeletionAsDocumented } from "./people.js"
import { effect3 } from "./effect3.js"

const AdminApi3 = effect3("AdminApi").AdminApi

describe("AdminApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(AdminApi, AdminApi3, {
      // The real differences Account.test.ts names for AccountDeletion (accountDeletionAsDocumented).
      "DELETE /v1/admin/users/{userId}": accountDeletionAsDocumented
    })
    expect(operations).toHaveLength(11)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(AdminApi, AdminApi3)).toBeGreaterThan(0)
  })
})
