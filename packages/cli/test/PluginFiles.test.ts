/**
 * `orgplane plugins download`: a plugin discovered, applied and synced from a repository on the fake GitHub, written
 * into a folder as a desktop installs it; the folder against the repository's files.
 */
import { ApplyDiscoveryResponse, ConnectorAccountResponse, ConnectorInstanceResponse, MAX_COMPONENT_FILE_BYTES } from "@orgplane/schema"
import * as Connectors from "../../../packages/testkit/src/Connectors.js"
import * as FakeGitHub from "../../../packages/testkit/src/FakeGitHub.js"
import * as GitRepo from "../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Schema from "effect/Schema"
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
const files: Record<string, string | Uint8Array> = {
  ".claude-plugin/plugin.json": JSON.stringify({ name: "release-tools", version: "2.1.0" }),
  "skills/notes/SKILL.md": "---\nname: notes\ndescription: Writes release notes.\n---\nFollow references/style.md.\n",
  "skills/notes/references/style.md": "# Style\n",
  "skills/notes/scripts/collect.sh": "#!/bin/sh\ngit log --oneline\n",
  "skills/notes/assets/logo.png": logo,
  "skills/notes/assets/video.txt": new Uint8Array(MAX_COMPONENT_FILE_BYTES + 1).fill(0x62),
  "hooks/hooks.json": JSON.stringify({
    hooks: { Stop: [{ hooks: [{ type: "command", command: "bash ${CLAUDE_PLUGIN_ROOT}/hooks/run.sh" }] }] }
  }),
  "hooks/run.sh": "#!/bin/sh\necho done\n",
  "README.md": "# Release tools\n"
}

it("plugins download writes every component and its files as the repository has them", { timeout: 180_000 }, async () => {
  const repo = await GitRepo.withFiles(files)
  removals.push(() => repo.remove())
  const fullName = "acme/release-tools"
  const githubToken = "ghp_cli_plugin_files_0123456789"
  github.addRepository(fullName, repo)
  github.addToken(githubToken, [fullName])
  const owner = await Http.owner(server.url, "Plugin Files Org")
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

  // What a person counts in the repository: the components' files, but the oversized one and what no component
  // carries (the manifest, the README).
  const expected = Object.keys(files)
    .filter((path) => path.startsWith("skills/") || path.startsWith("hooks/"))
    .filter((path) => !path.endsWith("video.txt"))
    .sort()
  const written = (await Fs.readdir(dir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => Path.relative(dir, Path.join(entry.parentPath, entry.name)).split(Path.sep).join("/"))
    .sort()
  expect(written).toEqual(expected)
  for (const path of expected) {
    const original = files[path]!
    const bytes = new Uint8Array(await Fs.readFile(Path.join(dir, path)))
    expect(bytes).toEqual(typeof original === "string" ? new TextEncoder().encode(original) : original)
  }

  // People read what was written and what was not.
  const human = await cli(["plugins", "download", plugin!.pluginId, "--dir", dir], env)
  expect(human.code, human.stderr).toBe(0)
  expect(human.stdout).toContain(`Wrote ${expected.length} files of plugin ${plugin!.pluginId} into ${dir}.`)
  expect(human.stdout).toContain(`Not written: skills/notes/assets/video.txt (larger than ${MAX_COMPONENT_FILE_BYTES} bytes).`)
})
