/** The Claude plugins layout: `.claude-plugin/plugin.json` manifests, one plugin per folder that has one. */
import * as Effect from "effect/Effect"
import { type Draft, rootKey, type Stage } from "./PluginCandidates.js"
import { conventionalPaths, declaredPaths, emptyPaths, mergePaths } from "./PluginComponents.js"
import { type ManifestReader, nonBlank, readManifests } from "./PluginManifests.js"
import { isFile, join, type TreeIndex } from "./RepositoryTree.js"

const CLAUDE_MANIFEST = ".claude-plugin/plugin.json"

export const isClaudeManifest = (path: string) => path === CLAUDE_MANIFEST || path.endsWith(`/${CLAUDE_MANIFEST}`)
const claudeRoot = (manifestPath: string) => manifestPath === CLAUDE_MANIFEST ? "" : manifestPath.slice(0, -(CLAUDE_MANIFEST.length + 1))

/** A Claude plugin's manifest: `.claude-plugin/plugin.json`, else a plain `plugin.json` beside its components. */
export const claudeManifestPathOf = (index: TreeIndex, root: string): string | null => {
  const claude = join(root, CLAUDE_MANIFEST)
  if (isFile(index, claude)) return claude
  const plain = join(root, "plugin.json")
  return isFile(index, plain) ? plain : null
}

export const claudeStage = Effect.fn("ClaudePlugins.claudeStage")(function*<E, R>(input: ManifestReader<E, R>, index: TreeIndex, manifestPaths: ReadonlyArray<string>): Effect.fn.Return<Stage, E, R> {
  const reads = yield* readManifests(input, index, manifestPaths)
  const warnings = [...reads.warnings]
  const drafts = [...reads.manifests.values()].map((manifest): Draft => {
    const root = claudeRoot(manifest.path)
    const base = {
      key: `manifest:${rootKey(root)}`,
      rootPath: root,
      manifestPath: manifest.path,
      sourceKind: "plugin_manifest" as const,
      sourceSchemaVersion: null
    }
    if (manifest._tag === "Unusable") {
      // Claude Code refuses a plugin whose manifest it cannot read; one broken manifest does not fail the others.
      return {
        ...base,
        displayName: null,
        description: null,
        supported: false,
        warnings: [`${manifest.problem}; fix it to import this plugin.`],
        componentPaths: emptyPaths(),
        metadata: {}
      }
    }
    const declared = declaredPaths(index, root, manifest.value, `\`${manifest.path}\``)
    return {
      ...base,
      displayName: nonBlank(manifest.value.name),
      description: nonBlank(manifest.value.description),
      supported: true,
      warnings: declared.warnings,
      componentPaths: mergePaths(index, conventionalPaths(index, root), declared.paths),
      metadata: manifest.value,
      skippedFiles: declared.skipped
    }
  })
  const single = drafts.length === 1 && drafts[0]!.rootPath === ""
  return { classification: single ? "claude_single_plugin_repo" as const : "claude_multi_plugin_repo" as const, drafts, warnings }
})
