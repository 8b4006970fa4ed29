import { describe, expect, it } from "@effect/vitest"
import * as Access from "../src/Access.js"
import { exampleId } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { operationExamples } from "./catalog.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const Access3 = effect3("Access")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("Access on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Access, Access3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    })
    expect(names.length).toBeGreaterThan(25)
  })

  it("orders the roles as Effect 3 does", () => {
    expect(Access.AccessRoles).toEqual(Access3.AccessRoles)
    for (const role of Access.AccessRoles) {
      for (const required of Access.AccessRoles) expect(Access.includesRole(role, required)).toBe(Access3.includesRole(role, required))
    }
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Access.ConfigObjectAccessGrant, Access3.ConfigObjectAccessGrant, examplesOfComponent("ConfigObjectAccessGrant"))
    roundTrips(Access.PluginAccessGrant, Access3.PluginAccessGrant, examplesOfComponent("PluginAccessGrant"))
    roundTrips(Access.MarketplaceAccessGrant, Access3.MarketplaceAccessGrant, examplesOfComponent("MarketplaceAccessGrant"))
    roundTrips(Access.ConnectorInstanceAccessGrant, Access3.ConnectorInstanceAccessGrant, examplesOfComponent("ConnectorInstanceAccessGrant"))
    roundTrips(Access.McpConnectionAccessGrant, Access3.McpConnectionAccessGrant, examplesOfComponent("McpConnectionAccessGrant"))
    roundTrips(Access.TemplateAccessGrant, Access3.TemplateAccessGrant, examplesOfComponent("TemplateAccessGrant"))
    roundTrips(Access.LlmProviderAccessGrant, Access3.LlmProviderAccessGrant, examplesOfComponent("LlmProviderAccessGrant"))
    roundTrips(Access.ConfigObjectAccessGrantPage, Access3.ConfigObjectAccessGrantPage, examplesOfComponent("ConfigObjectAccessGrantPage"))
    roundTrips(Access.MarketplaceAccessGrantPage, Access3.MarketplaceAccessGrantPage, examplesOfComponent("MarketplaceAccessGrantPage"))
    // The 201 answers are inline in the document.
    roundTrips(Access.PluginAccessGrantResponse, Access3.PluginAccessGrantResponse, operationExamples("POST /v1/plugins/{pluginId}/access 201"))
    roundTrips(Access.CreateAccessGrantRequest, Access3.CreateAccessGrantRequest, operationExamples("POST /v1/config-objects/{configObjectId}/access request"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Access.CreateAccessGrantRequest, Access3.CreateAccessGrantRequest, [
      { teamId: exampleId("tem"), role: "editor" },
      { orgMembershipId: exampleId("om"), role: "viewer" },
      { orgWide: true, role: "manager" },
      { role: "editor" },
      { teamId: exampleId("tem"), orgWide: true, role: "editor" },
      { orgMembershipId: exampleId("om"), teamId: exampleId("tem"), role: "editor" },
      { orgWide: false, role: "editor" },
      { teamId: exampleId("tem"), role: "owner" },
      { teamId: exampleId("om"), role: "editor" },
      { teamId: exampleId("tem") }
    ])
    sameOn(Access.AccessListQuery, Access3.AccessListQuery, [{}, { includeRevoked: "true", limit: "5" }, { includeRevoked: "no" }, { limit: "x" }])
    sameOn(Access.McpConnectionGrantPath, Access3.McpConnectionGrantPath, [
      { connectionId: exampleId("emc"), grantId: exampleId("emg") },
      { connectionId: exampleId("emc"), grantId: exampleId("coa") },
      { connectionId: exampleId("emc") }
    ])
    sameOn(Access.MarketplaceGrantPath, Access3.MarketplaceGrantPath, [
      { marketplaceId: exampleId("mkt"), grantId: exampleId("mag") },
      { marketplaceId: exampleId("mag"), grantId: exampleId("mkt") }
    ])
  })
})
