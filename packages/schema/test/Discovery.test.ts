import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Discovery from "../src/Discovery.js"
import { wireExamples } from "../src/OpenApiExamples.js"
import { isJsonObject, jsonObjectCopies } from "./catalog.js"
import { decode3, decode4, examplesOfComponent, roundTrips, sameOn, sameSchemas } from "./differential.js"
import { effect3 } from "./effect3.js"

const Discovery3 = effect3("Discovery")
const OpenApiExamples3 = effect3("OpenApiExamples")

describe("Discovery on Effect 4", () => {
  it("gives every schema the JSON Schema and the examples of the Effect 3 one", () => {
    const names = sameSchemas(Discovery, Discovery3, (name, port, original) => {
      expect(wireExamples(port.ast), name).toEqual(OpenApiExamples3.wireExamples(original.ast))
    }, { DiscoveredPlugin: jsonObjectCopies })
    expect(names.length).toBeGreaterThan(14)
    expect(Discovery.ComponentKinds).toEqual(Discovery3.ComponentKinds)
  })

  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Discovery.TreeEntry, Discovery3.TreeEntry, examplesOfComponent("TreeEntry"))
    // DiscoveredPlugin is no component: its examples are the discovery results'.
    const plugins = examplesOfComponent("DiscoveryResult").flatMap((result) => isJsonObject(result) && Array.isArray(result["discoveredPlugins"]) ? result["discoveredPlugins"] : [])
    roundTrips(Discovery.DiscoveredPlugin, Discovery3.DiscoveredPlugin, plugins)
  })

  it("takes and refuses what the Effect 3 schemas do, a left-out skippedFiles as none", () => {
    const plugin = examplesOfComponent("DiscoveryResult").flatMap((result) => isJsonObject(result) && Array.isArray(result["discoveredPlugins"]) ? result["discoveredPlugins"] : [])[0]
    if (!isJsonObject(plugin)) throw new Error("the document shows no discovered plugin")
    const { skippedFiles: _, ...withoutSkipped } = plugin
    sameOn(Discovery.DiscoveredPlugin, Discovery3.DiscoveredPlugin, [
      plugin,
      withoutSkipped,
      { ...withoutSkipped, skippedFiles: null },
      { ...withoutSkipped, sourceSchemaVersion: "2.0.0" },
      { ...withoutSkipped, componentKinds: ["plugin"] },
      { ...withoutSkipped, metadata: [] }
    ])
    // A difference outside JSON: Effect 3's default took an undefined member as none too; Effect 4's
    // withDecodingDefault would, but its JSON Schema then says `null`, which it refuses. The wire cannot carry
    // undefined, so the port takes only a left-out member.
    expect(decode3(Discovery3.DiscoveredPlugin, { ...withoutSkipped, skippedFiles: undefined }).ok).toBe(true)
    expect(decode4(Discovery.DiscoveredPlugin, { ...withoutSkipped, skippedFiles: undefined }).ok).toBe(false)
    // Constructed without it, as Effect 3's default did too.
    const { skippedFiles: __, ...fields } = Schema.decodeUnknownSync(Discovery.DiscoveredPlugin)(plugin)
    expect(new Discovery.DiscoveredPlugin(fields).skippedFiles).toEqual([])
    expect(new Discovery3.DiscoveredPlugin(fields).skippedFiles).toEqual([])
    sameOn(Discovery.ImportPlan, Discovery3.ImportPlan, [
      { objectType: "skill", selector: "skills/**", files: [{ path: "skills/a/SKILL.md", sha: "3b18" }] },
      { objectType: "tool", selector: "skills/**", files: [] },
      { objectType: "skill", selector: "skills/**", files: [{ path: "skills/a/SKILL.md" }] }
    ])
  })
})
