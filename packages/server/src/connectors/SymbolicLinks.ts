/**
 * A repository's tree with its symbolic links followed, as a checkout has them: a link to a file is that file at the
 * link's path, a link to a folder is that folder's files at the link's path (a symlinked skill folder is a skill).
 * Git stores a link as a blob holding its target (mode 120000); `checkout` reads those targets and rewrites the tree.
 * A link that leaves the repository, names nothing, or leads back into itself (a loop) is left out and said; so is,
 * once discovery knows the plugins' folders, one that leads out of its plugin's folder (`withinPlugins`).
 */
import * as Effect from "effect/Effect"
import { type Entry, normalizePath, parentOf } from "./RepositoryTree.js"

/**
 * A tree entry as the code host lists it (`GitHub.TreeEntry`): `link` marks a symbolic link (a blob holding its
 * target); a size it does not give is 0.
 */
export interface ListedEntry {
  readonly path: string
  readonly type: "blob" | "tree"
  readonly sha: string
  readonly size: number | null
  readonly link?: boolean | undefined
  /** An executable file (mode 100755). */
  readonly executable?: boolean | undefined
}

/** Links followed through other links, at most (Linux's own limit). */
const maxHops = 40

/** The path `target` names from the folder `from`, or undefined when it climbs above the repository's root. */
export const resolveLink = (from: string, target: string): string | undefined => {
  if (target.startsWith("/")) return undefined
  const segments = from === "" ? [] : from.split("/")
  for (const segment of normalizePath(target).split("/")) {
    if (segment === "" || segment === ".") continue
    if (segment === "..") {
      if (segments.length === 0) return undefined
      segments.pop()
    } else segments.push(segment)
  }
  return segments.join("/")
}

/**
 * The tree with every link followed. `readTarget` reads a link's blob (its target text). Answers the entries, sorted
 * by path, and a warning for each link left out.
 */
export interface CheckedOut {
  readonly entries: ReadonlyArray<Entry>
  readonly warnings: ReadonlyArray<string>
  /** Each followed link's path and the path it leads to. */
  readonly links: ReadonlyMap<string, string>
}

export const checkout = <E, R>(
  listed: ReadonlyArray<ListedEntry>,
  readTarget: (sha: string) => Effect.Effect<string, E, R>
): Effect.Effect<CheckedOut, E, R> =>
  Effect.gen(function*() {
    const links = listed.filter((entry) => entry.link === true && entry.type === "blob")
    const plain = (entry: ListedEntry): Entry => ({
      path: entry.path,
      type: entry.type,
      sha: entry.sha,
      size: entry.size ?? 0,
      ...(entry.executable === true ? { executable: true as const } : {})
    })
    if (links.length === 0) return { entries: listed.map(plain), warnings: [], links: new Map() }
    const targets = new Map<string, string>()
    for (const link of links) targets.set(link.path, (yield* readTarget(link.sha)).trim())
    const byPath = new Map(listed.filter((entry) => entry.link !== true).map((entry) => [entry.path, plain(entry)]))
    const warnings: Array<string> = []

    /** Where a path is once every link on its way is followed; a reason when it cannot be. */
    const follow = (path: string, hops = 0): { readonly path: string } | { readonly problem: string } => {
      if (hops > maxHops) return { problem: "a loop of links" }
      // The nearest link at the path or above it, replaced by its target.
      for (let at = path; at !== ""; at = parentOf(at)) {
        const target = targets.get(at)
        if (target === undefined) continue
        const resolved = resolveLink(parentOf(at), target)
        if (resolved === undefined) return { problem: `its target \`${target}\` leaves the repository` }
        const rest = path.slice(at.length)
        return follow(`${resolved}${rest}`, hops + 1)
      }
      return { path }
    }

    const added = new Map<string, Entry>()
    const followed = new Map<string, string>()
    for (const link of links) {
      const found = follow(link.path)
      if ("problem" in found) {
        warnings.push(`\`${link.path}\` is a link not followed: ${found.problem}.`)
        continue
      }
      followed.set(link.path, found.path)
      const file = byPath.get(found.path)
      if (file !== undefined && file.type === "blob") {
        added.set(link.path, { ...file, path: link.path })
        continue
      }
      const prefix = found.path === "" ? "" : `${found.path}/`
      // A folder: its files (and those its own links lead to) at the link's path; not one inside the link itself.
      if (found.path === link.path || link.path.startsWith(prefix) && prefix !== "") {
        warnings.push(`\`${link.path}\` is a link not followed: it leads into itself.`)
        continue
      }
      const below = [...byPath.values()].filter((entry) => entry.path.startsWith(prefix) && entry.path !== found.path)
      if (below.length === 0 && file === undefined) {
        warnings.push(`\`${link.path}\` is a link not followed: its target \`${targets.get(link.path)}\` is not in the repository.`)
        continue
      }
      added.set(link.path, { path: link.path, type: "tree", sha: file?.sha ?? "", size: 0 })
      for (const entry of below) {
        const path = `${link.path}/${entry.path.slice(prefix.length)}`
        added.set(path, { ...entry, path })
      }
    }
    const entries = [...byPath.values(), ...added.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    for (const path of followed.keys()) if (!added.has(path)) followed.delete(path)
    return { entries, warnings, links: followed }
  })

/**
 * The checked-out tree less what links bring into a plugin's folder from outside it: a plugin is installed as its
 * folder, so a link inside one that leads out of it is refused and said (`roots`: the plugins' folders, "" for one at
 * the repository's root). Unchanged when no link does.
 */
export const withinPlugins = (checkedOut: CheckedOut, roots: ReadonlyArray<string>): CheckedOut => {
  const under = (root: string, path: string) => root === "" || path === root || path.startsWith(`${root}/`)
  const leaving = [...checkedOut.links].filter(([link, target]) =>
    roots.some((root) => under(root, link) && !under(root, target))
  )
  if (leaving.length === 0) return checkedOut
  const refused = (path: string) => leaving.some(([link]) => path === link || path.startsWith(`${link}/`))
  return {
    entries: checkedOut.entries.filter((entry) => !refused(entry.path)),
    warnings: [
      ...checkedOut.warnings,
      ...leaving.map(([link, target]) => `\`${link}\` is a link not followed: it leads out of its plugin's folder, to \`${target}\` (a plugin is installed as its folder alone).`)
    ],
    links: new Map([...checkedOut.links].filter(([link]) => !refused(link)))
  }
}
