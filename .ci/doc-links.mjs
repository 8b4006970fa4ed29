#!/usr/bin/env node
/**
 * Checks that every relative link of every tracked Markdown file resolves: the file or folder it names exists, and its
 * `#anchor` (in the same file or another Markdown file) is one of that file's headings, by GitHub's rules for heading
 * ids (lower case, punctuation dropped, spaces as hyphens, `-1`, `-2`… for repeats), or an explicit `id`/`name`.
 * Links to other sites are not fetched. Prints each broken link as `file:line: link (why)` and exits 1 when there is one.
 *
 *   node .ci/doc-links.mjs [file.md ...]     (default: every tracked *.md)
 *
 * Plain Node, no dependency: `.ci/run` runs it after the typecheck, and `examples/doc-links.test.ts` as a test.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

const root = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

/** The file's lines with fenced code blocks blanked (no headings or links there), line numbers kept. */
const prose = (text) => {
  let fence = undefined
  return text.split("\n").map((line) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence === undefined && marker !== undefined) {
      fence = marker
      return ""
    }
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined
      return ""
    }
    return line
  })
}

/** A line with its inline code spans blanked: code, not links. */
const withoutCode = (line) => line.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => " ".repeat(span.length))

/** A heading's id as GitHub makes it from the heading's text. */
export const slug = (heading) =>
  heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images: their text
    .replace(/<[^>]+>/g, "") // inline HTML
    .replace(/[*_~`]/g, (char) => (char === "_" ? "_" : "")) // emphasis and code marks (underscores stay)
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, "")
    .replace(/ /g, "-")

const anchorCache = new Map()

/** Every id a Markdown file's headings (and explicit `id`/`name` attributes) give. */
const anchorsOf = (file) => {
  if (anchorCache.has(file)) return anchorCache.get(file)
  const text = Fs.readFileSync(file, "utf8")
  const ids = new Set()
  const seen = new Map()
  const lines = prose(text)
  lines.forEach((line, index) => {
    const atx = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    const setext = index + 1 < lines.length && /^ {0,3}(=+|-+)\s*$/.test(lines[index + 1]) && line.trim() !== "" && !/^\s*[-*+>|]/.test(line)
      ? line.trim()
      : undefined
    const heading = atx?.[1] ?? setext
    if (heading !== undefined) {
      const base = slug(heading)
      const count = seen.get(base) ?? 0
      seen.set(base, count + 1)
      ids.add(count === 0 ? base : `${base}-${count}`)
    }
    for (const match of line.matchAll(/\s(?:id|name)=["']([^"']+)["']/g)) ids.add(match[1])
  })
  anchorCache.set(file, ids)
  return ids
}

/** The relative links of a file: `[text](target)`, `[label]: target` and `href="target"`, with their line numbers. */
const linksOf = (file) => {
  const links = []
  prose(Fs.readFileSync(file, "utf8")).map(withoutCode).forEach((line, index) => {
    for (const match of line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) links.push({ line: index + 1, target: match[1] })
    const reference = /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/.exec(line)
    if (reference !== null) links.push({ line: index + 1, target: reference[1] })
    for (const match of line.matchAll(/\bhref=["']([^"']+)["']/g)) links.push({ line: index + 1, target: match[1] })
  })
  return links.filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith("//"))
}

/** What is wrong with one link of `file`, or undefined. */
const problem = (file, target) => {
  const [pathPart, anchor] = target.split("#", 2)
  const path = decodeURIComponent(pathPart.split("?")[0])
  const resolved = path === "" ? file : path.startsWith("/") ? Path.join(root, path) : Path.resolve(Path.dirname(file), path)
  if (!Fs.existsSync(resolved)) return `no such file: ${Path.relative(root, resolved)}`
  if (anchor === undefined || anchor === "") return undefined
  if (!resolved.endsWith(".md") || Fs.statSync(resolved).isDirectory()) return undefined
  const ids = anchorsOf(resolved)
  return ids.has(decodeURIComponent(anchor).toLowerCase()) ? undefined : `no heading #${anchor} in ${Path.relative(root, resolved)}`
}

/** The broken links of the files (default: every tracked Markdown file), as `file:line: target (why)`. */
export const check = (files) =>
  files.flatMap((file) =>
    linksOf(file).flatMap(({ line, target }) => {
      const why = problem(file, target)
      return why === undefined ? [] : [`${Path.relative(root, file)}:${line}: ${target} (${why})`]
    })
  )

export const trackedMarkdown = () =>
  execFileSync("git", ["ls-files", "-z", "--", "*.md"], { cwd: root, encoding: "utf8" })
    .split("\0")
    .filter((file) => file !== "")
    .map((file) => Path.join(root, file))
    .filter((file) => Fs.existsSync(file))

if (process.argv[1] !== undefined && Path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const given = process.argv.slice(2)
  const files = given.length > 0 ? given.map((file) => Path.resolve(file)) : trackedMarkdown()
  const broken = check(files)
  for (const line of broken) console.error(line)
  console.log(`doc links: ${files.length} Markdown files, ${broken.length === 0 ? "every relative link resolves" : `${broken.length} broken`}`)
  process.exit(broken.length === 0 ? 0 : 1)
}
