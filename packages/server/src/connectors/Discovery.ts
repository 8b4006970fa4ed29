/**
 * Finding plugin candidates in a repository tree, laid out as a Claude marketplace, Claude plugins or Agent Plugins,
 * and the import plans a selected candidate becomes. Pure: the caller lists the tree and fetches manifest texts.
 */
import {
  type AgentPluginsSchemaVersion,
  type ComponentKind,
  type ComponentPaths,
  type DiscoveredMarketplace,
  DiscoveredPlugin,
  type DiscoveredPluginSourceKind,
  type DiscoveryStep,
  type DiscoveryStepStatus,
  type ImportObjectType,
  type ImportPlan,
  type JsonObject,
  MAX_SOURCE_BYTES,
  type ObjectType,
  type RepositoryClassification
} from "@orgplane/schema"
import { Effect } from "effect"
import { exceedsDepth, maxDepth, nulPaths } from "../platform/RequestGuard.js"

/** One entry of the complete tree, as the code host lists it. */
export interface Entry {
  readonly path: string
  readonly type: "blob" | "tree"
  readonly sha: string
  readonly size: number
}

export interface DiscoveryInput<E, R> {
  /** The whole tree (the caller completes a truncated listing). */
  readonly entries: ReadonlyArray<Entry>
  /** A file's text, or null when it is gone. Only manifests are read. */
  readonly readText: (path: string) => Effect.Effect<string | null, E, R>
  /** Most plugin manifests read in one discovery (default 200, as many as one apply may select). */
  readonly maxManifests?: number
  /** Manifests read at once (default 8). */
  readonly concurrency?: number
}

export interface DiscoveryOutcome {
  readonly classification: RepositoryClassification
  readonly candidates: ReadonlyArray<DiscoveredPlugin>
  readonly warnings: ReadonlyArray<string>
  readonly steps: ReadonlyArray<DiscoveryStep>
  readonly marketplace: DiscoveredMarketplace | null
}

// Paths

/**
 * A tree path as every comparison here expects it: `/` separators once each, no leading `./`, no leading or
 * trailing `/`. Manifests write `./skills/`, code hosts write `skills`.
 */
export const normalizePath = (path: string): string => {
  // Tree paths are almost always clean already: only the others pay for the replacements. Not trimmed: a file
  // name may begin or end with a space.
  const clean = path !== "." && !path.startsWith("./") && !path.startsWith("/") && !path.endsWith("/") && !path.includes("//")
  if (clean) return path
  let normalized = path.replace(/\/{2,}/g, "/")
  while (normalized.startsWith("./")) normalized = normalized.slice(2)
  if (normalized === ".") return ""
  return normalized.replace(/^\/+/, "").replace(/\/+$/, "")
}

const join = (root: string, relative: string) => (root === "" ? relative : relative === "" ? root : `${root}/${relative}`)
const parentOf = (path: string) => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}
const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1)

/**
 * A path a manifest declares, from the repository root; undefined when its `..` segments leave the plugin's
 * folder (Claude Code copies a plugin's folder alone, so such a path would not work for its users either).
 */
const resolveDeclared = (root: string, declared: string): string | undefined => {
  const segments: Array<string> = []
  for (const segment of normalizePath(declared.trim()).split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      if (segments.length === 0) return undefined
      segments.pop()
    } else segments.push(segment)
  }
  return join(root, segments.join("/"))
}

// The tree

interface TreeIndex {
  readonly blobs: ReadonlyMap<string, Entry>
  /** Folders with at least one file below them. */
  readonly folders: ReadonlySet<string>
  /** File paths in code-unit order: the files below a folder are one run of it. */
  readonly sortedBlobPaths: ReadonlyArray<string>
}

// The sync re-evaluates many stored selectors against one tree: each tree is indexed once.
const indexes = new WeakMap<ReadonlyArray<Entry>, TreeIndex>()

const indexOf = (entries: ReadonlyArray<Entry>): TreeIndex => {
  const cached = indexes.get(entries)
  if (cached !== undefined) return cached
  const blobs = new Map<string, Entry>()
  const folders = new Set<string>()
  for (const entry of entries) {
    if (entry.type !== "blob") continue
    const path = normalizePath(entry.path)
    if (path === "") continue
    blobs.set(path, path === entry.path ? entry : { ...entry, path })
    // Stop at the first folder already known: its ancestors were added with it.
    for (let folder = parentOf(path); folder !== "" && !folders.has(folder); folder = parentOf(folder)) folders.add(folder)
  }
  const sortedBlobPaths = [...blobs.keys()].sort()
  const index = { blobs, folders, sortedBlobPaths }
  indexes.set(entries, index)
  return index
}

const isFolder = (index: TreeIndex, path: string) => path === "" ? index.blobs.size > 0 : index.folders.has(path)
const isFile = (index: TreeIndex, path: string) => index.blobs.has(path)

/** The files below `folder` (every file for the root), in path order: a binary search, then one run. */
const filesBelow = (index: TreeIndex, folder: string): Array<string> => {
  const paths = index.sortedBlobPaths
  if (folder === "") return [...paths]
  const prefix = `${folder}/`
  let low = 0
  let high = paths.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (paths[middle]! < prefix) low = middle + 1
    else high = middle
  }
  const found: Array<string> = []
  for (let i = low; i < paths.length && paths[i]!.startsWith(prefix); i++) found.push(paths[i]!)
  return found
}

// Manifests

type Manifest =
  | { readonly _tag: "Read"; readonly path: string; readonly value: JsonObject }
  | { readonly _tag: "Unusable"; readonly path: string; readonly problem: string }

/** Error messages quote at most 100 characters of what they got. */
const clamp = (text: string, max = 100) => (text.length > max ? `${text.slice(0, max)}…` : text)

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/** Whether any string or key holds a lone surrogate: Postgres refuses it in JSON, and metadata may be stored. */
const hasLoneSurrogate = (value: unknown): boolean => {
  const stack: Array<unknown> = [value]
  while (stack.length > 0) {
    const current = stack.pop()
    if (typeof current === "string") {
      if (LONE_SURROGATE.test(current)) return true
    } else if (typeof current === "object" && current !== null) {
      for (const [key, member] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return true
        stack.push(member)
      }
    }
  }
  return false
}

/**
 * A manifest's JSON object, or why it cannot be used. Metadata goes into responses and may be stored, so what
 * storage or the response encoder would refuse (NUL, lone surrogates, deep nesting) makes it unusable here.
 */
const parseManifest = (path: string, text: string | null): Manifest => {
  const unusable = (problem: string): Manifest => ({ _tag: "Unusable", path, problem: `\`${path}\` ${problem}` })
  if (text === null) return unusable("could not be read from the repository")
  if (exceedsDepth(text, maxDepth)) return unusable(`nests more than ${maxDepth} levels deep`)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return unusable(`is not valid JSON (${clamp((error as Error).message)})`)
  }
  if (!isObject(value)) return unusable("is not a JSON object")
  if (nulPaths(value).length > 0 || hasLoneSurrogate(value)) {
    return unusable("contains the NUL character or a lone UTF-16 surrogate")
  }
  return { _tag: "Read", path, value }
}

interface ManifestReads {
  readonly manifests: ReadonlyMap<string, Manifest>
  /** Whether `maxManifests` left some unread, as a warning for the discovery. */
  readonly warnings: ReadonlyArray<string>
}

/** At least one: the marketplace manifest alone must be readable. */
const maxManifestsOf = (input: { readonly maxManifests?: number | undefined }) => Math.max(1, input.maxManifests ?? 200)

const readManifests = <E, R>(
  input: DiscoveryInput<E, R>,
  index: TreeIndex,
  paths: ReadonlyArray<string>
): Effect.Effect<ManifestReads, E, R> => {
  const max = maxManifestsOf(input)
  const unique = [...new Set(paths)]
  const read = unique.slice(0, max)
  return Effect.forEach(read, (path) => {
    // The tree gives sizes: a manifest larger than a config object's source may be is refused unread.
    const size = index.blobs.get(path)?.size ?? 0
    if (size > MAX_SOURCE_BYTES) {
      return Effect.succeed<Manifest>({ _tag: "Unusable", path, problem: `\`${path}\` is larger than 1 MiB` })
    }
    return Effect.map(input.readText(path), (text) => parseManifest(path, text))
  }, { concurrency: input.concurrency ?? 8 }).pipe(
    Effect.map((results) => {
      const skipped = unique.slice(max)
      return {
        manifests: new Map(results.map((manifest) => [manifest.path, manifest])),
        warnings: skipped.length === 0 ? [] : [
          `The repository has more plugin manifests than orgplane reads at once (${max}); ${skipped.length} were not read, from \`${clamp(skipped[0]!)}\` on.`
        ]
      }
    })
  )
}

/** A string member, trimmed; null when it is missing, not a string or blank. */
const nonBlank = (value: unknown): string | null => {
  if (typeof value !== "string") return null
  const trimmed = value.trim()
  return trimmed === "" ? null : trimmed
}

// Components

type ComponentKey = keyof ComponentPaths
type MutablePaths = { [K in ComponentKey]: Array<string> }

const emptyPaths = (): MutablePaths => ({
  agents: [],
  commands: [],
  hooks: [],
  lspServers: [],
  mcpServers: [],
  monitors: [],
  settings: [],
  skills: []
})

/** Each key with the kind it lists, in the order `componentKinds` uses. */
const kindOrder: ReadonlyArray<readonly [ComponentKey, ComponentKind]> = [
  ["skills", "skill"],
  ["commands", "command"],
  ["agents", "agent"],
  ["hooks", "hook"],
  ["mcpServers", "mcp_server"],
  ["lspServers", "lsp_server"],
  ["monitors", "monitor"],
  ["settings", "settings"]
]

/** Where a Claude plugin keeps its components when its manifest says nothing (relative to the plugin's folder). */
const conventionalFolders: ReadonlyArray<readonly [ComponentKey, ReadonlyArray<string>]> = [
  ["skills", ["skills", ".claude/skills"]],
  ["commands", ["commands", ".claude/commands"]],
  ["agents", ["agents", ".claude/agents"]]
]
const conventionalFiles: ReadonlyArray<readonly [ComponentKey, string]> = [
  ["hooks", "hooks/hooks.json"],
  ["mcpServers", ".mcp.json"],
  ["lspServers", ".lsp.json"],
  ["monitors", "monitors/monitors.json"],
  ["settings", "settings.json"]
]

const conventionalPaths = (index: TreeIndex, root: string): MutablePaths => {
  const paths = emptyPaths()
  for (const [key, folders] of conventionalFolders) {
    for (const folder of folders) if (isFolder(index, join(root, folder))) paths[key].push(join(root, folder))
  }
  for (const [key, file] of conventionalFiles) if (isFile(index, join(root, file))) paths[key].push(join(root, file))
  return paths
}

const isMarkdown = (path: string) => path.toLowerCase().endsWith(".md")

/** What a declared path of each kind may be: folders of Markdown (or one file), hook folders, or single files. */
const acceptsDeclared: Readonly<Record<ComponentKey, (index: TreeIndex, path: string) => boolean>> = {
  skills: (index, path) => isFolder(index, path) || (isFile(index, path) && baseName(path) === "SKILL.md"),
  commands: (index, path) => isFolder(index, path) || (isFile(index, path) && isMarkdown(path)),
  agents: (index, path) => isFolder(index, path) || (isFile(index, path) && isMarkdown(path)),
  hooks: (index, path) => isFolder(index, path) || isFile(index, path),
  mcpServers: isFile,
  lspServers: isFile,
  monitors: isFile,
  settings: isFile
}

/** Keys whose manifest value may also be the definitions themselves rather than a path. */
const inlineable = new Set<ComponentKey>(["hooks", "mcpServers", "lspServers"])

/**
 * The component paths a manifest (or marketplace entry) declares, resolved from the plugin's folder. Claude's
 * manifests take a path or a list of paths; anything declared that the tree does not have is a warning on the
 * candidate, where the original dropped it silently.
 */
const declaredPaths = (index: TreeIndex, root: string, source: Record<string, unknown>, where: string) => {
  const paths = emptyPaths()
  const warnings: Array<string> = []
  for (const [key] of kindOrder) {
    const value = source[key]
    if (value === undefined || value === null) continue
    if (isObject(value) && inlineable.has(key)) {
      warnings.push(`${where} defines ${key} inline; orgplane imports ${key} only from files, so these are not imported.`)
      continue
    }
    const listed = typeof value === "string" ? [value] : Array.isArray(value) ? value : undefined
    if (listed === undefined) {
      warnings.push(`${where} declares ${key} as something other than a path or a list of paths; it is ignored.`)
      continue
    }
    for (const declared of listed) {
      if (typeof declared !== "string") {
        warnings.push(`${where} lists a ${key} entry that is not a path; it is ignored.`)
        continue
      }
      const resolved = resolveDeclared(root, declared)
      if (resolved === undefined) {
        warnings.push(`${where} declares ${key} path \`${clamp(declared)}\` outside the plugin's folder; it is ignored.`)
      } else if (!acceptsDeclared[key](index, resolved)) {
        warnings.push(`${where} declares ${key} path \`${clamp(declared)}\`, which this branch does not have; it is ignored.`)
      } else paths[key].push(resolved)
    }
  }
  return { paths, warnings }
}

/**
 * Several sources of paths in one list per kind: Claude Code loads declared paths in addition to the conventional
 * folders, so both count. Duplicates go, and so does a path inside a folder already listed for the same kind (it
 * would make two mappings import the same files).
 */
const mergePaths = (index: TreeIndex, ...sources: ReadonlyArray<MutablePaths>): MutablePaths => {
  const merged = emptyPaths()
  for (const [key] of kindOrder) {
    const all = [...new Set(sources.flatMap((source) => source[key]))]
    const folders = all.filter((path) => isFolder(index, path))
    merged[key] = all.filter((path) => !folders.some((folder) => folder !== path && (folder === "" || path.startsWith(`${folder}/`))))
  }
  return merged
}

const kindsOf = (paths: ComponentPaths): Array<ComponentKind> =>
  kindOrder.filter(([key]) => paths[key].length > 0).map(([, kind]) => kind)

// Candidates

interface Draft {
  readonly key: string
  readonly rootPath: string
  readonly displayName: string | null
  readonly description: string | null
  readonly supported: boolean
  readonly manifestPath: string | null
  readonly warnings: ReadonlyArray<string>
  readonly componentPaths: ComponentPaths
  readonly metadata: JsonObject
  readonly sourceKind: DiscoveredPluginSourceKind
  readonly sourceSchemaVersion: AgentPluginsSchemaVersion | null
}

const rootKey = (root: string) => (root === "" ? "root" : root)

/**
 * Keys are unique within a discovery even when two sources would give the same one (a folder named `root` beside a
 * root plugin, an external entry named like a local folder): the later one gets `#2`, `#3`, in discovery order, so
 * the same layout always gives the same keys.
 */
const finish = (drafts: ReadonlyArray<Draft>): Array<DiscoveredPlugin> => {
  const seen = new Map<string, number>()
  return drafts.map((draft) => {
    const count = (seen.get(draft.key) ?? 0) + 1
    seen.set(draft.key, count)
    const unsupported = !draft.supported
    return new DiscoveredPlugin({
      key: count === 1 ? draft.key : `${draft.key}#${count}`,
      rootPath: draft.rootPath,
      displayName: draft.displayName ?? (draft.rootPath === "" ? "Repository plugin" : baseName(draft.rootPath)),
      description: draft.description,
      // The original selected exactly what it supported; so do we.
      selectedByDefault: !unsupported,
      supported: !unsupported,
      manifestPath: draft.manifestPath,
      warnings: draft.warnings,
      componentKinds: unsupported ? [] : kindsOf(draft.componentPaths),
      componentPaths: unsupported ? emptyPaths() : draft.componentPaths,
      metadata: draft.metadata,
      sourceKind: draft.sourceKind,
      sourceSchemaVersion: draft.sourceSchemaVersion
    })
  })
}

const EXTERNAL_ENTRY = "Marketplace entry points at an external source and cannot be auto-mapped from this connected repo yet."
const MARKETPLACE_PATH = ".claude-plugin/marketplace.json"
const CLAUDE_MANIFEST = ".claude-plugin/plugin.json"

const isClaudeManifest = (path: string) => path === CLAUDE_MANIFEST || path.endsWith(`/${CLAUDE_MANIFEST}`)
const claudeRoot = (manifestPath: string) => manifestPath === CLAUDE_MANIFEST ? "" : manifestPath.slice(0, -(CLAUDE_MANIFEST.length + 1))

/** A Claude plugin's manifest: `.claude-plugin/plugin.json`, else a plain `plugin.json` beside its components. */
const claudeManifestPathOf = (index: TreeIndex, root: string): string | null => {
  const claude = join(root, CLAUDE_MANIFEST)
  if (isFile(index, claude)) return claude
  const plain = join(root, "plugin.json")
  return isFile(index, plain) ? plain : null
}

/** Where a marketplace entry's plugin lives in this repository, or why it is not here. */
type EntrySource = { readonly _tag: "Local"; readonly root: string } | { readonly _tag: "External" } | {
  readonly _tag: "Invalid"
  readonly problem: string
}

const entrySource = (entry: Record<string, unknown>, pluginRoot: string | null): EntrySource => {
  const source = entry.source
  const local = (path: string): EntrySource => {
    // A source that climbs out of the repository cannot be read from this connection.
    const root = resolveDeclared("", path)
    return root === undefined ? { _tag: "Invalid", problem: `its source \`${clamp(path)}\` is outside the repository` } : { _tag: "Local", root }
  }
  if (typeof source === "string") {
    if (source.includes("://") || source.startsWith("git@")) return { _tag: "External" }
    // Claude's `metadata.pluginRoot` is prepended to sources that are bare names (`formatter` for `./plugins/formatter`).
    const bare = !source.startsWith("./") && !source.startsWith("../") && !source.startsWith("/") && source.trim() !== "."
    return local(pluginRoot !== null && bare ? `${pluginRoot}/${source}` : source)
  }
  if (isObject(source) && source.url === undefined && source.repo === undefined && typeof source.path === "string") {
    return local(source.path)
  }
  return { _tag: "External" }
}

interface MarketplaceFound {
  readonly marketplace: DiscoveredMarketplace
  readonly entries: ReadonlyArray<unknown>
  readonly pluginRoot: string | null
}

const readMarketplace = (manifest: Manifest): MarketplaceFound | string => {
  if (manifest._tag === "Unusable") return `${manifest.problem}, so it was not used.`
  const value = manifest.value
  if (!Array.isArray(value.plugins)) return `\`${MARKETPLACE_PATH}\` has no \`plugins\` list, so it was not used.`
  const metadata = isObject(value.metadata) ? value.metadata : {}
  const owner = isObject(value.owner) ? nonBlank(value.owner.name) ?? nonBlank(value.owner.login) : nonBlank(value.owner)
  return {
    marketplace: {
      name: nonBlank(value.name),
      description: nonBlank(value.description) ?? nonBlank(metadata.description),
      owner,
      version: nonBlank(value.version) ?? nonBlank(metadata.version),
      manifestPath: MARKETPLACE_PATH,
      entryCount: value.plugins.length
    },
    entries: value.plugins,
    pluginRoot: nonBlank(metadata.pluginRoot) === null ? null : normalizePath(nonBlank(metadata.pluginRoot)!)
  }
}

interface Stage {
  readonly classification: RepositoryClassification
  readonly drafts: ReadonlyArray<Draft>
  readonly warnings: ReadonlyArray<string>
}

const marketplaceStage = <E, R>(input: DiscoveryInput<E, R>, index: TreeIndex, found: MarketplaceFound): Effect.Effect<Stage, E, R> =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    type Planned = { readonly entry: Record<string, unknown>; readonly number: number; readonly source: EntrySource }
    const planned: Array<Planned> = []
    const roots = new Map<string, number>()
    found.entries.forEach((entry, i) => {
      if (!isObject(entry)) {
        warnings.push(`Marketplace entry ${i + 1} is not an object; it is ignored.`)
        return
      }
      const source = entrySource(entry, found.pluginRoot)
      if (source._tag === "Local") {
        // Two entries for one folder would be one plugin imported twice: the first one stands.
        const first = roots.get(source.root)
        if (first !== undefined) {
          warnings.push(`Marketplace entries ${first} and ${i + 1} both point at \`${clamp(source.root || "./")}\`; entry ${i + 1} is ignored.`)
          return
        }
        roots.set(source.root, i + 1)
      }
      planned.push({ entry, number: i + 1, source })
    })
    const manifestPaths = planned.flatMap(({ source }) => {
      const path = source._tag === "Local" ? claudeManifestPathOf(index, source.root) : null
      return path === null ? [] : [path]
    })
    const reads = yield* readManifests(input, index, manifestPaths)
    warnings.push(...reads.warnings)

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
      const fromEntry = declaredPaths(index, root, entry, `Marketplace entry ${number}`)
      const fromManifest = manifestValue === undefined ? undefined : declaredPaths(index, root, manifestValue, `\`${manifestPath}\``)
      candidateWarnings.push(...fromEntry.warnings, ...(fromManifest?.warnings ?? []))
      return {
        key: `marketplace:${rootKey(root)}`,
        rootPath: root,
        displayName: name ?? nonBlank(manifestValue?.name),
        description: description ?? nonBlank(manifestValue?.description),
        supported: present && manifest?._tag !== "Unusable",
        manifestPath: manifest === undefined ? null : manifestPath,
        warnings: candidateWarnings,
        componentPaths: mergePaths(index, conventionalPaths(index, root), fromManifest?.paths ?? emptyPaths(), fromEntry.paths),
        // Claude Code reads a marketplace entry and its plugin.json together, the manifest winning: so does metadata.
        metadata: { ...entry, ...manifestValue },
        sourceKind: "marketplace_entry",
        sourceSchemaVersion: null
      }
    })
    return { classification: "claude_marketplace_repo" as const, drafts, warnings }
  })

const claudeStage = <E, R>(input: DiscoveryInput<E, R>, index: TreeIndex, manifestPaths: ReadonlyArray<string>): Effect.Effect<Stage, E, R> =>
  Effect.gen(function*() {
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
        metadata: manifest.value
      }
    })
    const single = drafts.length === 1 && drafts[0]!.rootPath === ""
    return { classification: single ? "claude_single_plugin_repo" as const : "claude_multi_plugin_repo" as const, drafts, warnings }
  })

const AGENT_SCHEMA = /^https?:\/\/(?:www\.)?agent-plugins\.org\/schemas\/([^/]+)\/plugin\.schema\.json$/
const AGENT_VERSIONS: ReadonlySet<string> = new Set<AgentPluginsSchemaVersion>(["1.0.0", "1.1.0"])
/** Agent Plugins names, as Agent Skills names: lower-case letters and digits in words joined by single hyphens. */
const AGENT_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/

const isAgentManifestCandidate = (path: string) => baseName(path) === "plugin.json" && baseName(parentOf(path)) !== ".claude-plugin"

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

const agentStage = <E, R>(input: DiscoveryInput<E, R>, index: TreeIndex, manifestPaths: ReadonlyArray<string>): Effect.Effect<Stage | undefined, E, R> =>
  Effect.gen(function*() {
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

const UNSUPPORTED =
  "orgplane supports Agent Plugins 1.0.0 and 1.1.0 and Claude-compatible plugins and marketplaces. Add `.claude-plugin/marketplace.json` or `.claude-plugin/plugin.json`, or an Agent Plugins `plugin.json` with its `$schema`, to this repository."

/** The unsupported warning, naming component folders that only lack a manifest (the original said nothing of them). */
const unsupportedWarning = (index: TreeIndex) => {
  const found = conventionalPaths(index, "")
  // Not settings: a root `settings.json` is too common in other repositories to hint at a plugin.
  const keys: ReadonlyArray<ComponentKey> = ["skills", "commands", "agents", "hooks", "mcpServers"]
  const named = keys.flatMap((key) => found[key]).map((path) => `\`${path}\``)
  return named.length === 0 ? UNSUPPORTED : `${UNSUPPORTED} Found ${named.join(", ")} but no plugin manifest.`
}

const LABELS: Readonly<Record<DiscoveryStep["id"], string>> = {
  read_repository_structure: "Read repository structure",
  check_marketplace_manifest: "Check for Claude marketplace manifest",
  check_plugin_manifests: "Check for Agent Plugins or Claude plugin manifests",
  prepare_discovered_plugins: "Prepare discovered plugins"
}

/**
 * The four steps. Unlike the original (which only knew completed and warning), a check that did not apply is
 * `skipped`, so `warning` always means something to look at: an unusable marketplace manifest, no manifests at all,
 * or no candidate that can be imported.
 */
const stepsOf = (classification: RepositoryClassification, marketplaceFile: boolean, candidates: ReadonlyArray<DiscoveredPlugin>): Array<DiscoveryStep> => {
  const step = (id: DiscoveryStep["id"], status: DiscoveryStepStatus): DiscoveryStep => ({ id, label: LABELS[id], status })
  const marketplace = classification === "claude_marketplace_repo"
  return [
    step("read_repository_structure", "completed"),
    step("check_marketplace_manifest", marketplace ? "completed" : marketplaceFile ? "warning" : "skipped"),
    step("check_plugin_manifests", marketplace ? "skipped" : classification === "unsupported" ? "warning" : "completed"),
    step("prepare_discovered_plugins", candidates.some((candidate) => candidate.supported) ? "completed" : "warning")
  ]
}

/**
 * Discovers the plugin candidates of a tree, in the original's order: a root marketplace manifest decides alone;
 * else Claude plugin manifests; else Agent Plugins manifests; else the repository is unsupported. Only the
 * manifests the deciding stage needs are read, at most `maxManifests` of them, `concurrency` at a time. A broken
 * manifest is a warning on its candidate (or, for the marketplace, on the discovery, which then goes on to the
 * plugin manifests), never a failure: only `readText` failing fails it.
 */
export const discover = <E, R>(input: DiscoveryInput<E, R>): Effect.Effect<DiscoveryOutcome, E, R> =>
  Effect.gen(function*() {
    const index = indexOf(input.entries)
    const warnings: Array<string> = []
    let stage: Stage | undefined
    let marketplace: DiscoveredMarketplace | null = null

    const marketplaceFile = isFile(index, MARKETPLACE_PATH)
    if (marketplaceFile) {
      const reads = yield* readManifests(input, index, [MARKETPLACE_PATH])
      const found = readMarketplace(reads.manifests.get(MARKETPLACE_PATH)!)
      if (typeof found === "string") warnings.push(found)
      else {
        marketplace = found.marketplace
        stage = yield* marketplaceStage(input, index, found)
      }
    }
    if (stage === undefined) {
      const claude = index.sortedBlobPaths.filter(isClaudeManifest)
      if (claude.length > 0) stage = yield* claudeStage(input, index, claude)
    }
    if (stage === undefined) {
      const plain = index.sortedBlobPaths.filter(isAgentManifestCandidate)
      if (plain.length > 0) stage = yield* agentStage(input, index, plain)
    }
    const classification = stage?.classification ?? "unsupported"
    warnings.push(...(stage?.warnings ?? []))
    if (classification === "unsupported") warnings.push(unsupportedWarning(index))
    const candidates = finish(stage?.drafts ?? [])
    return {
      classification,
      candidates,
      // One line per distinct problem: several external entries share one.
      warnings: [...new Set(warnings)],
      steps: stepsOf(classification, marketplaceFile, candidates),
      marketplace
    }
  })

// Import plans

/** Whether a mapping's selector (`<folder>/**`, `**`, or an exact path) covers a file. */
export const selectorMatches = (selector: string, path: string): boolean => {
  const normalizedSelector = normalizePath(selector)
  const normalizedPath = normalizePath(path)
  if (normalizedSelector === "**") return normalizedPath !== ""
  if (normalizedSelector.endsWith("/**")) return normalizedPath.startsWith(normalizedSelector.slice(0, -2))
  return normalizedPath === normalizedSelector
}

const endsWithName = (path: string, name: string) => path === name || path.endsWith(`/${name}`)
const isJson = (path: string) => path.toLowerCase().endsWith(".json")

/**
 * The files of a tree a mapping imports: those its selector covers, narrowed by object type. Skills take the
 * `SKILL.md` files when there are any, else the Markdown; agents `AGENT.md`, else the Markdown; commands the
 * Markdown. Hooks and MCP servers take an exact path as it is, and from a folder only its JSON files (a hooks
 * folder also holds the scripts its hooks run, which are not hook definitions). Other types take every match.
 */
export const filesFor = (
  objectType: ObjectType,
  selector: string,
  entries: ReadonlyArray<Entry>
): Array<{ readonly path: string; readonly sha: string }> => {
  const index = indexOf(entries)
  const normalized = normalizePath(selector)
  const folder = normalized === "**" ? "" : normalized.endsWith("/**") ? normalized.slice(0, -3) : undefined
  const matched = folder === undefined ? (isFile(index, normalized) ? [normalized] : []) : filesBelow(index, folder)
  const preferring = (name: string) => {
    const preferred = matched.filter((path) => endsWithName(path, name))
    return preferred.length > 0 ? preferred : matched.filter(isMarkdown)
  }
  let chosen: Array<string>
  switch (objectType) {
    case "skill":
      chosen = preferring("SKILL.md")
      break
    case "agent":
      chosen = preferring("AGENT.md")
      break
    case "command":
      chosen = matched.filter(isMarkdown)
      break
    case "hook":
    case "mcp":
      chosen = folder === undefined ? matched : matched.filter(isJson)
      break
    default:
      chosen = matched
  }
  return chosen.map((path) => ({ path, sha: index.blobs.get(path)!.sha }))
}

/** The component kinds that become config objects (LSP servers, monitors and settings do not). */
const importedKinds: ReadonlyArray<readonly [ComponentKey, ImportObjectType]> = [
  ["skills", "skill"],
  ["commands", "command"],
  ["agents", "agent"],
  ["hooks", "hook"],
  ["mcpServers", "mcp"]
]

/**
 * The mappings a selected candidate becomes: one per component path, `<folder>/**` for a folder and the exact path
 * for a file (an Agent plugin's `SKILL.md`, a hooks or MCP file, a declared command file). A plan matching no files
 * yet is kept: its mapping picks files up in later syncs. An unsupported candidate has none.
 */
export const importPlans = (candidate: DiscoveredPlugin, entries: ReadonlyArray<Entry>): Array<ImportPlan> => {
  if (!candidate.supported) return []
  const index = indexOf(entries)
  return importedKinds.flatMap(([key, objectType]) =>
    candidate.componentPaths[key].map((path) => {
      const selector = isFile(index, path) ? path : path === "" ? "**" : `${path}/**`
      return { objectType, selector, files: filesFor(objectType, selector, entries) }
    })
  )
}
