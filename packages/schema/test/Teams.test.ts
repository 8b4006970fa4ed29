import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import { exampleId } from "../src/Ids.js"
import { grace as graceExample } from "../src/Examples.js"
import * as Teams from "../src/Teams.js"
import { operationExamples } from "./catalog.js"
import { decode4, examplesOfComponent, type Json, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Teams3 = effect3("Teams")

const memberIdsDescription = "Ids (`om_`) of active members of the organization; at most 500 entries. A repeated id is taken once."

/** `schema` with the description `from` (which it must have) read as `to`. */
const describedAs = (schema: Json, from: string, to: string): Json => {
  expect(JSON.stringify(schema)).toContain(`"description":${JSON.stringify(from)}`)
  return JSON.parse(JSON.stringify(schema).replace(`"description":${JSON.stringify(from)}`, `"description":${JSON.stringify(to)}`))
}

describe("Teams on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Teams, Teams3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, for the OpenAPI normalisation step: Effect 3 described a checked array by its last check
      // (`memberIds: MemberIds.pipe(minItems(1))` as "an array of at least 1 item(s)", in place of MemberIds' own
      // description); Effect 4 generates no description and keeps MemberIds'. Read as Effect 3's to compare the rest.
      AddTeamMembersRequest: (schema) => describedAs(schema, memberIdsDescription, "an array of at least 1 item(s)")
    })
    expect(names).toEqual(expect.arrayContaining(["Team", "TeamPage", "TeamListQuery", "CreateTeamRequest", "UpdateTeamRequest", "AddTeamMembersRequest", "MemberIds"]))
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Teams.Team, Teams3.Team, examplesOfComponent("Team"))
    roundTrips(Teams.TeamResponse, Teams3.TeamResponse, examplesOfComponent("TeamResponse"))
    roundTrips(Teams.TeamPage, Teams3.TeamPage, examplesOfComponent("TeamPage"))
    roundTrips(Teams.CreateTeamRequest, Teams3.CreateTeamRequest, operationExamples("POST /v1/teams request"))
    roundTrips(Teams.UpdateTeamRequest, Teams3.UpdateTeamRequest, operationExamples("PATCH /v1/teams/{teamId} request"))
    roundTrips(Teams.AddTeamMembersRequest, Teams3.AddTeamMembersRequest, operationExamples("POST /v1/teams/{teamId}/members request"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    const grace = graceExample.membershipId
    const team = exampleId("tem")
    const ids = Array.from({ length: 501 }, () => grace)
    sameOn(Teams.CreateTeamRequest, Teams3.CreateTeamRequest, [
      { name: "Platform" },
      { name: "  Platform  ", memberIds: [], externalKey: " grp-platform " },
      { name: "Platform", memberIds: ids.slice(0, 500) },
      { name: "" },
      { name: "   " },
      { name: "x".repeat(256) },
      { name: "Plat\u0000form" },
      { name: "Platform", memberIds: ids },
      { name: "Platform", memberIds: [team] },
      { name: "Platform", externalKey: "" },
      { name: "Platform", externalKey: null },
      {}
    ])
    sameOn(Teams.UpdateTeamRequest, Teams3.UpdateTeamRequest, [
      { name: "Platform engineering" },
      { memberIds: [] },
      { externalKey: null },
      { externalKey: "grp" },
      {},
      { name: "" },
      { memberIds: ids },
      { externalKey: "" }
    ])
    sameOn(Teams.AddTeamMembersRequest, Teams3.AddTeamMembersRequest, [
      { memberIds: [grace] }, { memberIds: [] }, { memberIds: ids }, { memberIds: ["om_x"] }, {}
    ])
    sameOn(Teams.TeamListQuery, Teams3.TeamListQuery, [
      {}, { q: "plat", memberId: grace, limit: "10" }, { q: "" }, { memberId: team }, { limit: "0" }
    ])
    sameOn(Teams.TeamMemberPath, Teams3.TeamMemberPath, [
      { teamId: team, memberId: grace }, { teamId: grace, memberId: grace }, { teamId: team }
    ])
    expect(decode4(Teams.UpdateTeamRequest, {})).toMatchObject({ ok: false, message: expect.stringContaining("give name, memberIds, externalKey or several") })
  })
})
