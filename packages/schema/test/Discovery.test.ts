/** Discovery.ts: the plugins found in a repository and the import plans made of them, their examples and refusals. */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import * as Discovery from "../src/Discovery.js"
import { examplesOfComponent, isJsonObject } from "./support/SavedDocument.js"
import { decode, refuses, roundTrips, takes } from "./support/Decoding.js"

describe("Discovery", () => {
  it("decodes the document's examples of its schemas and encodes them back", () => {
    roundTrips(Discovery.TreeEntry, examplesOfComponent("TreeEntry"))
    // DiscoveredPlugin is no component: its examples are the discovery results'.
    const plugins = examplesOfComponent("DiscoveryResult").flatMap((result) => isJsonObject(result) && Array.isArray(result["discoveredPlugins"]) ? result["discoveredPlugins"] : [])
    roundTrips(Discovery.DiscoveredPlugin, plugins)
  })

  it("takes what its schemas allow and refuses the rest, a left-out skippedFiles as none", () => {
    const plugin = examplesOfComponent("DiscoveryResult").flatMap((result) => isJsonObject(result) && Array.isArray(result["discoveredPlugins"]) ? result["discoveredPlugins"] : [])[0]
    if (!isJsonObject(plugin)) throw new Error("the document shows no discovered plugin")
    const { skippedFiles: _, ...withoutSkipped } = plugin
    takes(Discovery.DiscoveredPlugin, [
      plugin,
      withoutSkipped
    ])
    refuses(Discovery.DiscoveredPlugin, [
      { ...withoutSkipped, skippedFiles: null },
      { ...withoutSkipped, sourceSchemaVersion: "2.0.0" },
      { ...withoutSkipped, componentKinds: ["plugin"] },
      { ...withoutSkipped, metadata: [] }
    ])
    // The wire cannot carry undefined: only a left-out member is taken as none (a default that took undefined too would
    // make the JSON Schema say `null`, which the schema refuses).
    expect(decode(Discovery.DiscoveredPlugin, { ...withoutSkipped, skippedFiles: undefined }).ok).toBe(false)
    // Constructed without it, it is none.
    const { skippedFiles: __, ...fields } = Schema.decodeUnknownSync(Discovery.DiscoveredPlugin)(plugin)
    expect(new Discovery.DiscoveredPlugin(fields).skippedFiles).toEqual([])
    takes(Discovery.ImportPlan, [
      { objectType: "skill", selector: "skills/**", files: [{ path: "skills/a/SKILL.md", sha: "3b18" }] }
    ])
    refuses(Discovery.ImportPlan, [
      { objectType: "tool", selector: "skills/**", files: [] },
      { objectType: "skill", selector: "skills/**", files: [{ path: "skills/a/SKILL.md" }] }
    ])
  })
})
