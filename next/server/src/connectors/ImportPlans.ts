/** The import plans a selected candidate becomes, and the files of a tree a mapping's selector imports. */
import {
  type ComponentPaths,
  type DiscoveredSkippedFile,
  type ImportObjectType,
  type ImportPlan,
  MAX_SOURCE_BYTES,
  type ObjectType
} from "@orgplane-next/schema"
import type { ComponentKey } from "./PluginComponents.js"
import { type Entry, filesBelow, indexOf, isFile, isMarkdown, normalizePath } from "./RepositoryTree.js"

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
export const importPlans = (
  candidate: { readonly supported: boolean; readonly componentPaths: ComponentPaths },
  entries: ReadonlyArray<Entry>
): Array<ImportPlan> => {
  if (!candidate.supported) return []
  const index = indexOf(entries)
  return importedKinds.flatMap(([key, objectType]) =>
    candidate.componentPaths[key].map((path) => {
      const selector = isFile(index, path) ? path : path === "" ? "**" : `${path}/**`
      return { objectType, selector, files: filesFor(objectType, selector, entries) }
    })
  )
}

/** The component kinds a candidate may list that orgplane does not import, as a reason names them. */
const notImportedKinds: ReadonlyArray<readonly [ComponentKey, string]> = [
  ["lspServers", "LSP server configurations"],
  ["monitors", "monitor configurations"],
  ["settings", "plugin settings"]
]

/**
 * The files a supported candidate names that its import will not take, as the tree tells without reading them:
 * entry files over `MAX_SOURCE_BYTES` (the sync's reason, word for word) and the files of kinds orgplane does not
 * import. The declared paths it cannot use come from the manifests (`declaredPaths`); what only a file's content
 * tells (not UTF-8, front matter that cannot be read) only the sync knows.
 */
export const skippedAtDiscovery = (
  candidate: { readonly supported: boolean; readonly componentPaths: ComponentPaths },
  entries: ReadonlyArray<Entry>
): Array<DiscoveredSkippedFile> => {
  if (!candidate.supported) return []
  const index = indexOf(entries)
  const oversized = [
    ...new Set(importPlans(candidate, entries).flatMap((plan) => plan.files.map((file) => file.path)))
  ].filter((path) => (index.blobs.get(path)?.size ?? 0) > MAX_SOURCE_BYTES)
    .map((path) => ({ path, reason: `larger than ${MAX_SOURCE_BYTES} bytes` }))
  const notImported = notImportedKinds.flatMap(([key, what]) =>
    candidate.componentPaths[key].flatMap((path) => (isFile(index, path) ? [path] : filesBelow(index, path)))
      .map((path) => ({ path, reason: `orgplane does not import ${what}` }))
  )
  return [...oversized, ...notImported]
}
