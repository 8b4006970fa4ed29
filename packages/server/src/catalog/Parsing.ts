/**
 * Reading a config object version's content: the parser of its object type (and `parserMode`) turns the source
 * into `normalizedPayloadJson`, and the object's title, description and search text are derived from it. Pure
 * functions; every refusal is an `InvalidRequest` whose details name the bad member under `input`.
 */
import {
  InvalidRequest,
  type JsonObject,
  MAX_SOURCE_BYTES,
  type ObjectType,
  type ParserMode
} from "@orgplane/schema"
import * as Result from "effect/Result"
import * as Yaml from "yaml"
import { exceedsDepth, maxDepth, nulPaths } from "../platform/RequestGuard.js"

type Path = ReadonlyArray<string | number>

/** One refusal: what is wrong, where (below `input`), and a machine-readable code. */
export interface Problem {
  readonly message: string
  readonly path: Path
  readonly code: string
}

const invalid = (problems: ReadonlyArray<Problem>) =>
  new InvalidRequest({
    details: problems.map(({ code, message, path }) => ({ message, path: ["input", ...path], code }))
  })

/** The parsers that fit each object type, the default first. */
export const parserModes: Readonly<Record<ObjectType, readonly [ParserMode, ...Array<ParserMode>]>> = {
  skill: ["markdown"],
  agent: ["markdown", "text"],
  command: ["markdown", "text"],
  mcp: ["json", "yaml"],
  hook: ["json", "yaml"],
  tool: ["text", "markdown", "json", "yaml"],
  context: ["text", "markdown", "json", "yaml"],
  custom: ["text", "markdown", "json", "yaml"]
}

/** A version's content as given: exactly one of `rawSourceText` and `normalizedPayloadJson` (the schema checks it). */
export interface Content {
  readonly rawSourceText?: string | undefined
  readonly normalizedPayloadJson?: JsonObject | undefined
  readonly parserMode?: ParserMode | undefined
}

export interface Parsed {
  readonly parserMode: ParserMode
  /** The source as stored: as given, or the pretty JSON of a given `normalizedPayloadJson`. */
  readonly rawSourceText: string
  readonly normalizedPayloadJson: JsonObject
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Whether a parsed value nests deeper than `max` arrays or objects (an explicit stack: depth costs no stack). */
const deeperThan = (value: unknown, max: number): boolean => {
  const stack: Array<readonly [unknown, number]> = [[value, 0]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [current, depth] = next
    if (typeof current !== "object" || current === null) continue
    if (depth + 1 > max) return true
    for (const child of Object.values(current)) stack.push([child, depth + 1])
  }
  return false
}

/** A lone UTF-16 surrogate: valid in a JavaScript string, refused by Postgres in JSON. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

const loneSurrogatePath = (value: unknown): Path | undefined => {
  const stack: Array<readonly [unknown, Path]> = [[value, []]]
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const [current, path] = next
    if (typeof current === "string") {
      if (LONE_SURROGATE.test(current)) return path
    } else if (typeof current === "object" && current !== null) {
      for (const [key, child] of Object.entries(current)) {
        if (LONE_SURROGATE.test(key)) return path
        stack.push([child, [...path, Array.isArray(current) ? Number(key) : key]])
      }
    }
  }
  return undefined
}

/**
 * What a parser produced, made plain JSON (YAML can give values JSON has no words for, such as `.inf`) and checked
 * for what storage refuses: NUL, lone surrogates, and nesting deeper than any request may.
 */
export const storable = (value: unknown, at: Path): Result.Result<unknown, InvalidRequest> => {
  if (deeperThan(value, maxDepth)) {
    return Result.fail(invalid([{ message: `must not nest more than ${maxDepth} levels deep`, path: at, code: "payload_too_deep" }]))
  }
  const plain = JSON.parse(JSON.stringify(value) ?? "null") as unknown
  const nul = nulPaths(plain)
  if (nul.length > 0) {
    return Result.fail(invalid(nul.slice(0, 10).map((path) => ({ message: "Must not contain the NUL character (\\u0000).", path: [...at, ...path], code: "invalid_character" }))))
  }
  const surrogate = loneSurrogatePath(plain)
  if (surrogate !== undefined) {
    return Result.fail(invalid([{ message: "must not contain a lone UTF-16 surrogate", path: [...at, ...surrogate], code: "invalid_character" }]))
  }
  return Result.succeed(plain)
}

const RAW: Path = ["rawSourceText"]

const parseJson = (text: string): Result.Result<unknown, InvalidRequest> => {
  if (exceedsDepth(text, maxDepth)) {
    return Result.fail(invalid([{ message: `must not nest more than ${maxDepth} levels deep`, path: RAW, code: "payload_too_deep" }]))
  }
  try {
    return Result.succeed(JSON.parse(text))
  } catch (error) {
    return Result.fail(invalid([{ message: `is not valid JSON: ${(error as Error).message}`, path: RAW, code: "invalid_json" }]))
  }
}

/** YAML 1.2 (core schema: no dates, no custom tags), aliases bounded, the first error reported. */
const parseYaml = (text: string, at: Path, code = "invalid_yaml"): Result.Result<unknown, InvalidRequest> => {
  try {
    const document = Yaml.parseDocument(text, { prettyErrors: false, uniqueKeys: true })
    const [error] = document.errors
    if (error !== undefined) {
      return Result.fail(invalid([{ message: `is not valid YAML: ${error.message}`, path: at, code }]))
    }
    return Result.succeed(document.toJS({ maxAliasCount: 100 }))
  } catch (error) {
    return Result.fail(invalid([{ message: `is not valid YAML: ${(error as Error).message}`, path: at, code }]))
  }
}

/** `---` on the first line, the YAML, `---` on a line of its own; then the body. */
const FRONT_MATTER = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/

interface Markdown {
  readonly frontmatter: Record<string, unknown> | null
  readonly body: string
}

/** Leading blank lines and trailing white space go; indentation of the first line stays (it may be code). */
const tidyBody = (body: string) => body.replace(/^(?:[ \t]*\r?\n)+/, "").trimEnd()

/** A Markdown source's front matter text (null when it has none) and its body, tidied. */
export const splitMarkdown = (text: string): { readonly frontMatter: string | null; readonly body: string } => {
  const source = text.replace(/^\uFEFF/, "").replace(/^(?:[ \t]*\r?\n)+/, "")
  const match = FRONT_MATTER.exec(source)
  if (match === null) return { frontMatter: null, body: tidyBody(source) }
  return { frontMatter: match[1] ?? "", body: tidyBody(source.slice(match[0].length)) }
}

const parseMarkdown = (text: string, frontMatterCode: string): Result.Result<Markdown, InvalidRequest> => {
  const { body, frontMatter } = splitMarkdown(text)
  if (frontMatter === null) return Result.succeed({ frontmatter: null, body })
  const at: Path = [...RAW, "frontmatter"]
  return Result.flatMap(parseYaml(frontMatter, at, frontMatterCode), (value) =>
    value === null || value === undefined
      ? Result.succeed({ frontmatter: {}, body })
      : isObject(value)
      ? Result.succeed({ frontmatter: value, body })
      : Result.fail(invalid([{ message: "front matter must be a YAML mapping of names to values", path: at, code: frontMatterCode }])))
}

const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/

const codePoints = (text: string) => {
  let count = 0
  for (const _ of text) count++
  return count
}

/** A skill's front matter and body, checked; every problem reported at once. */
const checkSkill = (markdown: Markdown): Result.Result<Markdown, InvalidRequest> => {
  if (markdown.frontmatter === null) {
    return Result.fail(invalid([{
      message: "a skill must begin with YAML front matter between --- lines, with name and description",
      path: [...RAW, "frontmatter"],
      code: "invalid_skill_frontmatter"
    }]))
  }
  const problems: Array<Problem> = []
  const { description, name } = markdown.frontmatter
  const trimmedName = typeof name === "string" ? name.trim() : ""
  if (trimmedName === "" || codePoints(trimmedName) > 64 || !SKILL_NAME.test(trimmedName)) {
    problems.push({
      message: "name must be 1 to 64 lowercase letters and digits, in words joined by single hyphens (deploy-to-staging)",
      path: [...RAW, "frontmatter", "name"],
      code: "invalid_skill_name"
    })
  }
  const trimmedDescription = typeof description === "string" ? description.trim() : ""
  if (trimmedDescription === "" || codePoints(trimmedDescription) > 1024) {
    problems.push({
      message: "description must be text of 1 to 1024 characters",
      path: [...RAW, "frontmatter", "description"],
      code: "invalid_skill_description"
    })
  }
  if (markdown.body.trim() === "") {
    problems.push({ message: "a skill needs a body after its front matter", path: [...RAW, "body"], code: "invalid_skill_body" })
  }
  if (problems.length > 0) return Result.fail(invalid(problems))
  return Result.succeed({ frontmatter: { ...markdown.frontmatter, name: trimmedName, description: trimmedDescription }, body: markdown.body })
}

/** The servers of an MCP definition: under `mcpServers` or `mcp`, or the definition itself when it has a url or command. */
const checkMcp = (payload: Record<string, unknown>, at: Path): Result.Result<void, InvalidRequest> => {
  const problems: Array<Problem> = []
  const server = (value: unknown, path: Path) => {
    if (!isObject(value) || (typeof value.url !== "string" && typeof value.command !== "string")) {
      problems.push({ message: "an MCP server must be an object with a string url or command", path, code: "invalid_mcp_server" })
    } else if ((typeof value.url === "string" ? value.url : value.command as string).trim() === "") {
      problems.push({ message: "an MCP server's url or command must not be empty", path, code: "invalid_mcp_server" })
    }
  }
  const containers = (["mcpServers", "mcp"] as const).filter((key) => key in payload)
  if (containers.length === 0) {
    if ("url" in payload || "command" in payload) server(payload, at)
    else problems.push({ message: "an MCP definition needs servers under mcpServers (or mcp), or a url or command of its own", path: at, code: "invalid_mcp_server" })
  }
  for (const key of containers) {
    const servers = payload[key]
    if (!isObject(servers)) {
      problems.push({ message: `${key} must be an object of servers by name`, path: [...at, key], code: "invalid_mcp_server" })
      continue
    }
    for (const [name, value] of Object.entries(servers)) server(value, [...at, key, name])
  }
  return problems.length > 0 ? Result.fail(invalid(problems.slice(0, 20))) : Result.void
}

const encoder = new TextEncoder()

/**
 * Reads a version's content for an object of `objectType`. With `rawSourceText`, the parser is `parserMode` (it
 * must fit the type) or the type's default. With `normalizedPayloadJson`, the object is the content as it is and
 * its pretty JSON the stored source (parser `json`); skills need their Markdown source, so they refuse it.
 */
export const parse = (objectType: ObjectType, content: Content): Result.Result<Parsed, InvalidRequest> => {
  const allowed = parserModes[objectType]
  if (content.normalizedPayloadJson !== undefined) {
    const at: Path = ["normalizedPayloadJson"]
    if (objectType === "skill") {
      return Result.fail(invalid([{
        message: "a skill is read from its Markdown source: give rawSourceText instead",
        path: at,
        code: "invalid_skill_source"
      }]))
    }
    if (content.parserMode !== undefined && content.parserMode !== "json") {
      return Result.fail(invalid([{
        message: "with normalizedPayloadJson the content is JSON: parserMode may only be json",
        path: ["parserMode"],
        code: "parser_not_allowed"
      }]))
    }
    return Result.gen(function*() {
      const payload = (yield* storable(content.normalizedPayloadJson, at)) as JsonObject
      if (objectType === "mcp") yield* checkMcp(payload, at)
      const rawSourceText = JSON.stringify(payload, null, 2)
      if (encoder.encode(rawSourceText).length > MAX_SOURCE_BYTES) {
        return yield* Result.fail(invalid([{ message: "must be at most 1 MiB (1048576 bytes of UTF-8) as JSON", path: at, code: "payload_too_large" }]))
      }
      return { parserMode: "json" as const, rawSourceText, normalizedPayloadJson: payload }
    })
  }
  const text = content.rawSourceText ?? ""
  const parserMode = content.parserMode ?? allowed[0]
  if (!allowed.includes(parserMode)) {
    return Result.fail(invalid([{
      message: `a ${objectType} is read as ${allowed.join(" or ")}, not ${parserMode}`,
      path: ["parserMode"],
      code: "parser_not_allowed"
    }]))
  }
  return Result.gen(function*() {
    let payload: unknown
    switch (parserMode) {
      case "markdown": {
        const markdown = yield* parseMarkdown(text, objectType === "skill" ? "invalid_skill_frontmatter" : "invalid_yaml")
        payload = objectType === "skill" ? yield* checkSkill(markdown) : markdown
        break
      }
      case "json":
      case "yaml": {
        const value = parserMode === "json" ? yield* parseJson(text) : yield* parseYaml(text, RAW)
        if (!isObject(value)) {
          return yield* Result.fail(invalid([{
            message: `must be a ${parserMode === "json" ? "JSON" : "YAML"} object`,
            path: RAW,
            code: parserMode === "json" ? "invalid_json" : "invalid_yaml"
          }]))
        }
        payload = value
        break
      }
      case "text":
        payload = { text }
    }
    const normalized = (yield* storable(payload, RAW)) as JsonObject
    if (objectType === "mcp") yield* checkMcp(normalized, RAW)
    return { parserMode, rawSourceText: text, normalizedPayloadJson: normalized }
  })
}

// Derived columns ---------------------------------------------------------------------------------------------

export const MAX_TITLE_CODE_POINTS = 255
export const MAX_DERIVED_BYTES = 60_000

/** At most `max` code points. */
export const clampCodePoints = (text: string, max: number): string => {
  let count = 0
  let end = 0
  for (const char of text) {
    if (++count > max) return text.slice(0, end)
    end += char.length
  }
  return text
}

/** At most `max` bytes of UTF-8, cut between characters (a lone surrogate counts as the 3 bytes of U+FFFD). */
export const clampUtf8 = (text: string, max: number): string => {
  if (text.length * 3 <= max) return text
  let bytes = 0
  let end = 0
  for (const char of text) {
    // A string's iteration yields whole characters: each has a code point.
    const point = char.codePointAt(0) ?? 0
    bytes += point < 0x80 ? 1 : point < 0x800 ? 2 : point < 0x10000 ? 3 : 4
    if (bytes > max) return text.slice(0, end)
    end += char.length
  }
  return text
}

export interface Derived {
  readonly title: string
  readonly description: string
  readonly searchText: string
}

const nonEmpty = (...values: ReadonlyArray<unknown>): string | undefined => {
  for (const value of values) {
    if (typeof value === "string" && value.trim() !== "") return value.trim()
  }
  return undefined
}

/** A line as a title: heading marks, list bullets and `title:` / `description:` prefixes removed. */
const cleanLine = (line: string) =>
  line
    .trim()
    .replace(/^#{1,6}\s+/, "")
    .replace(/^(?:[-*+]|\d+[.)])\s+/, "")
    .replace(/^(?:title|description)\s*:\s*/i, "")
    .trim()

const cleanLines = (text: string) => text.split(/\r?\n/).map(cleanLine).filter((line) => line !== "")

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/**
 * The object's title, description and search text from a parsed version.
 * A skill: its front matter's name and description, and name, description and body as search text. Otherwise the
 * first of `metadata.title`, `metadata.name`, the payload's `title`, `name` (a Markdown source's front matter), the
 * first line of the text (Markdown and text only: the first line of JSON or YAML is syntax), or `<Type> <time>`;
 * the description likewise from `description`, or the second line.
 */
export const derive = (objectType: ObjectType, parsed: Parsed, metadata: JsonObject | undefined, at: Date): Derived => {
  const payload = parsed.normalizedPayloadJson
  let title: string
  let description: string
  let searchText: string
  if (objectType === "skill") {
    const frontmatter = payload.frontmatter as Record<string, unknown>
    title = String(frontmatter.name)
    description = String(frontmatter.description)
    searchText = [title, description, String(payload.body)].join("\n")
  } else {
    const markdown = parsed.parserMode === "markdown"
    const fields: Record<string, unknown> = markdown ? ((payload.frontmatter as Record<string, unknown> | null) ?? {}) : payload
    const lines = markdown ? cleanLines(String(payload.body)) : parsed.parserMode === "text" ? cleanLines(parsed.rawSourceText) : []
    const fromFields = nonEmpty(metadata?.title, metadata?.name, fields.title, fields.name)
    title = fromFields ?? lines[0] ?? `${capitalized(objectType)} ${at.toISOString()}`
    description = nonEmpty(metadata?.description, fields.description) ?? lines[1] ?? ""
    searchText = [title, description, parsed.rawSourceText].filter((part) => part.trim() !== "").join("\n")
  }
  return {
    title: clampCodePoints(title, MAX_TITLE_CODE_POINTS),
    description: clampUtf8(description, MAX_DERIVED_BYTES),
    searchText: clampUtf8(searchText, MAX_DERIVED_BYTES)
  }
}

export interface FileColumns {
  readonly currentRelativePath: string | null
  readonly currentFileName: string | null
  readonly currentFileExtension: string | null
}

/** `skills/deploy/SKILL.md` → name `SKILL.md`, extension `md`; `Makefile` and `.env` have no extension. */
export const fileOf = (relativePath: string | undefined): FileColumns => {
  if (relativePath === undefined) return { currentRelativePath: null, currentFileName: null, currentFileExtension: null }
  const name = relativePath.split(/[\\/]/).pop() ?? relativePath
  const dot = name.lastIndexOf(".")
  return {
    currentRelativePath: relativePath,
    currentFileName: name,
    currentFileExtension: dot > 0 && dot < name.length - 1 ? name.slice(dot + 1) : null
  }
}
