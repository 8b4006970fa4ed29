import { describe, expect, it } from "@effect/vitest"
import { TeamsApi } from "../src/TeamsApi.js"
import { sameExamples, sameOperations } from "./apiDifferential.js"
import { type Json } from "./differential.js"
import { effect3 } from "./effect3.js"

const TeamsApi3 = effect3("TeamsApi").TeamsApi

describe("TeamsApi on Effect 4", () => {
  it("declares the operations of the Effect 3 group", () => {
    const operations = sameOperations(TeamsApi, TeamsApi3, {
      // The real difference Teams.test.ts names: Effect 3 described the added `memberIds` by its last check; Effect 4
      // keeps MemberIds' description. Read as Effect 3's to compare the rest.
      "POST /v1/teams/{teamId}/members": (operation: Json): Json => {
        const memberIds = JSON.stringify("Ids (`om_`) of active members of the organization; at most 500 entries. A repeated id is taken once.")
        expect(JSON.stringify(operation)).toContain(memberIds)
        return JSON.parse(JSON.stringify(operation).replace(memberIds, JSON.stringify("an array of at least 1 item(s)")))
      }
    })
    expect(operations).toHaveLength(7)
  })

  it("shows the examples of the Effect 3 group", () => {
    expect(sameExamples(TeamsApi, TeamsApi3)).toBeGreaterThan(0)
  })
})
