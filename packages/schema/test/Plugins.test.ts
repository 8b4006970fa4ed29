import { describe, expect, it } from "@effect/vitest"
import { exampleId } from "../src/Ids.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import * as Plugins from "../src/Plugins.js"
import { isJsonObject, operationExamples, withMember } from "./catalog.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas, splitKey } from "./differential.js"
import { effect3 } from "./effect3.js"

const OpenApiExamples3 = effect3("OpenApiExamples")
const Plugins3 = effect3("Plugins")

describe("Plugins on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Plugins, Plugins3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, for the OpenAPI normalisation step: the manifest's `setup` is `Struct({})`, which takes
      // any value but null and which Effect 4 documents so (`not: { type: null }`); Effect 3's override documented
      // it as the empty object the server sends (`type: object`, no members). Read back as the document has it.
      PluginManifest: (schema) => {
        const properties = splitKey(schema, "properties").value
        if (!isJsonObject(properties)) throw new Error("PluginManifest has no properties")
        const description = "What installing the plugin needs; empty until MCP connections exist."
        expect(properties["setup"]).toEqual({ not: { type: "null" }, description })
        return withMember(schema, "properties", { ...properties, setup: { type: "object", additionalProperties: false, description } })
      }
    })
    expect(names.length).toBeGreaterThan(40)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Plugins.Plugin, Plugins3.Plugin, examplesOfComponent("Plugin"))
    roundTrips(Plugins.PluginPage, Plugins3.PluginPage, examplesOfComponent("PluginPage"))
    roundTrips(Plugins.PluginDetail, Plugins3.PluginDetail, examplesOfComponent("PluginDetail"))
    roundTrips(Plugins.PluginConfigObject, Plugins3.PluginConfigObject, examplesOfComponent("PluginConfigObject"))
    roundTrips(Plugins.PluginConfigObjectPage, Plugins3.PluginConfigObjectPage, examplesOfComponent("PluginConfigObjectPage"))
    roundTrips(Plugins.Marketplace, Plugins3.Marketplace, examplesOfComponent("Marketplace"))
    roundTrips(Plugins.MarketplacePage, Plugins3.MarketplacePage, examplesOfComponent("MarketplacePage"))
    roundTrips(Plugins.MarketplacePlugin, Plugins3.MarketplacePlugin, examplesOfComponent("MarketplacePlugin"))
    roundTrips(Plugins.MarketplacePluginPage, Plugins3.MarketplacePluginPage, examplesOfComponent("MarketplacePluginPage"))
    roundTrips(Plugins.ResolvedMarketplacePlugin, Plugins3.ResolvedMarketplacePlugin, examplesOfComponent("ResolvedMarketplacePlugin"))
    roundTrips(Plugins.ResolvedMarketplaceResponse, Plugins3.ResolvedMarketplaceResponse, examplesOfComponent("ResolvedMarketplaceResponse"))
    roundTrips(Plugins.MarketplaceSource, Plugins3.MarketplaceSource, examplesOfComponent("MarketplaceSource"))
    roundTrips(Plugins.PluginResponse, Plugins3.PluginResponse, operationExamples("POST /v1/plugins 201"))
    roundTrips(Plugins.CreatePluginRequest, Plugins3.CreatePluginRequest, operationExamples("POST /v1/plugins request"))
    roundTrips(Plugins.UpdatePluginRequest, Plugins3.UpdatePluginRequest, operationExamples("PATCH /v1/plugins/{pluginId} request"))
    roundTrips(Plugins.PluginConfigObjectResponse, Plugins3.PluginConfigObjectResponse, operationExamples("POST /v1/plugins/{pluginId}/config-objects 201"))
    roundTrips(Plugins.AddPluginConfigObjectRequest, Plugins3.AddPluginConfigObjectRequest, operationExamples("POST /v1/plugins/{pluginId}/config-objects request"))
    roundTrips(Plugins.MarketplaceResponse, Plugins3.MarketplaceResponse, operationExamples("POST /v1/marketplaces 201"))
    roundTrips(Plugins.CreateMarketplaceRequest, Plugins3.CreateMarketplaceRequest, operationExamples("POST /v1/marketplaces request"))
    roundTrips(Plugins.UpdateMarketplaceRequest, Plugins3.UpdateMarketplaceRequest, operationExamples("PATCH /v1/marketplaces/{marketplaceId} request"))
    roundTrips(Plugins.MarketplacePluginResponse, Plugins3.MarketplacePluginResponse, operationExamples("POST /v1/marketplaces/{marketplaceId}/plugins 201"))
    roundTrips(Plugins.AddMarketplacePluginRequest, Plugins3.AddMarketplacePluginRequest, operationExamples("POST /v1/marketplaces/{marketplaceId}/plugins request"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    sameOn(Plugins.CreatePluginRequest, Plugins3.CreatePluginRequest, [
      { name: "Release tooling" },
      { name: " Release tooling ", description: "" },
      { name: "x", description: "d".repeat(4000) },
      { name: "" },
      { name: "x".repeat(256) },
      { name: "x", description: "d".repeat(4001) },
      { name: "a\u0000b" },
      { description: "no name" }
    ])
    sameOn(Plugins.UpdatePluginRequest, Plugins3.UpdatePluginRequest, [{ name: "New" }, { description: "" }, {}, { name: "" }])
    sameOn(Plugins.CreateMarketplaceRequest, Plugins3.CreateMarketplaceRequest, [
      { name: "Acme internal" },
      { name: "Acme internal", logoUrl: "/logos/acme.png" },
      { name: "Acme internal", logoUrl: "https://cdn.acme.example/logo.png" },
      { name: "Acme internal", logoUrl: "http://cdn.acme.example/logo.png" },
      { name: "Acme internal", logoUrl: "//evil.example/logo.png" },
      { name: "Acme internal", logoUrl: null },
      { name: "" }
    ])
    sameOn(Plugins.UpdateMarketplaceRequest, Plugins3.UpdateMarketplaceRequest, [
      { logoUrl: null }, { logoUrl: "/logos/a.png" }, { name: "New", description: "d" }, {}, { logoUrl: "ftp://x.example/a.png" }
    ])
    sameOn(Plugins.PluginListQuery, Plugins3.PluginListQuery, [
      {}, { status: "archived", includeDeleted: "true", q: "release", marketplaceId: exampleId("mkt"), limit: "10" },
      { status: "gone" }, { includeDeleted: "1" }, { marketplaceId: exampleId("plg") }, { q: "" }
    ])
    sameOn(Plugins.MembershipListQuery, Plugins3.MembershipListQuery, [{}, { includeRemoved: "false" }, { includeRemoved: "no" }])
    sameOn(Plugins.MarketplaceListQuery, Plugins3.MarketplaceListQuery, [{}, { status: "deleted" }, { status: "removed" }])
    sameOn(Plugins.MarketplacePluginPath, Plugins3.MarketplacePluginPath, [
      { marketplaceId: exampleId("mkt"), pluginId: exampleId("plg") }, { marketplaceId: exampleId("plg"), pluginId: exampleId("mkt") }
    ])
  })

  it("counts components and takes a manifest's setup as Effect 3 does", () => {
    const plugin = examplesOfComponent("ResolvedMarketplacePlugin")[0]
    if (!isJsonObject(plugin)) throw new Error("the document shows no resolved plugin")
    sameOn(Plugins.ResolvedMarketplacePlugin, Plugins3.ResolvedMarketplacePlugin, [
      plugin,
      { ...plugin, componentCounts: {} },
      { ...plugin, componentCounts: { skill: 2, mcp: 1, custom: 0 } },
      { ...plugin, componentCounts: { skill: 1.5 } },
      { ...plugin, componentCounts: { skill: "1" } },
      { ...plugin, componentCounts: [] }
    ])
    const manifest = examplesOfComponent("Plugin").flatMap((p) => isJsonObject(p) && isJsonObject(p["extension"]) ? [p["extension"]["manifest"]] : [])[0]
    if (!isJsonObject(manifest)) throw new Error("the document shows no manifest")
    sameOn(Plugins.PluginManifest, Plugins3.PluginManifest, [manifest, { ...manifest, setup: null }, { ...manifest, schemaVersion: 2 }])
  })
})
