/**
 * The docs' relative links resolve (.ci/doc-links.mjs, which .ci/run also runs): every tracked Markdown file's links
 * to files and `#anchors`; and the check itself tells a missing file and a missing heading from good links.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("..", import.meta.url))
const check = (...files: ReadonlyArray<string>) =>
  spawnSync(process.execPath, [".ci/doc-links.mjs", ...files], { cwd: root, encoding: "utf8" })

describe("doc links", () => {
  it("every relative link and anchor of the tracked Markdown files resolves", () => {
    const result = check()
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
  })

  it("names a link to a missing file or heading, by GitHub's heading ids", () => {
    const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "doc-links-"))
    try {
      const page = Path.join(folder, "page.md")
      Fs.writeFileSync(Path.join(folder, "other.md"), "# The `orgplane` command\n\n## Start it (Node and npm)\n\n## Start it (Node and npm)\n")
      Fs.writeFileSync(
        page,
        [
          "# Page",
          "",
          "[a](other.md#the-orgplane-command) [b](other.md#start-it-node-and-npm-1) [c](#page) [d](other.md)",
          "[e](missing.md) [f](other.md#start-it) [g](#nowhere)",
          "```sh",
          "[not a link](nowhere.md)",
          "```"
        ].join("\n")
      )
      const result = check(page)
      expect(result.status).toBe(1)
      expect(result.stderr.trim().split("\n").map((line) => line.replace(/^.*page\.md:/, ""))).toEqual([
        `4: missing.md (no such file: ${Path.relative(root, Path.join(folder, "missing.md"))})`,
        `4: other.md#start-it (no heading #start-it in ${Path.relative(root, Path.join(folder, "other.md"))})`,
        `4: #nowhere (no heading #nowhere in ${Path.relative(root, page)})`
      ])
    } finally {
      Fs.rmSync(folder, { recursive: true, force: true })
    }
  })
})
