/** Discovering plugin candidates in in-memory repository trees, and the import plans they become. Pure, no server. */
import { describe, expect, it } from "@effect/vitest"
import type { DiscoveredPlugin } from "@orgplane/schema"
import { Effect, Result } from "effect"
import { discover, type DiscoveryOutcome } from "../src/connectors/Discovery.js"
import { filesFor, importPlans, selectorMatches } from "../src/connectors/ImportPlans.js"
import type { Entry } from "../src/connectors/RepositoryTree.js"

/** A repository: every file with its text (only manifests are ever read), and the folders git lists with them. */
const repo = (files: Record<string, string>) => {
  const entries: Array<Entry> = []
  const folders = new Set<string>()
  for (const [path, text] of Object.entries(files)) {
    entries.push({ path, type: "blob", sha: `sha:${path}`, size: text.length })
    for (let slash = path.lastIndexOf("/"); slash > 0; slash = path.lastIndexOf("/", slash - 1)) folders.add(path.slice(0, slash))
  }
  for (const folder of folders) entries.push({ path: folder, type: "tree", sha: `tree:${folder}`, size: 0 })
  const reads: Array<string> = []
  const readText = (path: string) =>
    Effect.sync(() => {
      reads.push(path)
      return files[path] ?? null
    })
  return { entries, reads, readText }
}

const json = (value: unknown) => JSON.stringify(value)
const byKey = (outcome: DiscoveryOutcome) => new Map(outcome.candidates.map((candidate) => [candidate.key, candidate]))
const get = (outcome: DiscoveryOutcome, key: string): DiscoveredPlugin => {
  const candidate = byKey(outcome).get(key)
  if (candidate === undefined) throw new Error(`no candidate ${key} among ${outcome.candidates.map((c) => c.key).join(", ")}`)
  return candidate
}
const statuses = (outcome: DiscoveryOutcome) => outcome.steps.map((step) => step.status)
const none = { agents: [], commands: [], hooks: [], lspServers: [], mcpServers: [], monitors: [], settings: [], skills: [] }
const file = (path: string) => ({ path, sha: `sha:${path}` })

describe("a single Claude plugin at the root", () => {
  const single = () =>
    repo({
      ".claude-plugin/plugin.json": json({ name: "deploy-tools", description: " Deploys things. ", version: "1.2.0" }),
      "skills/deploy/SKILL.md": "---\nname: deploy\n---\n",
      "skills/deploy/scripts/run.sh": "#!/bin/sh",
      "skills/deploy/reference.md": "# more",
      "commands/ship.md": "# ship",
      "commands/notes.txt": "not a command",
      "agents/reviewer.md": "# reviewer",
      "hooks/hooks.json": "{}",
      "hooks/check.sh": "#!/bin/sh",
      ".mcp.json": "{}",
      ".lsp.json": "{}",
      "settings.json": "{}",
      "README.md": "# readme",
      "plugin.json": json({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "ignored" })
    })

  it.effect("is one candidate with its conventional components, read from its one manifest", () =>
    Effect.gen(function*() {
      const { entries, readText, reads } = single()
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("claude_single_plugin_repo")
      expect(outcome.warnings).toEqual([])
      expect(outcome.marketplace).toBeNull()
      // The Agent Plugins plugin.json is never read: Claude manifests win.
      expect(reads).toEqual([".claude-plugin/plugin.json"])
      expect(outcome.candidates).toHaveLength(1)
      const candidate = get(outcome, "manifest:root")
      expect(candidate).toMatchObject({
        rootPath: "",
        displayName: "deploy-tools",
        description: "Deploys things.",
        supported: true,
        selectedByDefault: true,
        manifestPath: ".claude-plugin/plugin.json",
        warnings: [],
        sourceKind: "plugin_manifest",
        sourceSchemaVersion: null,
        metadata: { name: "deploy-tools", description: " Deploys things. ", version: "1.2.0" }
      })
      expect(candidate.componentPaths).toEqual({
        ...none,
        skills: ["skills"],
        commands: ["commands"],
        agents: ["agents"],
        hooks: ["hooks/hooks.json"],
        mcpServers: [".mcp.json"],
        lspServers: [".lsp.json"],
        settings: ["settings.json"]
      })
      expect(candidate.componentKinds).toEqual(["skill", "command", "agent", "hook", "mcp_server", "lsp_server", "settings"])
      expect(outcome.steps).toEqual([
        { id: "read_repository_structure", label: "Read repository structure", status: "completed" },
        { id: "check_marketplace_manifest", label: "Check for Claude marketplace manifest", status: "skipped" },
        { id: "check_plugin_manifests", label: "Check for Agent Plugins or Claude plugin manifests", status: "completed" },
        { id: "prepare_discovered_plugins", label: "Prepare discovered plugins", status: "completed" }
      ])
    }))

  it.effect("becomes one import plan per importable component, with the files each matches now", () =>
    Effect.gen(function*() {
      const { entries, readText } = single()
      const outcome = yield* discover({ entries, readText })
      expect(importPlans(get(outcome, "manifest:root"), entries)).toEqual([
        { objectType: "skill", selector: "skills/**", files: [file("skills/deploy/SKILL.md")] },
        { objectType: "command", selector: "commands/**", files: [file("commands/ship.md")] },
        { objectType: "agent", selector: "agents/**", files: [file("agents/reviewer.md")] },
        { objectType: "hook", selector: "hooks/hooks.json", files: [file("hooks/hooks.json")] },
        { objectType: "mcp", selector: ".mcp.json", files: [file(".mcp.json")] }
      ])
    }))
})

describe("several Claude plugins", () => {
  it.effect("give one candidate per manifest folder, named by manifest or folder", () =>
    Effect.gen(function*() {
      const { entries, readText, reads } = repo({
        "plugins/a/.claude-plugin/plugin.json": json({ name: "Alpha", description: "First." }),
        "plugins/a/commands/x.md": "# x",
        "plugins/b/.claude-plugin/plugin.json": json({ version: "0.1.0" }),
        "plugins/b/.claude/skills/s/SKILL.md": "---\nname: s\n---\n",
        "plugins/b/.claude/agents/helper.md": "# helper",
        "docs/plugin.json": json({ unrelated: true })
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("claude_multi_plugin_repo")
      expect(outcome.candidates.map((candidate) => candidate.key)).toEqual(["manifest:plugins/a", "manifest:plugins/b"])
      expect(reads.sort()).toEqual(["plugins/a/.claude-plugin/plugin.json", "plugins/b/.claude-plugin/plugin.json"])
      expect(get(outcome, "manifest:plugins/a")).toMatchObject({
        rootPath: "plugins/a",
        displayName: "Alpha",
        description: "First.",
        componentKinds: ["command"],
        componentPaths: { ...none, commands: ["plugins/a/commands"] }
      })
      expect(get(outcome, "manifest:plugins/b")).toMatchObject({
        displayName: "b",
        description: null,
        componentKinds: ["skill", "agent"],
        componentPaths: { ...none, skills: ["plugins/b/.claude/skills"], agents: ["plugins/b/.claude/agents"] }
      })
    }))

  it.effect("a manifest at the root beside plugins in folders is a multi-plugin repository; colliding keys stay unique", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/plugin.json": json({ name: "top" }),
        "root/.claude-plugin/plugin.json": json({ name: "a folder named root" })
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("claude_multi_plugin_repo")
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.rootPath])).toEqual([
        ["manifest:root", ""],
        ["manifest:root#2", "root"]
      ])
    }))
})

describe("a Claude marketplace", () => {
  const marketplace = () =>
    repo({
      ".claude-plugin/marketplace.json": json({
        name: "acme-tools",
        owner: { name: "Acme", email: "tools@acme.test" },
        metadata: { description: "Acme's plugins.", version: "2.0.0", pluginRoot: "./plugins" },
        plugins: [
          { name: "alpha", source: "./plugins/alpha", description: "Alpha from the marketplace." },
          { name: "whole-repo", source: "./" },
          { name: "beta", source: { source: "local", path: "plugins/beta" }, agents: ["./custom-agents/"] },
          { name: "gamma", source: "gamma" },
          { name: "remote", source: { source: "url", url: "https://git.example.test/remote.git" } },
          { name: "hub", source: { source: "github", repo: "acme/hub" } },
          { name: "alpha-again", source: "./plugins/alpha/" },
          { name: "missing", source: "./plugins/missing" },
          "not an object",
          { source: "../elsewhere" }
        ]
      }),
      ".claude-plugin/plugin.json": json({ name: "repo-plugin" }),
      "plugins/alpha/.claude-plugin/plugin.json": json({ name: "alpha-manifest", description: "From the manifest.", commands: ["./extra/cmd.md"] }),
      "plugins/alpha/skills/x/SKILL.md": "---\nname: x\n---\n",
      "plugins/alpha/extra/cmd.md": "# cmd",
      "plugins/beta/plugin.json": json({ name: "beta-manifest", keywords: ["b"] }),
      "plugins/beta/agents/a.md": "# a",
      "plugins/beta/custom-agents/z.md": "# z",
      "plugins/gamma/commands/g.md": "# g",
      "plugins/delta/.claude-plugin/plugin.json": json({ name: "not listed" })
    })

  it.effect("offers its local entries, marks external ones unsupported, and reads only what the entries need", () =>
    Effect.gen(function*() {
      const { entries, readText, reads } = marketplace()
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("claude_marketplace_repo")
      expect(outcome.marketplace).toEqual({
        name: "acme-tools",
        description: "Acme's plugins.",
        owner: "Acme",
        version: "2.0.0",
        manifestPath: ".claude-plugin/marketplace.json",
        entryCount: 10
      })
      expect(reads[0]).toBe(".claude-plugin/marketplace.json")
      expect(reads.slice(1).sort()).toEqual([
        ".claude-plugin/plugin.json",
        "plugins/alpha/.claude-plugin/plugin.json",
        "plugins/beta/plugin.json"
      ])
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.supported, candidate.selectedByDefault])).toEqual([
        ["marketplace:plugins/alpha", true, true],
        ["marketplace:root", true, true],
        ["marketplace:plugins/beta", true, true],
        ["marketplace:plugins/gamma", true, true],
        ["marketplace:remote", false, false],
        ["marketplace:hub", false, false],
        ["marketplace:plugins/missing", false, false],
        ["marketplace:10", false, false]
      ])
      expect(get(outcome, "marketplace:plugins/alpha")).toMatchObject({
        rootPath: "plugins/alpha",
        displayName: "alpha",
        // plugin.json's description wins over the entry's, as its version and author do.
        description: "From the manifest.",
        manifestPath: "plugins/alpha/.claude-plugin/plugin.json",
        sourceKind: "marketplace_entry",
        componentKinds: ["skill", "command"],
        componentPaths: { ...none, skills: ["plugins/alpha/skills"], commands: ["plugins/alpha/extra/cmd.md"] },
        metadata: {
          name: "alpha-manifest",
          source: "./plugins/alpha",
          description: "From the manifest.",
          commands: ["./extra/cmd.md"]
        }
      })
      expect(get(outcome, "marketplace:root")).toMatchObject({
        rootPath: "",
        displayName: "whole-repo",
        manifestPath: ".claude-plugin/plugin.json",
        componentKinds: []
      })
      // A plain plugin.json stands in for .claude-plugin/plugin.json; the entry's declared folder adds to the conventional one.
      expect(get(outcome, "marketplace:plugins/beta")).toMatchObject({
        manifestPath: "plugins/beta/plugin.json",
        description: null,
        componentPaths: { ...none, agents: ["plugins/beta/agents", "plugins/beta/custom-agents"] },
        metadata: { name: "beta-manifest", keywords: ["b"], agents: ["./custom-agents/"] }
      })
      // `pluginRoot` is prepended to a bare source name; without a manifest, the entry is the metadata.
      expect(get(outcome, "marketplace:plugins/gamma")).toMatchObject({
        manifestPath: null,
        displayName: "gamma",
        componentPaths: { ...none, commands: ["plugins/gamma/commands"] },
        metadata: { name: "gamma", source: "gamma" }
      })
      const external = "Marketplace entry points at an external source and cannot be auto-mapped from this connected repo yet."
      expect(get(outcome, "marketplace:remote")).toMatchObject({
        rootPath: "",
        displayName: "remote",
        warnings: [external],
        componentKinds: [],
        componentPaths: none,
        manifestPath: null,
        metadata: { source: { url: "https://git.example.test/remote.git" } }
      })
      expect(get(outcome, "marketplace:hub").warnings).toEqual([external])
      expect(get(outcome, "marketplace:plugins/missing")).toMatchObject({
        componentPaths: none,
        warnings: ["Marketplace entry 8 points at `plugins/missing`, which this branch does not have."]
      })
      expect(get(outcome, "marketplace:10")).toMatchObject({ displayName: "Marketplace plugin 10", supported: false })
      expect(outcome.warnings).toEqual([
        "Marketplace entries 1 and 7 both point at `plugins/alpha` and entry 7 lists no components of its own; it is ignored.",
        "Marketplace entry 9 is not an object; it is ignored.",
        "Marketplace entry 10 has no `name`, which marketplace.json requires of every entry (Claude Code installs a plugin as name@marketplace); it is imported under its plugin's own name or its folder's.",
        external,
        "Marketplace entry 10 cannot be used: its source `../elsewhere` is outside the repository."
      ])
      expect(statuses(outcome)).toEqual(["completed", "completed", "skipped", "completed"])
    }))

  it.effect("its import plans follow declared files and conventional folders", () =>
    Effect.gen(function*() {
      const { entries, readText } = marketplace()
      const outcome = yield* discover({ entries, readText })
      expect(importPlans(get(outcome, "marketplace:plugins/alpha"), entries)).toEqual([
        { objectType: "skill", selector: "plugins/alpha/skills/**", files: [file("plugins/alpha/skills/x/SKILL.md")] },
        { objectType: "command", selector: "plugins/alpha/extra/cmd.md", files: [file("plugins/alpha/extra/cmd.md")] }
      ])
      expect(importPlans(get(outcome, "marketplace:remote"), entries)).toEqual([])
    }))

  it.effect("with only external entries, nothing is ready to import", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/marketplace.json": json({ name: "m", plugins: [{ name: "far", source: { url: "https://x.test/far.git" } }] })
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("claude_marketplace_repo")
      expect(statuses(outcome)).toEqual(["completed", "completed", "skipped", "warning"])
    }))

  it.effect("an unusable marketplace manifest is a warning, and discovery goes on to the plugin manifests", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/marketplace.json": "{ \"name\": \"broken\", ",
        "plugins/a/.claude-plugin/plugin.json": json({ name: "a" })
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("claude_multi_plugin_repo")
      expect(outcome.marketplace).toBeNull()
      expect(outcome.candidates.map((candidate) => candidate.key)).toEqual(["manifest:plugins/a"])
      expect(outcome.warnings).toHaveLength(1)
      expect(outcome.warnings[0]).toMatch(/^`\.claude-plugin\/marketplace\.json` is not valid JSON \(.+\), so it was not used\.$/)
      expect(statuses(outcome)).toEqual(["completed", "warning", "completed", "completed"])

      // A trailing comma in a file of several lines: one line of warning, with the line and column (V8's own words
      // quote the file's lines around it).
      const comma = repo({ ".claude-plugin/marketplace.json": "{\n  \"name\": \"m\",\n  \"plugins\": [\n    {\"name\": \"a\", \"source\": \"./a\"},\n  ]\n}\n" })
      const trailing = yield* discover(comma)
      expect(trailing.warnings[0]).toMatch(/^`\.claude-plugin\/marketplace\.json` is not valid JSON \(line 5, column 3: [^\n]+\), so it was not used\.$/)

      const noList = repo({ ".claude-plugin/marketplace.json": json({ name: "m" }) })
      const empty = yield* discover({ entries: noList.entries, readText: noList.readText })
      expect(empty.classification).toBe("unsupported")
      expect(empty.warnings[0]).toBe("`.claude-plugin/marketplace.json` has no `plugins` list, so it was not used.")
    }))
})

describe("a marketplace whose entries share one source", () => {
  // The shape of a skills collection: one folder of skills, several plugins each listing some of them.
  const shared = () =>
    repo({
      ".claude-plugin/marketplace.json": json({
        name: "skill-shelf",
        plugins: [
          { name: "documents", source: "./", strict: false, skills: ["./skills/sheets", "./skills/slides"] },
          { name: "examples", source: "./", strict: false, skills: ["./skills/poster", "./skills/missing"] },
          { name: "api", source: "./", strict: false, skills: ["./skills/api-guide"] }
        ]
      }),
      "skills/sheets/SKILL.md": "---\nname: sheets\n---\n",
      "skills/sheets/scripts/recalc.py": "print(1)",
      "skills/slides/SKILL.md": "---\nname: slides\n---\n",
      "skills/poster/SKILL.md": "---\nname: poster\n---\n",
      "skills/api-guide/SKILL.md": "---\nname: api-guide\n---\n",
      "skills/unlisted/SKILL.md": "---\nname: unlisted\n---\n"
    })

  it.effect("stay several plugins, each with the skills its entry lists", () =>
    Effect.gen(function*() {
      const { entries, readText } = shared()
      const outcome = yield* discover({ entries, readText })
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.displayName, candidate.componentPaths.skills])).toEqual([
        ["marketplace:root#documents", "documents", ["skills/sheets", "skills/slides"]],
        ["marketplace:root#examples", "examples", ["skills/poster"]],
        ["marketplace:root#api", "api", ["skills/api-guide"]]
      ])
      expect(get(outcome, "marketplace:root#examples").warnings).toEqual([
        "Marketplace entry 2 (examples) declares skills path `./skills/missing`, which this branch does not have; it is ignored."
      ])
      expect(importPlans(get(outcome, "marketplace:root#documents"), entries)).toEqual([
        { objectType: "skill", selector: "skills/sheets/**", files: [file("skills/sheets/SKILL.md")] },
        { objectType: "skill", selector: "skills/slides/**", files: [file("skills/slides/SKILL.md")] }
      ])
    }))
})

describe("declared component paths", () => {
  it.effect("add to the conventional folders; what the tree lacks, leaves the plugin or is inline is a warning", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        "tools/.claude-plugin/plugin.json": json({
          name: "declared",
          skills: ["./my-skills/", "./skills/nested", "skills"],
          commands: ["./cmds", "./missing"],
          agents: "../outside",
          hooks: "./config/hooks.json",
          mcpServers: { local: { command: "run" } },
          lspServers: "./lsp/servers.json",
          monitors: ["./monitors.json"],
          settings: 42
        }),
        "tools/skills/nested/SKILL.md": "---\nname: nested\n---\n",
        "tools/my-skills/a/SKILL.md": "---\nname: a\n---\n",
        "tools/cmds/go.md": "# go",
        "tools/config/hooks.json": "{}",
        "tools/hooks/hooks.json": "{}",
        "tools/lsp/servers.json": "{}",
        "tools/monitors.json": "{}"
      })
      const outcome = yield* discover({ entries, readText })
      const candidate = get(outcome, "manifest:tools")
      expect(candidate.supported).toBe(true)
      expect(candidate.componentPaths).toEqual({
        ...none,
        // `skills/nested` is inside the conventional `skills`: one mapping covers it.
        skills: ["tools/skills", "tools/my-skills"],
        commands: ["tools/cmds"],
        hooks: ["tools/hooks/hooks.json", "tools/config/hooks.json"],
        lspServers: ["tools/lsp/servers.json"],
        monitors: ["tools/monitors.json"]
      })
      expect(candidate.componentKinds).toEqual(["skill", "command", "hook", "lsp_server", "monitor"])
      const where = "`tools/.claude-plugin/plugin.json`"
      expect(candidate.warnings).toEqual([
        `${where} declares commands path \`./missing\`, which this branch does not have; it is ignored.`,
        `${where} declares agents path \`../outside\` outside the plugin's folder; it is ignored.`,
        `${where} defines mcpServers inline; orgplane imports mcpServers only from files, so these are not imported.`,
        `${where} declares settings as something other than a path or a list of paths; it is ignored.`
      ])
      expect(importPlans(candidate, entries).map((plan) => [plan.objectType, plan.selector, plan.files.map((f) => f.path)])).toEqual([
        ["skill", "tools/skills/**", ["tools/skills/nested/SKILL.md"]],
        ["skill", "tools/my-skills/**", ["tools/my-skills/a/SKILL.md"]],
        ["command", "tools/cmds/**", ["tools/cmds/go.md"]],
        ["hook", "tools/hooks/hooks.json", ["tools/hooks/hooks.json"]],
        ["hook", "tools/config/hooks.json", ["tools/config/hooks.json"]]
      ])
    }))
})

describe("Agent Plugins", () => {
  const agents = () =>
    repo({
      "plugin.json": json({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "my-plugin", description: "Mine." }),
      "skills/a/SKILL.md": "---\nname: a\n---\n",
      "skills/a/scripts/run.sh": "#!/bin/sh",
      "skills/b/SKILL.md": "---\nname: b\n---\n",
      "skills/b/deep/SKILL.md": "---\nname: deep\n---\n",
      "mcp.json": "{}",
      "tools/p/plugin.json": json({ $schema: "https://agent-plugins.org/schemas/1.1.0/plugin.schema.json", name: "p" }),
      "tools/p/skills/only/SKILL.md": "---\nname: only\n---\n",
      "bad/plugin.json": json({ $schema: "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json", name: "Invalid-Name" }),
      "bad/skills/x/SKILL.md": "---\nname: x\n---\n",
      "future/plugin.json": json({ $schema: "https://agent-plugins.org/schemas/9.0.0/plugin.schema.json", name: "future" }),
      "other/plugin.json": json({ name: "some other tool's plugin" }),
      "broken/plugin.json": "{",
      ".claude-plugin/README.md": "not a manifest"
    })

  it.effect("1.0.0 and 1.1.0 manifests are candidates with their SKILL.md files and mcp.json; a bad name is unsupported", () =>
    Effect.gen(function*() {
      const { entries, readText, reads } = agents()
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("agent_plugin_repo")
      expect(reads.sort()).toEqual(["bad/plugin.json", "broken/plugin.json", "future/plugin.json", "other/plugin.json", "plugin.json", "tools/p/plugin.json"])
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.supported])).toEqual([
        ["agent-plugin:bad", false],
        ["agent-plugin:root", true],
        ["agent-plugin:tools/p", true]
      ])
      const root = get(outcome, "agent-plugin:root")
      expect(root).toMatchObject({
        rootPath: "",
        displayName: "my-plugin",
        description: "Mine.",
        manifestPath: "plugin.json",
        sourceKind: "agent_plugin_manifest",
        sourceSchemaVersion: "1.0.0",
        componentKinds: ["skill", "mcp_server"],
        componentPaths: { ...none, skills: ["skills/a/SKILL.md", "skills/b/SKILL.md"], mcpServers: ["mcp.json"] }
      })
      expect(root.warnings).toHaveLength(1)
      expect(root.warnings[0]).toContain("2 additional skill asset files")
      expect(get(outcome, "agent-plugin:tools/p")).toMatchObject({
        sourceSchemaVersion: "1.1.0",
        warnings: [],
        componentPaths: { ...none, skills: ["tools/p/skills/only/SKILL.md"] }
      })
      const bad = get(outcome, "agent-plugin:bad")
      expect(bad).toMatchObject({ selectedByDefault: false, componentKinds: [], componentPaths: none, displayName: "Invalid-Name" })
      expect(bad.warnings[0]).toContain("name must be 1-64")
      expect(outcome.warnings).toEqual([
        "`future/plugin.json` uses Agent Plugins 9.0.0; orgplane reads Agent Plugins 1.0.0 and 1.1.0, so it was not used."
      ])
      expect(statuses(outcome)).toEqual(["completed", "skipped", "completed", "completed"])
      expect(importPlans(root, entries)).toEqual([
        { objectType: "skill", selector: "skills/a/SKILL.md", files: [file("skills/a/SKILL.md")] },
        { objectType: "skill", selector: "skills/b/SKILL.md", files: [file("skills/b/SKILL.md")] },
        { objectType: "mcp", selector: "mcp.json", files: [file("mcp.json")] }
      ])
      expect(importPlans(bad, entries)).toEqual([])
    }))

  it.effect("lose to Claude manifests in the same repository", () =>
    Effect.gen(function*() {
      const { entries, readText, reads } = repo({
        "plugin.json": json({ $schema: "https://agent-plugins.org/schemas/1.1.0/plugin.schema.json", name: "agent" }),
        "plugins/c/.claude-plugin/plugin.json": json({ name: "claude" })
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("claude_multi_plugin_repo")
      expect(outcome.candidates.map((candidate) => candidate.key)).toEqual(["manifest:plugins/c"])
      expect(reads).toEqual(["plugins/c/.claude-plugin/plugin.json"])
    }))
})

describe("an unsupported repository", () => {
  it.effect("has no candidates and one warning naming the folders that only lack a manifest", () =>
    Effect.gen(function*() {
      const { entries, readText, reads } = repo({
        "skills/x/SKILL.md": "---\nname: x\n---\n",
        "commands/a.md": "# a",
        ".claude/settings.json": "{}",
        "settings.json": "{}",
        "README.md": "# hi"
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.classification).toBe("unsupported")
      expect(outcome.candidates).toEqual([])
      expect(reads).toEqual([])
      expect(outcome.warnings).toEqual([
        "orgplane supports Agent Plugins 1.0.0 and 1.1.0 and Claude-compatible plugins and marketplaces. Add `.claude-plugin/marketplace.json` or `.claude-plugin/plugin.json`, or an Agent Plugins `plugin.json` with its `$schema`, to this repository. Found `skills`, `commands` but no plugin manifest."
      ])
      expect(statuses(outcome)).toEqual(["completed", "skipped", "warning", "warning"])

      const empty = repo({})
      const nothing = yield* discover({ entries: empty.entries, readText: empty.readText })
      expect(nothing.warnings[0]).toMatch(/to this repository\.$/)
    }))
})

describe("malformed manifests", () => {
  it.effect("are warnings on their own candidate; the others are still offered", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        "plugins/a/.claude-plugin/plugin.json": "{ not json",
        "plugins/a/commands/x.md": "# x",
        "plugins/b/.claude-plugin/plugin.json": json({ name: "b" }),
        "plugins/c/.claude-plugin/plugin.json": "[1, 2]",
        "plugins/d/.claude-plugin/plugin.json": "[".repeat(100) + "]".repeat(100),
        "plugins/e/.claude-plugin/plugin.json": json({ name: "nul\u0000name" }),
        "plugins/f/.claude-plugin/plugin.json": json({ name: "f" })
      })
      // A manifest that vanished between the listing and the read.
      const outcome = yield* discover({
        entries,
        readText: (path) => path.startsWith("plugins/f/") ? Effect.succeed(null) : readText(path)
      })
      expect(outcome.classification).toBe("claude_multi_plugin_repo")
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.supported, candidate.selectedByDefault])).toEqual([
        ["manifest:plugins/a", false, false],
        ["manifest:plugins/b", true, true],
        ["manifest:plugins/c", false, false],
        ["manifest:plugins/d", false, false],
        ["manifest:plugins/e", false, false],
        ["manifest:plugins/f", false, false]
      ])
      const a = get(outcome, "manifest:plugins/a")
      expect(a).toMatchObject({ displayName: "a", manifestPath: "plugins/a/.claude-plugin/plugin.json", componentKinds: [], metadata: {} })
      expect(a.warnings[0]).toMatch(/^`plugins\/a\/\.claude-plugin\/plugin\.json` is not valid JSON \(.+\); fix it to import this plugin\.$/)
      expect(get(outcome, "manifest:plugins/c").warnings).toEqual(["`plugins/c/.claude-plugin/plugin.json` is not a JSON object; fix it to import this plugin."])
      expect(get(outcome, "manifest:plugins/d").warnings[0]).toContain("nests more than 64 levels deep")
      expect(get(outcome, "manifest:plugins/e").warnings[0]).toContain("NUL")
      expect(get(outcome, "manifest:plugins/f").warnings[0]).toContain("could not be read")
      expect(statuses(outcome)).toEqual(["completed", "skipped", "completed", "completed"])
    }))

  it.effect("says so of two entries of one name, and of output styles, which are not imported", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/marketplace.json": json({ plugins: [{ name: "tools", source: "./a" }, { name: "Tools", source: "./b", outputStyles: "./styles" }] }),
        "a/commands/x.md": "# x",
        "b/commands/y.md": "# y",
        "b/styles/terse.md": "# terse"
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.supported])).toEqual([["marketplace:a", true], ["marketplace:b", true]])
      expect(outcome.warnings).toContain(
        "Marketplace entries 1 and 2 are both named `Tools`, where a name is unique in a marketplace (name@marketplace); the later is imported under a name told apart by its folder."
      )
      expect(get(outcome, "marketplace:b").warnings).toEqual([
        "Marketplace entry 2 (Tools) declares outputStyles, which Claude Code loads and orgplane does not import; they are not in the catalog."
      ])
    }))

  it.effect("an absolute path source and a `.claude-plugin` folder as source are refused with the rule", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/marketplace.json": json({ plugins: [{ name: "etc", source: "/etc" }, { name: "b", source: "./b" }, { name: "trav4", source: "./trav4/.claude-plugin" }] }),
        "trav4/.claude-plugin/plugin.json": json({ name: "trav4" }),
        "trav4/commands/t.md": "# t",
        "etc/commands/x.md": "# x",
        "b/commands/y.md": "# y"
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.supported])).toEqual([["marketplace:etc", false], ["marketplace:b", true], ["marketplace:trav4", false]])
      expect(get(outcome, "marketplace:etc").warnings).toEqual([
        "Marketplace entry 1 cannot be used: its source `/etc` is an absolute path; a path source is relative to the marketplace's root and starts with `./`."
      ])
      // The manifest's folder named as the source: refused, not imported as an empty plugin.
      expect(get(outcome, "marketplace:trav4").warnings).toEqual([
        "Marketplace entry 3 cannot be used: its source `./trav4/.claude-plugin` is a `.claude-plugin` folder; a source names the plugin's folder, the one that holds `.claude-plugin/`."
      ])
    }))

  it.effect("behind a marketplace entry, make the entry unsupported too", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/marketplace.json": json({ plugins: [{ name: "a", source: "./a" }, { name: "b", source: "./b" }] }),
        "a/.claude-plugin/plugin.json": "{ broken",
        "a/commands/x.md": "# x",
        "b/commands/y.md": "# y"
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.candidates.map((candidate) => [candidate.key, candidate.supported, candidate.manifestPath])).toEqual([
        ["marketplace:a", false, "a/.claude-plugin/plugin.json"],
        ["marketplace:b", true, null]
      ])
      expect(get(outcome, "marketplace:a").warnings[0]).toMatch(/is not valid JSON .*; fix it to import this plugin\.$/)
      expect(get(outcome, "marketplace:b").componentPaths.commands).toEqual(["b/commands"])
    }))

  it.effect("one larger than 1 MiB is refused unread", () =>
    Effect.gen(function*() {
      const { entries, readText, reads } = repo({ ".claude-plugin/plugin.json": json({ name: "big", pad: "x".repeat(1024 * 1024) }) })
      const outcome = yield* discover({ entries, readText })
      expect(reads).toEqual([])
      expect(get(outcome, "manifest:root").warnings).toEqual(["`.claude-plugin/plugin.json` is larger than 1 MiB; fix it to import this plugin."])
    }))
})

describe("reading manifests", () => {
  it.effect("reads at most `concurrency` at once and at most `maxManifests` in all", () =>
    Effect.gen(function*() {
      const files: Record<string, string> = {}
      for (let i = 0; i < 10; i++) files[`p${i}/.claude-plugin/plugin.json`] = json({ name: `p${i}` })
      const { entries } = repo(files)
      let inFlight = 0
      let most = 0
      let calls = 0
      const readText = (path: string) =>
        Effect.gen(function*() {
          calls++
          most = Math.max(most, ++inFlight)
          yield* Effect.yieldNow
          yield* Effect.yieldNow
          inFlight--
          return files[path] ?? null
        })
      const outcome = yield* discover({ entries, readText, concurrency: 3 })
      expect(most).toBe(3)
      expect(outcome.candidates).toHaveLength(10)

      calls = 0
      const capped = yield* discover({ entries, readText, maxManifests: 4 })
      expect(calls).toBe(4)
      expect(capped.candidates.map((candidate) => candidate.key)).toEqual(["manifest:p0", "manifest:p1", "manifest:p2", "manifest:p3"])
      expect(capped.warnings).toEqual([
        "The repository has more plugin manifests than orgplane reads at once (4); 6 were not read, from `p4/.claude-plugin/plugin.json` on."
      ])
    }))

  it.effect("a failing read fails the discovery with its error", () =>
    Effect.gen(function*() {
      const { entries } = repo({ ".claude-plugin/plugin.json": "{}" })
      const result = yield* Effect.result(discover({ entries, readText: () => Effect.fail("rate limited" as const) }))
      expect(result).toEqual(Result.fail("rate limited"))
    }))

  it.effect("normalizes paths given with `./` and doubled or trailing slashes", () =>
    Effect.gen(function*() {
      const entries: Array<Entry> = [
        { path: "./plugins//a/.claude-plugin/plugin.json", type: "blob", sha: "m", size: 2 },
        { path: "plugins/a/commands/x.md/", type: "blob", sha: "x", size: 1 },
        // A file name may start with a space: kept as it is.
        { path: "plugins/a/commands/ y.md", type: "blob", sha: "y", size: 1 }
      ]
      const reads: Array<string> = []
      const outcome = yield* discover({ entries, readText: (path) => Effect.sync(() => (reads.push(path), "{}")) })
      expect(reads).toEqual(["plugins/a/.claude-plugin/plugin.json"])
      expect(get(outcome, "manifest:plugins/a").componentPaths.commands).toEqual(["plugins/a/commands"])
      expect(filesFor("command", "./plugins/a/commands/**", entries)).toEqual([
        { path: "plugins/a/commands/ y.md", sha: "y" },
        { path: "plugins/a/commands/x.md", sha: "x" }
      ])
    }))
})

describe("selectors", () => {
  const { entries } = repo({
    "s/one/SKILL.md": "",
    "s/one/notes.md": "",
    "s/two/SKILL.md": "",
    "flat/guide.md": "",
    "flat/run.sh": "",
    "a/reviewer/AGENT.md": "",
    "a/reviewer/extra.md": "",
    "a2/x.md": "",
    "a2/y.MD": "",
    "a2/z.txt": "",
    "c/deploy.md": "",
    "c/sub/more.md": "",
    "c/data.json": "",
    "h/hooks.json": "",
    "h/extra.json": "",
    "h/check.sh": "",
    "m/.mcp.json": "",
    "sibling/file.md": "",
    "s-other/SKILL.md": ""
  })
  const paths = (objectType: Parameters<typeof filesFor>[0], selector: string) => filesFor(objectType, selector, entries).map((found) => found.path)

  it("skills prefer SKILL.md files, else any Markdown", () => {
    expect(paths("skill", "s/**")).toEqual(["s/one/SKILL.md", "s/two/SKILL.md"])
    expect(paths("skill", "flat/**")).toEqual(["flat/guide.md"])
    expect(paths("skill", "s/one/SKILL.md")).toEqual(["s/one/SKILL.md"])
  })

  it("agents prefer AGENT.md files, else any Markdown; commands take Markdown", () => {
    expect(paths("agent", "a/**")).toEqual(["a/reviewer/AGENT.md"])
    expect(paths("agent", "a2/**")).toEqual(["a2/x.md", "a2/y.MD"])
    expect(paths("command", "c/**")).toEqual(["c/deploy.md", "c/sub/more.md"])
    expect(paths("command", "c/data.json")).toEqual([])
  })

  it("hooks and MCP servers take the exact file, or a folder's JSON files", () => {
    expect(paths("hook", "h/hooks.json")).toEqual(["h/hooks.json"])
    expect(paths("hook", "h/**")).toEqual(["h/extra.json", "h/hooks.json"])
    expect(paths("mcp", "m/.mcp.json")).toEqual(["m/.mcp.json"])
    expect(paths("mcp", "m/missing.json")).toEqual([])
    expect(filesFor("mcp", "m/.mcp.json", entries)).toEqual([{ path: "m/.mcp.json", sha: "sha:m/.mcp.json" }])
  })

  it("other types take every match; a folder selector never reaches a sibling that shares its prefix", () => {
    expect(paths("custom", "flat/**")).toEqual(["flat/guide.md", "flat/run.sh"])
    expect(paths("skill", "s/**")).not.toContain("s-other/SKILL.md")
    expect(paths("skill", "s")).toEqual([])
  })

  it("selectorMatches says the same for one path", () => {
    expect(selectorMatches("s/**", "s/one/SKILL.md")).toBe(true)
    expect(selectorMatches("./s/**", "s/one/SKILL.md")).toBe(true)
    expect(selectorMatches("s/**", "s-other/SKILL.md")).toBe(false)
    expect(selectorMatches("s/**", "s")).toBe(false)
    expect(selectorMatches("h/hooks.json", "h/hooks.json")).toBe(true)
    expect(selectorMatches("h/hooks.json", "h/hooks.json.bak")).toBe(false)
    expect(selectorMatches("**", "anything/at/all.md")).toBe(true)
    // Every file filesFor returns, the selector matches.
    for (const found of filesFor("custom", "a/**", entries)) expect(selectorMatches("a/**", found.path)).toBe(true)
  })
})

describe("a large repository", () => {
  // How long this takes is a figure of `pnpm bench` (bench/planning.ts), not an assertion.
  it.effect("20,000 files with 200 plugins are discovered and planned, each manifest read once", () =>
    Effect.gen(function*() {
      const entries: Array<Entry> = []
      for (let plugin = 0; plugin < 200; plugin++) {
        const root = `plugins/p${String(plugin).padStart(3, "0")}`
        entries.push({ path: `${root}/.claude-plugin/plugin.json`, type: "blob", sha: `m${plugin}`, size: 20 })
        for (let i = 0; i < 99; i++) {
          const path = i < 30 ? `${root}/skills/s${i}/SKILL.md` : i < 60 ? `${root}/commands/c${i}.md` : `${root}/src/deep/er/f${i}.ts`
          entries.push({ path, type: "blob", sha: `${plugin}:${i}`, size: 100 })
        }
      }
      expect(entries).toHaveLength(20_000)
      const read: Array<string> = []
      const outcome = yield* discover({
        entries,
        readText: (path) => Effect.sync(() => (read.push(path), json({ name: path.split("/")[1] })))
      })
      const plans = outcome.candidates.flatMap((candidate) => importPlans(candidate, entries))
      expect(outcome.candidates).toHaveLength(200)
      expect(plans).toHaveLength(400)
      expect(plans.reduce((sum, plan) => sum + plan.files.length, 0)).toBe(200 * 60)
      expect(read.sort()).toEqual(entries.filter((entry) => entry.path.endsWith("/.claude-plugin/plugin.json")).map((entry) => entry.path).sort())
    }))
})

describe("manifest members of the wrong type (decoded with Schema, leniently)", () => {
  it.effect("a marketplace ignores wrong-typed members, tells local from external sources, and names the field at fault", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/marketplace.json": json({
          name: 7,
          owner: ["Acme"],
          metadata: "not an object",
          plugins: [
            { name: "here", source: { source: "local", path: "./plugins/here" }, commands: 5 },
            { name: "nulled", source: { path: "./plugins/here", url: null } },
            { name: "listed", source: "./plugins/listed", commands: ["./c.md", 7], description: "  " }
          ]
        }),
        "plugins/here/commands/a.md": "# a",
        "plugins/listed/c.md": "# c"
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.marketplace).toMatchObject({ name: null, owner: null, description: null, entryCount: 3 })
      expect(get(outcome, "marketplace:plugins/here")).toMatchObject({
        supported: true,
        warnings: ["Marketplace entry 1 (here) declares commands as something other than a path or a list of paths; it is ignored."]
      })
      // A `url` member, even null, names another repository.
      expect(get(outcome, "marketplace:nulled")).toMatchObject({ supported: false })
      expect(get(outcome, "marketplace:plugins/listed")).toMatchObject({
        description: null,
        componentPaths: { ...none, commands: ["plugins/listed/c.md"] },
        warnings: ["Marketplace entry 3 (listed) lists a commands entry that is not a path; it is ignored."]
      })
    }))

  it.effect("a marketplace whose plugins is not a list, or a manifest that is a list, is not used", () =>
    Effect.gen(function*() {
      const { entries, readText } = repo({
        ".claude-plugin/marketplace.json": json({ name: "m", plugins: { one: {} } }),
        ".claude-plugin/plugin.json": json(["not", "an", "object"])
      })
      const outcome = yield* discover({ entries, readText })
      expect(outcome.warnings).toContain("`.claude-plugin/marketplace.json` has no `plugins` list, so it was not used.")
      expect(get(outcome, "manifest:root")).toMatchObject({ supported: false })
      expect(get(outcome, "manifest:root").warnings[0]).toContain("is not a JSON object")
    }))
})
