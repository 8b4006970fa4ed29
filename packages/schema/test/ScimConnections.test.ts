import { describe, expect, it } from "@effect/vitest"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as ScimConnections from "../src/ScimConnections.js"
import { decode4, documentExamples, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const ScimConnections3 = effect3("ScimConnections")

/** The examples the document gives at `at` (`POST /v1/scim/connections request`…), at least one. */
const examplesAt = (at: string) => {
  const found = documentExamples().filter((example) => example.at === `${at} application/json`).map(({ value }) => value)
  expect(found.length, at).toBeGreaterThan(0)
  return found
}

describe("ScimConnections on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(ScimConnections, ScimConnections3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names.length).toBeGreaterThan(25)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ScimConnections.ScimConnection, ScimConnections3.ScimConnection, examplesOfComponent("ScimConnection"))
    roundTrips(ScimConnections.ScimConnectionResponse, ScimConnections3.ScimConnectionResponse, examplesOfComponent("ScimConnectionResponse"))
    roundTrips(ScimConnections.ScimConnectionPage, ScimConnections3.ScimConnectionPage, examplesOfComponent("ScimConnectionPage"))
    roundTrips(ScimConnections.ScimReconcileReport, ScimConnections3.ScimReconcileReport, examplesOfComponent("ScimReconcileReport"))
    roundTrips(ScimConnections.UpdatedScimConnection, ScimConnections3.UpdatedScimConnection, examplesOfComponent("UpdatedScimConnection"))
    roundTrips(ScimConnections.ScimToken, ScimConnections3.ScimToken, examplesOfComponent("ScimToken"))
    roundTrips(ScimConnections.ScimTokenPage, ScimConnections3.ScimTokenPage, examplesOfComponent("ScimTokenPage"))
    roundTrips(ScimConnections.ScimEvent, ScimConnections3.ScimEvent, examplesOfComponent("ScimEvent"))
    roundTrips(ScimConnections.ScimEventPage, ScimConnections3.ScimEventPage, examplesOfComponent("ScimEventPage"))
    roundTrips(ScimConnections.CreateScimConnectionRequest, ScimConnections3.CreateScimConnectionRequest, examplesAt("POST /v1/scim/connections request"))
    roundTrips(ScimConnections.UpdateScimConnectionRequest, ScimConnections3.UpdateScimConnectionRequest, examplesAt("PATCH /v1/scim/connections/{connectionId} request"))
    roundTrips(ScimConnections.CreateScimTokenRequest, ScimConnections3.CreateScimTokenRequest, examplesAt("POST /v1/scim/connections/{connectionId}/tokens request"))
    roundTrips(ScimConnections.CreatedScimToken, ScimConnections3.CreatedScimToken, examplesAt("POST /v1/scim/connections/{connectionId}/tokens 201"))
    roundTrips(ScimConnections.ScimEventListQuery, ScimConnections3.ScimEventListQuery, wireExamples(ScimConnections.ScimEventListQuery.ast))
  })

  it("takes and refuses what the Effect 3 schemas take and refuse", () => {
    const rule = { group: "Platform admins", role: "admin" }
    sameOn(ScimConnections.CreateScimConnectionRequest, ScimConnections3.CreateScimConnectionRequest, [
      { name: "Okta" },
      { name: "  Okta  ", groupMappingMode: "link_by_external_key", defaultRole: "admin", roleRules: [rule] },
      { name: "Okta", roleRules: Array.from({ length: 100 }, () => rule) },
      {},
      { name: "" },
      { name: "x".repeat(101) },
      { name: "Okta", groupMappingMode: "sync_everything" },
      { name: "Okta", defaultRole: "owner" },
      { name: "Okta", roleRules: [{ group: "Admins", role: "owner" }] },
      { name: "Okta", roleRules: [{ group: " ", role: "admin" }] },
      { name: "Okta", roleRules: Array.from({ length: 101 }, () => rule) }
    ])
    sameOn(ScimConnections.UpdateScimConnectionRequest, ScimConnections3.UpdateScimConnectionRequest, [
      { groupMappingMode: "metadata_only" },
      { roleRules: [] },
      {},
      { name: "" },
      { defaultRole: null }
    ])
    sameOn(ScimConnections.CreateScimTokenRequest, ScimConnections3.CreateScimTokenRequest, [
      { name: "Okta 2026-11" },
      { name: "Okta 2026-11", expiresAt: "2027-11-02T10:31:00Z" },
      { name: "x".repeat(65) },
      { name: "Okta", expiresAt: "next year" },
      { expiresAt: "2027-11-02T10:31:00Z" }
    ])
    sameOn(ScimConnections.ScimEventListQuery, ScimConnections3.ScimEventListQuery, [
      {},
      { outcome: "refused", resourceType: "User", limit: "20" },
      { cursor: "abc" },
      { outcome: "maybe" },
      { resourceType: "Team" },
      { limit: "0" }
    ])
    sameOn(ScimConnections.ScimTokenPath, ScimConnections3.ScimTokenPath, [
      { connectionId: "scc_01m6dsg7e0f5cv7n2jh5v61kpp", tokenId: "sct_01m6dsg7e0eyyv2xkt2gtqwy4m" },
      { connectionId: "scc_01m6dsg7e0f5cv7n2jh5v61kpp", tokenId: "scc_01m6dsg7e0f5cv7n2jh5v61kpp" }
    ])
    expect(decode4(ScimConnections.UpdateScimConnectionRequest, {})).toMatchObject({
      ok: false,
      message: expect.stringContaining("give name, groupMappingMode, defaultRole, roleRules or several")
    })
  })
})
