/** Plugins.ts: the document's examples of plugins and marketplaces decode and encode back unchanged, and refusals. */
import { describe, it } from "@effect/vitest"
import { exampleId } from "../src/Ids.js"
import * as Plugins from "../src/Plugins.js"
import { examplesOfComponent, isJsonObject, operationExamples } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Plugins", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Plugins.Plugin, examplesOfComponent("Plugin"))
    roundTrips(Plugins.PluginPage, examplesOfComponent("PluginPage"))
    roundTrips(Plugins.PluginDetail, examplesOfComponent("PluginDetail"))
    roundTrips(Plugins.PluginConfigObject, examplesOfComponent("PluginConfigObject"))
    roundTrips(Plugins.PluginConfigObjectPage, examplesOfComponent("PluginConfigObjectPage"))
    roundTrips(Plugins.Marketplace, examplesOfComponent("Marketplace"))
    roundTrips(Plugins.MarketplacePage, examplesOfComponent("MarketplacePage"))
    roundTrips(Plugins.MarketplacePlugin, examplesOfComponent("MarketplacePlugin"))
    roundTrips(Plugins.MarketplacePluginPage, examplesOfComponent("MarketplacePluginPage"))
    roundTrips(Plugins.ResolvedMarketplacePlugin, examplesOfComponent("ResolvedMarketplacePlugin"))
    roundTrips(Plugins.ResolvedMarketplaceResponse, examplesOfComponent("ResolvedMarketplaceResponse"))
    roundTrips(Plugins.MarketplaceSource, examplesOfComponent("MarketplaceSource"))
    roundTrips(Plugins.PluginResponse, operationExamples("POST /v1/plugins 201"))
    roundTrips(Plugins.CreatePluginRequest, operationExamples("POST /v1/plugins request"))
    roundTrips(Plugins.UpdatePluginRequest, operationExamples("PATCH /v1/plugins/{pluginId} request"))
    roundTrips(Plugins.PluginConfigObjectResponse, operationExamples("POST /v1/plugins/{pluginId}/config-objects 201"))
    roundTrips(Plugins.AddPluginConfigObjectRequest, operationExamples("POST /v1/plugins/{pluginId}/config-objects request"))
    roundTrips(Plugins.MarketplaceResponse, operationExamples("POST /v1/marketplaces 201"))
    roundTrips(Plugins.CreateMarketplaceRequest, operationExamples("POST /v1/marketplaces request"))
    roundTrips(Plugins.UpdateMarketplaceRequest, operationExamples("PATCH /v1/marketplaces/{marketplaceId} request"))
    roundTrips(Plugins.MarketplacePluginResponse, operationExamples("POST /v1/marketplaces/{marketplaceId}/plugins 201"))
    roundTrips(Plugins.AddMarketplacePluginRequest, operationExamples("POST /v1/marketplaces/{marketplaceId}/plugins request"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    takes(Plugins.CreatePluginRequest, [
      { name: "Release tooling" },
      { name: " Release tooling ", description: "" },
      { name: "x", description: "d".repeat(4000) }
    ])
    refuses(Plugins.CreatePluginRequest, [
      { name: "" },
      { name: "x".repeat(256) },
      { name: "x", description: "d".repeat(4001) },
      { name: "a\u0000b" },
      { description: "no name" }
    ])
    takes(Plugins.UpdatePluginRequest, [{ name: "New" }, { description: "" }])
    refuses(Plugins.UpdatePluginRequest, [{}, { name: "" }])
    takes(Plugins.CreateMarketplaceRequest, [
      { name: "Acme internal" },
      { name: "Acme internal", logoUrl: "/logos/acme.png" },
      { name: "Acme internal", logoUrl: "https://cdn.acme.example/logo.png" }
    ])
    refuses(Plugins.CreateMarketplaceRequest, [
      { name: "Acme internal", logoUrl: "http://cdn.acme.example/logo.png" },
      { name: "Acme internal", logoUrl: "//evil.example/logo.png" },
      { name: "Acme internal", logoUrl: null },
      { name: "" }
    ])
    takes(Plugins.UpdateMarketplaceRequest, [
      { logoUrl: null },
      { logoUrl: "/logos/a.png" },
      { name: "New", description: "d" }
    ])
    refuses(Plugins.UpdateMarketplaceRequest, [
      {},
      { logoUrl: "ftp://x.example/a.png" }
    ])
    takes(Plugins.PluginListQuery, [
      {},
      { status: "archived", includeDeleted: "true", q: "release", marketplaceId: exampleId("mkt"), limit: "10" }
    ])
    refuses(Plugins.PluginListQuery, [
      { status: "gone" },
      { includeDeleted: "1" },
      { marketplaceId: exampleId("plg") },
      { q: "" }
    ])
    takes(Plugins.MembershipListQuery, [{}, { includeRemoved: "false" }])
    refuses(Plugins.MembershipListQuery, [{ includeRemoved: "no" }])
    takes(Plugins.MarketplaceListQuery, [{}, { status: "deleted" }])
    refuses(Plugins.MarketplaceListQuery, [{ status: "removed" }])
    takes(Plugins.MarketplacePluginPath, [
      { marketplaceId: exampleId("mkt"), pluginId: exampleId("plg") }
    ])
    refuses(Plugins.MarketplacePluginPath, [
      { marketplaceId: exampleId("plg"), pluginId: exampleId("mkt") }
    ])
  })

  it("counts a plugin's components, and takes a manifest's setup as the document shows it", () => {
    const plugin = examplesOfComponent("ResolvedMarketplacePlugin")[0]
    if (!isJsonObject(plugin)) throw new Error("the document shows no resolved plugin")
    takes(Plugins.ResolvedMarketplacePlugin, [
      plugin,
      { ...plugin, componentCounts: {} },
      { ...plugin, componentCounts: { skill: 2, mcp: 1, custom: 0 } }
    ])
    refuses(Plugins.ResolvedMarketplacePlugin, [
      { ...plugin, componentCounts: { skill: 1.5 } },
      { ...plugin, componentCounts: { skill: "1" } },
      { ...plugin, componentCounts: [] }
    ])
    const manifest = examplesOfComponent("Plugin").flatMap((p) => isJsonObject(p) && isJsonObject(p["extension"]) ? [p["extension"]["manifest"]] : [])[0]
    if (!isJsonObject(manifest)) throw new Error("the document shows no manifest")
    takes(Plugins.PluginManifest, [manifest])
    refuses(Plugins.PluginManifest, [{ ...manifest, setup: null }, { ...manifest, schemaVersion: 2 }])
  })
})
