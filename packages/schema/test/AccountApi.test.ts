import { describe, expect, it } from "@effect/vitest"
import * as OpenApi from "effect/http-api/OpenApi"
import { groupDocument } from "./apiDifferential.js"
import { AccountApi } from "../src/AccountApi.js"
import { apiOf } from "../src/ApiOf.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { accountDeletionAsDocumented, memberAt } from "./people.js"
import { effect3 } from "./effect3.js"

const AccountApi3 = effect3("AccountApi").AccountApi

/** The headers of the export's 200 in `document`. */
const exportHeaders = (document: unknown) => memberAt(document, "paths", "/v1/me/export", "get", "responses", "200", "headers")

describe("AccountApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(AccountApi, AccountApi3, {
      // The real differences Account.test.ts names for AccountDeletion (accountDeletionAsDocumented).
      "DELETE /v1/me": accountDeletionAsDocumented
    })
    expect(operations).toHaveLength(2)
  })

  it("says the export is an attachment, as the Effect 3 group does", () => {
    const headers = exportHeaders(OpenApi.fromApi(apiOf(AccountApi)))
    expect(headers).toMatchObject({ "Content-Disposition": { schema: { type: "string" } } })
    expect(headers).toEqual(exportHeaders(groupDocument(AccountApi3)))
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(AccountApi, AccountApi3)).toBeGreaterThan(0)
  })
})
