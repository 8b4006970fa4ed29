/**
 * Reading a plugin component's file the way Claude Code reads it, for the connector's imports: front matter read
 * leniently, a skill's name taken as written (the catalog gets a valid slug of it, the title keeps the original),
 * descriptions kept whole, and titles from what Claude Code calls the component (a command's file name, a hook's
 * events and matchers). Writes through the API keep the strict rules of `catalog/Parsing.ts`. Pure.
 */
import type { JsonObject, ObjectType, ParserMode } from "@orgplane/schema"
import * as Result from "effect/Result"
import * as Yaml from "yaml"
import { clampCodePoints, derive, type Derived, MAX_TITLE_CODE_POINTS, parse, type Parsed, splitMarkdown, storable } from "../catalog/Parsing.js"
import { baseName, parentOf } from "./RepositoryTree.js"

/** How a front matter was read: strict YAML, YAML after quoting values as Claude Code does, or line by line. */
export type FrontMatterReading = "yaml" | "quoted" | "lines"

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const strictYaml = (text: string): Record<string, unknown> | undefined => {
  try {
    const document = Yaml.parseDocument(text, { prettyErrors: false, uniqueKeys: true })
    if (document.errors.length > 0) return undefined
    const value = document.toJS({ maxAliasCount: 100 }) as unknown
    return value === null || value === undefined ? {} : isObject(value) ? value : undefined
  } catch {
    return undefined
  }
}

/** A top-level `key: value` line (keys as Claude Code's front matter uses them: `allowed-tools`, `argument-hint`). */
const FIELD_LINE = /^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*))?$/

/** A plain value strict YAML would misread: `: ` or ` #` inside it, or a leading indicator character. */
const needsQuotes = (value: string) =>
  value.includes(": ") || value.endsWith(":") || value.includes(" #") || /^[&*!%@`]/.test(value) ||
  (/^[[{]/.test(value) && strictYaml(`v: ${value}`) === undefined)

/**
 * Claude Code's retry when a front matter is not valid YAML: single-line values that strict YAML misreads (an
 * agent's `description: Use this agent when … Context: …`) are quoted, then the YAML is read again.
 */
const quoted = (text: string): Record<string, unknown> | undefined => {
  const lines = text.split(/\r?\n/).map((line) => {
    const match = FIELD_LINE.exec(line)
    const value = match?.[2]?.trim()
    if (match === null || value === undefined || value === "" || /^["'|>]/.test(value) || !needsQuotes(value)) return line
    return `${match[1]}: ${JSON.stringify(value)}`
  })
  return strictYaml(lines.join("\n"))
}

/**
 * The last resort, where Claude Code itself gives up on the front matter and loads the component with defaults:
 * each top-level `key:` line starts a field, and the lines up to the next one are its value (text, or the YAML
 * they hold when indented). Keeps the description of an agent whose example dialogue was written unindented.
 */
/** Front matter fields of Claude Code's skills, agents and commands (its documentation's lists). */
const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  "name", "description", "tools", "disallowedTools", "model", "color", "allowed-tools", "argument-hint",
  "disable-model-invocation", "user-invocable", "license", "version", "metadata", "when_to_use", "hooks",
  "permissionMode", "skills", "context", "agent", "mcpServers", "maxTurns", "effort", "title"
])

const byLines = (text: string): Record<string, unknown> => {
  const fields: Record<string, unknown> = {}
  let key: string | undefined
  let lines: Array<string> = []
  const flush = () => {
    if (key === undefined) return
    const [first = "", ...rest] = lines
    const block = rest.join("\n")
    const nested = first === "" && /^[ \t]/.test(block) ? strictYaml(`${key}:\n${block}`)?.[key] : undefined
    fields[key] = nested ?? [first, ...rest].join("\n").trim()
  }
  for (const line of text.split(/\r?\n/)) {
    const match = FIELD_LINE.exec(line)
    // `Context:` or `user:` inside an example dialogue is text: a field is one Claude Code reads, or a lower-case
    // key right after a one-line field.
    const starts = match !== null &&
      (KNOWN_FIELDS.has(match[1]!) || (/^[a-z_][a-z0-9_-]*$/.test(match[1]!) && lines.length <= 1))
    if (starts) {
      flush()
      key = match![1]!
      lines = [(match![2] ?? "").trim().replace(/^(["'])(.*)\1$/, "$2")]
    } else if (key !== undefined) lines.push(line)
  }
  flush()
  return fields
}

/** A front matter's fields, as leniently as Claude Code reads them (and one step further: see `byLines`). */
export const readFrontMatter = (text: string): { readonly fields: Record<string, unknown>; readonly reading: FrontMatterReading } => {
  const strict = strictYaml(text)
  if (strict !== undefined) return { fields: strict, reading: "yaml" }
  const retried = quoted(text)
  if (retried !== undefined) return { fields: retried, reading: "quoted" }
  return { fields: byLines(text), reading: "lines" }
}

/** The Agent Skills name rule: 1 to 64 lower-case letters and digits in words joined by single hyphens. */
const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/

/** A name as a valid skill name: `Agent Development` → `agent-development`; empty when nothing of it is usable. */
export const slugOf = (name: string): string => {
  const words = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().match(/[a-z0-9]+/g) ?? []
  let slug = ""
  for (const word of words) {
    const next = slug === "" ? word : `${slug}-${word}`
    if (next.length > 64) break
    slug = next
  }
  return slug === "" ? (words[0] ?? "").slice(0, 64) : slug
}

const text = (value: unknown): string | undefined => {
  if (typeof value === "string") return value.trim() === "" ? undefined : value.trim()
  if (typeof value === "number" || typeof value === "boolean") return String(value)
  return undefined
}

/** The first line of a body that reads as prose: what Claude Code shows when a component has no description. */
const firstLine = (body: string) =>
  body.split(/\r?\n/).map((line) => line.trim().replace(/^#{1,6}\s+/, "")).find((line) => line !== "") ?? ""

const withoutExtension = (name: string) => name.replace(/\.(md|markdown)$/i, "")

/** A hooks file's title: each event with its matchers, `PreToolUse (Bash), Stop`; null when it names none. */
export const hooksTitle = (payload: JsonObject): string | null => {
  const events = isObject(payload.hooks) ? payload.hooks : payload
  const parts = Object.entries(events).flatMap(([event, groups]) => {
    if (!Array.isArray(groups)) return []
    const matchers = [...new Set(groups.flatMap((group) => isObject(group) ? [text(group.matcher)].filter((m) => m !== undefined) : []))]
    return [matchers.length === 0 ? event : `${event} (${matchers.join(", ")})`]
  })
  return parts.length === 0 ? null : parts.join(", ")
}

/** An MCP file's title: its servers by name. */
const mcpTitle = (payload: JsonObject): string | null => {
  const servers = isObject(payload.mcpServers) ? payload.mcpServers : isObject(payload.mcp) ? payload.mcp : undefined
  const names = servers === undefined ? [] : Object.keys(servers)
  return names.length === 0 ? null : `MCP: ${names.join(", ")}`
}

/** A component file as the catalog stores it: its version's content, its derived columns, and what to tell. */
export interface ComponentRead {
  readonly parsed: Parsed
  readonly derived: Derived
  /** Stored as the version's metadata: what the file says as written, where the catalog holds something else. */
  readonly metadata: JsonObject | null
  /** For the sync summary: what was read differently from the file (never why it was skipped: it was not). */
  readonly notes: ReadonlyArray<string>
}

const markdownKinds: ReadonlySet<ObjectType> = new Set(["skill", "agent", "command"])

/**
 * A Markdown component read leniently: the front matter as `readFrontMatter` reads it; a skill's name as a slug
 * (from its folder when it has none) and its description from the body's first line when it has none, as Claude
 * Code does; the description kept whole (the 1024-character limit of the Agent Skills specification is the API's,
 * and Claude Code loads longer ones).
 */
const readMarkdown = (objectType: ObjectType, path: string, source: string): Result.Result<{ parsed: Parsed; metadata: JsonObject | null; notes: Array<string>; name: string | undefined }, string> => {
  const { body, frontMatter } = splitMarkdown(source)
  const notes: Array<string> = []
  const read = frontMatter === null ? { fields: {}, reading: "yaml" as const } : readFrontMatter(frontMatter)
  if (read.reading === "lines") notes.push(`${path}: front matter is not YAML Claude Code can read; its fields were read line by line`)
  const fields: Record<string, unknown> = { ...read.fields }
  let name = text(fields.name)
  let metadata: JsonObject | null = null
  if (objectType === "skill") {
    const folder = baseName(parentOf(path)) || withoutExtension(baseName(path))
    const written = name ?? folder
    const slug = SKILL_NAME.test(written) && written.length <= 64 ? written : slugOf(written) || slugOf(folder) || "skill"
    if (slug !== written) metadata = { sourceName: written }
    name = written
    fields.name = slug
    fields.description = text(fields.description) ?? firstLine(body)
    const length = [...String(fields.description ?? "")].length
    if (length > 1024) {
      notes.push(`${path}: its description is ${length} characters, past the Agent Skills limit of 1,024; kept whole, as Claude Code loads it, though other agents may refuse or cut it`)
    }
  }
  const payload = Result.mapError(storable({ frontmatter: fields, body }, ["rawSourceText"]), (error) => error.details?.[0]?.message ?? error.message)
  return Result.map(payload, (normalized) => ({
    parsed: { parserMode: "markdown" as const, rawSourceText: source, normalizedPayloadJson: normalized as JsonObject },
    metadata,
    notes,
    name
  }))
}

/**
 * Reads one mapped file of a plugin for the catalog, or says why it cannot be. JSON and YAML components (hooks,
 * MCP servers) are read strictly: Claude Code refuses a hooks file that is not JSON too.
 */
export const readComponent = (
  objectType: ObjectType,
  path: string,
  source: string,
  parserMode: ParserMode,
  at: Date
): Result.Result<ComponentRead, string> => {
  const lenient = parserMode === "markdown" && markdownKinds.has(objectType)
  const strict = lenient && objectType === "skill" ? undefined : parse(objectType, { rawSourceText: source, parserMode })
  if (strict !== undefined && Result.isFailure(strict) && !lenient) {
    const detail = strict.failure.details?.[0]?.message ?? strict.failure.message
    return Result.fail(`cannot be read as ${parserMode} (${detail})`)
  }
  return Result.map(
    strict !== undefined && Result.isSuccess(strict)
      ? Result.succeed({ parsed: strict.success, metadata: null, notes: [] as Array<string>, name: undefined as string | undefined })
      : readMarkdown(objectType, path, source),
    ({ metadata, name, notes, parsed }) => {
      const payload = parsed.normalizedPayloadJson
      const frontmatter = isObject(payload.frontmatter) ? payload.frontmatter : {}
      const file = withoutExtension(baseName(path))
      const title = objectType === "skill"
        ? name ?? text(frontmatter.name)
        : objectType === "command"
        ? file // Claude Code names a command after its file: `/review` for `commands/review.md`.
        : objectType === "agent"
        ? text(frontmatter.name) ?? file
        : objectType === "hook"
        ? hooksTitle(payload) ?? baseName(path)
        : objectType === "mcp" // A file that is one server itself is named after the file.
        ? mcpTitle(payload) ?? `MCP: ${baseName(path).replace(/\.(json|ya?ml)$/i, "")}`
        : undefined
      const description = text(frontmatter.description) ?? (markdownKinds.has(objectType) ? firstLine(String(payload.body ?? "")) : text(payload.description))
      const derived = derive(objectType === "skill" ? "custom" : objectType, parsed, {
        ...(title === undefined ? {} : { title }),
        ...(description === undefined ? {} : { description })
      }, at)
      return {
        parsed,
        derived: { ...derived, title: clampCodePoints(derived.title, MAX_TITLE_CODE_POINTS) },
        metadata,
        notes
      }
    }
  )
}
