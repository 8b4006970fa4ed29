/** The components a plugin holds, by kind: conventional places, paths its manifest declares, and merging them. */
import type { ComponentKind, ComponentPaths, DiscoveredSkippedFile } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { clamp, ManifestObject, member } from "./PluginManifests.js"
import { baseName, isFile, isFolder, isMarkdown, join, resolveDeclared, type TreeIndex } from "./RepositoryTree.js"

export type ComponentKey = keyof ComponentPaths
export type MutablePaths = { [K in ComponentKey]: Array<string> }

export const emptyPaths = (): MutablePaths => ({
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

export const conventionalPaths = (index: TreeIndex, root: string): MutablePaths => {
  const paths = emptyPaths()
  for (const [key, folders] of conventionalFolders) {
    for (const folder of folders) if (isFolder(index, join(root, folder))) paths[key].push(join(root, folder))
  }
  for (const [key, file] of conventionalFiles) if (isFile(index, join(root, file))) paths[key].push(join(root, file))
  return paths
}

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

/** Why a declared path the tree has is not taken for its kind (`acceptsDeclared` refused it). */
const refusedAs = (key: ComponentKey, index: TreeIndex, path: string): string => {
  if (isFolder(index, path)) return "take a file, not a folder"
  switch (key) {
    case "skills":
      return "take `SKILL.md` files or folders only"
    case "commands":
    case "agents":
      return "take Markdown files or folders only"
    default:
      return "take a file or a folder"
  }
}

/** Keys whose manifest value may also be the definitions themselves rather than a path. */
const inlineable = new Set<ComponentKey>(["hooks", "mcpServers", "lspServers"])

/**
 * The component paths a manifest (or marketplace entry) declares, resolved from the plugin's folder. Claude's
 * manifests take a path or a list of paths; anything declared that the tree does not have is a warning on the
 * candidate, never dropped silently.
 */
export const declaredPaths = (index: TreeIndex, root: string, source: Record<string, unknown>, where: string) => {
  const paths = emptyPaths()
  const warnings: Array<string> = []
  // The declared paths that will not be imported, for the candidate's `skippedFiles`.
  const skipped: Array<DiscoveredSkippedFile> = []
  for (const [key] of kindOrder) {
    const value = source[key]
    if (value === undefined || value === null) continue
    if (inlineable.has(key) && member(ManifestObject, value) !== null) {
      warnings.push(`${where} defines ${key} inline; orgplane imports ${key} only from files, so these are not imported.`)
      continue
    }
    // A path, or a list of them (each entry checked on its own below, so one wrong entry is ignored alone).
    const path = member(Schema.String, value)
    const listed = path !== null ? [path] : member(Schema.Array(Schema.Unknown), value)
    if (listed === null) {
      warnings.push(`${where} declares ${key} as something other than a path or a list of paths; it is ignored.`)
      continue
    }
    for (const entry of listed) {
      const declared = member(Schema.String, entry)
      if (declared === null) {
        warnings.push(`${where} lists a ${key} entry that is not a path; it is ignored.`)
        continue
      }
      const resolved = resolveDeclared(root, declared)
      if (resolved === undefined) {
        warnings.push(`${where} declares ${key} path \`${clamp(declared)}\` outside the plugin's folder; it is ignored.`)
        skipped.push({ path: clamp(declared), reason: `${where} declares it as ${key}, outside the plugin's folder` })
      } else if (!acceptsDeclared[key](index, resolved)) {
        warnings.push(`${where} declares ${key} path \`${clamp(declared)}\`, which this branch does not have; it is ignored.`)
        const present = isFile(index, resolved) || isFolder(index, resolved)
        skipped.push({
          path: resolved,
          reason: present
            ? `${where} declares it as ${key}, which ${refusedAs(key, index, resolved)}`
            : `${where} declares it as ${key}, but this branch does not have it`
        })
      } else paths[key].push(resolved)
    }
  }
  // Declared kinds Claude Code loads and the catalog has no type for: said, not dropped without a word.
  for (const key of notImported) {
    if (source[key] !== undefined && source[key] !== null) {
      warnings.push(`${where} declares ${key}, which Claude Code loads and orgplane does not import; they are not in the catalog.`)
    }
  }
  return { paths, warnings, skipped }
}

/** Plugin members Claude Code reads that name components the catalog has no type for. */
const notImported = ["outputStyles"] as const

/**
 * Several sources of paths in one list per kind: Claude Code loads declared paths in addition to the conventional
 * folders, so both count. Duplicates go, and so does a path inside a folder already listed for the same kind (it
 * would make two mappings import the same files).
 */
export const mergePaths = (index: TreeIndex, ...sources: ReadonlyArray<MutablePaths>): MutablePaths => {
  const merged = emptyPaths()
  for (const [key] of kindOrder) {
    const all = [...new Set(sources.flatMap((source) => source[key]))]
    const folders = all.filter((path) => isFolder(index, path))
    merged[key] = all.filter((path) => !folders.some((folder) => folder !== path && (folder === "" || path.startsWith(`${folder}/`))))
  }
  return merged
}

export const kindsOf = (paths: ComponentPaths): Array<ComponentKind> =>
  kindOrder.filter(([key]) => paths[key].length > 0).map(([, kind]) => kind)
