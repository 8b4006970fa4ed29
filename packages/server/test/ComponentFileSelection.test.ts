/** Which files a component carries, from a tree (pure): ComponentFileSelection. */
import { MAX_COMPONENT_FILE_BYTES, MAX_COMPONENT_FILES, MAX_COMPONENT_FILES_BYTES } from "@orgplane/schema"
import { describe, expect, it } from "vitest"
import { filesChanged, mediaTypeOf, pluginRootOf, referencesIn, selectFiles } from "../src/connectors/ComponentFileSelection.js"
import { type Entry, indexOf } from "../src/connectors/RepositoryTree.js"

const tree = (files: Record<string, number>, sha = (path: string) => `sha-${path}`): Array<Entry> =>
  Object.entries(files).map(([path, size]) => ({ path, type: "blob" as const, sha: sha(path), size }))

describe("the plugin's folder", () => {
  it("is the nearest folder with a manifest, else the one holding a component folder, else the entry's", () => {
    const index = indexOf(tree({
      "a/.claude-plugin/plugin.json": 1,
      "a/x/skills/s/SKILL.md": 1,
      "b/commands/c.md": 1,
      "loose/SKILL.md": 1
    }))
    expect(pluginRootOf(index, "a/x/skills/s/SKILL.md")).toBe("a")
    expect(pluginRootOf(index, "b/commands/c.md")).toBe("b")
    expect(pluginRootOf(index, "loose/SKILL.md")).toBe("loose")
  })
})

describe("references", () => {
  it("takes ${CLAUDE_PLUGIN_ROOT} and $CLAUDE_PLUGIN_ROOT paths up to quotes, spaces and trailing punctuation", () => {
    expect(referencesIn(`"command": "\${CLAUDE_PLUGIN_ROOT}/hooks/a.sh", run $CLAUDE_PLUGIN_ROOT/scripts/b.py --x; see \${CLAUDE_PLUGIN_ROOT}/docs/c.md.`))
      .toEqual(["hooks/a.sh", "scripts/b.py", "docs/c.md"])
    expect(referencesIn("no reference: ${CLAUDE_PLUGIN_ROOTS}/x and $HOME/y")).toEqual([])
    // A permission rule's argument pattern (allowed-tools) is not part of the path.
    expect(referencesIn("allowed-tools: [\"Bash(${CLAUDE_PLUGIN_ROOT}/scripts/setup-ralph-loop.sh:*)\"]")).toEqual(["scripts/setup-ralph-loop.sh"])
  })
})

describe("selection", () => {
  it("a skill carries its folder but a nested skill's files; limits omit and report", () => {
    const index = indexOf(tree({
      "p/skills/s/SKILL.md": 10,
      "p/skills/s/a.md": 10,
      "p/skills/s/big.bin": MAX_COMPONENT_FILE_BYTES + 1,
      // Four files at the per-file limit make the per-component one: with a.md, the fourth goes past it.
      "p/skills/s/fill-1.bin": MAX_COMPONENT_FILE_BYTES,
      "p/skills/s/fill-2.bin": MAX_COMPONENT_FILE_BYTES,
      "p/skills/s/fill-3.bin": MAX_COMPONENT_FILE_BYTES,
      "p/skills/s/fill-4.bin": MAX_COMPONENT_FILES_BYTES - 3 * MAX_COMPONENT_FILE_BYTES,
      "p/skills/s/inner/SKILL.md": 10,
      "p/skills/s/inner/b.md": 10
    }))
    const selection = selectFiles(index, "skill", "p/skills/s/SKILL.md", "body")
    expect(selection.entryPath).toBe("skills/s/SKILL.md")
    expect(selection.files.map((file) => [file.path, file.omitted])).toEqual([
      ["skills/s/a.md", undefined],
      ["skills/s/big.bin", `larger than ${MAX_COMPONENT_FILE_BYTES} bytes`],
      ["skills/s/fill-1.bin", undefined],
      ["skills/s/fill-2.bin", undefined],
      ["skills/s/fill-3.bin", undefined],
      ["skills/s/fill-4.bin", `would take the component's stored files past ${MAX_COMPONENT_FILES_BYTES} bytes`]
    ])
    expect(selection.warnings).toHaveLength(2)
  })

  it("hooks and MCP servers carry their whole plugin folder, as Claude Code installs it; `..` cannot leave it; a missing file is listed", () => {
    const index = indexOf(tree({
      "p/.claude-plugin/plugin.json": 1,
      "p/hooks/hooks.json": 1,
      "p/hooks/run.py": 1,
      "p/hooks/helpers.py": 1,
      "p/core/__init__.py": 1,
      "p/.mcp.json": 1,
      "p/README.md": 1,
      "q/.claude-plugin/plugin.json": 1,
      "outside.sh": 1
    }))
    const text = "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/run.py ${CLAUDE_PLUGIN_ROOT}/../outside.sh ${CLAUDE_PLUGIN_ROOT}/gone.sh"
    const hook = selectFiles(index, "hook", "p/hooks/hooks.json", text)
    expect(hook.files.map((file) => [file.path, file.sha, file.omitted])).toEqual([
      [".claude-plugin/plugin.json", "sha-p/.claude-plugin/plugin.json", undefined],
      [".mcp.json", "sha-p/.mcp.json", undefined],
      ["README.md", "sha-p/README.md", undefined],
      ["core/__init__.py", "sha-p/core/__init__.py", undefined],
      ["gone.sh", null, "not in the repository at this commit"],
      ["hooks/helpers.py", "sha-p/hooks/helpers.py", undefined],
      ["hooks/run.py", "sha-p/hooks/run.py", undefined]
    ])
    expect(hook.warnings).toEqual([
      "p/hooks/hooks.json: ${CLAUDE_PLUGIN_ROOT}/../outside.sh leaves the plugin's folder, so it is not carried (a plugin is installed as its folder alone, in Claude Code too)",
      "p/gone.sh: not stored with p/hooks/hooks.json (not in the repository at this commit)"
    ])
    const mcp = selectFiles(index, "mcp", "p/.mcp.json", "{}")
    expect(mcp.files.map((file) => file.path)).toEqual([".claude-plugin/plugin.json", "README.md", "core/__init__.py", "hooks/helpers.py", "hooks/hooks.json", "hooks/run.py"])
    // Agents and commands carry only what they name.
    expect(selectFiles(index, "command", "p/commands/c.md", "${CLAUDE_PLUGIN_ROOT}/hooks/run.py").files.map((file) => file.path)).toEqual(["hooks/run.py"])
  })

  it(`lists at most ${MAX_COMPONENT_FILES} files and says how many it left out`, () => {
    const files: Record<string, number> = { "skills/s/SKILL.md": 1 }
    for (let i = 0; i < MAX_COMPONENT_FILES + 3; i++) files[`skills/s/f-${String(i).padStart(4, "0")}.md`] = 1
    const selection = selectFiles(indexOf(tree(files)), "skill", "skills/s/SKILL.md", "")
    expect(selection.files).toHaveLength(MAX_COMPONENT_FILES)
    expect(selection.fingerprint).toHaveLength(MAX_COMPONENT_FILES + 3)
    expect(selection.warnings[0]).toMatch(/^skills\/s\/SKILL\.md: 3 of its 503 files not stored/)
  })
})

describe("the plan's fingerprint", () => {
  it("changes with a carried file's blob, a new or deleted file of a skill or of a hook's plugin, a named file appearing; not with others", () => {
    const before = indexOf(tree({ "skills/s/SKILL.md": 1, "skills/s/a.md": 1, "README.md": 1 }))
    const hook = selectFiles(indexOf(tree({ "hooks/hooks.json": 1 })), "hook", "hooks/hooks.json", "${CLAUDE_PLUGIN_ROOT}/run.sh")
    const skill = selectFiles(before, "skill", "skills/s/SKILL.md", "")
    expect(filesChanged(before, "skill", "skills/s/SKILL.md", skill.fingerprint)).toBe(false)
    expect(filesChanged(indexOf(tree({ "skills/s/SKILL.md": 1, "skills/s/a.md": 1, "README.md": 2 }, (path) => `${path}-2`.replace("skills/s/a.md-2", "sha-skills/s/a.md"))), "skill", "skills/s/SKILL.md", skill.fingerprint)).toBe(false)
    expect(filesChanged(indexOf(tree({ "skills/s/SKILL.md": 1, "skills/s/a.md": 1 }, (path) => `new-${path}`)), "skill", "skills/s/SKILL.md", skill.fingerprint)).toBe(true)
    expect(filesChanged(indexOf(tree({ "skills/s/SKILL.md": 1, "skills/s/a.md": 1, "skills/s/b.md": 1 })), "skill", "skills/s/SKILL.md", skill.fingerprint)).toBe(true)
    expect(filesChanged(indexOf(tree({ "skills/s/SKILL.md": 1 })), "skill", "skills/s/SKILL.md", skill.fingerprint)).toBe(true)
    expect(filesChanged(indexOf(tree({ "hooks/hooks.json": 1 })), "hook", "hooks/hooks.json", hook.fingerprint)).toBe(false)
    expect(filesChanged(indexOf(tree({ "hooks/hooks.json": 1, "run.sh": 1 })), "hook", "hooks/hooks.json", hook.fingerprint)).toBe(true)
    // A hook's plugin folder is its own: a file no text names, added or changed, changes it.
    expect(filesChanged(indexOf(tree({ "hooks/hooks.json": 1, "hooks/lib.py": 1 })), "hook", "hooks/hooks.json", hook.fingerprint)).toBe(true)
    expect(filesChanged(before, "skill", "skills/s/SKILL.md", null)).toBe(true)
  })
})

describe("media types", () => {
  it("by extension, else text for UTF-8 and bytes for the rest", () => {
    expect(mediaTypeOf("a/logo.PNG")).toBe("image/png")
    expect(mediaTypeOf("Makefile", new TextEncoder().encode("all:\n"))).toBe("text/plain; charset=utf-8")
    expect(mediaTypeOf("blob", new Uint8Array([0xff, 0xfe]))).toBe("application/octet-stream")
  })
})
