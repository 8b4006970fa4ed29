/**
 * The catalog's storage on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * config objects and their versions (ConfigObjectsRepository, with content read by Parsing), what plugins and
 * marketplaces contain (ContentsRepository), plugins and marketplaces read whole in one statement (PluginsRepository,
 * MarketplacesRepository), and the files
 * a version carries (ComponentFilesRepository); another
 * organization's ids find nothing. The ComponentFiles service over them: viewer access and the version checked.
 */
import { expect, layer } from "@effect/vitest"
import {
  ConfigObjectId,
  ConfigObjectVersionId,
  type JsonObject,
  MarketplaceId,
  type MemberContext,
  type Organization,
  PluginId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { ComponentFiles } from "../src/catalog/ComponentFiles.js"
import { ComponentFilesRepository } from "../src/catalog/ComponentFilesRepository.js"
import { ConfigObjectsRepository } from "../src/catalog/ConfigObjectsRepository.js"
import { ContentsRepository } from "../src/catalog/ContentsRepository.js"
import { derive, fileOf, parse } from "../src/catalog/Parsing.js"
import { MarketplacesRepository } from "../src/catalog/MarketplacesRepository.js"
import { PluginsRepository } from "../src/catalog/PluginsRepository.js"
import { IdGenerator } from "../src/platform/Ids.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const services = Layer.mergeAll(ConfigObjectsRepository.layer, ContentsRepository.layer, ComponentFilesRepository.layer, PluginsRepository.layer,
  MarketplacesRepository.layer, ComponentFiles.layer)
const TestLayer = Layer.provideMerge(services, Layer.merge(Db.layer, IdGenerator.layer))

const newId = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, prefix: string): S["Type"] =>
  Schema.decodeUnknownSync(schema)(Db.newId(prefix))
const later = (ms: number) => new Date(Members.at.getTime() + ms)

const staffed = Effect.fn("CatalogRepositories.staffed")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  yield* Members.seed(owner)
  return { organization, owner }
})

/** A config object of `objectType` with one version read from `rawSourceText`, written through the repository. */
const objectWith = Effect.fn("CatalogRepositories.objectWith")(function*(
  organization: Organization,
  owner: MemberContext,
  objectType: "skill" | "mcp" | "context",
  rawSourceText: string,
  relativePath?: string
) {
  const objects = yield* ConfigObjectsRepository
  const parsed = parse(objectType, { rawSourceText })
  if (Result.isFailure(parsed)) return yield* Effect.die(parsed.failure)
  const id = newId(ConfigObjectId, "cob")
  yield* objects.insert({
    id,
    organizationId: organization.id,
    objectType,
    sourceMode: "cloud",
    ...derive(objectType, parsed.success, undefined, Members.at),
    ...fileOf(relativePath),
    createdByMembershipId: owner.membership.id,
    connectorInstanceId: null,
    createdAt: Members.at,
    updatedAt: Members.at
  })
  const versionId = newId(ConfigObjectVersionId, "cov")
  yield* objects.insertVersion({
    id: versionId,
    organizationId: organization.id,
    configObjectId: id,
    number: yield* objects.nextNumber(organization.id, id),
    schemaVersion: "1",
    parserMode: parsed.success.parserMode,
    normalizedPayloadJson: parsed.success.normalizedPayloadJson,
    rawSourceText: parsed.success.rawSourceText,
    metadata: null,
    createdVia: "cloud",
    createdByMembershipId: owner.membership.id,
    sourceRevisionRef: null,
    isDeletedVersion: false,
    createdAt: Members.at
  })
  return { id, versionId }
})

const insertPlugin = Effect.fn("CatalogRepositories.insertPlugin")(function*(organization: Organization, name: string, deleted = false) {
  const sql = yield* SqlClient.SqlClient
  const id = newId(PluginId, "plg")
  yield* sql`INSERT INTO plugins (id, organization_id, name, description, status, created_at, updated_at, deleted_at)
             VALUES (${id}, ${organization.id}, ${name}, '', ${deleted ? "deleted" : "active"}, ${Members.at}, ${Members.at},
                     ${deleted ? Members.at : null})`
  return id
})

layer(TestLayer, { timeout: 120_000, excludeTestServices: true })(`catalog repositories on ${TestDatabase.kind}`, (it) => {
  it.effect("ConfigObjectsRepository: an object with its latest version, its versions paged, found, listed, searched", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjectsRepository
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const skill = yield* objectWith(
        organization,
        owner,
        "skill",
        "---\nname: deploy-to-staging\ndescription: Deploys the app.\n---\n# Deploy\n\nRun it.\n",
        "skills/deploy/SKILL.md"
      )
      const found = Option.getOrThrow(yield* objects.find(organization.id, skill.id))
      expect(found).toMatchObject({
        id: skill.id,
        organizationId: organization.id,
        objectType: "skill",
        sourceMode: "cloud",
        status: "active",
        title: "deploy-to-staging",
        description: "Deploys the app.",
        currentFileName: "SKILL.md",
        currentFileExtension: "md",
        currentRelativePath: "skills/deploy/SKILL.md",
        createdByOrgMembershipId: owner.membership.id,
        deletedAt: null
      })
      expect(found.latestVersion).toMatchObject({
        id: skill.versionId,
        number: 1,
        parserMode: "markdown",
        normalizedPayloadJson: { frontmatter: { name: "deploy-to-staging", description: "Deploys the app." }, body: "# Deploy\n\nRun it." },
        createdVia: "cloud",
        isDeletedVersion: false
      })
      expect(yield* objects.state(organization.id, skill.id)).toEqual(Option.some({ objectType: "skill", sourceMode: "cloud", status: "active" }))

      // JSON members keep their names (no camel-casing on the way in or out), and their order.
      const mcp = yield* objectWith(organization, owner, "mcp", `{"mcp_servers_note":"x","mcpServers":{"git_hub":{"url":"https://mcp.example/sse"}}}`)
      const mcpVersion = Option.getOrThrow(yield* objects.find(organization.id, mcp.id)).latestVersion
      expect(mcpVersion.normalizedPayloadJson).toEqual({ mcp_servers_note: "x", mcpServers: { git_hub: { url: "https://mcp.example/sse" } } })
      expect(Object.keys(mcpVersion.normalizedPayloadJson ?? {})).toEqual(["mcp_servers_note", "mcpServers"])

      // A second version and a deletion record: the latest is the deletion, the last content the second.
      expect(yield* objects.nextNumber(organization.id, skill.id)).toBe(2)
      const second = newId(ConfigObjectVersionId, "cov")
      const payload: JsonObject = { frontmatter: { name: "deploy", description: "Again." }, body: "Twice." }
      yield* objects.insertVersion({
        id: second,
        organizationId: organization.id,
        configObjectId: skill.id,
        number: 2,
        schemaVersion: "1",
        parserMode: "markdown",
        normalizedPayloadJson: payload,
        rawSourceText: "---\nname: deploy\ndescription: Again.\n---\nTwice.",
        metadata: { origin_note: "kept" },
        createdVia: "import",
        createdByMembershipId: null,
        sourceRevisionRef: "abc123",
        isDeletedVersion: false,
        createdAt: later(1)
      })
      yield* objects.insertVersion({
        id: newId(ConfigObjectVersionId, "cov"),
        organizationId: organization.id,
        configObjectId: skill.id,
        number: 3,
        schemaVersion: "1",
        parserMode: "markdown",
        normalizedPayloadJson: null,
        rawSourceText: null,
        metadata: null,
        createdVia: "cloud",
        createdByMembershipId: owner.membership.id,
        sourceRevisionRef: null,
        isDeletedVersion: true,
        createdAt: later(2)
      })
      yield* objects.setStatus(organization.id, skill.id, "deleted", later(2))
      const deleted = Option.getOrThrow(yield* objects.find(organization.id, skill.id))
      expect(deleted).toMatchObject({ status: "deleted", deletedAt: later(2), updatedAt: later(2) })
      expect(deleted.latestVersion).toMatchObject({ number: 3, isDeletedVersion: true, normalizedPayloadJson: null })
      expect(Option.getOrThrow(yield* objects.lastContent(organization.id, skill.id))).toMatchObject({
        id: second,
        number: 2,
        normalizedPayloadJson: payload,
        metadata: { origin_note: "kept" },
        sourceRevisionRef: "abc123",
        createdByOrgMembershipId: null
      })
      expect(Option.getOrThrow(yield* objects.findVersion(organization.id, skill.id, second)).number).toBe(2)
      expect(yield* objects.findVersion(organization.id, mcp.id, second)).toEqual(Option.none())

      const numbers: Array<number> = []
      let cursor: string | null = null
      do {
        const page: { readonly items: ReadonlyArray<{ readonly number: number }>; readonly nextCursor: string | null } = yield* objects.listVersions(
          organization.id,
          skill.id,
          { limit: 1, includeDeleted: true, ...(cursor === null ? {} : { cursor }) }
        )
        numbers.push(...page.items.map((version) => version.number))
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(numbers).toEqual([3, 2, 1])
      expect((yield* objects.listVersions(organization.id, skill.id, {})).items.map((version) => version.number)).toEqual([2, 1])

      // Lists: deleted objects left out unless asked, filters, words and word prefixes, what `visible` lets through.
      const ids = (page: { readonly items: ReadonlyArray<{ readonly id: string }> }) => page.items.map((object) => object.id)
      expect(ids(yield* objects.list(organization.id, sql`true`, {}))).toEqual([mcp.id])
      expect(ids(yield* objects.list(organization.id, sql`true`, { includeDeleted: true }))).toEqual([mcp.id, skill.id])
      expect(ids(yield* objects.list(organization.id, sql`true`, { status: "deleted" }))).toEqual([skill.id])
      expect(ids(yield* objects.list(organization.id, sql`true`, { objectType: "mcp" }))).toEqual([mcp.id])
      expect(ids(yield* objects.list(organization.id, sql`true`, { includeDeleted: true, q: "deplo staging" }))).toEqual([skill.id])
      expect(ids(yield* objects.list(organization.id, sql`true`, { includeDeleted: true, q: "it's ' \\ & |" }))).toEqual([])
      expect(ids(yield* objects.list(organization.id, sql`false`, { includeDeleted: true }))).toEqual([])
      expect((yield* objects.findMany(organization.id, [skill.id, mcp.id])).map((object) => object.id).sort()).toEqual([mcp.id, skill.id].sort())
      expect(yield* objects.findMany(organization.id, [])).toEqual([])

      // Another organization finds nothing.
      const other = yield* staffed()
      expect(yield* objects.find(other.organization.id, skill.id)).toEqual(Option.none())
      expect(yield* objects.state(other.organization.id, skill.id)).toEqual(Option.none())
      expect(yield* objects.findMany(other.organization.id, [skill.id])).toEqual([])
      expect(yield* objects.lastContent(other.organization.id, skill.id)).toEqual(Option.none())
      expect(ids(yield* objects.list(other.organization.id, sql`true`, { includeDeleted: true }))).toEqual([])
    }))

  it.effect("ContentsRepository: config objects in plugins and plugins in marketplaces, removed and added again", () =>
    Effect.gen(function*() {
      const contents = yield* ContentsRepository
      const objects = yield* ConfigObjectsRepository
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const a = yield* objectWith(organization, owner, "context", "Alpha")
      const b = yield* objectWith(organization, owner, "context", "Beta")
      const plugin = yield* insertPlugin(organization, "Tools")
      const gone = yield* insertPlugin(organization, "Gone", true)
      const pairs = [{ pluginId: plugin, configObjectId: b.id }, { pluginId: plugin, configObjectId: a.id }]
      const added = yield* contents.addConfigObjects({ organizationId: organization.id, pairs, source: "manual", createdBy: owner.membership.id, at: Members.at })
      expect(added.length).toBe(2)
      expect(added.every((id) => id.startsWith("pco_"))).toBe(true)
      expect(yield* contents.addConfigObjects({ organizationId: organization.id, pairs: [], source: "manual", createdBy: null, at: Members.at })).toEqual([])
      expect(yield* contents.removeConfigObject({ organizationId: organization.id, pluginId: plugin, configObjectId: a.id, at: later(1) })).toBe(true)
      expect(yield* contents.removeConfigObject({ organizationId: organization.id, pluginId: plugin, configObjectId: a.id, at: later(1) })).toBe(false)
      const inPlugin = () =>
        Effect.map(objects.list(organization.id, sql`true`, { pluginId: plugin }), (page) => page.items.map((object) => object.id).sort())
      expect(yield* inPlugin()).toEqual([b.id])
      // Adding again keeps the membership's id, in the order of the pairs asked.
      const again = yield* contents.addConfigObjects({
        organizationId: organization.id,
        pairs: [{ pluginId: plugin, configObjectId: a.id }, { pluginId: plugin, configObjectId: b.id }],
        source: "system",
        createdBy: null,
        at: later(2)
      })
      expect(again).toEqual([added[1], added[0]])
      expect(yield* inPlugin()).toEqual([a.id, b.id].sort())

      const checks = yield* objects.pluginsForMembership(organization.id, [gone, plugin], sql`3`)
      expect(checks).toEqual([{ id: gone, deleted: true, rank: 3 }, { id: plugin, deleted: false, rank: 3 }].sort((x, y) => (x.id < y.id ? -1 : 1)))
      expect(yield* objects.pluginsForMembership(Members.organizationId(), [plugin], sql`3`)).toEqual([])

      const marketplace = newId(MarketplaceId, "mkt")
      yield* sql`INSERT INTO marketplaces (id, organization_id, name, description, status, created_at, updated_at)
                 VALUES (${marketplace}, ${organization.id}, 'Market', '', 'active', ${Members.at}, ${Members.at})`
      const listed = yield* contents.addPlugin({ organizationId: organization.id, marketplaceId: marketplace, pluginId: plugin, source: "manual", createdBy: owner.membership.id, at: Members.at })
      expect(listed).toMatch(/^mkp_/)
      expect(yield* contents.removePlugin({ organizationId: organization.id, marketplaceId: marketplace, pluginId: plugin, at: later(1) })).toBe(true)
      expect(yield* contents.removePlugin({ organizationId: organization.id, marketplaceId: marketplace, pluginId: plugin, at: later(1) })).toBe(false)
      expect(yield* contents.addPlugin({ organizationId: organization.id, marketplaceId: marketplace, pluginId: plugin, source: "manual", createdBy: null, at: later(2) })).toBe(listed)
      const active = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM marketplace_plugins
                                                 WHERE organization_id = ${organization.id} AND removed_at IS NULL`
      expect(active[0]?.n).toBe(1)
    }))

  it.effect("PluginsRepository: a plugin whole (members, marketplaces, manifest), listed, changed, deleted; names unique among live ones", () =>
    Effect.gen(function*() {
      const plugins = yield* PluginsRepository
      const contents = yield* ContentsRepository
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const id = newId(PluginId, "plg")
      yield* plugins.insert({ id, organizationId: organization.id, name: "Release Tools", description: "Ships it.", createdByMembershipId: owner.membership.id, at: Members.at })
      expect(yield* Effect.flip(plugins.insert({ id: newId(PluginId, "plg"), organizationId: organization.id, name: "release tools", description: "", createdByMembershipId: null, at: Members.at }))).toMatchObject({
        _tag: "Conflict",
        error: "plugin_exists"
      })
      const skill = yield* objectWith(organization, owner, "skill", "---\nname: ship\ndescription: Ships.\n---\nShip.\n")
      const context = yield* objectWith(organization, owner, "context", "Notes")
      const [first] = yield* contents.addConfigObjects({
        organizationId: organization.id,
        pairs: [{ pluginId: id, configObjectId: skill.id }, { pluginId: id, configObjectId: context.id }],
        source: "manual",
        createdBy: owner.membership.id,
        at: Members.at
      })
      const marketplace = newId(MarketplaceId, "mkt")
      yield* sql`INSERT INTO marketplaces (id, organization_id, name, description, status, created_at, updated_at)
                 VALUES (${marketplace}, ${organization.id}, 'Internal', '', 'active', ${Members.at}, ${Members.at})`
      yield* contents.addPlugin({ organizationId: organization.id, marketplaceId: marketplace, pluginId: id, source: "manual", createdBy: null, at: Members.at })
      yield* plugins.setSourceMetadata(organization.id, id, { version: "1.0.0", author: "Ada", authorEmail: null, authorUrl: null, homepage: null, repository: null, license: "MIT", keywords: ["release_tools"], category: null })

      const plugin = Option.getOrThrow(yield* plugins.find(organization.id, id))
      expect(plugin).toMatchObject({
        id,
        organizationId: organization.id,
        name: "Release Tools",
        description: "Ships it.",
        status: "active",
        createdByOrgMembershipId: owner.membership.id,
        memberCount: 2,
        marketplaces: [{ id: marketplace, name: "Internal" }],
        skippedFiles: [],
        sourceMetadata: { version: "1.0.0", author: "Ada", license: "MIT", keywords: ["release_tools"] }
      })
      expect(plugin.extension.manifest.resources).toEqual([
        { configObjectId: skill.id, objectType: "skill", title: "ship", versionId: skill.versionId },
        { configObjectId: context.id, objectType: "context", title: "Notes", versionId: context.versionId }
      ])
      expect(plugin.extension.manifest.contributions).toEqual([
        { objectType: "skill", configObjectIds: [skill.id] },
        { objectType: "context", configObjectIds: [context.id] }
      ])
      expect(Option.map(yield* plugins.view(organization.id, id, sql`2`), (found) => found.rank)).toEqual(Option.some(2))
      expect(yield* plugins.lock(organization.id, id)).toEqual(Option.some({ name: "Release Tools", status: "active" }))

      const memberships = yield* plugins.listMemberships(organization.id, id, { limit: 1 })
      expect(memberships.items.map((row) => row.configObjectId)).toEqual([skill.id])
      expect(memberships.nextCursor).not.toBeNull()
      expect(Option.getOrThrow(yield* plugins.findMembership(organization.id, first))).toMatchObject({
        pluginId: id,
        configObjectId: skill.id,
        membershipSource: "manual",
        createdByOrgMembershipId: owner.membership.id,
        removedAt: null
      })

      const other = newId(PluginId, "plg")
      yield* plugins.insert({ id: other, organizationId: organization.id, name: "Audit", description: "", createdByMembershipId: null, at: Members.at })
      const names = (page: { readonly items: ReadonlyArray<{ readonly name: string }> }) => page.items.map((item) => item.name)
      expect(names(yield* plugins.list(organization.id, {}, sql`true`))).toEqual(["Audit", "Release Tools"])
      expect(names(yield* plugins.list(organization.id, { q: "ships" }, sql`true`))).toEqual(["Release Tools"])
      expect(names(yield* plugins.list(organization.id, { marketplaceId: marketplace }, sql`true`))).toEqual(["Release Tools"])
      expect(names(yield* plugins.list(organization.id, {}, sql`p.name = 'Audit'`))).toEqual(["Audit"])

      yield* plugins.update(organization.id, other, { description: "Audits." }, later(1))
      expect(yield* Effect.flip(plugins.update(organization.id, other, { name: "RELEASE TOOLS" }, later(1)))).toMatchObject({ error: "plugin_exists" })
      yield* plugins.markDeleted(organization.id, id, later(2))
      expect(names(yield* plugins.list(organization.id, {}, sql`true`))).toEqual(["Audit"])
      expect(names(yield* plugins.list(organization.id, { includeDeleted: true }, sql`true`))).toEqual(["Audit", "Release Tools"])
      // A deleted plugin's name is free; restoring it while another has the name is a conflict.
      yield* plugins.update(organization.id, other, { name: "Release tools" }, later(3))
      expect(yield* Effect.flip(plugins.setStatus(organization.id, id, "Release Tools", "active", later(4)))).toMatchObject({
        _tag: "Conflict",
        error: "plugin_exists",
        message: 'The organization already has a plugin named "Release Tools".'
      })
      yield* plugins.update(organization.id, other, { name: "Audit" }, later(5))
      yield* plugins.setStatus(organization.id, id, "Release Tools", "archived", later(6))
      expect(Option.getOrThrow(yield* plugins.find(organization.id, id))).toMatchObject({ status: "archived", deletedAt: null, updatedAt: later(6) })

      expect(yield* plugins.find(Members.organizationId(), id)).toEqual(Option.none())
      expect(yield* plugins.lock(Members.organizationId(), id)).toEqual(Option.none())
      expect(names(yield* plugins.list(Members.organizationId(), { includeDeleted: true }, sql`true`))).toEqual([])
    }))

  it.effect("MarketplacesRepository: a marketplace with its plugin count, its listed plugins, memberships, changed and deleted", () =>
    Effect.gen(function*() {
      const marketplaces = yield* MarketplacesRepository
      const plugins = yield* PluginsRepository
      const contents = yield* ContentsRepository
      const sql = yield* SqlClient.SqlClient
      const { organization, owner } = yield* staffed()
      const id = newId(MarketplaceId, "mkt")
      yield* marketplaces.insert({ id, organizationId: organization.id, name: "Internal", description: "Ours.", logoUrl: null, createdByMembershipId: owner.membership.id, at: Members.at })
      expect(yield* Effect.flip(marketplaces.insert({ id: newId(MarketplaceId, "mkt"), organizationId: organization.id, name: "INTERNAL", description: "", logoUrl: null, createdByMembershipId: null, at: Members.at }))).toMatchObject({
        _tag: "Conflict"
      })
      const kept = yield* insertPlugin(organization, "Zeta")
      const dropped = yield* insertPlugin(organization, "alpha")
      const membershipId = yield* contents.addPlugin({ organizationId: organization.id, marketplaceId: id, pluginId: kept, source: "manual", createdBy: owner.membership.id, at: Members.at })
      yield* contents.addPlugin({ organizationId: organization.id, marketplaceId: id, pluginId: dropped, source: "manual", createdBy: null, at: later(1) })
      expect(Option.getOrThrow(yield* marketplaces.find(organization.id, id))).toMatchObject({
        id,
        name: "Internal",
        description: "Ours.",
        logoUrl: null,
        status: "active",
        canDelete: true,
        pluginCount: 2,
        createdByOrgMembershipId: owner.membership.id
      })
      expect((yield* marketplaces.listedPlugins(organization.id, id)).map((plugin) => plugin.name)).toEqual(["alpha", "Zeta"])
      yield* plugins.markDeleted(organization.id, dropped, later(2))
      expect((yield* marketplaces.listedPlugins(organization.id, id)).map((plugin) => plugin.name)).toEqual(["Zeta"])
      expect(Option.getOrThrow(yield* marketplaces.find(organization.id, id)).pluginCount).toBe(1)
      expect(Option.map(yield* marketplaces.view(organization.id, id, sql`1`), (found) => found.rank)).toEqual(Option.some(1))

      const page = yield* marketplaces.listMemberships(organization.id, id, { limit: 1 })
      expect(page.items.map((membership) => membership.pluginId)).toEqual([kept])
      expect(page.items[0]?.plugin.name).toBe("Zeta")
      expect(page.nextCursor).not.toBeNull()
      expect(Option.getOrThrow(yield* marketplaces.findMembership(organization.id, membershipId))).toMatchObject({
        id: membershipId,
        marketplaceId: id,
        pluginId: kept,
        membershipSource: "manual",
        createdByOrgMembershipId: owner.membership.id,
        removedAt: null
      })
      expect(yield* marketplaces.source(organization.id, id)).toEqual(Option.none())

      const names = (result: { readonly items: ReadonlyArray<{ readonly name: string }> }) => result.items.map((item) => item.name)
      yield* marketplaces.insert({ id: newId(MarketplaceId, "mkt"), organizationId: organization.id, name: "Beta", description: "", logoUrl: null, createdByMembershipId: null, at: Members.at })
      expect(names(yield* marketplaces.list(organization.id, {}, sql`true`))).toEqual(["Beta", "Internal"])
      expect(names(yield* marketplaces.list(organization.id, { q: "ours" }, sql`true`))).toEqual(["Internal"])
      yield* marketplaces.markDeleted(organization.id, id, later(3))
      expect(names(yield* marketplaces.list(organization.id, {}, sql`true`))).toEqual(["Beta"])
      expect(names(yield* marketplaces.list(organization.id, { includeDeleted: true }, sql`true`))).toEqual(["Beta", "Internal"])
      expect(yield* marketplaces.find(Members.organizationId(), id)).toEqual(Option.none())
      expect(yield* marketplaces.listedPlugins(Members.organizationId(), id)).toEqual([])
    }))

  it.effect("ComponentFiles: a version's list and a file's bytes for viewers of the object; 404 for another version or path", () =>
    Effect.gen(function*() {
      const service = yield* ComponentFiles
      const files = yield* ComponentFilesRepository
      const { organization, owner } = yield* staffed()
      const member = Members.member(organization, "member")
      yield* Members.seed(member)
      const skill = yield* objectWith(organization, owner, "skill", "---\nname: fmt\ndescription: Formats.\n---\nRun it.\n")
      const other = yield* objectWith(organization, owner, "context", "Other")
      const bytes = new TextEncoder().encode("fmt\n")
      const sha256 = NodeCrypto.createHash("sha256").update(bytes).digest("hex")
      yield* files.storeContent({ organizationId: organization.id, sha256, content: bytes, at: Members.at })
      yield* files.insertList(organization.id, skill.versionId, [
        { path: "SKILL.md", kind: "entry", size: 10, sha256: null, mediaType: "text/markdown", omitted: null, executable: false },
        { path: "bin/fmt", kind: "file", size: bytes.byteLength, sha256, mediaType: "application/octet-stream", omitted: null, executable: true }
      ])
      const listed = yield* service.list(owner, skill.id, skill.versionId)
      expect(listed.configObjectId).toBe(skill.id)
      expect(listed.versionId).toBe(skill.versionId)
      expect(listed.items.map((file) => [file.path, file.executable])).toEqual([["SKILL.md", false], ["bin/fmt", true]])
      expect(new TextDecoder().decode((yield* service.content(owner, skill.id, skill.versionId, "bin/fmt")).content)).toBe("fmt\n")
      const refusal = (error: object) => ({ ...error, ..."message" in error ? { message: error.message } : {} })
      expect(refusal(yield* Effect.flip(service.content(owner, skill.id, skill.versionId, "SKILL.md")))).toEqual({
        _tag: "NotFound",
        error: "config_object_file_not_found",
        message: "The version stores no file at this path (an entry's content is the version's rawSourceText; omitted files are not stored)."
      })
      expect(refusal(yield* Effect.flip(service.list(owner, other.id, skill.versionId)))).toEqual({
        _tag: "NotFound",
        error: "config_object_version_not_found",
        message: "Config object version not found."
      })
      expect(yield* Effect.flip(service.list(member, skill.id, skill.versionId))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_access" })
      const elsewhere = yield* staffed()
      expect(yield* Effect.flip(service.list(elsewhere.owner, skill.id, skill.versionId))).toMatchObject({ error: "config_object_not_found" })
    }))

  it.effect("ComponentFilesRepository: bytes stored once, a version's list entry first then by path, its files' bytes", () =>
    Effect.gen(function*() {
      const files = yield* ComponentFilesRepository
      const { organization, owner } = yield* staffed()
      const skill = yield* objectWith(organization, owner, "skill", "---\nname: lint\ndescription: Lints.\n---\nRun it.\n")
      const bytes = new TextEncoder().encode("#!/bin/sh\necho lint\n")
      const sha256 = NodeCrypto.createHash("sha256").update(bytes).digest("hex")
      yield* files.storeContent({ organizationId: organization.id, sha256, content: bytes, at: Members.at })
      yield* files.storeContent({ organizationId: organization.id, sha256, content: bytes, at: later(1) })
      yield* files.insertList(organization.id, skill.versionId, [
        { path: "scripts/lint.sh", kind: "file", size: bytes.byteLength, sha256, mediaType: "text/x-shellscript", omitted: null, executable: true },
        { path: "Z.md", kind: "file", size: 10_000_000, sha256: null, mediaType: "text/markdown", omitted: "too_large", executable: false },
        { path: "SKILL.md", kind: "entry", size: 40, sha256: null, mediaType: "text/markdown", omitted: null, executable: false }
      ])
      yield* files.insertList(organization.id, skill.versionId, [])
      const list = yield* files.listOf(organization.id, skill.versionId)
      expect(list.map((file) => [file.path, file.kind])).toEqual([["SKILL.md", "entry"], ["Z.md", "file"], ["scripts/lint.sh", "file"]])
      expect(list[2]).toMatchObject({ size: bytes.byteLength, sha256, mediaType: "text/x-shellscript", omitted: null })
      expect((yield* files.latestListOf(organization.id, skill.id)).map((file) => file.path)).toEqual(["SKILL.md", "Z.md", "scripts/lint.sh"])
      const content = Option.getOrThrow(yield* files.contentOf(organization.id, skill.versionId, "scripts/lint.sh"))
      expect(content.sha256).toBe(sha256)
      expect(content.mediaType).toBe("text/x-shellscript")
      expect(new TextDecoder().decode(content.content)).toBe("#!/bin/sh\necho lint\n")
      expect(yield* files.contentOf(organization.id, skill.versionId, "Z.md")).toEqual(Option.none())
      expect(yield* files.contentOf(organization.id, skill.versionId, "SKILL.md")).toEqual(Option.none())
      expect(yield* files.contentOf(Members.organizationId(), skill.versionId, "scripts/lint.sh")).toEqual(Option.none())
      expect(yield* files.listOf(Members.organizationId(), skill.versionId)).toEqual([])
    }))
})
