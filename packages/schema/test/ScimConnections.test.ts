/** ScimConnections.ts: SCIM connections, their tokens and log: the document's examples, requests taken and refused. */
import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as ScimConnections from "../src/ScimConnections.js"
import { documentExamples, examplesOfComponent } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

/** The examples the document gives at `at` (`POST /v1/scim/connections request`…), at least one. */
const examplesAt = (at: string) => {
  const found = documentExamples().filter((example) => example.at === `${at} application/json`).map(({ value }) => value)
  expect(found.length, at).toBeGreaterThan(0)
  return found
}

describe("ScimConnections", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ScimConnections.ScimConnection, examplesOfComponent("ScimConnection"))
    roundTrips(ScimConnections.ScimConnectionResponse, examplesOfComponent("ScimConnectionResponse"))
    roundTrips(ScimConnections.ScimConnectionPage, examplesOfComponent("ScimConnectionPage"))
    roundTrips(ScimConnections.ScimReconcileReport, examplesOfComponent("ScimReconcileReport"))
    roundTrips(ScimConnections.UpdatedScimConnection, examplesOfComponent("UpdatedScimConnection"))
    roundTrips(ScimConnections.ScimToken, examplesOfComponent("ScimToken"))
    roundTrips(ScimConnections.ScimTokenPage, examplesOfComponent("ScimTokenPage"))
    roundTrips(ScimConnections.ScimEvent, examplesOfComponent("ScimEvent"))
    roundTrips(ScimConnections.ScimEventPage, examplesOfComponent("ScimEventPage"))
    roundTrips(ScimConnections.CreateScimConnectionRequest, examplesAt("POST /v1/scim/connections request"))
    roundTrips(ScimConnections.UpdateScimConnectionRequest, examplesAt("PATCH /v1/scim/connections/{connectionId} request"))
    roundTrips(ScimConnections.CreateScimTokenRequest, examplesAt("POST /v1/scim/connections/{connectionId}/tokens request"))
    roundTrips(ScimConnections.CreatedScimToken, examplesAt("POST /v1/scim/connections/{connectionId}/tokens 201"))
    roundTrips(ScimConnections.ScimEventListQuery, wireExamples(ScimConnections.ScimEventListQuery.ast))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const rule = { group: "Platform admins", role: "admin" }
    takes(ScimConnections.CreateScimConnectionRequest, [
      { name: "Okta" },
      { name: "  Okta  ", groupMappingMode: "link_by_external_key", defaultRole: "admin", roleRules: [rule] },
      { name: "Okta", roleRules: Array.from({ length: 100 }, () => rule) }
    ])
    refuses(ScimConnections.CreateScimConnectionRequest, [
      {},
      { name: "" },
      { name: "x".repeat(101) },
      { name: "Okta", groupMappingMode: "sync_everything" },
      { name: "Okta", defaultRole: "owner" },
      { name: "Okta", roleRules: [{ group: "Admins", role: "owner" }] },
      { name: "Okta", roleRules: [{ group: " ", role: "admin" }] },
      { name: "Okta", roleRules: Array.from({ length: 101 }, () => rule) }
    ])
    takes(ScimConnections.UpdateScimConnectionRequest, [
      { groupMappingMode: "metadata_only" },
      { roleRules: [] }
    ])
    refuses(ScimConnections.UpdateScimConnectionRequest, [
      {},
      { name: "" },
      { defaultRole: null }
    ])
    takes(ScimConnections.CreateScimTokenRequest, [
      { name: "Okta 2026-11" },
      { name: "Okta 2026-11", expiresAt: "2027-11-02T10:31:00Z" }
    ])
    refuses(ScimConnections.CreateScimTokenRequest, [
      { name: "x".repeat(65) },
      { name: "Okta", expiresAt: "next year" },
      { expiresAt: "2027-11-02T10:31:00Z" }
    ])
    takes(ScimConnections.ScimEventListQuery, [
      {},
      { outcome: "refused", resourceType: "User", limit: "20" },
      { cursor: "abc" }
    ])
    refuses(ScimConnections.ScimEventListQuery, [
      { outcome: "maybe" },
      { resourceType: "Team" },
      { limit: "0" }
    ])
    takes(ScimConnections.ScimTokenPath, [
      { connectionId: "scc_01m6dsg7e0f5cv7n2jh5v61kpp", tokenId: "sct_01m6dsg7e0eyyv2xkt2gtqwy4m" }
    ])
    refuses(ScimConnections.ScimTokenPath, [
      { connectionId: "scc_01m6dsg7e0f5cv7n2jh5v61kpp", tokenId: "scc_01m6dsg7e0f5cv7n2jh5v61kpp" }
    ])
    expect(decode(ScimConnections.UpdateScimConnectionRequest, {})).toMatchObject({
      ok: false,
      message: expect.stringContaining("give name, groupMappingMode, defaultRole, roleRules or several")
    })
  })
})
