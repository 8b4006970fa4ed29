/** Discovery, import plans, plugin metadata and component file selection held to their Effect 3 originals on the same trees. */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { selectFiles } from "../src/connectors/ComponentFileSelection.js"
import { discover } from "../src/connectors/Discovery.js"
import { importPlans } from "../src/connectors/ImportPlans.js"
import { sourceMetadataOf } from "../src/connectors/PluginMetadata.js"
import { type Entry, indexOf } from "../src/connectors/RepositoryTree.js"
import * as Recorded from "./support/Effect3.js"

/** The Effect 3 originals' answers, recorded (support/Effect3.ts) in their JSON form where the test compares that. */
const effect3 = Recorded.originals("ConnectorsDiscoveryDifferential")

const json = (value: unknown) => JSON.stringify(value)
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value))

const entriesOf = (files: Record<string, string>): Array<Entry> =>
  Object.entries(files).map(([path, text]) => ({ path, type: "blob", sha: `sha:${path}`, size: text.length }))

const repositories: ReadonlyArray<Record<string, string>> = [
  // A marketplace: local entries (a path, a bare name under pluginRoot, a source object), external ones, a shared folder.
  {
    ".claude-plugin/marketplace.json": json({
      name: " Tools ",
      owner: { login: "acme" },
      metadata: { pluginRoot: "./plugins", version: "2" },
      plugins: [
        { name: "alpha", source: "./plugins/alpha", commands: ["./extra/run.md", "../../outside.md", 3], author: { name: "A" } },
        { name: "beta", source: "beta", hooks: { PreToolUse: [] } },
        { name: "gamma", source: { path: "plugins/gamma" } },
        { name: "remote", source: { source: "github", repo: "acme/remote" } },
        { name: "url", source: "https://example.com/x.git" },
        "not an object",
        { name: "docs", source: "./", skills: ["./skills/docs"] },
        { name: "again", source: "./" },
        { name: "missing", source: "./plugins/none" },
        { name: "climbing", source: "../elsewhere" }
      ]
    }),
    "plugins/alpha/.claude-plugin/plugin.json": json({ name: "Alpha", version: "1.0.0", repository: { url: " https://x " }, keywords: ["a", 1, " "] }),
    "plugins/alpha/commands/a.md": "# a",
    "plugins/alpha/extra/run.md": "# run",
    "plugins/alpha/hooks/hooks.json": "{}",
    "plugins/beta/plugin.json": "{ not json",
    "plugins/beta/skills/s/SKILL.md": "---\nname: s\n---",
    "plugins/gamma/agents/g.md": "# g",
    "plugins/gamma/settings.json": "{}",
    "skills/docs/SKILL.md": "# docs",
    "skills/other/SKILL.md": "# other"
  },
  // Claude plugins: declared paths of each shape, an unusable manifest, a deep one, a root plugin beside folders.
  {
    ".claude-plugin/plugin.json": json({ name: "Root", description: "  ", mcpServers: "./.mcp.json", lspServers: { x: 1 } }),
    ".mcp.json": "{}",
    "a/.claude-plugin/plugin.json": json({ name: "  A  ", skills: "./custom", agents: ["./agents/one.md", "./nothing.md"], monitors: 5 }),
    "a/custom/x/SKILL.md": "# x",
    "a/agents/one.md": "# one",
    "a/agents/two.md": "# two",
    "a/.lsp.json": "{}",
    "b/.claude-plugin/plugin.json": "[1, 2]",
    "c/.claude-plugin/plugin.json": `${"[".repeat(70)}${"]".repeat(70)}`,
    "d/.claude-plugin/plugin.json": json({ name: "d\u0000" }),
    "e/.claude-plugin/plugin.json": json({ author: "E", homepage: "https://e", license: "MIT", category: "dev" }),
    "e/commands/x.md": "# x",
    "e/commands/notes.txt": "n"
  },
  // Agent Plugins: valid manifests of both versions, a bad name, an unknown version, another tool's plugin.json.
  {
    "one/plugin.json": json({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "one", description: "First" }),
    "one/skills/a/SKILL.md": "# a",
    "one/skills/a/scripts/run.sh": "echo",
    "one/mcp.json": "{}",
    "two/plugin.json": json({ $schema: "https://www.agent-plugins.org/schemas/1.1.0/plugin.schema.json", name: "Two_Bad" }),
    "three/plugin.json": json({ $schema: "http://agent-plugins.org/schemas/9.9.9/plugin.schema.json", name: "three" }),
    "four/plugin.json": json({ name: "four" })
  },
  // Nothing a plugin: the unsupported warning naming component folders.
  { "skills/x/SKILL.md": "# x", ".mcp.json": "{}", "README.md": "hi" },
  // An unusable marketplace manifest: discovery goes on to the plugin manifests.
  { ".claude-plugin/marketplace.json": json({ name: "no plugins" }), "p/.claude-plugin/plugin.json": "{}", "p/commands/c.md": "c" }
]

describe("discovery against the Effect 3 original", () => {
  it.effect("gives the same outcome and import plans for each repository", () =>
    Effect.gen(function*() {
      for (const files of repositories) {
        const entries = entriesOf(files)
        const read = (path: string) => files[path] ?? null
        const outcome = yield* discover({ entries, readText: (path) => Effect.sync(() => read(path)) })
        const original = yield* Effect.promise(() =>
          effect3.await(Recorded.call("discover", files))
        )
        expect(plain(outcome)).toEqual(plain(original))
        for (const candidate of outcome.candidates) {
          expect(plain(importPlans(candidate, entries))).toEqual(
            plain(effect3(Recorded.call("importPlans", candidate, files)))
          )
        }
      }
    }))

  it("reads plugin metadata the same way", () => {
    const values: ReadonlyArray<Record<string, unknown>> = [
      {},
      { version: " 1.2 ", author: { name: " Ann " }, repository: "https://r", keywords: ["a", " b ", "", 2, null] },
      { author: { name: "" }, repository: { url: 3 }, homepage: 4, license: "  ", category: ["x"] },
      { author: "Bob", repository: { url: " https://git " }, keywords: "not a list" },
      { keywords: Array.from({ length: 60 }, (_, i) => `k${i}`) }
    ]
    for (const value of values) expect(sourceMetadataOf(value), json(value)).toEqual(effect3(Recorded.call("sourceMetadataOf", value)))
  })

  it("selects the same component files", () => {
    const entries = entriesOf({
      "p/.claude-plugin/plugin.json": "{}",
      "p/skills/s/SKILL.md": "x",
      "p/skills/s/ref.md": "r",
      "p/skills/s/nested/SKILL.md": "n",
      "p/skills/s/nested/own.md": "o",
      "p/scripts/run.sh": "echo",
      "p/hooks/hooks.json": "{}",
      "q/outside.sh": "o"
    })
    const index = indexOf(entries)
    const cases: ReadonlyArray<readonly ["skill" | "hook" | "command", string, string]> = [
      ["skill", "p/skills/s/SKILL.md", "run ${CLAUDE_PLUGIN_ROOT}/scripts/run.sh and $CLAUDE_PLUGIN_ROOT/missing.txt."],
      ["hook", "p/hooks/hooks.json", "\"${CLAUDE_PLUGIN_ROOT}/scripts\" ${CLAUDE_PLUGIN_ROOT}/../q/outside.sh"],
      ["command", "p/skills/s/ref.md", "nothing named"]
    ]
    for (const [objectType, entryPath, text] of cases) {
      expect(plain(selectFiles(index, objectType, entryPath, text))).toEqual(
        plain(effect3(Recorded.call("selectFiles", objectType, entryPath, text)))
      )
    }
  })
})
