/**
 * Reading config object content by type and parser, and what is derived from it. Pure functions, no server.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { clampCodePoints, clampUtf8, derive, fileOf, parse, type Parsed } from "../src/catalog/Parsing.js"

const ok = (result: Result.Result<Parsed, unknown>): Parsed => {
  if (Result.isFailure(result)) throw new Error(`expected a parse, got ${JSON.stringify(result.failure)}`)
  return result.success
}
const details = (result: Result.Result<Parsed, { details: ReadonlyArray<unknown> }>) => {
  if (Result.isSuccess(result)) throw new Error("expected a refusal")
  return result.failure.details as ReadonlyArray<{ message: string; path: ReadonlyArray<string | number>; code: string }>
}
const codes = (result: Result.Result<Parsed, { details: ReadonlyArray<unknown> }>) =>
  details(result).map(({ code, path }) => ({ code, path }))

const skill = (frontmatter: string, body = "Run the deploy script.\n") => `---\n${frontmatter}\n---\n${body}`
const at = new Date("2030-01-02T03:04:05.000Z")

describe("skills", () => {
  it("are Markdown with front matter: name, description and body give title, description and search text", () => {
    const parsed = ok(parse("skill", { rawSourceText: skill("name: deploy-to-staging\ndescription: Deploys the app.\nextra: [1, 2]", "\n\n# Deploy\n\nRun it.\n") }))
    expect(parsed.parserMode).toBe("markdown")
    expect(parsed.normalizedPayloadJson).toEqual({
      frontmatter: { name: "deploy-to-staging", description: "Deploys the app.", extra: [1, 2] },
      body: "# Deploy\n\nRun it."
    })
    expect(derive("skill", parsed, { title: "ignored" }, at)).toEqual({
      title: "deploy-to-staging",
      description: "Deploys the app.",
      searchText: "deploy-to-staging\nDeploys the app.\n# Deploy\n\nRun it."
    })
  })

  it("refuse missing or broken front matter, bad names, descriptions and empty bodies, each with its path and code", () => {
    expect(codes(parse("skill", { rawSourceText: "# Just markdown\n" }))).toEqual([
      { code: "invalid_skill_frontmatter", path: ["input", "rawSourceText", "frontmatter"] }
    ])
    expect(codes(parse("skill", { rawSourceText: skill("name: [unclosed") }))).toEqual([
      { code: "invalid_skill_frontmatter", path: ["input", "rawSourceText", "frontmatter"] }
    ])
    expect(codes(parse("skill", { rawSourceText: skill("- a list") }))).toEqual([
      { code: "invalid_skill_frontmatter", path: ["input", "rawSourceText", "frontmatter"] }
    ])
    for (const name of ["Deploy", "deploy--staging", "-deploy", "deploy_x", "", "x".repeat(65), "123 abc"]) {
      expect(codes(parse("skill", { rawSourceText: skill(`name: "${name}"\ndescription: ok`) }))).toEqual([
        { code: "invalid_skill_name", path: ["input", "rawSourceText", "frontmatter", "name"] }
      ])
    }
    expect(Result.isSuccess(parse("skill", { rawSourceText: skill(`name: ${"x".repeat(64)}\ndescription: ok`) }))).toBe(true)
    expect(codes(parse("skill", { rawSourceText: skill(`name: a1-b2\ndescription: "${"d".repeat(1025)}"`) }))).toEqual([
      { code: "invalid_skill_description", path: ["input", "rawSourceText", "frontmatter", "description"] }
    ])
    expect(codes(parse("skill", { rawSourceText: skill("name: a\ndescription: 42") }))).toEqual([
      { code: "invalid_skill_description", path: ["input", "rawSourceText", "frontmatter", "description"] }
    ])
    // Every problem at once.
    expect(codes(parse("skill", { rawSourceText: skill("name: Bad Name", "   \n") }))).toEqual([
      { code: "invalid_skill_name", path: ["input", "rawSourceText", "frontmatter", "name"] },
      { code: "invalid_skill_description", path: ["input", "rawSourceText", "frontmatter", "description"] },
      { code: "invalid_skill_body", path: ["input", "rawSourceText", "body"] }
    ])
  })

  it("need their Markdown: no other parser, no normalizedPayloadJson", () => {
    expect(codes(parse("skill", { rawSourceText: skill("name: a\ndescription: b"), parserMode: "text" }))).toEqual([
      { code: "parser_not_allowed", path: ["input", "parserMode"] }
    ])
    expect(codes(parse("skill", { normalizedPayloadJson: { frontmatter: {}, body: "x" } }))).toEqual([
      { code: "invalid_skill_source", path: ["input", "normalizedPayloadJson"] }
    ])
  })
})

describe("MCP definitions", () => {
  it("are JSON (or YAML) objects whose servers each have a url or a command", () => {
    const json = ok(parse("mcp", { rawSourceText: '{"mcpServers": {"github": {"url": "https://example.com/mcp"}, "local": {"command": "npx"}}}' }))
    expect(json.parserMode).toBe("json")
    expect(json.normalizedPayloadJson).toEqual({ mcpServers: { github: { url: "https://example.com/mcp" }, local: { command: "npx" } } })
    const yaml = ok(parse("mcp", { rawSourceText: "mcp:\n  docs:\n    url: https://example.com\n", parserMode: "yaml" }))
    expect(yaml).toMatchObject({ parserMode: "yaml", normalizedPayloadJson: { mcp: { docs: { url: "https://example.com" } } } })
    expect(ok(parse("mcp", { rawSourceText: '{"command": "uvx", "args": ["x"]}' })).normalizedPayloadJson).toEqual({ command: "uvx", args: ["x"] })
    // Members keep their names (snake_case stays snake_case).
    expect(ok(parse("mcp", { rawSourceText: '{"url": "https://x", "auth_type": "oauth"}' })).normalizedPayloadJson).toEqual({ url: "https://x", auth_type: "oauth" })
  })

  it("refuse servers without a url or command, with the server's path; refuse bad JSON and non-objects", () => {
    expect(codes(parse("mcp", { rawSourceText: '{"mcpServers": {"ok": {"url": "https://x"}, "bad": {"url": 3}, "worse": "x"}}' }))).toEqual([
      { code: "invalid_mcp_server", path: ["input", "rawSourceText", "mcpServers", "bad"] },
      { code: "invalid_mcp_server", path: ["input", "rawSourceText", "mcpServers", "worse"] }
    ])
    expect(codes(parse("mcp", { rawSourceText: '{"name": "nothing"}' }))).toEqual([{ code: "invalid_mcp_server", path: ["input", "rawSourceText"] }])
    expect(codes(parse("mcp", { normalizedPayloadJson: { mcp: { a: {} } } }))).toEqual([
      { code: "invalid_mcp_server", path: ["input", "normalizedPayloadJson", "mcp", "a"] }
    ])
    expect(codes(parse("mcp", { rawSourceText: "{not json" }))).toEqual([{ code: "invalid_json", path: ["input", "rawSourceText"] }])
    expect(codes(parse("hook", { rawSourceText: "[1, 2]" }))).toEqual([{ code: "invalid_json", path: ["input", "rawSourceText"] }])
    expect(codes(parse("hook", { rawSourceText: "a: [", parserMode: "yaml" }))).toEqual([{ code: "invalid_yaml", path: ["input", "rawSourceText"] }])
    expect(codes(parse("hook", { rawSourceText: "{}", parserMode: "markdown" }))).toEqual([{ code: "parser_not_allowed", path: ["input", "parserMode"] }])
  })
})

describe("other types", () => {
  it("read text by default, Markdown, JSON or YAML when asked; agents and commands Markdown by default", () => {
    expect(ok(parse("context", { rawSourceText: "# Notes\n\nplain" }))).toEqual({
      parserMode: "text",
      rawSourceText: "# Notes\n\nplain",
      normalizedPayloadJson: { text: "# Notes\n\nplain" }
    })
    expect(ok(parse("tool", { rawSourceText: "title: T\n", parserMode: "yaml" })).normalizedPayloadJson).toEqual({ title: "T" })
    expect(ok(parse("agent", { rawSourceText: "no front matter" })).normalizedPayloadJson).toEqual({ frontmatter: null, body: "no front matter" })
    expect(ok(parse("command", { rawSourceText: "---\n---\nbody" })).normalizedPayloadJson).toEqual({ frontmatter: {}, body: "body" })
    expect(codes(parse("agent", { rawSourceText: "---\n: : :\n---\n" }))).toEqual([{ code: "invalid_yaml", path: ["input", "rawSourceText", "frontmatter"] }])
    expect(codes(parse("agent", { rawSourceText: "{}", parserMode: "json" }))).toEqual([{ code: "parser_not_allowed", path: ["input", "parserMode"] }])
  })

  it("take normalizedPayloadJson as it is, with its pretty JSON as the source and parser json", () => {
    expect(ok(parse("agent", { normalizedPayloadJson: { name: "Reviewer", b: 1 } }))).toEqual({
      parserMode: "json",
      rawSourceText: '{\n  "name": "Reviewer",\n  "b": 1\n}',
      normalizedPayloadJson: { name: "Reviewer", b: 1 }
    })
    expect(codes(parse("hook", { normalizedPayloadJson: { a: 1 }, parserMode: "yaml" }))).toEqual([{ code: "parser_not_allowed", path: ["input", "parserMode"] }])
  })

  it("refuse what storage cannot hold: NUL (from a YAML escape), lone surrogates, deep nesting", () => {
    expect(codes(parse("custom", { rawSourceText: 'a: "x\\0y"', parserMode: "yaml" }))).toEqual([{ code: "invalid_character", path: ["input", "rawSourceText", "a"] }])
    expect(codes(parse("custom", { rawSourceText: '{"a": ["\\ud800"]}', parserMode: "json" }))).toEqual([
      { code: "invalid_character", path: ["input", "rawSourceText", "a", 0] }
    ])
    expect(codes(parse("hook", { rawSourceText: "[".repeat(100) + "]".repeat(100) }))).toEqual([{ code: "payload_too_deep", path: ["input", "rawSourceText"] }])
    expect(codes(parse("custom", { rawSourceText: "a: " + "[".repeat(100) + "]".repeat(100), parserMode: "yaml" }))[0]!.code).toMatch(/payload_too_deep|invalid_yaml/)
  })
})

describe("derived columns", () => {
  it("take metadata, then the payload's title and name, then the first cleaned lines, then the type and time", () => {
    const text = ok(parse("context", { rawSourceText: "\n## Release notes\n- first item\nmore" }))
    expect(derive("context", text, undefined, at)).toEqual({
      title: "Release notes",
      description: "first item",
      searchText: "Release notes\nfirst item\n\n## Release notes\n- first item\nmore"
    })
    expect(derive("context", text, { title: "  From metadata ", description: "Meta" }, at)).toMatchObject({ title: "From metadata", description: "Meta" })
    expect(derive("context", text, { name: "Named" }, at)).toMatchObject({ title: "Named", description: "first item" })
    const agent = ok(parse("agent", { rawSourceText: "---\nname: reviewer\ndescription: Reviews code\n---\nYou review code." }))
    expect(derive("agent", agent, undefined, at)).toMatchObject({ title: "reviewer", description: "Reviews code" })
    const titled = ok(parse("agent", { rawSourceText: "title: Mine\nsecond line" , parserMode: "text" }))
    expect(derive("agent", titled, undefined, at)).toMatchObject({ title: "Mine", description: "second line" })
    const mcp = ok(parse("mcp", { rawSourceText: '{"url": "https://x"}' }))
    expect(derive("mcp", mcp, undefined, at)).toEqual({ title: "Mcp 2030-01-02T03:04:05.000Z", description: "", searchText: 'Mcp 2030-01-02T03:04:05.000Z\n{"url": "https://x"}' })
    expect(derive("hook", ok(parse("hook", { rawSourceText: '{"name": "pre-commit", "description": "Lint"}' })), undefined, at)).toMatchObject({
      title: "pre-commit",
      description: "Lint"
    })
  })

  it("are clamped: title to 255 code points, description and search text to 60000 bytes, between characters", () => {
    const long = "😀".repeat(300)
    const parsed = ok(parse("context", { rawSourceText: `${long}\n${"é".repeat(40_000)}` }))
    const derived = derive("context", parsed, undefined, at)
    expect([...derived.title].length).toBe(255)
    expect(derived.title).toBe("😀".repeat(255))
    expect(new TextEncoder().encode(derived.description).length).toBe(60_000)
    expect(new TextEncoder().encode(derived.searchText).length).toBeLessThanOrEqual(60_000)
    expect(derived.searchText).not.toMatch(/[\uD800-\uDFFF]/u)
    expect(clampUtf8("aé😀", 6)).toBe("aé")
    expect(clampUtf8("aé😀", 7)).toBe("aé😀")
    expect(clampCodePoints("a😀b", 2)).toBe("a😀")
  })

  it("name the file from its relative path", () => {
    expect(fileOf("skills/deploy/SKILL.md")).toEqual({ currentRelativePath: "skills/deploy/SKILL.md", currentFileName: "SKILL.md", currentFileExtension: "md" })
    expect(fileOf("Makefile")).toMatchObject({ currentFileName: "Makefile", currentFileExtension: null })
    expect(fileOf("config/.env")).toMatchObject({ currentFileName: ".env", currentFileExtension: null })
    expect(fileOf("a/b.tar.gz")).toMatchObject({ currentFileExtension: "gz" })
    expect(fileOf(undefined)).toEqual({ currentRelativePath: null, currentFileName: null, currentFileExtension: null })
  })
})
