/**
 * `orgplane plugins download`: a plugin discovered, applied and synced from a repository on the fake GitHub, written
 * into a folder as a desktop installs it; the folder against the repository's files.
 */
import { ApplyDiscoveryResponse, ConnectorAccountResponse, ConnectorInstanceResponse, MAX_COMPONENT_FILE_BYTES } from "@orgplane/schema"
import * as Connectors from "../../../packages/testkit/src/Connectors.js"
import * as FakeGitHub from "../../../packages/testkit/src/FakeGitHub.js"
import * as GitRepo from "../../../packages/testkit/src/GitRepo.js"
import * as HookPlugins from "../../../packages/testkit/src/HookPlugins.js"
import * as McpPlugins from "../../../packages/testkit/src/McpPlugins.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Schema from "effect/Schema"
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { cleanup, fresh, json, type Result } from "./Harness.js"

let server: RealServer.RealServer
let github: FakeGitHub.FakeGitHub
const removals: Array<() => Promise<unknown>> = []

beforeAll(async () => {
  github = await FakeGitHub.start()
  server = await RealServer.start({ ORGPLANE_CODEHOST_API_URL: github.url })
})
afterAll(async () => {
  await server?.close()
  await github?.close()
  await Promise.all(removals.map((remove) => remove()))
  await cleanup()
})

const decoded = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, result: Result): S["Type"] => {
  expect(result.code, result.stderr).toBe(0)
  return Schema.decodeUnknownSync(schema)(json(result))
}

const logo = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10, 0x80])
const files: Record<string, string | Uint8Array | GitRepo.Executable> = {
  ".claude-plugin/plugin.json": JSON.stringify({ name: "release-tools", version: "2.1.0" }),
  "skills/notes/SKILL.md": "---\nname: notes\ndescription: Writes release notes.\n---\nFollow references/style.md.\n",
  "skills/notes/references/style.md": "# Style\n",
  "skills/notes/scripts/collect.sh": { executable: "#!/bin/sh\ngit log --oneline\n" },
  "skills/notes/assets/logo.png": logo,
  "skills/notes/assets/video.txt": new Uint8Array(MAX_COMPONENT_FILE_BYTES + 1).fill(0x62),
  "hooks/hooks.json": JSON.stringify({
    hooks: { Stop: [{ hooks: [{ type: "command", command: "${CLAUDE_PLUGIN_ROOT}/hooks/run.sh" }] }] }
  }),
  "hooks/run.sh": { executable: "#!/bin/sh\necho done\n" },
  "README.md": "# Release tools\n"
}

it("plugins download writes every component and its files as the repository has them", { timeout: 180_000 }, async () => {
  const repo = await GitRepo.withFiles(files)
  removals.push(() => repo.remove())
  const fullName = "acme/release-tools"
  const githubToken = "ghp_cli_plugin_files_0123456789"
  github.addRepository(fullName, repo)
  github.addToken(githubToken, [fullName])
  const { owner, member } = await Http.staffed(server.url, "Plugin Files Org")
  const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
  const { cli } = await fresh()

  const account = decoded(ConnectorAccountResponse, await cli(["connectors", "accounts", "connect", "--json"], { ...env, ORGPLANE_CODEHOST_TOKEN: githubToken })).item
  const instance = decoded(
    ConnectorInstanceResponse,
    await cli(["connectors", "instances", "create", "--account", account.id, "--repository", fullName, "--name", "Release tools", "--json"], env)
  ).item
  expect((await cli(["connectors", "targets", "add", instance.id, "--branch", "main"], env)).code).toBe(0)
  const applied = decoded(ApplyDiscoveryResponse, await cli(["connectors", "apply", instance.id, "--all-supported", "--json"], env)).item
  const done = await Connectors.settled(server.url, owner.token, applied.syncEvent.id)
  expect(done.status).toBe("completed")
  const [plugin] = applied.plugins

  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-download-"))
  removals.push(() => Fs.rm(dir, { recursive: true, force: true }))
  const result = await cli(["plugins", "download", plugin!.pluginId, "--dir", dir, "--json"], env)
  expect(result.code, result.stderr).toBe(0)
  const report = json(result)
  expect(report.omitted).toEqual([
    expect.objectContaining({ path: "skills/notes/assets/video.txt", reason: `larger than ${MAX_COMPONENT_FILE_BYTES} bytes` })
  ])
  expect(report.skipped).toEqual([])

  // What a person counts in the repository: every file of the plugin (it has hooks, which carry their plugin's
  // folder as Claude Code installs it), but the oversized one.
  const expected = Object.keys(files).filter((path) => !path.endsWith("video.txt")).sort()
  const written = (await Fs.readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => Path.relative(dir, Path.join(entry.parentPath, entry.name)).split(Path.sep).join("/"))
    .sort()
  expect(written).toEqual(expected)
  for (const path of expected) {
    const original = files[path]!
    const content = typeof original === "object" && "executable" in original ? original.executable : original
    const bytes = new Uint8Array(await Fs.readFile(Path.join(dir, path)))
    expect(bytes).toEqual(typeof content === "string" ? new TextEncoder().encode(content) : content)
    // Executable as the repository has it (100755), the others not.
    const mode = (await Fs.stat(Path.join(dir, path))).mode & 0o111
    expect([path, mode !== 0], path).toEqual([path, content !== original])
  }
  // The hook's command runs the script directly, as Claude Code does.
  const hook = spawnSync(Path.join(dir, "hooks/run.sh"), { encoding: "utf8" })
  expect([hook.status, hook.stdout, hook.error?.message]).toEqual([0, "done\n", undefined])

  // People read what was written and what was not.
  const human = await cli(["plugins", "download", plugin!.pluginId, "--dir", dir], env)
  expect(human.code, human.stderr).toBe(0)
  expect(human.stdout).toContain(`Wrote ${expected.length} files of plugin ${plugin!.pluginId} into ${dir}.`)
  expect(human.stdout).toContain(`Not written: skills/notes/assets/video.txt (larger than ${MAX_COMPONENT_FILE_BYTES} bytes).`)

  // A member the plugin is not granted to is refused by the download as by `plugins get`, and nothing is written.
  const asMember = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: member.token }
  const elsewhere = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-download-refused-"))
  removals.push(() => Fs.rm(elsewhere, { recursive: true, force: true }))
  const [got, refused] = await Promise.all([
    cli(["plugins", "get", plugin!.pluginId, "--json"], asMember),
    cli(["plugins", "download", plugin!.pluginId, "--dir", elsewhere, "--json"], asMember)
  ])
  expect(got.code).not.toBe(0)
  expect(JSON.parse(got.stderr)).toMatchObject({ reason: "insufficient_access" })
  expect([refused.code, JSON.parse(refused.stderr)]).toEqual([got.code, JSON.parse(got.stderr)])
  expect(await Fs.readdir(elsewhere)).toEqual([])
})

/** The Python 3 on the PATH, if any: the hook plugins below are Python. */
const python = spawnSync("python3", ["--version"]).status === 0

/** Discovers, applies and syncs a repository of `files` on the fake GitHub for a new organization; its CLI and plugins. */
const imported = async (fullName: string, repositoryFiles: Record<string, string>) => {
  const repo = await GitRepo.withFiles(repositoryFiles)
  removals.push(() => repo.remove())
  const githubToken = `ghp_${fullName.replace(/\W/g, "_")}_0123456789`
  github.addRepository(fullName, repo)
  github.addToken(githubToken, [fullName])
  const owner = await Http.owner(server.url, `Hooks ${fullName}`)
  const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
  const { cli } = await fresh()
  const account = decoded(ConnectorAccountResponse, await cli(["connectors", "accounts", "connect", "--json"], { ...env, ORGPLANE_CODEHOST_TOKEN: githubToken })).item
  const instance = decoded(
    ConnectorInstanceResponse,
    await cli(["connectors", "instances", "create", "--account", account.id, "--repository", fullName, "--name", fullName, "--json"], env)
  ).item
  expect((await cli(["connectors", "targets", "add", instance.id, "--branch", "main"], env)).code).toBe(0)
  const applied = decoded(ApplyDiscoveryResponse, await cli(["connectors", "apply", instance.id, "--all-supported", "--json"], env)).item
  const done = await Connectors.settled(server.url, owner.token, applied.syncEvent.id)
  expect(done.status).toBe("completed")
  return { cli, env, plugins: applied.plugins }
}

it.skipIf(!python)(
  "hook plugins run as downloaded: hookify and security-guidance, laid out as in anthropics/claude-code, answer every event of their hooks.json (needs python3)",
  { timeout: 180_000 },
  async () => {
    const { cli, env, plugins } = await imported("anthropics/claude-code", { ...HookPlugins.files })
    const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-hooks-"))
    removals.push(() => Fs.rm(dir, { recursive: true, force: true }))
    const ran: Array<string> = []
    for (const plugin of plugins) {
      const shown = await cli(["plugins", "get", plugin.pluginId, "--json"], env)
      expect(shown.code, shown.stderr).toBe(0)
      const name: string = json(shown).item.name
      // Installed in a folder named after the plugin, as Claude Code's cache does (hookify imports itself by that name).
      const root = Path.join(dir, name)
      const downloaded = await cli(["plugins", "download", plugin.pluginId, "--dir", root, "--json"], env)
      expect(downloaded.code, downloaded.stderr).toBe(0)
      expect(json(downloaded).omitted).toEqual([])
      const hooks = JSON.parse(await Fs.readFile(Path.join(root, "hooks/hooks.json"), "utf8")) as {
        readonly hooks: Record<string, ReadonlyArray<{ readonly hooks: ReadonlyArray<{ readonly command: string }> }>>
      }
      for (const [event, matchers] of Object.entries(hooks.hooks)) {
        for (const { command } of matchers.flatMap((matcher) => matcher.hooks)) {
          // As Claude Code runs a command hook: a shell, the plugin's folder in CLAUDE_PLUGIN_ROOT, the event on stdin.
          const run = spawnSync("bash", ["-c", command], {
            cwd: dir,
            env: { PATH: process.env["PATH"] ?? "", HOME: dir, CLAUDE_PLUGIN_ROOT: root },
            input: JSON.stringify(HookPlugins.sampleEvents[event]),
            encoding: "utf8",
            timeout: 30_000
          })
          expect({ name, event, status: run.status, stderr: run.stderr }).toEqual({ name, event, status: 0, stderr: "" })
          // hookify answers an import error as a message and exit 0: its answer must be the rule engine's.
          if (name === "hookify") expect(JSON.parse(run.stdout)).toEqual({})
          ran.push(`${name} ${event}`)
        }
      }
    }
    expect(ran.sort()).toEqual([
      "hookify PostToolUse",
      "hookify PreToolUse",
      "hookify Stop",
      "hookify UserPromptSubmit",
      "security-guidance PostToolUse",
      "security-guidance SessionStart",
      "security-guidance UserPromptSubmit"
    ])
  }
)

it("an MCP server plugin runs as downloaded: its stdio server, started as .mcp.json says from the plugin's folder, answers tools/list and tools/call", { timeout: 180_000 }, async () => {
  const { cli, env, plugins } = await imported("acme/weather", { ...McpPlugins.marketplaceFiles })
  const dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-mcp-"))
  removals.push(() => Fs.rm(dir, { recursive: true, force: true }))
  const [plugin] = plugins
  const root = Path.join(dir, "weather-tools")
  const downloaded = await cli(["plugins", "download", plugin!.pluginId, "--dir", root, "--json"], env)
  expect(downloaded.code, downloaded.stderr).toBe(0)
  expect(json(downloaded).omitted).toEqual([])
  // Every file of the plugin, as the repository has it.
  for (const [path, text] of Object.entries(McpPlugins.pluginFiles)) expect(await Fs.readFile(Path.join(root, path), "utf8")).toBe(text)
  const config = JSON.parse(await Fs.readFile(Path.join(root, ".mcp.json"), "utf8")) as {
    readonly mcpServers: Record<string, McpPlugins.StdioServer & { readonly type?: string; readonly url?: string }>
  }
  expect(config.mcpServers["alerts"]).toEqual({ type: "http", url: "https://alerts.example.test/mcp" })
  const answered = await McpPlugins.toolsOver(root, config.mcpServers["forecast"]!, { city: "Oslo" })
  expect(answered.tools).toEqual(["forecast"])
  expect(answered.called).toMatchObject({ content: [{ type: "text", text: "Oslo: 21°C" }] })
})
