/** A repository tree as discovery reads it: entries, normalized paths, and an index of files and folders. */

/** One entry of the complete tree, as the code host lists it. */
export interface Entry {
  readonly path: string
  readonly type: "blob" | "tree"
  readonly sha: string
  readonly size: number
  /** An executable file (git mode 100755). */
  readonly executable?: true | undefined
}

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

export const join = (root: string, relative: string) => (root === "" ? relative : relative === "" ? root : `${root}/${relative}`)
export const parentOf = (path: string) => {
  const slash = path.lastIndexOf("/")
  return slash < 0 ? "" : path.slice(0, slash)
}
export const baseName = (path: string) => path.slice(path.lastIndexOf("/") + 1)

/**
 * A path a manifest declares, from the repository root; undefined when its `..` segments leave the plugin's
 * folder (Claude Code copies a plugin's folder alone, so such a path would not work for its users either).
 */
export const resolveDeclared = (root: string, declared: string): string | undefined => {
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

export interface TreeIndex {
  readonly blobs: ReadonlyMap<string, Entry>
  /** Folders with at least one file below them. */
  readonly folders: ReadonlySet<string>
  /** File paths in code-unit order: the files below a folder are one run of it. */
  readonly sortedBlobPaths: ReadonlyArray<string>
}

// The sync re-evaluates many stored selectors against one tree: each tree is indexed once.
const indexes = new WeakMap<ReadonlyArray<Entry>, TreeIndex>()

export const indexOf = (entries: ReadonlyArray<Entry>): TreeIndex => {
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

export const isFolder = (index: TreeIndex, path: string) => path === "" ? index.blobs.size > 0 : index.folders.has(path)
export const isFile = (index: TreeIndex, path: string) => index.blobs.has(path)

/** The files below `folder` (every file for the root), in path order: a binary search, then one run. */
export const filesBelow = (index: TreeIndex, folder: string): Array<string> => {
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

/** Whether a path names a Markdown file. */
export const isMarkdown = (path: string) => path.toLowerCase().endsWith(".md")
