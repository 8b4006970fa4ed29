/**
 * The files a component carries (issue 31), through HTTP, against FakeGitHub serving a plugin of the project's own: a
 * skill with references/, scripts/, a binary asset and an oversized file, a skill nested in it, hooks running scripts
 * under `${CLAUDE_PLUGIN_ROOT}`, a command naming a script. What the repository has against what the versions list
 * and serve; a sync changing and deleting files; another organization's 404.
 */
import type * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import * as NodeCrypto from "node:crypto"
import { type ComponentFileList, type ConfigObjectPage, MAX_COMPONENT_FILE_BYTES } from "@orgplane/schema"
import { describe, expect, it } from "vitest"

const world = ConnectorWorld.forFile()
const { get, post } = world
const ok = Http.expectStatus

const skill = (name: string, body = "body") => `---\nname: ${name}\ndescription: The ${name} skill\n---\n${body}\n`
/** Bytes no UTF-8 decoder takes: a PNG signature, NUL and 0xff. */
const logo = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x00, 0x01, 0x02])
const huge = new Uint8Array(MAX_COMPONENT_FILE_BYTES + 1).fill(0x61)

const hooks = JSON.stringify({
  hooks: {
    PreToolUse: [{
      matcher: "Bash",
      hooks: [
        { type: "command", command: "${CLAUDE_PLUGIN_ROOT}/hooks/scripts/check.sh" },
        { type: "command", command: "python3 ${CLAUDE_PLUGIN_ROOT}/scripts/missing.py --strict" }
      ]
    }]
  }
}, null, 2)

/** The fixture: one plugin in `tools/`, files a person would count under each component. */
const files: GitRepo.Files = {
  "tools/.claude-plugin/plugin.json": JSON.stringify({ name: "tools", version: "1.0.0" }),
  "tools/skills/pdf/SKILL.md": skill("pdf", "See references/forms.md and run scripts/fill.py."),
  "tools/skills/pdf/references/forms.md": "# Forms\n",
  "tools/skills/pdf/scripts/fill.py": "print('fill')\n",
  "tools/skills/pdf/assets/logo.png": logo,
  "tools/skills/pdf/assets/huge.txt": huge,
  "tools/skills/pdf/nested/SKILL.md": skill("nested"),
  "tools/skills/pdf/nested/notes.md": "nested notes\n",
  "tools/hooks/hooks.json": hooks,
  "tools/hooks/scripts/check.sh": "#!/bin/sh\nexit 0\n",
  "tools/commands/release.md": "---\ndescription: Release\n---\nRun `${CLAUDE_PLUGIN_ROOT}/scripts/release.sh`.\n",
  "tools/scripts/release.sh": "#!/bin/sh\necho release\n",
  "README.md": "not part of the plugin\n"
}

const sha256 = (bytes: Uint8Array | string) => NodeCrypto.createHash("sha256").update(bytes).digest("hex")

/** The plugin followed, its skills, hooks and commands mapped. */
const setup = async () => {
  const followed = await world.follow(files)
  const { target, token } = followed
  for (const body of [
    { selector: "tools/skills/**", objectType: "skill" },
    { selector: "tools/hooks/hooks.json", objectType: "hook" },
    { selector: "tools/commands/**", objectType: "command" }
  ]) ok("mapping", await post(`/v1/connector-targets/${target.id}/mappings`, { token, body: { mappingKind: "path", ...body } }), 201)
  return followed
}

const objectsOf = async (token: string, instanceId: string) => {
  const page = ok<typeof ConfigObjectPage.Encoded>("objects", await get(`/v1/config-objects?connectorInstanceId=${instanceId}&limit=100`, { token }), 200)
  return new Map(page.items.map((item) => [item.currentRelativePath, item]))
}

const filesOf = async (token: string, object: { id: string; latestVersion: { id: string } }) =>
  ok<typeof ComponentFileList.Encoded>("files", await get(`/v1/config-objects/${object.id}/versions/${object.latestVersion.id}/files`, { token }), 200)

const content = (token: string, objectId: string, versionId: string, path: string) =>
  fetch(new URL(`/v1/config-objects/${objectId}/versions/${versionId}/files/content?path=${encodeURIComponent(path)}`, world.url), {
    headers: { authorization: `Bearer ${token}` }
  })

/** The repository's files below a folder of the plugin, as a person counts them: path from `tools/`, bytes. */
const repositoryFiles = (folder: string, except: (path: string) => boolean = () => false) =>
  Object.entries(files)
    .filter(([path]) => path.startsWith(`tools/${folder}/`) && !except(path))
    .map(([path, bytes]) => [path.slice("tools/".length), bytes] as const)

describe("component files", () => {
  it("a sync stores each component's files with its version, served as the repository has them", async () => {
    const { instance, token } = await setup()
    const done = await world.synced(token, instance.id)
    expect(done.status).toBe("completed")
    expect(done.summary).toMatchObject({ created: 4, skipped: 0 })
    expect(done.summary!.warnings).toEqual(expect.arrayContaining([
      `tools/skills/pdf/assets/huge.txt: not stored with tools/skills/pdf/SKILL.md (larger than ${MAX_COMPONENT_FILE_BYTES} bytes)`,
      "tools/scripts/missing.py: not stored with tools/hooks/hooks.json (not in the repository at this commit)"
    ]))

    const objects = await objectsOf(token, instance.id)
    const pdf = objects.get("tools/skills/pdf/SKILL.md")!
    const list = await filesOf(token, pdf)
    expect(list).toMatchObject({ configObjectId: pdf.id, versionId: pdf.latestVersion.id })
    // Entry first, then every file of the skill's folder but the nested skill's, in path order.
    const expected = repositoryFiles("skills/pdf", (path) => path.includes("/nested/") || path.endsWith("/pdf/SKILL.md"))
      .map(([path]) => path).sort()
    expect(list.items.map((item) => item.path)).toEqual(["skills/pdf/SKILL.md", ...expected])
    expect(list.items[0]).toMatchObject({ kind: "entry", sha256: null, mediaType: "text/markdown; charset=utf-8" })
    const byPath = new Map(list.items.map((item) => [item.path, item]))
    expect(byPath.get("skills/pdf/assets/huge.txt")).toMatchObject({
      kind: "file",
      size: huge.byteLength,
      sha256: null,
      omitted: `larger than ${MAX_COMPONENT_FILE_BYTES} bytes`
    })
    for (const [path, bytes] of repositoryFiles("skills/pdf", (path) => path.includes("/nested/") || path.endsWith("SKILL.md") || path.endsWith("huge.txt"))) {
      const raw = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes as Uint8Array
      expect(byPath.get(path)).toMatchObject({ kind: "file", size: raw.byteLength, sha256: sha256(raw), omitted: null })
      const response = await content(token, pdf.id, pdf.latestVersion.id, path)
      expect(response.status).toBe(200)
      expect(new Uint8Array(await response.arrayBuffer())).toEqual(raw)
      expect(response.headers.get("content-type")).toBe(byPath.get(path)!.mediaType)
      expect(response.headers.get("etag")).toBe(`"${sha256(raw)}"`)
    }
    expect(byPath.get("skills/pdf/assets/logo.png")!.mediaType).toBe("image/png")

    // The nested skill carries its own file only.
    const nested = await filesOf(token, objects.get("tools/skills/pdf/nested/SKILL.md")!)
    expect(nested.items.map((item) => item.path)).toEqual(["skills/pdf/nested/SKILL.md", "skills/pdf/nested/notes.md"])

    // Hooks carry their whole plugin folder, as Claude Code installs it (a script imports its neighbours), paths from
    // the plugin's folder; a file too large and a named one that is missing are listed as omitted.
    const hook = await filesOf(token, objects.get("tools/hooks/hooks.json")!)
    const pluginFiles = Object.keys(files)
      .filter((path) => path.startsWith("tools/") && path !== "tools/hooks/hooks.json")
      .map((path) => path.slice("tools/".length))
    expect(hook.items.map((item) => [item.path, item.kind, item.omitted])).toEqual([
      ["hooks/hooks.json", "entry", null],
      ...[...pluginFiles, "scripts/missing.py"].sort().map((path) => [
        path,
        "file",
        path === "scripts/missing.py"
          ? "not in the repository at this commit"
          : path === "skills/pdf/assets/huge.txt"
          ? `larger than ${MAX_COMPONENT_FILE_BYTES} bytes`
          : null
      ])
    ])
    const script = await content(token, objects.get("tools/hooks/hooks.json")!.id, hook.versionId, "hooks/scripts/check.sh")
    expect(await script.text()).toBe(files["tools/hooks/scripts/check.sh"])

    const command = await filesOf(token, objects.get("tools/commands/release.md")!)
    expect(command.items.map((item) => item.path)).toEqual(["commands/release.md", "scripts/release.sh"])

    // The entry, an omitted file and an unlisted path are not served.
    for (const path of ["skills/pdf/SKILL.md", "skills/pdf/assets/huge.txt", "skills/pdf/nope.md", "../README.md"]) {
      const response = await content(token, pdf.id, pdf.latestVersion.id, path)
      expect(response.status).toBe(404)
      expect(await response.json()).toMatchObject({ error: "config_object_file_not_found" })
    }
  })

  it("a later sync updates and deletes files: a new version lists them, the earlier one keeps its own", async () => {
    const { instance, repo, token } = await setup()
    await world.synced(token, instance.id)
    const before = (await objectsOf(token, instance.id)).get("tools/skills/pdf/SKILL.md")!
    const hookBefore = (await objectsOf(token, instance.id)).get("tools/hooks/hooks.json")!

    // Only supporting files change: the entries stay as they were.
    await repo.commitFiles({
      "tools/skills/pdf/scripts/fill.py": "print('fill v2')\n",
      "tools/skills/pdf/references/forms.md": null,
      "tools/skills/pdf/references/tables.md": "# Tables\n",
      "tools/hooks/scripts/check.sh": "#!/bin/sh\nexit 1\n"
    })
    const done = await world.synced(token, instance.id)
    expect(done.summary).toMatchObject({ created: 0, updated: 2, deleted: 0, unchanged: 2, skipped: 0 })

    const after = (await objectsOf(token, instance.id)).get("tools/skills/pdf/SKILL.md")!
    expect(after.id).toBe(before.id)
    expect(after.latestVersion.number).toBe(2)
    const list = await filesOf(token, after)
    const paths = list.items.map((item) => item.path)
    expect(paths).toContain("skills/pdf/references/tables.md")
    expect(paths).not.toContain("skills/pdf/references/forms.md")
    const fill = await content(token, after.id, after.latestVersion.id, "skills/pdf/scripts/fill.py")
    expect(await fill.text()).toBe("print('fill v2')\n")
    // Version 1 is unchanged.
    const old = await content(token, before.id, before.latestVersion.id, "skills/pdf/references/forms.md")
    expect(await old.text()).toBe("# Forms\n")
    const hookAfter = (await objectsOf(token, instance.id)).get("tools/hooks/hooks.json")!
    expect(hookAfter.latestVersion.number).toBe(hookBefore.latestVersion.number + 1)
    const check = await content(token, hookAfter.id, hookAfter.latestVersion.id, "hooks/scripts/check.sh")
    expect(await check.text()).toBe("#!/bin/sh\nexit 1\n")

    // A commit outside the components: nothing is read or written again.
    await repo.commitFiles({ "README.md": "changed\n" })
    const again = await world.synced(token, instance.id)
    expect(again.summary).toMatchObject({ created: 0, updated: 0, deleted: 0, unchanged: 4 })
  })

  it("a file's mode is kept: one the repository has executable is listed so, and a mode changed alone makes a new version", async () => {
    const { instance, repo, token } = await setup()
    await world.synced(token, instance.id)
    const hookBefore = (await objectsOf(token, instance.id)).get("tools/hooks/hooks.json")!
    const modes = async (object: { id: string; latestVersion: { id: string } }) =>
      Object.fromEntries((await filesOf(token, object)).items.map((item) => [item.path, item.executable]))
    expect(await modes(hookBefore)).toMatchObject({ "hooks/hooks.json": false, "hooks/scripts/check.sh": false, "scripts/release.sh": false })

    // chmod +x, the bytes as they were.
    await repo.commitFiles({ "tools/hooks/scripts/check.sh": { executable: "#!/bin/sh\nexit 0\n" } })
    const done = await world.synced(token, instance.id)
    expect(done.summary).toMatchObject({ created: 0, updated: 1, deleted: 0, unchanged: 3 })
    const hookAfter = (await objectsOf(token, instance.id)).get("tools/hooks/hooks.json")!
    expect(hookAfter.latestVersion.number).toBe(hookBefore.latestVersion.number + 1)
    const after = await modes(hookAfter)
    expect(after).toMatchObject({ "hooks/hooks.json": false, "hooks/scripts/check.sh": true, "scripts/release.sh": false })
    expect(Object.values(after).filter((executable) => executable)).toHaveLength(1)
    // The earlier version keeps its own list.
    expect((await modes(hookBefore))["hooks/scripts/check.sh"]).toBe(false)
  })

  it("another organization's config object answers 404, its files too", async () => {
    const { instance, token } = await setup()
    await world.synced(token, instance.id)
    const pdf = (await objectsOf(token, instance.id)).get("tools/skills/pdf/SKILL.md")!
    const stranger = await Http.owner(world.url, "Elsewhere")
    const list = await get(`/v1/config-objects/${pdf.id}/versions/${pdf.latestVersion.id}/files`, { token: stranger.token })
    expect(list.status).toBe(404)
    expect(list.body).toMatchObject({ error: "config_object_not_found" })
    const response = await content(stranger.token, pdf.id, pdf.latestVersion.id, "skills/pdf/scripts/fill.py")
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ error: "config_object_not_found" })
  })

  it("removing the instance removes its objects with their versions' file lists", async () => {
    const { instance, token } = await setup()
    await world.synced(token, instance.id)
    const pdf = (await objectsOf(token, instance.id)).get("tools/skills/pdf/SKILL.md")!
    const removed = await post(`/v1/connector-instances/${instance.id}/remove`, { token })
    expect(removed.status, removed.text).toBe(200)
    const list = await get(`/v1/config-objects/${pdf.id}/versions/${pdf.latestVersion.id}/files`, { token })
    expect(list.status).toBe(404)
  })

  it("a path over 1024 characters is a 400 naming it", async () => {
    const { instance, token } = await setup()
    await world.synced(token, instance.id)
    const pdf = (await objectsOf(token, instance.id)).get("tools/skills/pdf/SKILL.md")!
    const response = await content(token, pdf.id, pdf.latestVersion.id, "a".repeat(1025))
    expect(response.status).toBe(400)
    expect(JSON.stringify(await response.json())).toContain("path")
  })
})
