/** A tree's symbolic links followed as a checkout has them (connectors/SymbolicLinks.ts), pure but for the reads. */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { checkout, type ListedEntry, resolveLink, withinPlugins } from "../src/connectors/SymbolicLinks.js"

const blob = (path: string, size = 1): ListedEntry => ({ path, type: "blob", sha: `sha-${path}`, size })
const tree = (path: string): ListedEntry => ({ path, type: "tree", sha: `tree-${path}`, size: 0 })
const link = (path: string, target: string): ListedEntry => ({ path, type: "blob", sha: `link:${target}`, size: target.length, link: true })

const run = (entries: ReadonlyArray<ListedEntry>) =>
  Effect.runSync(checkout(entries, (sha) => Effect.succeed(sha.slice("link:".length))))

describe("resolveLink", () => {
  it("reads a target from the link's folder; an absolute one or one above the root leaves the repository", () => {
    expect(resolveLink("plugins/a/skills", "../../shared/pdf")).toBe("plugins/shared/pdf")
    expect(resolveLink("", "./docs/x.md")).toBe("docs/x.md")
    expect(resolveLink("a", "../../etc")).toBeUndefined()
    expect(resolveLink("a", "/etc/passwd")).toBeUndefined()
  })
})

describe("checkout", () => {
  it("gives a linked file the target's blob at the link's path, and a linked folder its files", () => {
    const { entries, warnings } = run([
      tree("shared"),
      tree("shared/pdf"),
      blob("shared/pdf/SKILL.md"),
      blob("shared/pdf/forms.md"),
      tree("plugins"),
      tree("plugins/a"),
      tree("plugins/a/skills"),
      link("plugins/a/skills/pdf", "../../../shared/pdf"),
      link("plugins/a/README.md", "../../shared/pdf/forms.md")
    ])
    expect(warnings).toEqual([])
    expect(entries.filter((entry) => entry.path.startsWith("plugins/")).map((entry) => [entry.path, entry.type, entry.sha])).toEqual([
      ["plugins/a", "tree", "tree-plugins/a"],
      ["plugins/a/README.md", "blob", "sha-shared/pdf/forms.md"],
      ["plugins/a/skills", "tree", "tree-plugins/a/skills"],
      ["plugins/a/skills/pdf", "tree", "tree-shared/pdf"],
      ["plugins/a/skills/pdf/SKILL.md", "blob", "sha-shared/pdf/SKILL.md"],
      ["plugins/a/skills/pdf/forms.md", "blob", "sha-shared/pdf/forms.md"]
    ])
  })

  it("follows a link through another, and leaves out and says one that leaves the repository, names nothing or loops", () => {
    const { entries, warnings } = run([
      blob("docs/guide.md"),
      link("a/guide.md", "../b/guide.md"),
      link("b/guide.md", "../docs/guide.md"),
      link("a/passwd", "../../etc/passwd"),
      link("a/gone.md", "nowhere.md"),
      link("a/self", "."),
      link("a/ping", "pong"),
      link("a/pong", "ping")
    ])
    expect(entries.map((entry) => [entry.path, entry.sha])).toEqual([
      ["a/guide.md", "sha-docs/guide.md"],
      ["b/guide.md", "sha-docs/guide.md"],
      ["docs/guide.md", "sha-docs/guide.md"]
    ])
    expect(warnings).toEqual([
      "`a/passwd` is a link not followed: its target `../../etc/passwd` leaves the repository.",
      "`a/gone.md` is a link not followed: its target `nowhere.md` is not in the repository.",
      "`a/self` is a link not followed: it leads into itself.",
      "`a/ping` is a link not followed: a loop of links.",
      "`a/pong` is a link not followed: a loop of links."
    ])
  })

  it("reads nothing when the tree has no link", () => {
    const entries = [blob("a.md"), tree("b")]
    const read = Effect.runSync(checkout(entries, () => Effect.die("no link to read")))
    expect(read).toEqual({
      entries: [{ path: "a.md", type: "blob", sha: "sha-a.md", size: 1 }, { path: "b", type: "tree", sha: "tree-b", size: 0 }],
      warnings: [],
      links: new Map()
    })
  })

  it("refuses, once the plugins' folders are known, a link that leads out of its plugin's folder, and what it brought", () => {
    const checkedOut = run([
      blob("common/notes.md"),
      tree("common/skill"),
      blob("common/skill/SKILL.md"),
      blob("p/shared/guide.md"),
      link("p/commands/guide.md", "../shared/guide.md"),
      link("p/commands/notes.md", "../../common/notes.md"),
      link("p/skills/common", "../../common/skill"),
      link("outside/notes.md", "../common/notes.md")
    ])
    const kept = withinPlugins(checkedOut, ["p"])
    expect(kept.entries.map((entry) => entry.path)).toEqual([
      "common/notes.md",
      "common/skill",
      "common/skill/SKILL.md",
      "outside/notes.md",
      "p/commands/guide.md",
      "p/shared/guide.md"
    ])
    expect(kept.warnings).toEqual([
      "`p/commands/notes.md` is a link not followed: it leads out of its plugin's folder, to `common/notes.md` (a plugin is installed as its folder alone).",
      "`p/skills/common` is a link not followed: it leads out of its plugin's folder, to `common/skill` (a plugin is installed as its folder alone)."
    ])
    // A plugin at the repository's root holds every link of the repository.
    expect(withinPlugins(checkedOut, [""])).toBe(checkedOut)
  })
})
