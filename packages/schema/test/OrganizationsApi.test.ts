import { describe, expect, it } from "@effect/vitest"
import { OrganizationsApi } from "../src/OrganizationsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { type Json } from "./differential.js"
import { effect3 } from "./effect3.js"

const OrganizationsApi3 = effect3("OrganizationsApi").OrganizationsApi

describe("OrganizationsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(OrganizationsApi, OrganizationsApi3, {
      // The real difference Organizations.test.ts names: Effect 3's override of `confirmName` left its description
      // out of the document; Effect 4 keeps it. Dropped here to compare the rest.
      "DELETE /v1/organization": (operation: Json): Json =>
        JSON.parse(
          JSON.stringify(operation).replace(
            `"description":"The organization's name exactly as \`GET /v1/organization\` shows it: a deletion names what it deletes.",`,
            ""
          )
        )
    })
    expect(operations).toHaveLength(5)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(OrganizationsApi, OrganizationsApi3)).toBeGreaterThan(0)
  })
})
