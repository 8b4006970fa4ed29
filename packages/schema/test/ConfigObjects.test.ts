/** ConfigObjects.ts: config objects and their versions: the document's examples, requests taken and refused. */
import { describe, it } from "@effect/vitest"
import * as ConfigObjects from "../src/ConfigObjects.js"
import { MAX_PLUGIN_IDS, MAX_SOURCE_BYTES } from "../src/ConfigObjects.js"
import { exampleId } from "../src/Ids.js"
import { examplesOfComponent, operationExamples } from "./support/SavedDocument.js"
import { refuses, roundTrips, takes } from "./support/Decoding.js"

describe("ConfigObjects", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ConfigObjects.ConfigObjectVersion, examplesOfComponent("ConfigObjectVersion"))
    roundTrips(ConfigObjects.ConfigObject, examplesOfComponent("ConfigObject"))
    roundTrips(ConfigObjects.ConfigObjectResponse, examplesOfComponent("ConfigObjectResponse"))
    roundTrips(ConfigObjects.ConfigObjectDetail, examplesOfComponent("ConfigObjectDetail"))
    roundTrips(ConfigObjects.ConfigObjectPage, examplesOfComponent("ConfigObjectPage"))
    roundTrips(ConfigObjects.ConfigObjectVersionPage, examplesOfComponent("ConfigObjectVersionPage"))
    roundTrips(ConfigObjects.ConfigObjectVersionDetail, examplesOfComponent("ConfigObjectVersionDetail"))
    // The request bodies are inline in the document: their examples by operation.
    roundTrips(ConfigObjects.CreateConfigObjectRequest, operationExamples("POST /v1/config-objects request"))
    roundTrips(ConfigObjects.CreateVersionRequest, operationExamples("POST /v1/config-objects/{configObjectId}/versions request"))
  })

  it("takes what its schemas allow and refuses the rest", () => {
    const skill = "---\nname: deploy\n---\n# Deploy\n"
    takes(ConfigObjects.ConfigObjectInput, [
      { objectType: "skill", rawSourceText: skill },
      { objectType: "mcp", normalizedPayloadJson: { command: "npx" }, parserMode: "json", schemaVersion: "  2 " },
      { objectType: "skill", rawSourceText: skill, relativePath: " skills/deploy/SKILL.md " },
      { objectType: "skill", rawSourceText: skill, sourceMode: "import", metadata: { title: "Deploy" } },
      { objectType: "skill", rawSourceText: "x".repeat(MAX_SOURCE_BYTES) }
    ])
    refuses(ConfigObjects.ConfigObjectInput, [
      { objectType: "skill" },
      { objectType: "skill", rawSourceText: skill, normalizedPayloadJson: {} },
      { objectType: "skill", rawSourceText: "   \n\t" },
      { objectType: "skill", rawSourceText: "" },
      { objectType: "skill", rawSourceText: "é".repeat(MAX_SOURCE_BYTES / 2 + 1) },
      { objectType: "skill", rawSourceText: skill, relativePath: "skills/deploy/" },
      { objectType: "skill", rawSourceText: skill, relativePath: "skills/deploy/ " },
      { objectType: "skill", rawSourceText: skill, relativePath: "   " },
      { objectType: "skill", rawSourceText: skill, schemaVersion: "" },
      { objectType: "skill", rawSourceText: skill, parserMode: "toml" },
      { objectType: "plugin", rawSourceText: skill },
      { objectType: "mcp", normalizedPayloadJson: [1] },
      { objectType: "mcp", normalizedPayloadJson: "{}" }
    ])
    takes(ConfigObjects.CreateConfigObjectRequest, [
      { input: { objectType: "skill", rawSourceText: skill } },
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: [exampleId("plg")] },
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: Array.from({ length: MAX_PLUGIN_IDS }, () => exampleId("plg")) }
    ])
    refuses(ConfigObjects.CreateConfigObjectRequest, [
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: Array.from({ length: MAX_PLUGIN_IDS + 1 }, () => exampleId("plg")) },
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: [exampleId("cob")] },
      { input: { objectType: "skill" } },
      {}
    ])
    takes(ConfigObjects.CreateVersionRequest, [
      { input: { rawSourceText: skill } },
      { input: { normalizedPayloadJson: { a: 1 } }, reason: " Mention the VPN " }
    ])
    refuses(ConfigObjects.CreateVersionRequest, [
      { input: {} },
      { input: { rawSourceText: skill }, reason: "" },
      { input: { rawSourceText: skill }, reason: "x".repeat(256) },
      { input: { rawSourceText: skill, objectType: 1 }, reason: "a\u0000b" }
    ])
    takes(ConfigObjects.ConfigObjectListQuery, [
      {},
      { objectType: "skill", status: "archived", sourceMode: "connector", includeDeleted: "true", q: "deploy staging", limit: "20" },
      { pluginId: exampleId("plg"), connectorInstanceId: exampleId("cin") }
    ])
    refuses(ConfigObjects.ConfigObjectListQuery, [
      { objectType: "plugin" },
      { status: "gone" },
      { includeDeleted: "yes" },
      { pluginId: exampleId("cin") },
      { q: " " },
      { limit: "101" }
    ])
    takes(ConfigObjects.VersionListQuery, [{}, { includeDeleted: "false" }])
    refuses(ConfigObjects.VersionListQuery, [{ includeDeleted: "0" }, { cursor: "" }])
    takes(ConfigObjects.ConfigObjectVersionPath, [
      { configObjectId: exampleId("cob"), versionId: exampleId("cov") }
    ])
    refuses(ConfigObjects.ConfigObjectVersionPath, [
      { configObjectId: exampleId("cov"), versionId: exampleId("cob") },
      { configObjectId: exampleId("cob") }
    ])
    takes(ConfigObjects.RelativePath, ["a/b.md", " a/b.md\n"])
    refuses(ConfigObjects.RelativePath, ["a/", "a/ ", "", "x".repeat(1025), "a\u0000b"])
  })
})
