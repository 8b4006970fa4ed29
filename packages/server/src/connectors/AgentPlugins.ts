/** The Agent Plugins layout: a `plugin.json` naming an Agent Plugins schema, its skills and `mcp.json`. */
import type { AgentPluginsSchemaVersion, JsonObject } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import { type Draft, rootKey, type Stage } from "./PluginCandidates.js"
import { emptyPaths } from "./PluginComponents.js"
import { clamp, type ManifestReader, nonBlank, readManifests } from "./PluginManifests.js"
import { baseName, filesBelow, isFile, join, parentOf, type TreeIndex } from "./RepositoryTree.js"

const AGENT_SCHEMA = /^https?:\/\/(?:www\.)?agent-plugins\.org\/schemas\/([^/]+)\/plugin\.schema\.json$/
const AGENT_VERSIONS: ReadonlySet<string> = new Set<AgentPluginsSchemaVersion>(["1.0.0", "1.1.0"])
/** Agent Plugins names, as Agent Skills names: lower-case letters and digits in words joined by single hyphens. */
const AGENT_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/

export const isAgentManifestCandidate = (path: string) => baseName(path) === "plugin.json" && baseName(parentOf(path)) !== ".claude-plugin"

/**
 * An Agent Plugins plugin: `skills/<name>/SKILL.md` one level down (the specification's layout; deeper `SKILL.md`
 * files are skill assets) and `mcp.json`. Skill assets are not imported: the warning says how many.
 */
const agentDraft = (index: TreeIndex, manifest: { readonly path: string; readonly value: JsonObject }, version: AgentPluginsSchemaVersion): Draft => {
  const root = parentOf(manifest.path)
  const rawName = manifest.value.name
  const name = typeof rawName === "string" ? rawName.trim() : ""
  const base = {
    key: `agent-plugin:${rootKey(root)}`,
    rootPath: root,
    displayName: name === "" ? null : clamp(name, 255),
    description: nonBlank(manifest.value.description),
    manifestPath: manifest.path,
    metadata: manifest.value,
    sourceKind: "agent_plugin_manifest" as const,
    sourceSchemaVersion: version
  }
  if (typeof rawName !== "string" || name.length < 1 || [...name].length > 64 || !AGENT_NAME.test(name)) {
    return {
      ...base,
      supported: false,
      componentPaths: emptyPaths(),
      warnings: [
        `\`${manifest.path}\`: the plugin name must be 1-64 lower-case letters, digits and single hyphens, not starting or ending with a hyphen (got ${clamp(JSON.stringify(rawName) ?? "nothing")}).`
      ]
    }
  }
  const paths = emptyPaths()
  const skillsFolder = join(root, "skills")
  let assets = 0
  for (const path of filesBelow(index, skillsFolder)) {
    const segments = path.slice(skillsFolder.length + 1).split("/")
    if (segments.length === 2 && segments[1] === "SKILL.md") paths.skills.push(path)
    else assets++
  }
  const mcp = join(root, "mcp.json")
  if (isFile(index, mcp)) paths.mcpServers.push(mcp)
  return {
    ...base,
    supported: true,
    componentPaths: paths,
    warnings: assets === 0 ? [] : [
      `${assets} additional skill asset file${assets === 1 ? "" : "s"} under \`${skillsFolder}\` ${assets === 1 ? "is" : "are"} not imported; orgplane imports each skill's SKILL.md.`
    ]
  }
}

export const agentStage = Effect.fn("AgentPlugins.agentStage")(function*<E, R>(input: ManifestReader<E, R>, index: TreeIndex, manifestPaths: ReadonlyArray<string>): Effect.fn.Return<Stage | undefined, E, R> {
  const reads = yield* readManifests(input, index, manifestPaths)
  const warnings = [...reads.warnings]
  const drafts: Array<Draft> = []
  for (const manifest of reads.manifests.values()) {
    if (manifest._tag === "Unusable") continue // another tool's plugin.json, most likely: nothing to say about it
    const schema = nonBlank(manifest.value.$schema)
    const version = schema === null ? undefined : AGENT_SCHEMA.exec(schema)?.[1]
    if (version === undefined) continue
    if (!AGENT_VERSIONS.has(version)) {
      warnings.push(`\`${manifest.path}\` uses Agent Plugins ${clamp(version)}; orgplane reads Agent Plugins 1.0.0 and 1.1.0, so it was not used.`)
      continue
    }
    drafts.push(agentDraft(index, manifest, version as AgentPluginsSchemaVersion))
  }
  return drafts.length === 0 && warnings.length === 0 ? undefined : drafts.length === 0
    ? { classification: "unsupported" as const, drafts, warnings }
    : { classification: "agent_plugin_repo" as const, drafts, warnings }
})
