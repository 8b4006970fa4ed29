/**
 * Service keys: services are found in a context by their key, so two services sharing one make the first layer that
 * needs both get the wrong one (it happened: two `MembershipsRepository` services). Every module of the server is
 * imported and every tag it exports (`Context.Tag` classes) collected: no two may share a key, and each key
 * names its module, `@orgplane/server/<path of the module without .ts>` (`@orgplane/server/teams/TeamsRepository`);
 * a module that exports several tags adds the export's name (`@orgplane/server/mcp/PresetsConfig/McpProbeSettings`).
 */
import * as Context from "effect/Context"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../../src")

interface Found {
  readonly key: string
  /** Where it is exported: `teams/TeamsRepository` and the export's name, or several places (re-exports). */
  readonly exports: Array<{ readonly module: string; readonly name: string }>
}

/** Every tag exported by a module of the server, once each, with the places it is exported from. */
const tags = new Map<Context.Key<unknown, unknown>, Found>()
/** How many distinct tags each module exports. */
const perModule = new Map<string, number>()

beforeAll(async () => {
  const modules = Fs.readdirSync(root, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))
    .map((file) => file.slice(0, -".ts".length).split(Path.sep).join("/"))
    .sort()
  for (const module of modules) {
    const exported: Record<string, unknown> = await import(pathToFileURL(Path.join(root, `${module}.ts`)).href)
    for (const [name, value] of Object.entries(exported)) {
      if (!Context.isKey(value)) continue
      const found = tags.get(value) ?? { key: value.key, exports: [] }
      found.exports.push({ module, name })
      tags.set(value, found)
    }
  }
  // A tag's home is the module it is exported from that is not a barrel (index.ts re-exports).
  for (const found of tags.values()) {
    const home = homeOf(found)
    perModule.set(home.module, (perModule.get(home.module) ?? 0) + 1)
  }
}, 120_000)

const homeOf = (found: Found) => found.exports.find((place) => !place.module.endsWith("index")) ?? found.exports[0]!

/** The key the naming rule asks for a tag. */
const expectedKey = (found: Found) => {
  const home = homeOf(found)
  return (perModule.get(home.module) ?? 0) > 1 ? `@orgplane/server/${home.module}/${home.name}` : `@orgplane/server/${home.module}`
}

/** The keys several tags share, each with the tags' modules. */
const sharedKeys = (all: Iterable<Found>) => {
  const byKey = new Map<string, Array<string>>()
  for (const found of all) {
    const home = homeOf(found)
    byKey.set(found.key, [...(byKey.get(found.key) ?? []), `${home.module}.ts (${home.name})`])
  }
  return [...byKey].filter(([, places]) => places.length > 1).map(([key, places]) => `${key}: ${places.join(", ")}`)
}

describe("service keys", () => {
  it("finds the server's services", () => {
    const keys = [...tags.values()].map((found) => found.key)
    expect(keys).toContain("@orgplane/server/catalog/ContentsRepository")
    expect(keys.length).toBeGreaterThan(60)
  })

  it("are unique: no two services share a key", () => {
    expect(sharedKeys(tags.values())).toEqual([])
    // The check sees a duplicate: the one this test was written after.
    const twice = "@orgplane/server/MembershipsRepository"
    expect(sharedKeys([
      { key: twice, exports: [{ module: "catalog/MembershipsRepository", name: "MembershipsRepository" }] },
      { key: twice, exports: [{ module: "identity/MembershipsRepository", name: "MembershipsRepository" }] }
    ])).toEqual([`${twice}: catalog/MembershipsRepository.ts (MembershipsRepository), identity/MembershipsRepository.ts (MembershipsRepository)`])
  })

  it("name their module: @orgplane/server/<path of the module>", () => {
    const wrong = [...tags.values()]
      .filter((found) => found.key !== expectedKey(found))
      .map((found) => `${found.key} should be ${expectedKey(found)}`)
    expect(wrong).toEqual([])
    // The check sees a key that does not name its module: the keys before the rule were the class's name alone.
    const before: Found = { key: "@orgplane/server/Teams", exports: [{ module: "teams/Teams", name: "Teams" }] }
    expect(expectedKey(before)).toBe("@orgplane/server/teams/Teams")
  })
})
