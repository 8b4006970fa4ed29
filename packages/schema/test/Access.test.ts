/**
 * Access.ts: the access roles' order (a role includes those below it), the document's examples of the grants decoding
 * and encoding back unchanged, and the grant requests and paths taken and refused.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Access from "../src/Access.js"
import { exampleId } from "../src/Ids.js"
import { examplesOfComponent, operationExamples } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Access", () => {
  it("orders the roles, each including those below it", () => {
    expect(Access.AccessRoles).toEqual(["viewer", "editor", "manager"])
    for (const [at, role] of Access.AccessRoles.entries()) {
      for (const [below, required] of Access.AccessRoles.entries()) expect(Access.includesRole(role, required), `${role} ${required}`).toBe(below <= at)
    }
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Access.ConfigObjectAccessGrant, examplesOfComponent("ConfigObjectAccessGrant"))
    roundTrips(Access.PluginAccessGrant, examplesOfComponent("PluginAccessGrant"))
    roundTrips(Access.MarketplaceAccessGrant, examplesOfComponent("MarketplaceAccessGrant"))
    roundTrips(Access.ConnectorInstanceAccessGrant, examplesOfComponent("ConnectorInstanceAccessGrant"))
    roundTrips(Access.McpConnectionAccessGrant, examplesOfComponent("McpConnectionAccessGrant"))
    roundTrips(Access.TemplateAccessGrant, examplesOfComponent("TemplateAccessGrant"))
    roundTrips(Access.LlmProviderAccessGrant, examplesOfComponent("LlmProviderAccessGrant"))
    roundTrips(Access.ConfigObjectAccessGrantPage, examplesOfComponent("ConfigObjectAccessGrantPage"))
    roundTrips(Access.MarketplaceAccessGrantPage, examplesOfComponent("MarketplaceAccessGrantPage"))
    // The 201 answers are inline in the document.
    roundTrips(Access.PluginAccessGrantResponse, operationExamples("POST /v1/plugins/{pluginId}/access 201"))
    roundTrips(Access.CreateAccessGrantRequest, operationExamples("POST /v1/config-objects/{configObjectId}/access request"))
  })

  it("takes the grant requests and paths it documents and refuses the others", () => {
    takes(Access.CreateAccessGrantRequest, [
      { teamId: exampleId("tem"), role: "editor" },
      { orgMembershipId: exampleId("om"), role: "viewer" },
      { orgWide: true, role: "manager" }
    ])
    refuses(Access.CreateAccessGrantRequest, [
      { role: "editor" },
      { teamId: exampleId("tem"), orgWide: true, role: "editor" },
      { orgMembershipId: exampleId("om"), teamId: exampleId("tem"), role: "editor" },
      { orgWide: false, role: "editor" },
      { teamId: exampleId("tem"), role: "owner" },
      { teamId: exampleId("om"), role: "editor" },
      { teamId: exampleId("tem") }
    ])
    takes(Access.AccessListQuery, [{}, { includeRevoked: "true", limit: "5" }])
    refuses(Access.AccessListQuery, [{ includeRevoked: "no" }, { limit: "x" }])
    takes(Access.McpConnectionGrantPath, [
      { connectionId: exampleId("emc"), grantId: exampleId("emg") }
    ])
    refuses(Access.McpConnectionGrantPath, [
      { connectionId: exampleId("emc"), grantId: exampleId("coa") },
      { connectionId: exampleId("emc") }
    ])
    takes(Access.MarketplaceGrantPath, [
      { marketplaceId: exampleId("mkt"), grantId: exampleId("mag") }
    ])
    refuses(Access.MarketplaceGrantPath, [
      { marketplaceId: exampleId("mag"), grantId: exampleId("mkt") }
    ])
  })
})
