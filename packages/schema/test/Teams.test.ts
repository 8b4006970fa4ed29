/** Teams.ts: teams and their members: the document's examples, requests taken and refused. */
import { describe, expect, it } from "@effect/vitest"
import { exampleId } from "../src/Ids.js"
import { grace as graceExample } from "../src/Examples.js"
import * as Teams from "../src/Teams.js"
import { examplesOfComponent, operationExamples } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Teams", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Teams.Team, examplesOfComponent("Team"))
    roundTrips(Teams.TeamResponse, examplesOfComponent("TeamResponse"))
    roundTrips(Teams.TeamPage, examplesOfComponent("TeamPage"))
    roundTrips(Teams.CreateTeamRequest, operationExamples("POST /v1/teams request"))
    roundTrips(Teams.UpdateTeamRequest, operationExamples("PATCH /v1/teams/{teamId} request"))
    roundTrips(Teams.AddTeamMembersRequest, operationExamples("POST /v1/teams/{teamId}/members request"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const grace = graceExample.membershipId
    const team = exampleId("tem")
    const ids = Array.from({ length: 501 }, () => grace)
    takes(Teams.CreateTeamRequest, [
      { name: "Platform" },
      { name: "  Platform  ", memberIds: [], externalKey: " grp-platform " },
      { name: "Platform", memberIds: ids.slice(0, 500) }
    ])
    refuses(Teams.CreateTeamRequest, [
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
    takes(Teams.UpdateTeamRequest, [
      { name: "Platform engineering" },
      { memberIds: [] },
      { externalKey: null },
      { externalKey: "grp" }
    ])
    refuses(Teams.UpdateTeamRequest, [
      {},
      { name: "" },
      { memberIds: ids },
      { externalKey: "" }
    ])
    takes(Teams.AddTeamMembersRequest, [
      { memberIds: [grace] }
    ])
    refuses(Teams.AddTeamMembersRequest, [
      { memberIds: [] },
      { memberIds: ids },
      { memberIds: ["om_x"] },
      {}
    ])
    takes(Teams.TeamListQuery, [
      {},
      { q: "plat", memberId: grace, limit: "10" }
    ])
    refuses(Teams.TeamListQuery, [
      { q: "" },
      { memberId: team },
      { limit: "0" }
    ])
    takes(Teams.TeamMemberPath, [
      { teamId: team, memberId: grace }
    ])
    refuses(Teams.TeamMemberPath, [
      { teamId: grace, memberId: grace },
      { teamId: team }
    ])
    expect(decode(Teams.UpdateTeamRequest, {})).toMatchObject({ ok: false, message: expect.stringContaining("give name, memberIds, externalKey or several") })
  })
})
