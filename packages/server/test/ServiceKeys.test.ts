/**
 * Service keys: services are found in a context by their key, so two services sharing one make the first layer that
 * needs both get the wrong one (it happened: two `MembershipsRepository` services). Every module of the server is
 * imported and every tag it exports (`Context.Tag`, `Effect.Service`) collected: no two may share a key, and each key
 * names its module, `@orgplane/server/<path of the module without .ts>` (`@orgplane/server/teams/TeamsRepository`);
 * a module that exports several tags adds the export's name (`@orgplane/server/mcp/PresetsConfig/McpProbeSettings`).
 */
import { Context } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../src")

interface Found {
  readonly key: string
  /** Where it is exported: `teams/TeamsRepository` and the export's name, or several places (re-exports). */
  readonly exports: Array<{ readonly module: string; readonly name: string }>
}

/** Every tag exported by a module of the server, once each, with the places it is exported from. */
const tags = new Map<Context.Tag<unknown, unknown>, Found>()
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
      if (!Context.isTag(value)) continue
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

/**
 * Keys from before the rule, renamed by the work that follows (issue 30). Remove a key from here when it is renamed:
 * the test fails on a key listed here that follows the rule, as on a new key that does not.
 */
const notYetRenamed: ReadonlySet<string> = new Set([
  "@orgplane/server/Access",
  "@orgplane/server/Accounts",
  "@orgplane/server/AddressResolver",
  "@orgplane/server/ApiKeys",
  "@orgplane/server/ApiKeysRepository",
  "@orgplane/server/Bootstrap",
  "@orgplane/server/BootstrapRepository",
  "@orgplane/server/CapabilityConfig",
  "@orgplane/server/CodeHostAccess",
  "@orgplane/server/CodeHostConfig",
  "@orgplane/server/ConfigObjects",
  "@orgplane/server/ConfigObjectsRepository",
  "@orgplane/server/Connections",
  "@orgplane/server/ConnectionsRepository",
  "@orgplane/server/Connectors",
  "@orgplane/server/ConnectorsRepository",
  "@orgplane/server/Crypto",
  "@orgplane/server/CursorKey",
  "@orgplane/server/DatabaseStatus",
  "@orgplane/server/DesktopPolicies",
  "@orgplane/server/DesktopPoliciesRepository",
  "@orgplane/server/DiscoveryRepository",
  "@orgplane/server/DiscoveryService",
  "@orgplane/server/DnsConfig",
  "@orgplane/server/GitHub",
  "@orgplane/server/IdGenerator",
  "@orgplane/server/Invitations",
  "@orgplane/server/InvitationsRepository",
  "@orgplane/server/MappingsRepository",
  "@orgplane/server/Marketplaces",
  "@orgplane/server/MarketplacesRepository",
  "@orgplane/server/Materializer",
  "@orgplane/server/McpPresets",
  "@orgplane/server/McpProbeSettings",
  "@orgplane/server/McpResolver",
  "@orgplane/server/McpToolConfig",
  "@orgplane/server/Members",
  "@orgplane/server/Memberships",
  "@orgplane/server/MembershipsRepository",
  "@orgplane/server/MemoryBank",
  "@orgplane/server/MemoryRepository",
  "@orgplane/server/Metrics",
  "@orgplane/server/MetricsRepository",
  "@orgplane/server/Organizations",
  "@orgplane/server/OrganizationsRepository",
  "@orgplane/server/Outbound",
  "@orgplane/server/Plugins",
  "@orgplane/server/PluginsRepository",
  "@orgplane/server/PoolSize",
  "@orgplane/server/RateLimiter",
  "@orgplane/server/RemovalRepository",
  "@orgplane/server/Resolver",
  "@orgplane/server/ServerConfig",
  "@orgplane/server/SessionsRepository",
  "@orgplane/server/Sso",
  "@orgplane/server/SsoRepository",
  "@orgplane/server/Sync",
  "@orgplane/server/SyncEventsRepository",
  "@orgplane/server/Teams",
  "@orgplane/server/TeamsRepository",
  "@orgplane/server/Telemetry",
  "@orgplane/server/TelemetryPartitions",
  "@orgplane/server/TelemetryRepository",
  "@orgplane/server/UsersRepository",
  "@orgplane/server/Webhook",
  "@orgplane/server/WorkerRuntime",
  "@orgplane/server/WorkerRuntimeConfig",
  "@orgplane/server/Workers",
  "@orgplane/server/WorkersRepository"
])

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
      .filter((found) => found.key !== expectedKey(found) && !notYetRenamed.has(found.key))
      .map((found) => `${found.key} should be ${expectedKey(found)}`)
    expect(wrong).toEqual([])
    const renamed = [...tags.values()].filter((found) => found.key === expectedKey(found) && notYetRenamed.has(found.key))
    expect(renamed.map((found) => `${found.key} follows the rule now: remove it from notYetRenamed`)).toEqual([])
    const gone = [...notYetRenamed].filter((key) => ![...tags.values()].some((found) => found.key === key))
    expect(gone.map((key) => `${key} is no service's key any more: remove it from notYetRenamed`)).toEqual([])
  })
})
