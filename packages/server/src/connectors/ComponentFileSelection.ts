/**
 * Which repository files a component carries beside its entry file (pure): a skill's folder; a hooks or MCP file the
 * whole plugin folder, as Claude Code installs it (a hook script imports its neighbours, a server runs from the
 * folder); and whatever a text names under `${CLAUDE_PLUGIN_ROOT}` (files an agent or command uses); the plugin
 * folder those paths are relative to; the limits; and the fingerprint a sync's plan compares.
 */
import { MAX_COMPONENT_FILE_BYTES, MAX_COMPONENT_FILES, MAX_COMPONENT_FILES_BYTES, type ObjectType } from "@orgplane/schema"
import {
  baseName,
  filesBelow,
  isFile,
  isFolder,
  parentOf,
  resolveDeclared,
  type TreeIndex
} from "./RepositoryTree.js"

/** A file of the component: where it is in the repository and where it goes in the plugin's folder. */
export interface SelectedFile {
  readonly repositoryPath: string
  /** From the plugin's folder. */
  readonly path: string
  readonly sha: string | null
  readonly size: number
  /** Whether the repository has it executable (mode 100755). */
  readonly executable: boolean
  /** Why it is listed but not stored; undefined for a file to store. */
  readonly omitted?: string | undefined
}

export interface Selection {
  readonly pluginRoot: string
  /** The entry file's path from the plugin's folder. */
  readonly entryPath: string
  /** Files to list (stored or omitted), in path order, at most `MAX_COMPONENT_FILES`. */
  readonly files: ReadonlyArray<SelectedFile>
  /** What the sync reports: files left out of the list. */
  readonly warnings: ReadonlyArray<string>
  /** Every file considered (before the limits), for the plan: see `fingerprintOf`. */
  readonly fingerprint: Fingerprint
}

/**
 * Repository path → blob sha (null: named but missing), sorted by path; an executable file's sha is followed by its
 * mode (`<sha> 100755`), so that a mode changed alone changes the fingerprint.
 */
export type Fingerprint = ReadonlyArray<readonly [string, string | null]>

/** A file's fingerprint value: its blob sha, with its mode when it is executable; null for one not in the tree. */
const printOf = (index: TreeIndex, path: string): string | null => {
  const entry = index.blobs.get(path)
  return entry === undefined ? null : entry.executable === true ? `${entry.sha} 100755` : entry.sha
}

/** The folders whose name marks a conventional component folder of a plugin. */
const componentFolders = new Set(["skills", "commands", "agents", "hooks"])

/**
 * The plugin's folder of an entry file: the nearest folder above it holding `.claude-plugin/plugin.json`; else the
 * folder holding the nearest `skills`, `commands`, `agents` or `hooks` folder above it; else the entry's own folder.
 */
export const pluginRootOf = (index: TreeIndex, entryPath: string): string => {
  for (let folder = parentOf(entryPath);; folder = parentOf(folder)) {
    const manifest = folder === "" ? ".claude-plugin/plugin.json" : `${folder}/.claude-plugin/plugin.json`
    if (isFile(index, manifest)) return folder
    if (folder === "") break
  }
  for (let folder = parentOf(entryPath); folder !== ""; folder = parentOf(folder)) {
    if (componentFolders.has(baseName(folder))) return parentOf(folder)
  }
  return parentOf(entryPath)
}

const relativeTo = (root: string, path: string) => (root === "" ? path : path.slice(root.length + 1))

// `${CLAUDE_PLUGIN_ROOT}/path` or `$CLAUDE_PLUGIN_ROOT/path`, up to white space, a quote or shell punctuation.
const reference = /\$(?:\{CLAUDE_PLUGIN_ROOT\}|CLAUDE_PLUGIN_ROOT\b)\/([^\s"'`;|&<>(){}$\\]+)/g

/**
 * The plugin-relative paths a text names under `${CLAUDE_PLUGIN_ROOT}`, without trailing sentence punctuation, nor
 * the argument pattern of a permission rule (`Bash(${CLAUDE_PLUGIN_ROOT}/scripts/setup.sh:*)` names `scripts/setup.sh`).
 */
export const referencesIn = (text: string): Array<string> => {
  const found = new Set<string>()
  for (const match of text.matchAll(reference)) {
    const path = match[1]!.replace(/:\*.*$/, "").replace(/[.,:;!?\]]+$/, "")
    if (path !== "") found.add(path)
  }
  return [...found]
}

/** A skill's own files: those of its folder except its entry and those of a skill nested in it. */
const skillFolderFiles = (index: TreeIndex, entryPath: string): Array<string> => {
  const folder = parentOf(entryPath)
  return filesBelow(index, folder).filter((path) => {
    if (path === entryPath) return false
    for (let above = parentOf(path); above !== folder && above !== ""; above = parentOf(above)) {
      if (isFile(index, `${above}/SKILL.md`)) return false
    }
    return true
  })
}

/**
 * The files a component carries whatever its text names: a skill's folder; for hooks and MCP servers, which run
 * programs from the plugin's folder, every file of that folder.
 */
const ownFiles = (index: TreeIndex, objectType: ObjectType, entryPath: string): Array<string> =>
  objectType === "skill"
    ? skillFolderFiles(index, entryPath)
    : carriesWholePlugin(objectType)
    ? filesBelow(index, pluginRootOf(index, entryPath)).filter((path) => path !== entryPath)
    : []

/** Whether a component of this type carries its whole plugin folder: hooks and MCP servers. */
const carriesWholePlugin = (objectType: ObjectType) => objectType === "hook" || objectType === "mcp"

/** The files a component carries, with the limits applied. */
export const selectFiles = (index: TreeIndex, objectType: ObjectType, entryPath: string, text: string): Selection => {
  const pluginRoot = pluginRootOf(index, entryPath)
  const considered = new Map<string, string | null>()
  for (const path of ownFiles(index, objectType, entryPath)) considered.set(path, index.blobs.get(path)!.sha)
  const missing = new Map<string, string>()
  const warnings: Array<string> = []
  for (const named of referencesIn(text)) {
    const resolved = resolveDeclared(pluginRoot, named)
    if (resolved === undefined) {
      warnings.push(`${entryPath}: \${CLAUDE_PLUGIN_ROOT}/${named} leaves the plugin's folder, so it is not carried (a plugin is installed as its folder alone, in Claude Code too)`)
      continue
    }
    if (resolved === entryPath) continue
    if (isFile(index, resolved)) considered.set(resolved, index.blobs.get(resolved)!.sha)
    else if (resolved !== "" && isFolder(index, resolved)) {
      for (const path of filesBelow(index, resolved)) if (path !== entryPath) considered.set(path, index.blobs.get(path)!.sha)
    } else if (!considered.has(resolved)) {
      considered.set(resolved, null)
      missing.set(resolved, "not in the repository at this commit")
    }
  }
  const outside = [...considered.keys()].filter((path) => pluginRoot !== "" && !path.startsWith(`${pluginRoot}/`))
  for (const path of outside) considered.delete(path)
  const paths = [...considered.keys()].sort()
  if (paths.length > MAX_COMPONENT_FILES) {
    warnings.push(
      `${entryPath}: ${paths.length - MAX_COMPONENT_FILES} of its ${paths.length} files not stored (at most ${MAX_COMPONENT_FILES} per component), from ${paths[MAX_COMPONENT_FILES]}`
    )
  }
  let total = 0
  const files = paths.slice(0, MAX_COMPONENT_FILES).map((repositoryPath): SelectedFile => {
    const sha = considered.get(repositoryPath)!
    const size = index.blobs.get(repositoryPath)?.size ?? 0
    const path = relativeTo(pluginRoot, repositoryPath)
    const why = missing.get(repositoryPath) ??
      (size > MAX_COMPONENT_FILE_BYTES
        ? `larger than ${MAX_COMPONENT_FILE_BYTES} bytes`
        : total + size > MAX_COMPONENT_FILES_BYTES
        ? `would take the component's stored files past ${MAX_COMPONENT_FILES_BYTES} bytes`
        : undefined)
    if (why === undefined) total += size
    else warnings.push(`${repositoryPath}: not stored with ${entryPath} (${why})`)
    return { repositoryPath, path, sha, size, executable: index.blobs.get(repositoryPath)?.executable === true, omitted: why }
  })
  return {
    pluginRoot,
    entryPath: relativeTo(pluginRoot, entryPath),
    files,
    warnings,
    fingerprint: paths.map((path) => [path, printOf(index, path)] as const)
  }
}

/**
 * Whether a bound component's files may have changed although its entry did not: its stored fingerprint against the
 * tree now (a skill's folder or a hook's plugin folder as it is, every file named before, by path and blob). Unknown
 * (a binding from before files were stored) counts as changed.
 */
export const filesChanged = (index: TreeIndex, objectType: ObjectType, entryPath: string, stored: Fingerprint | null): boolean => {
  if (stored === null) return true
  const current = new Map<string, string | null>()
  for (const path of ownFiles(index, objectType, entryPath)) current.set(path, printOf(index, path))
  for (const [path] of stored) if (!current.has(path)) current.set(path, printOf(index, path))
  if (current.size !== stored.length) return true
  return stored.some(([path, sha]) => current.get(path) !== sha)
}

/** The media type a file is served with. */
export const mediaTypeOf = (path: string, bytes?: Uint8Array): string => {
  const name = baseName(path).toLowerCase()
  const extension = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1) : ""
  const known = mediaTypes[extension]
  if (known !== undefined) return known
  if (bytes === undefined) return "application/octet-stream"
  try {
    utf8.decode(bytes)
    return "text/plain; charset=utf-8"
  } catch {
    return "application/octet-stream"
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

const mediaTypes: Record<string, string> = {
  md: "text/markdown; charset=utf-8",
  markdown: "text/markdown; charset=utf-8",
  txt: "text/plain; charset=utf-8",
  json: "application/json",
  yaml: "application/yaml",
  yml: "application/yaml",
  toml: "application/toml",
  xml: "application/xml",
  html: "text/html; charset=utf-8",
  css: "text/css; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  mjs: "text/javascript; charset=utf-8",
  cjs: "text/javascript; charset=utf-8",
  ts: "text/x-typescript; charset=utf-8",
  py: "text/x-python; charset=utf-8",
  sh: "text/x-shellscript",
  bash: "text/x-shellscript",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  svg: "image/svg+xml",
  webp: "image/webp",
  pdf: "application/pdf",
  zip: "application/zip",
  ttf: "font/ttf",
  otf: "font/otf",
  woff: "font/woff",
  woff2: "font/woff2",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation"
}
