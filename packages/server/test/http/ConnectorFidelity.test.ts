/**
 * Importing a marketplace faithfully (issue 31), through HTTP against FakeGitHub serving a git repository of the
 * project's own that has every shape real marketplaces have: skill names with spaces and capitals, agent
 * descriptions with unquoted colons and unindented example lines, a description over 1024 characters, two commands
 * whose first heading is the same, a hooks file, plugin metadata in `plugin.json` and the marketplace entry, several
 * entries sharing `source: "./"` each with its own `skills` list, and one file nothing can read. What a person counts
 * in the repository is compared with what discovery offers, what the sync reports and what the catalog holds.
 */
import type {
  ApplyDiscoveryResponse,
  ConfigObjectPage,
  ConfigObjectVersionPage,
  DiscoveryResponse,
  PluginDetail,
  ResolvedMarketplaceResponse
} from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import { describe, expect, it } from "vitest"

const world = ConnectorWorld.forFile()
const { get, post } = world
const ok = Http.expectStatus
const json = (value: unknown) => JSON.stringify(value, null, 2)

const longDescription = `Generates reports. ${"It reads the data, checks it and writes a summary for the team. ".repeat(18)}`.trim()
const dev = "plugins/plugin-dev"

/** The repository, and what a person counts in it: per plugin, its components by the files that define them. */
const files = {
  ".claude-plugin/marketplace.json": json({
    name: "fidelity-fixtures",
    owner: { name: "Fixture Team" },
    plugins: [
      { name: "plugin-dev", source: `./${dev}`, category: "development", homepage: "https://plugins.example.test/dev" },
      { name: "documents", source: "./", strict: false, description: "Document skills.", skills: ["./skills/sheets", "./skills/slides"] },
      { name: "examples", source: "./", strict: false, description: "Example skills.", skills: ["./skills/poster"] }
    ]
  }),
  [`${dev}/.claude-plugin/plugin.json`]: json({
    name: "plugin-dev",
    description: "Tools for writing plugins.",
    version: "1.2.0",
    author: { name: "Fixture Author", email: "author@example.test" },
    repository: "https://git.example.test/fixtures",
    license: "MIT",
    keywords: ["plugins", "authoring"]
  }),
  [`${dev}/skills/agent-development/SKILL.md`]: "---\nname: Agent Development\ndescription: Writes agents for plugins.\n---\n\n# Agents\n\nHow to write one.\n",
  [`${dev}/skills/agent-development/references/patterns.md`]: "# Patterns\n",
  [`${dev}/skills/reporting/SKILL.md`]: `---\nname: reporting\ndescription: ${longDescription}\n---\n\nWrite the report.\n`,
  [`${dev}/agents/reviewer.md`]:
    "---\nname: reviewer\ndescription: Use this agent when code was written. Context: a pull request. user: please review\nmodel: sonnet\n---\n\nYou review code.\n",
  [`${dev}/agents/creator.md`]:
    "---\nname: creator\ndescription: Use this agent to create agents. Examples:\n<example>\nContext: the user wants an agent\nuser: make one\n</example>\nmodel: inherit\n---\n\nYou create agents.\n",
  [`${dev}/commands/build.md`]: "---\ndescription: Builds the plugin\n---\n\n# Context\n\nBuild it.\n",
  [`${dev}/commands/check.md`]: "# Context\n\nCheck it.\n",
  [`${dev}/hooks/hooks.json`]: json({
    description: "Checks commands before they run",
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/hooks/check.sh" }] }] }
  }),
  [`${dev}/hooks/check.sh`]: "#!/bin/sh\nexit 0\n",
  [`${dev}/.mcp.json`]: "{ \"mcpServers\": { \"docs\": ",
  "skills/sheets/SKILL.md": "---\nname: sheets\ndescription: Spreadsheets.\n---\n\nUse formulas.\n",
  "skills/slides/SKILL.md": "---\nname: Slide Decks\ndescription: Presentations.\n---\n\nOne idea per slide.\n",
  "skills/poster/SKILL.md": "---\nname: poster\ndescription: Posters.\n---\n\nBig letters.\n",
  "README.md": "# Fixtures\n"
}
const counted = { "plugin-dev": 8, documents: 2, examples: 1 }

describe("a marketplace with every shape", () => {
  it("imports every component Claude Code would load, reports the one it cannot, and keeps plugins and their metadata", async () => {
    const { instance, token } = await world.follow(files)

    // Discovery: three plugins, the two sharing `./` each with its own skills.
    const discovered = ok<typeof DiscoveryResponse.Encoded>("discovery", await get(`/v1/connector-instances/${instance.id}/discovery`, { token }), 200).item
    expect(discovered.classification).toBe("claude_marketplace_repo")
    expect(discovered.discoveredPlugins.map((candidate) => [candidate.key, candidate.displayName, candidate.supported, candidate.warnings])).toEqual([
      [`marketplace:${dev}`, "plugin-dev", true, []],
      ["marketplace:root#documents", "documents", true, []],
      ["marketplace:root#examples", "examples", true, []]
    ])

    // Apply and sync: everything but the unreadable MCP file, which the sync names with its reason.
    const keys = discovered.discoveredPlugins.map((candidate) => candidate.key)
    const applied = ok<typeof ApplyDiscoveryResponse.Encoded>("apply", await post(`/v1/connector-instances/${instance.id}/discovery/apply`, { token, body: { keys } }), 200).item
    const synced = await world.settled(token, applied.syncEvent.id)
    const total = Object.values(counted).reduce((a, b) => a + b, 0)
    expect(synced).toMatchObject({ status: "completed", summary: { outcome: "partial", created: total - 1, skipped: 1 } })
    const skippedFiles = synced.summary!.skippedFiles!
    expect(skippedFiles).toEqual([
      { path: `${dev}/.mcp.json`, reason: expect.stringMatching(/^cannot be read as json \(is not valid JSON/), connectorMappingId: expect.any(String) }
    ])
    expect(synced.summary!.warnings).toEqual([
      // Imported whole, and said: past the Agent Skills limit.
      expect.stringMatching(new RegExp(`^${dev}/skills/reporting/SKILL\\.md: its description is \\d+ characters, past the Agent Skills limit of 1,024`)),
      `${dev}/agents/creator.md: front matter is not YAML Claude Code can read; its fields were read line by line`,
      `${dev}/.mcp.json: ${skippedFiles[0].reason}`
    ])

    // The catalog: per plugin, what a person counts less what was reported skipped.
    const pluginIds = new Map(applied.plugins.map((plugin) => [plugin.key, plugin.pluginId]))
    const plugin = async (key: string) => ok<typeof PluginDetail.Encoded>("plugin", await get(`/v1/plugins/${pluginIds.get(key)}`, { token }), 200).item
    const pluginDev = await plugin(`marketplace:${dev}`)
    expect(pluginDev.memberCount + pluginDev.skippedFiles.length).toBe(counted["plugin-dev"])
    expect(pluginDev.skippedFiles).toEqual([{ path: `${dev}/.mcp.json`, reason: skippedFiles[0].reason }])
    expect(pluginDev.sourceMetadata).toEqual({
      version: "1.2.0",
      author: "Fixture Author",
      // The author object's email is kept; it gives no url.
      authorEmail: "author@example.test",
      authorUrl: null,
      homepage: "https://plugins.example.test/dev",
      repository: "https://git.example.test/fixtures",
      license: "MIT",
      keywords: ["plugins", "authoring"],
      category: "development"
    })
    const titles = (item: typeof PluginDetail.Encoded["item"]) => item.extension.manifest.resources.map((resource) => `${resource.objectType}:${resource.title}`).sort()
    expect(titles(pluginDev)).toEqual([
      "agent:creator",
      "agent:reviewer",
      "command:build",
      "command:check",
      "hook:PreToolUse (Bash)",
      "skill:Agent Development",
      "skill:reporting"
    ])
    const documents = await plugin("marketplace:root#documents")
    expect([documents.memberCount, documents.skippedFiles]).toEqual([counted.documents, []])
    expect(titles(documents)).toEqual(["skill:Slide Decks", "skill:sheets"])
    expect(documents.sourceMetadata).toBeNull()
    expect(titles(await plugin("marketplace:root#examples"))).toEqual(["skill:poster"])

    // Objects: the skill's slug and its name as written, the long description whole, the agent's description whole.
    const objects = ok<typeof ConfigObjectPage.Encoded>("objects", await get(`/v1/config-objects?connectorInstanceId=${instance.id}&limit=100`, { token }), 200).items
    const byPath = new Map(objects.map((object) => [object.currentRelativePath, object]))
    expect(byPath.get(`${dev}/skills/reporting/SKILL.md`)!.description).toBe(longDescription)
    expect(longDescription.length).toBeGreaterThan(1024)
    expect(byPath.get(`${dev}/agents/reviewer.md`)!.description).toBe("Use this agent when code was written. Context: a pull request. user: please review")
    expect(byPath.get(`${dev}/agents/creator.md`)!.description).toBe(
      "Use this agent to create agents. Examples:\n<example>\nContext: the user wants an agent\nuser: make one\n</example>"
    )
    const skill = byPath.get(`${dev}/skills/agent-development/SKILL.md`)!
    const versions = ok<typeof ConfigObjectVersionPage.Encoded>("versions", await get(`/v1/config-objects/${skill.id}/versions?limit=10`, { token }), 200).items
    expect(versions[0].normalizedPayloadJson).toMatchObject({ frontmatter: { name: "agent-development" } })
    expect(versions[0].metadata).toEqual({ sourceName: "Agent Development" })

    // The marketplace as a desktop resolves it shows the skipped file on its plugin.
    const resolved = ok<typeof ResolvedMarketplaceResponse.Encoded>("resolved", await get(`/v1/marketplaces/${applied.marketplaceId}/resolved`, { token }), 200).item
    expect(resolved.plugins.map((item) => [item.name, item.memberCount, item.skippedFiles.length])).toEqual([
      ["documents", 2, 0],
      ["examples", 1, 0],
      ["plugin-dev", 7, 1]
    ])
  })
})
