import { describe, expect, it } from "@effect/vitest"
import * as ConfigObjects from "../src/ConfigObjects.js"
import { MAX_PLUGIN_IDS, MAX_SOURCE_BYTES } from "../src/ConfigObjects.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { exampleId } from "../src/Ids.js"
import { describedCopies, operationExamples } from "./catalog.js"
import { examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const ConfigObjects3 = effect3("ConfigObjects")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("ConfigObjects on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(ConfigObjects, ConfigObjects3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, {
      // A real difference, for the OpenAPI normalisation step: a member that describes a named schema (a version's
      // `parserMode`, ParserMode) refers to it with its description beside (annotateKey), where Effect 3 inlined a
      // described copy. Read back as the copy here to compare the rest.
      ConfigObjectVersion: (schema) => describedCopies(schema, "ConfigObjectVersion")
    })
    expect(names.length).toBeGreaterThan(15)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(ConfigObjects.ConfigObjectVersion, ConfigObjects3.ConfigObjectVersion, examplesOfComponent("ConfigObjectVersion"))
    roundTrips(ConfigObjects.ConfigObject, ConfigObjects3.ConfigObject, examplesOfComponent("ConfigObject"))
    roundTrips(ConfigObjects.ConfigObjectResponse, ConfigObjects3.ConfigObjectResponse, examplesOfComponent("ConfigObjectResponse"))
    roundTrips(ConfigObjects.ConfigObjectDetail, ConfigObjects3.ConfigObjectDetail, examplesOfComponent("ConfigObjectDetail"))
    roundTrips(ConfigObjects.ConfigObjectPage, ConfigObjects3.ConfigObjectPage, examplesOfComponent("ConfigObjectPage"))
    roundTrips(ConfigObjects.ConfigObjectVersionPage, ConfigObjects3.ConfigObjectVersionPage, examplesOfComponent("ConfigObjectVersionPage"))
    roundTrips(ConfigObjects.ConfigObjectVersionDetail, ConfigObjects3.ConfigObjectVersionDetail, examplesOfComponent("ConfigObjectVersionDetail"))
    // The request bodies are inline in the document: their examples by operation.
    roundTrips(ConfigObjects.CreateConfigObjectRequest, ConfigObjects3.CreateConfigObjectRequest, operationExamples("POST /v1/config-objects request"))
    roundTrips(ConfigObjects.CreateVersionRequest, ConfigObjects3.CreateVersionRequest, operationExamples("POST /v1/config-objects/{configObjectId}/versions request"))
  })

  it("refuses what the Effect 3 schemas refuse", () => {
    const skill = "---\nname: deploy\n---\n# Deploy\n"
    sameOn(ConfigObjects.ConfigObjectInput, ConfigObjects3.ConfigObjectInput, [
      { objectType: "skill", rawSourceText: skill },
      { objectType: "mcp", normalizedPayloadJson: { command: "npx" }, parserMode: "json", schemaVersion: "  2 " },
      { objectType: "skill", rawSourceText: skill, relativePath: " skills/deploy/SKILL.md " },
      { objectType: "skill", rawSourceText: skill, sourceMode: "import", metadata: { title: "Deploy" } },
      { objectType: "skill" },
      { objectType: "skill", rawSourceText: skill, normalizedPayloadJson: {} },
      { objectType: "skill", rawSourceText: "   \n\t" },
      { objectType: "skill", rawSourceText: "" },
      { objectType: "skill", rawSourceText: "é".repeat(MAX_SOURCE_BYTES / 2 + 1) },
      { objectType: "skill", rawSourceText: "x".repeat(MAX_SOURCE_BYTES) },
      { objectType: "skill", rawSourceText: skill, relativePath: "skills/deploy/" },
      { objectType: "skill", rawSourceText: skill, relativePath: "skills/deploy/ " },
      { objectType: "skill", rawSourceText: skill, relativePath: "   " },
      { objectType: "skill", rawSourceText: skill, schemaVersion: "" },
      { objectType: "skill", rawSourceText: skill, parserMode: "toml" },
      { objectType: "plugin", rawSourceText: skill },
      { objectType: "mcp", normalizedPayloadJson: [1] },
      { objectType: "mcp", normalizedPayloadJson: "{}" }
    ])
    sameOn(ConfigObjects.CreateConfigObjectRequest, ConfigObjects3.CreateConfigObjectRequest, [
      { input: { objectType: "skill", rawSourceText: skill } },
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: [exampleId("plg")] },
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: Array.from({ length: MAX_PLUGIN_IDS }, () => exampleId("plg")) },
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: Array.from({ length: MAX_PLUGIN_IDS + 1 }, () => exampleId("plg")) },
      { input: { objectType: "skill", rawSourceText: skill }, pluginIds: [exampleId("cob")] },
      { input: { objectType: "skill" } },
      {}
    ])
    sameOn(ConfigObjects.CreateVersionRequest, ConfigObjects3.CreateVersionRequest, [
      { input: { rawSourceText: skill } },
      { input: { normalizedPayloadJson: { a: 1 } }, reason: " Mention the VPN " },
      { input: {} },
      { input: { rawSourceText: skill }, reason: "" },
      { input: { rawSourceText: skill }, reason: "x".repeat(256) },
      { input: { rawSourceText: skill, objectType: 1 }, reason: "a\u0000b" }
    ])
    sameOn(ConfigObjects.ConfigObjectListQuery, ConfigObjects3.ConfigObjectListQuery, [
      {},
      { objectType: "skill", status: "archived", sourceMode: "connector", includeDeleted: "true", q: "deploy staging", limit: "20" },
      { pluginId: exampleId("plg"), connectorInstanceId: exampleId("cin") },
      { objectType: "plugin" },
      { status: "gone" },
      { includeDeleted: "yes" },
      { pluginId: exampleId("cin") },
      { q: " " },
      { limit: "101" }
    ])
    sameOn(ConfigObjects.VersionListQuery, ConfigObjects3.VersionListQuery, [{}, { includeDeleted: "false" }, { includeDeleted: "0" }, { cursor: "" }])
    sameOn(ConfigObjects.ConfigObjectVersionPath, ConfigObjects3.ConfigObjectVersionPath, [
      { configObjectId: exampleId("cob"), versionId: exampleId("cov") },
      { configObjectId: exampleId("cov"), versionId: exampleId("cob") },
      { configObjectId: exampleId("cob") }
    ])
    sameOn(ConfigObjects.RelativePath, ConfigObjects3.RelativePath, ["a/b.md", " a/b.md\n", "a/", "a/ ", "", "x".repeat(1025), "a\u0000b"])
  })
})
