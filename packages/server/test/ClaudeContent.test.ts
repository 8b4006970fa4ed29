/**
 * Reading plugin component files as Claude Code reads them (the connector's imports). Pure, no server.
 */
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import { type ComponentRead, hooksTitle, readComponent, readFrontMatter, slugOf } from "../src/connectors/ClaudeContent.js"

const at = new Date("2030-01-02T03:04:05.000Z")
const ok = (result: Result.Result<ComponentRead, string>): ComponentRead => {
  if (Result.isFailure(result)) throw new Error(`expected a read, got ${result.failure}`)
  return result.success
}

describe("front matter", () => {
  it("is strict YAML when it is YAML", () => {
    expect(readFrontMatter("name: a\ndescription: \"b: c\"\ntools: [Read, Grep]")).toEqual({
      fields: { name: "a", description: "b: c", tools: ["Read", "Grep"] },
      reading: "yaml"
    })
  })

  it("quotes a single-line value with colons in it, as Claude Code's retry does", () => {
    const text = "name: reviewer\ndescription: Use this agent when reviewing. Context: the user asks. user: review it #1\nmodel: sonnet"
    expect(readFrontMatter(text)).toEqual({
      fields: { name: "reviewer", description: "Use this agent when reviewing. Context: the user asks. user: review it #1", model: "sonnet" },
      reading: "quoted"
    })
  })

  it("reads unindented continuation lines as part of the value before them, line by line", () => {
    const text = "name: creator\ndescription: Use this agent when creating agents. Examples:\n<example>\nContext: the user wants an agent\n</example>\nmodel: inherit\ntools:\n  - Read\n  - Write"
    const read = readFrontMatter(text)
    expect(read.reading).toBe("lines")
    expect(read.fields).toEqual({
      name: "creator",
      description: "Use this agent when creating agents. Examples:\n<example>\nContext: the user wants an agent\n</example>",
      model: "inherit",
      tools: ["Read", "Write"]
    })
  })
})

describe("skill names", () => {
  it("become valid slugs", () => {
    expect(slugOf("Agent Development")).toBe("agent-development")
    expect(slugOf("  Café / Ünïcode_Names 2 ")).toBe("cafe-unicode-names-2")
    expect(slugOf("!!!")).toBe("")
    expect(slugOf("word ".repeat(40)).length).toBeLessThanOrEqual(64)
  })

  it("keep the name as written as the title and in the version's metadata", () => {
    const read = ok(readComponent("skill", "plugins/dev/skills/agent-development/SKILL.md", "---\nname: Agent Development\ndescription: Builds agents.\n---\n# Agents\n", "markdown", at))
    expect(read.derived.title).toBe("Agent Development")
    expect(read.derived.description).toBe("Builds agents.")
    expect(read.parsed.normalizedPayloadJson).toEqual({ frontmatter: { name: "agent-development", description: "Builds agents." }, body: "# Agents" })
    expect(read.metadata).toEqual({ sourceName: "Agent Development" })
    expect(read.notes).toEqual([])
  })

  it("come from the folder when the front matter has none, the description from the body (Claude Code's defaults)", () => {
    const read = ok(readComponent("skill", "skills/pdf-tools/SKILL.md", "# PDF tools\n\nFill in forms.\n", "markdown", at))
    expect(read.derived.title).toBe("pdf-tools")
    expect(read.derived.description).toBe("PDF tools")
    expect(read.metadata).toBeNull()
  })
})

describe("descriptions over the 1024 characters of the Agent Skills specification", () => {
  it("are kept whole, with a note the sync reports", () => {
    const long = "Builds things. ".repeat(80).trim()
    const read = ok(readComponent("skill", "skills/api/SKILL.md", `---\nname: api\ndescription: ${long}\n---\nBody\n`, "markdown", at))
    expect(long.length).toBeGreaterThan(1024)
    expect(read.derived.description).toBe(long)
    expect((read.parsed.normalizedPayloadJson.frontmatter as { description: string }).description).toBe(long)
    expect(read.notes).toEqual([
      `skills/api/SKILL.md: its description is ${long.length} characters, past the Agent Skills limit of 1,024; kept whole, as Claude Code loads it, though other agents may refuse or cut it`
    ])
    const within = ok(readComponent("skill", "skills/api/SKILL.md", `---\nname: api\ndescription: ${"x".repeat(1024)}\n---\nBody\n`, "markdown", at))
    expect(within.notes).toEqual([])
  })
})

describe("agents", () => {
  it("with colons in an unquoted description are imported, the description whole", () => {
    const source = "---\nname: code-reviewer\ndescription: Use this agent when code was written. Context: a PR. user: please review\n---\nYou review code.\n"
    const read = ok(readComponent("agent", "agents/code-reviewer.md", source, "markdown", at))
    expect(read.derived.title).toBe("code-reviewer")
    expect(read.derived.description).toBe("Use this agent when code was written. Context: a PR. user: please review")
    expect(read.parsed.rawSourceText).toBe(source)
    expect(read.notes).toEqual([])
  })

  it("read line by line say so in a note naming the file", () => {
    const read = ok(readComponent("agent", "agents/creator.md", "---\nname: creator\ndescription: Creates. Examples:\n<example>\nuser: make one\n</example>\n---\nBody\n", "markdown", at))
    expect(read.derived.title).toBe("creator")
    expect(read.notes).toEqual(["agents/creator.md: front matter is not YAML Claude Code can read; its fields were read line by line"])
  })
})

describe("titles", () => {
  it("of commands are their names, not their first heading", () => {
    const read = ok(readComponent("command", "commands/review-pr.md", "---\ndescription: Reviews a PR\n---\n# Context\n\nDo it.\n", "markdown", at))
    expect(read.derived.title).toBe("review-pr")
    expect(read.derived.description).toBe("Reviews a PR")
  })

  it("of hooks are their events and matchers, not a timestamp", () => {
    const hooks = { description: "Guards", hooks: { PreToolUse: [{ matcher: "Bash", hooks: [] }, { matcher: "Edit|Write", hooks: [] }], Stop: [{ hooks: [] }] } }
    const read = ok(readComponent("hook", "hooks/hooks.json", JSON.stringify(hooks), "json", at))
    expect(read.derived.title).toBe("PreToolUse (Bash, Edit|Write), Stop")
    expect(read.derived.description).toBe("Guards")
    expect(hooksTitle({})).toBeNull()
  })

  it("of a hooks file that is not JSON: refused with the reason", () => {
    const read = readComponent("hook", "hooks/hooks.json", "{ nope", "json", at)
    expect(Result.isFailure(read) && read.failure).toMatch(/^cannot be read as json \(is not valid JSON/)
  })
})
