/** The Claude marketplace layout: `.claude-plugin/marketplace.json` and the plugins its entries point at. */
import type { DiscoveredMarketplace } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { claudeManifestPathOf } from "./ClaudePlugins.js"
import { type Draft, rootKey, type Stage } from "./PluginCandidates.js"
import { conventionalPaths, declaredPaths, emptyPaths, kindsOf, mergePaths } from "./PluginComponents.js"
import {
  clamp,
  isObject,
  type Manifest,
  ManifestObject,
  type ManifestReader,
  member,
  nonBlank,
  readManifests
} from "./PluginManifests.js"
import { isFolder, normalizePath, resolveDeclared, type TreeIndex } from "./RepositoryTree.js"

const EXTERNAL_ENTRY = "Marketplace entry points at an external source and cannot be auto-mapped from this connected repo yet."
export const MARKETPLACE_PATH = ".claude-plugin/marketplace.json"

/** Where a marketplace entry's plugin lives in this repository, or why it is not here. */
type EntrySource = { readonly _tag: "Local"; readonly root: string } | { readonly _tag: "External" } | {
  readonly _tag: "Invalid"
  readonly problem: string
}

/**
 * A source object naming a folder of this repository: a `path` string and neither `url` nor `repo` (those name
 * another repository, whatever else they hold). Other members are ignored, as Claude Code ignores them.
 */
const LocalSourceObject = Schema.Struct({
  path: Schema.String,
  url: Schema.optional(Schema.Never),
  repo: Schema.optional(Schema.Never)
})

/** What discovery reads of `.claude-plugin/marketplace.json` besides the members read one by one: its `plugins`. */
const MarketplaceManifest = Schema.Struct({ plugins: Schema.Array(Schema.Unknown) })

const entrySource = (entry: Record<string, unknown>, pluginRoot: string | null): EntrySource => {
  const source = entry.source
  const local = (path: string): EntrySource => {
    // A source that climbs out of the repository cannot be read from this connection.
    const root = resolveDeclared("", path)
    if (root === undefined) return { _tag: "Invalid", problem: `its source \`${clamp(path)}\` is outside the repository` }
    // The manifest's folder, not the plugin's: Claude Code would find no components there.
    if (root === ".claude-plugin" || root.endsWith("/.claude-plugin")) {
      return { _tag: "Invalid", problem: `its source \`${clamp(path)}\` is a \`.claude-plugin\` folder; a source names the plugin's folder, the one that holds \`.claude-plugin/\`` }
    }
    return { _tag: "Local", root }
  }
  const text = member(Schema.String, source)
  if (text !== null) {
    if (text.includes("://") || text.startsWith("git@")) return { _tag: "External" }
    // Claude Code resolves a path source from the marketplace's root and wants it relative (`./plugins/x`).
    if (text.startsWith("/")) return { _tag: "Invalid", problem: `its source \`${clamp(text)}\` is an absolute path; a path source is relative to the marketplace's root and starts with \`./\`` }
    // Claude's `metadata.pluginRoot` is prepended to sources that are bare names (`formatter` for `./plugins/formatter`).
    const bare = !text.startsWith("./") && !text.startsWith("../") && !text.startsWith("/") && text.trim() !== "."
    return local(pluginRoot !== null && bare ? `${pluginRoot}/${text}` : text)
  }
  const folder = member(LocalSourceObject, source)
  if (folder !== null) return local(folder.path)
  return { _tag: "External" }
}

const componentKeys = ["skills", "commands", "agents", "hooks", "mcpServers", "lspServers", "monitors", "settings"] as const
const listsComponents = (entry: Record<string, unknown>) => componentKeys.some((key) => entry[key] !== undefined && entry[key] !== null)

export interface MarketplaceFound {
  readonly marketplace: DiscoveredMarketplace
  readonly entries: ReadonlyArray<unknown>
  readonly pluginRoot: string | null
}

export const readMarketplace = (manifest: Manifest): MarketplaceFound | string => {
  if (manifest._tag === "Unusable") return `${manifest.problem}, so it was not used.`
  const value = manifest.value
  const listed = member(MarketplaceManifest, value)
  if (listed === null) return `\`${MARKETPLACE_PATH}\` has no \`plugins\` list, so it was not used.`
  const metadata = member(ManifestObject, value.metadata) ?? {}
  // The owner: an object naming it (`name`, else `login`), or the name itself.
  const ownerObject = member(ManifestObject, value.owner)
  const owner = ownerObject !== null ? nonBlank(ownerObject.name) ?? nonBlank(ownerObject.login) : nonBlank(value.owner)
  return {
    marketplace: {
      name: nonBlank(value.name),
      description: nonBlank(value.description) ?? nonBlank(metadata.description),
      owner,
      version: nonBlank(value.version) ?? nonBlank(metadata.version),
      manifestPath: MARKETPLACE_PATH,
      entryCount: listed.plugins.length
    },
    entries: listed.plugins,
    pluginRoot: nonBlank(metadata.pluginRoot) === null ? null : normalizePath(nonBlank(metadata.pluginRoot)!)
  }
}

export const marketplaceStage = Effect.fn("ClaudeMarketplace.marketplaceStage")(function*<E, R>(input: ManifestReader<E, R>, index: TreeIndex, found: MarketplaceFound): Effect.fn.Return<Stage, E, R> {
  const warnings: Array<string> = []
  type Planned = { readonly entry: Record<string, unknown>; readonly number: number; readonly source: EntrySource }
  const planned: Array<Planned> = []
  const firsts = new Map<string, number>()
  const sharing = new Map<string, number>()
  found.entries.forEach((entry, i) => {
    if (!isObject(entry)) {
      warnings.push(`Marketplace entry ${i + 1} is not an object; it is ignored.`)
      return
    }
    const source = entrySource(entry, found.pluginRoot)
    if (source._tag === "Local") {
      // Entries sharing a folder are several plugins when they list their components; a later one listing
      // nothing would be the first one imported twice.
      const first = firsts.get(source.root)
      if (first !== undefined && !listsComponents(entry)) {
        warnings.push(`Marketplace entries ${first} and ${i + 1} both point at \`${clamp(source.root || "./")}\` and entry ${i + 1} lists no components of its own; it is ignored.`)
        return
      }
      if (first === undefined) firsts.set(source.root, i + 1)
      sharing.set(source.root, (sharing.get(source.root) ?? 0) + 1)
    }
    planned.push({ entry, number: i + 1, source })
  })
  const manifestPaths = planned.flatMap(({ source }) => {
    const path = source._tag === "Local" ? claudeManifestPathOf(index, source.root) : null
    return path === null ? [] : [path]
  })
  const reads = yield* readManifests(input, index, manifestPaths)
  warnings.push(...reads.warnings)

  // Every entry has a name (marketplace.json requires it), unique in the marketplace (`name@marketplace`).
  const named = new Map<string, number>()
  for (const { entry, number } of planned) {
    const name = nonBlank(entry.name)
    if (name === null) {
      warnings.push(`Marketplace entry ${number} has no \`name\`, which marketplace.json requires of every entry (Claude Code installs a plugin as name@marketplace); it is imported under its plugin's own name or its folder's.`)
      continue
    }
    const first = named.get(name.toLowerCase())
    if (first === undefined) named.set(name.toLowerCase(), number)
    else warnings.push(`Marketplace entries ${first} and ${number} are both named \`${clamp(name)}\`, where a name is unique in a marketplace (name@marketplace); the later is imported under a name told apart by its folder.`)
  }

  const drafts = planned.map(({ entry, number, source }): Draft => {
    const name = nonBlank(entry.name)
    const description = nonBlank(entry.description)
    if (source._tag !== "Local") {
      const problem = source._tag === "External" ? EXTERNAL_ENTRY : `Marketplace entry ${number} cannot be used: ${source.problem}.`
      warnings.push(problem)
      return {
        key: `marketplace:${name ?? number}`,
        rootPath: "",
        displayName: name ?? `Marketplace plugin ${number}`,
        description,
        supported: false,
        manifestPath: null,
        warnings: [problem],
        componentPaths: emptyPaths(),
        metadata: entry,
        sourceKind: "marketplace_entry",
        sourceSchemaVersion: null
      }
    }
    const root = source.root
    const candidateWarnings: Array<string> = []
    const manifestPath = claudeManifestPathOf(index, root)
    const manifest = manifestPath === null ? undefined : reads.manifests.get(manifestPath)
    if (manifestPath !== null && manifest === undefined) candidateWarnings.push(`\`${manifestPath}\` was not read (too many manifests).`)
    // As for a plugin's own manifest: Claude Code would not load the plugin, so it is not offered.
    if (manifest?._tag === "Unusable") candidateWarnings.push(`${manifest.problem}; fix it to import this plugin.`)
    const manifestValue = manifest?._tag === "Read" ? manifest.value : undefined
    // A missing folder would import nothing: say so instead of offering an empty plugin.
    const present = isFolder(index, root)
    if (!present) candidateWarnings.push(`Marketplace entry ${number} points at \`${clamp(root)}\`, which this branch does not have.`)
    const fromEntry = declaredPaths(index, root, entry, `Marketplace entry ${number}${name === null ? "" : ` (${clamp(name)})`}`)
    const fromManifest = manifestValue === undefined ? undefined : declaredPaths(index, root, manifestValue, `\`${manifestPath}\``)
    candidateWarnings.push(...fromEntry.warnings, ...(fromManifest?.warnings ?? []))
    // Several entries sharing one folder (`"source": "./"` with a `skills` list each) are several plugins: each
    // holds what its entry lists, not the folder's every component (an entry listing nothing gets the folder's).
    const shared = (sharing.get(root) ?? 0) > 1
    const listed = kindsOf(fromEntry.paths).length > 0
    return {
      key: shared ? `marketplace:${rootKey(root)}#${name ?? number}` : `marketplace:${rootKey(root)}`,
      rootPath: root,
      // The entry names the plugin in its marketplace (`name@marketplace`); for the rest `plugin.json` wins, as
      // Claude Code merges them.
      displayName: name ?? nonBlank(manifestValue?.name),
      description: nonBlank(manifestValue?.description) ?? description,
      supported: present && manifest?._tag !== "Unusable",
      manifestPath: manifest === undefined ? null : manifestPath,
      warnings: candidateWarnings,
      componentPaths: shared && listed
        ? mergePaths(index, fromEntry.paths)
        : mergePaths(index, conventionalPaths(index, root), fromManifest?.paths ?? emptyPaths(), fromEntry.paths),
      // Claude Code reads a marketplace entry and its plugin.json together, the manifest winning: so does metadata.
      metadata: { ...entry, ...manifestValue },
      sourceKind: "marketplace_entry",
      sourceSchemaVersion: null,
      // Only what the candidate would take: a shared folder's entry that lists its own does not use the manifest's.
      skippedFiles: shared && listed ? fromEntry.skipped : [...(fromManifest?.skipped ?? []), ...fromEntry.skipped]
    }
  })
  return { classification: "claude_marketplace_repo" as const, drafts, warnings }
})
