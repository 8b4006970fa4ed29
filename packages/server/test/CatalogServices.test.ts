/**
 * The catalog's services (ConfigObjects, Plugins, Marketplaces) on a fresh migrated database (the embedded one, or
 * Postgres with DATABASE_URL): what http/ConfigObjects.test.ts, Plugins.test.ts and Marketplaces.test.ts check
 * through HTTP that lives in the services, called as the handlers call them, with requests and queries decoded
 * by the API's schemas as the HTTP layer decodes them. Versions (create, new version, list, read one), the lifecycle
 * (archive, restore, soft delete), memberships (config objects in plugins, plugins in marketplaces), the resolved
 * marketplace, names that conflict, grants and what they allow, paging and filters, and another organization's
 * resources answering 404. The errors are held word for word, as the API answers them.
 */
import { expect, layer } from "@effect/vitest"
import {
  type ConfigObjectId,
  type MemberContext,
  MarketplaceAccessGrantId,
  type Organization,
  PluginAccessGrantId,
  PluginId,
  type Role
} from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { Access, ConfigObjectKind } from "../src/access/Access.js"
import { ConfigObjects } from "../src/catalog/ConfigObjects.js"
import { Marketplaces } from "../src/catalog/Marketplaces.js"
import { Plugins } from "../src/catalog/Plugins.js"
import { Teams } from "../src/teams/Teams.js"
import * as Catalog from "./support/Catalog.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const {
  createObject,
  newVersion,
  objectsQuery,
  versionsQuery,
  createPlugin,
  updatePlugin,
  pluginsQuery,
  membershipsQuery,
  createMarketplace,
  updateMarketplace,
  marketplacesQuery,
  grantRequest,
  grantsQuery,
  plain,
  failure,
  unique,
  idsOf
} = Catalog

const newId = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, prefix: string): S["Type"] =>
  Schema.decodeUnknownSync(schema)(Db.newId(prefix))

/** Fails as `expected` says, to the word. */
const refused = <A, E extends object, R>(effect: Effect.Effect<A, E, R>, expected: object) =>
  Effect.map(failure(effect), (error) => expect(error).toEqual(expected))

/** An organization with an owner, an admin and a member, their rows written. */
const staffed = Effect.fn("CatalogServices.staffed")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  const admin = Members.member(organization, "admin")
  const member = Members.member(organization, "member")
  yield* Members.seed(owner, admin, member)
  return { organization, owner, admin, member }
})

/** One more person of `organization`. */
const join = Effect.fn("CatalogServices.join")(function*(organization: Organization, role: Role = "member") {
  const person = Members.member(organization, role)
  yield* Members.seed(person)
  return person
})

/** Another organization with its owner. */
const elsewhere = Effect.fn("CatalogServices.elsewhere")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  yield* Members.seed(owner)
  return owner
})


const SKILL = "---\nname: deploy-to-staging\ndescription: Deploys the app to staging.\n---\n# Deploy\n\nRun `make deploy`.\n"

const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

/** What a config object of `type` titled `title` is made from. */
const sourceOf = (type: string, title: string, revision = 1): Record<string, unknown> => {
  switch (type) {
    case "skill":
    case "agent":
    case "command":
      return { rawSourceText: `---\nname: ${slug(title)}\ndescription: ${title} (revision ${revision}).\n---\n# ${title}\n` }
    case "mcp":
      return { normalizedPayloadJson: { mcpServers: { [slug(title)]: { url: `https://example.com/mcp/${revision}` } } }, metadata: { title } }
    case "hook":
      return { normalizedPayloadJson: { name: slug(title), on: ["pre_commit"], revision } }
    default:
      return { rawSourceText: `${title} ${revision}`, metadata: { title } }
  }
}

/** A config object made through the service, with `versions` versions, then archived or deleted when asked. */
const configObject = Effect.fn("CatalogServices.configObject")(function*(
  who: MemberContext,
  input: { readonly type: string; readonly title: string; readonly status?: "active" | "archived" | "deleted"; readonly versions?: number }
) {
  const objects = yield* ConfigObjects
  const { item } = yield* objects.create(who, createObject({ input: { objectType: input.type, ...sourceOf(input.type, input.title) } }))
  for (let revision = 2; revision <= (input.versions ?? 1); revision++) {
    yield* objects.createVersion(who, item.id, newVersion({ input: sourceOf(input.type, input.title, revision) }))
  }
  if (input.status === "archived") yield* objects.archive(who, item.id)
  if (input.status === "deleted") yield* objects.remove(who, item.id)
  const read = (yield* objects.get(who, item.id)).item
  return { id: read.id, latestVersionId: read.latestVersion.id, title: read.title }
})

/** A plugin written with SQL (no creator, no grant); `deleted` soft-deletes it. */
const insertPlugin = Effect.fn("CatalogServices.insertPlugin")(function*(organization: Organization, options: { readonly deleted?: boolean } = {}) {
  const sql = yield* SqlClient.SqlClient
  const id = newId(PluginId, "plg")
  const at = new Date()
  yield* sql`INSERT INTO plugins ${
    sql.insert({
      id,
      organizationId: organization.id,
      name: `Plugin ${id}`,
      description: "",
      status: options.deleted ? "deleted" : "active",
      createdAt: at,
      updatedAt: at,
      deletedAt: options.deleted ? at : null
    })
  }`
  return id
})

const newPlugin = Effect.fn("CatalogServices.newPlugin")(function*(who: MemberContext, name = `Plugin ${unique()}`) {
  const plugins = yield* Plugins
  return (yield* plugins.create(who, createPlugin({ name }))).item
})

const newMarketplace = Effect.fn("CatalogServices.newMarketplace")(function*(who: MemberContext, name = `Market ${unique()}`) {
  const marketplaces = yield* Marketplaces
  return (yield* marketplaces.create(who, createMarketplace({ name }))).item
})

/** Rows for one `sql.insert`, which takes at least one. */
const rowsOf = <A extends Record<string, unknown>>(rows: ReadonlyArray<A>) =>
  Arr.isReadonlyArrayNonEmpty(rows) ? Effect.succeed(rows) : Effect.die(new Error("no rows to insert"))

const insufficient = (role: string, kind: string) => ({ _tag: "Forbidden", reason: "insufficient_access", message: `Missing ${role} access for ${kind}.` })

layer(Catalog.layer, { timeout: 600_000, excludeTestServices: true })(`catalog services on ${TestDatabase.kind}`, (it) => {
  // Config objects ---------------------------------------------------------------------------------------------------

  it.effect("config objects: created with the spec's fields and latest version; the creator manages it", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const access = yield* Access
      const { member, organization } = yield* staffed()
      const created = yield* objects.create(member, createObject({ input: { objectType: "skill", rawSourceText: SKILL, relativePath: "skills/deploy/SKILL.md" } }))
      expect(created.ok).toBe(true)
      const item = created.item
      expect(item.id).toMatch(/^cob_[0-9a-z]{26}$/)
      expect(item).toMatchObject({
        organizationId: organization.id,
        objectType: "skill",
        sourceMode: "cloud",
        status: "active",
        title: "deploy-to-staging",
        description: "Deploys the app to staging.",
        searchText: "deploy-to-staging\nDeploys the app to staging.\n# Deploy\n\nRun `make deploy`.",
        currentFileName: "SKILL.md",
        currentFileExtension: "md",
        currentRelativePath: "skills/deploy/SKILL.md",
        createdByOrgMembershipId: member.membership.id,
        connectorInstanceId: null,
        updatedAt: item.createdAt,
        deletedAt: null
      })
      expect(item.latestVersion.id).toMatch(/^cov_[0-9a-z]{26}$/)
      expect(item.latestVersion).toMatchObject({
        configObjectId: item.id,
        number: 1,
        schemaVersion: "1",
        parserMode: "markdown",
        normalizedPayloadJson: {
          frontmatter: { name: "deploy-to-staging", description: "Deploys the app to staging." },
          body: "# Deploy\n\nRun `make deploy`."
        },
        rawSourceText: SKILL,
        metadata: null,
        createdVia: "cloud",
        createdByOrgMembershipId: member.membership.id,
        sourceRevisionRef: null,
        isDeletedVersion: false,
        createdAt: item.createdAt
      })
      expect(yield* objects.get(member, item.id)).toEqual({ item })
      const grants = yield* access.listGrants(member, ConfigObjectKind, item.id, grantsQuery({}))
      expect(grants.items).toEqual([
        expect.objectContaining({ orgMembershipId: member.membership.id, role: "manager", orgWide: false, teamId: null, removedAt: null })
      ])
    }))

  it.effect("config objects: JSON content kept as written, member names and their order; an object's pretty JSON its source", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const { owner } = yield* staffed()
      const source = '{"mcpServers": {"zeta": {"url": "https://z.example.com"}, "alpha_one": {"command": "npx", "env": {"API_KEY_NAME": "x"}}}}'
      const { item } = yield* objects.create(owner, createObject({ input: { objectType: "mcp", rawSourceText: source, metadata: { title: "Servers", some_key: 1 } } }))
      expect(item.title).toBe("Servers")
      expect(item.latestVersion.parserMode).toBe("json")
      expect(item.latestVersion.rawSourceText).toBe(source)
      expect(JSON.stringify(item.latestVersion.normalizedPayloadJson)).toBe(JSON.stringify(JSON.parse(source)))
      expect(item.latestVersion.metadata).toEqual({ title: "Servers", some_key: 1 })
      const read = yield* objects.get(owner, item.id)
      expect(JSON.stringify(read.item.latestVersion.normalizedPayloadJson)).toBe(JSON.stringify(JSON.parse(source)))

      const fromObject = (yield* objects.create(owner, createObject({
        input: { objectType: "hook", normalizedPayloadJson: { name: "lint", on: ["pre_commit"] }, schemaVersion: "2" }
      }))).item
      expect(fromObject.latestVersion).toMatchObject({
        parserMode: "json",
        schemaVersion: "2",
        rawSourceText: '{\n  "name": "lint",\n  "on": [\n    "pre_commit"\n  ]\n}',
        normalizedPayloadJson: { name: "lint", on: ["pre_commit"] }
      })
      expect(fromObject.title).toBe("lint")
    }))

  it.effect("config objects: invalid content refused with each code and the path of the bad member; a connector source refused; nothing written", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const { owner } = yield* staffed()
      const create = (input: Record<string, unknown>) => Effect.flip(objects.create(owner, createObject({ input })))
      const cases: ReadonlyArray<readonly [string, ReadonlyArray<{ code: string; path: ReadonlyArray<string> }>]> = [
        ["# No front matter\n", [{ code: "invalid_skill_frontmatter", path: ["input", "rawSourceText", "frontmatter"] }]],
        ["---\nname: Deploy Now\ndescription: ok\n---\nbody\n", [{ code: "invalid_skill_name", path: ["input", "rawSourceText", "frontmatter", "name"] }]],
        [`---\nname: deploy\ndescription: "${"x".repeat(1025)}"\n---\nbody\n`, [{
          code: "invalid_skill_description",
          path: ["input", "rawSourceText", "frontmatter", "description"]
        }]],
        ["---\nname: deploy\ndescription: ok\n---\n\n  \n", [{ code: "invalid_skill_body", path: ["input", "rawSourceText", "body"] }]]
      ]
      for (const [source, expected] of cases) {
        const error = yield* create({ objectType: "skill", rawSourceText: source })
        expect(error._tag).toBe("InvalidRequest")
        if (error._tag !== "InvalidRequest") continue
        expect(error.error).toBe("invalid_request")
        expect(error.details.map(({ code, path }) => ({ code, path }))).toEqual(expected)
        expect(error.details[0]?.message).toEqual(expect.any(String))
      }
      const viaObject = yield* create({ objectType: "skill", normalizedPayloadJson: { frontmatter: { name: "a" }, body: "b" } })
      expect(viaObject).toMatchObject({ _tag: "InvalidRequest", details: [{ code: "invalid_skill_source", path: ["input", "normalizedPayloadJson"] }] })
      const badMcp = yield* create({ objectType: "mcp", rawSourceText: '{"mcpServers": {"x": {"port": 1}}}' })
      expect(badMcp).toMatchObject({ _tag: "InvalidRequest", details: [{ code: "invalid_mcp_server", path: ["input", "rawSourceText", "mcpServers", "x"] }] })
      expect("details" in badMcp ? badMcp.details : []).toHaveLength(1)
      const yamlNul = yield* create({ objectType: "hook", rawSourceText: 'command: "a\\0b"', parserMode: "yaml" })
      expect(yamlNul).toMatchObject({ _tag: "InvalidRequest", details: [{ code: "invalid_character", path: ["input", "rawSourceText", "command"] }] })
      // `connector` is a value of the spec's enumeration (the document offers it), not one a person creates with.
      const connector = yield* create({ objectType: "context", rawSourceText: "a", sourceMode: "connector" })
      expect(plain(connector)).toEqual({
        _tag: "InvalidRequest",
        error: "invalid_request",
        details: [{
          path: ["input", "sourceMode"],
          message: "is `connector`: connector-sourced config objects come from a connector sync (POST /v1/connector-instances/{id}/sync), not a direct create; use `cloud` or `import`"
        }],
        message: expect.any(String)
      })
      expect((yield* objects.list(owner, objectsQuery({}))).items).toEqual([])
    }))

  it.effect("config objects: a source under 1 MiB is taken whole, its search text clamped; nesting too deep is refused", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const { owner } = yield* staffed()
      const big = (yield* objects.create(owner, createObject({ input: { objectType: "context", rawSourceText: "é".repeat(500_000) } }))).item
      expect(new TextEncoder().encode(big.searchText).length).toBeLessThanOrEqual(60_000)
      expect(big.latestVersion.rawSourceText?.length).toBe(500_000)
      const deep = yield* Effect.flip(objects.create(owner, createObject({ input: { objectType: "hook", rawSourceText: "[".repeat(1000) + "]".repeat(1000) } })))
      expect(deep._tag).toBe("InvalidRequest")
      expect(idsOf(yield* objects.list(owner, objectsQuery({})))).toEqual([big.id])
    }))

  it.effect("config objects: plugin ids the organization's, not deleted, editable by the caller; then the object is added to each", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const plugins = yield* Plugins
      const sql = yield* SqlClient.SqlClient
      const { admin, member, organization, owner } = yield* staffed()
      const other = yield* elsewhere()
      const input = { objectType: "context", rawSourceText: "Shared notes" }
      const mine = yield* insertPlugin(organization)

      // The spec lists no 404 or 409 for this operation: each bad id is a 400 on its place in `pluginIds`.
      const stranger = newId(PluginId, "plg")
      expect(yield* failure(objects.create(owner, createObject({ input, pluginIds: [mine, stranger] })))).toEqual({
        _tag: "InvalidRequest",
        error: "invalid_request",
        details: [{ path: ["pluginIds", 1], message: `${stranger} is not a plugin of this organization`, code: "plugin_not_found" }],
        message: expect.any(String)
      })
      const theirs = yield* insertPlugin(other.organization)
      const gone = yield* insertPlugin(organization, { deleted: true })
      const foreignAndDeleted = yield* Effect.flip(objects.create(owner, createObject({ input, pluginIds: [theirs, mine, gone, theirs] })))
      expect(foreignAndDeleted).toMatchObject({
        _tag: "InvalidRequest",
        details: [
          { path: ["pluginIds", 0], message: `${theirs} is not a plugin of this organization`, code: "plugin_not_found" },
          { path: ["pluginIds", 2], message: `${gone} is a deleted plugin: restore it first`, code: "plugin_deleted" },
          { path: ["pluginIds", 3], message: `${theirs} is not a plugin of this organization`, code: "plugin_not_found" }
        ]
      })
      expect(yield* failure(objects.create(member, createObject({ input, pluginIds: [mine] })))).toEqual(insufficient("editor", "plugin"))
      yield* plugins.grant(owner, mine, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))
      expect(yield* failure(objects.create(member, createObject({ input, pluginIds: [mine] })))).toEqual(insufficient("editor", "plugin"))
      // Nothing was written by the refusals.
      expect((yield* objects.list(owner, objectsQuery({}))).items).toEqual([])

      yield* plugins.grant(owner, mine, grantRequest({ orgMembershipId: admin.membership.id, role: "editor" }))
      const second = yield* insertPlugin(organization)
      const { item } = yield* objects.create(owner, createObject({ input, pluginIds: [mine, second, mine] }))
      const rows = yield* sql<{ pluginId: string; membershipSource: string }>`SELECT plugin_id, membership_source FROM plugin_config_objects
        WHERE organization_id = ${organization.id} AND config_object_id = ${item.id} ORDER BY plugin_id`
      expect(rows).toEqual([mine, second].sort().map((pluginId) => ({ pluginId, membershipSource: "manual" })))
      expect(idsOf(yield* objects.list(owner, objectsQuery({ pluginId: second })))).toEqual([item.id])
      // The member views it through the plugin they can view.
      expect((yield* objects.get(member, item.id)).item.id).toBe(item.id)
    }))

  it.effect("config objects: versions immutable and numbered; a new one re-derives the object; listed newest first, paged, read one by one", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const { owner } = yield* staffed()
      const { item } = yield* objects.create(owner, createObject({ input: { objectType: "context", rawSourceText: "# First\nabout one" } }))
      const added = yield* objects.createVersion(owner, item.id, newVersion({ input: { rawSourceText: "# Second\nabout two", metadata: { note: 1 } }, reason: "rewrote it" }))
      expect(added.ok).toBe(true)
      expect(added.item).toMatchObject({ id: item.id, title: "Second", description: "about two", createdAt: item.createdAt })
      expect(added.item.updatedAt.getTime()).toBeGreaterThanOrEqual(item.updatedAt.getTime())
      expect(added.item.latestVersion).toMatchObject({ number: 2, sourceRevisionRef: "rewrote it", createdVia: "cloud", metadata: { note: 1 } })

      expect(yield* objects.getVersion(owner, item.id, item.latestVersion.id)).toEqual({ item: item.latestVersion })
      const versions = yield* objects.listVersions(owner, item.id, versionsQuery({}))
      expect(versions.items.map((version) => version.number)).toEqual([2, 1])
      expect(versions.items[1]).toEqual(item.latestVersion)
      const onePage = yield* objects.listVersions(owner, item.id, versionsQuery({ limit: "1" }))
      expect(onePage.items.map((version) => version.number)).toEqual([2])
      expect(yield* objects.listVersions(owner, item.id, versionsQuery({ limit: "1", cursor: onePage.nextCursor }))).toEqual({
        items: [item.latestVersion],
        nextCursor: null
      })

      const bad = yield* Effect.flip(objects.createVersion(owner, item.id, newVersion({ input: { rawSourceText: "- a list", parserMode: "yaml" } })))
      expect(bad).toMatchObject({ _tag: "InvalidRequest", details: [{ code: "invalid_yaml", path: ["input", "rawSourceText"] }] })
      expect((yield* objects.listVersions(owner, item.id, versionsQuery({}))).items).toHaveLength(2)
      const skill = (yield* objects.create(owner, createObject({ input: { objectType: "skill", rawSourceText: SKILL } }))).item
      const badSkill = yield* Effect.flip(objects.createVersion(owner, skill.id, newVersion({ input: { rawSourceText: "no front matter" } })))
      expect(badSkill).toMatchObject({ details: [{ code: "invalid_skill_frontmatter", path: ["input", "rawSourceText", "frontmatter"] }] })
      expect(yield* failure(objects.getVersion(owner, item.id, skill.latestVersion.id))).toEqual({
        _tag: "NotFound",
        error: "config_object_version_not_found",
        message: "Config object version not found."
      })
    }))

  it.effect("config objects: delete adds a deletion version, twice changes nothing; restore adds the content back; archive keeps it listed", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const { owner } = yield* staffed()
      const { item } = yield* objects.create(owner, createObject({ input: { objectType: "agent", rawSourceText: "---\nname: reviewer\n---\nReview code." } }))
      const deleted = yield* objects.remove(owner, item.id)
      expect(deleted.ok).toBe(true)
      expect(deleted.item).toMatchObject({ status: "deleted", title: "reviewer" })
      expect(deleted.item.deletedAt).toBeInstanceOf(Date)
      expect(deleted.item.latestVersion).toMatchObject({
        number: 2,
        isDeletedVersion: true,
        normalizedPayloadJson: null,
        rawSourceText: null,
        metadata: null,
        schemaVersion: "1",
        parserMode: "markdown"
      })
      expect((yield* objects.remove(owner, item.id)).item).toEqual(deleted.item)

      expect((yield* objects.list(owner, objectsQuery({}))).items).toEqual([])
      expect(idsOf(yield* objects.list(owner, objectsQuery({ includeDeleted: "true" })))).toEqual([item.id])
      expect(idsOf(yield* objects.list(owner, objectsQuery({ status: "deleted" })))).toEqual([item.id])
      expect((yield* objects.listVersions(owner, item.id, versionsQuery({}))).items.map((version) => version.number)).toEqual([1])
      expect((yield* objects.listVersions(owner, item.id, versionsQuery({ includeDeleted: "true" }))).items.map((version) => version.number)).toEqual([2, 1])
      expect(yield* failure(objects.createVersion(owner, item.id, newVersion({ input: { rawSourceText: "x" } })))).toEqual({
        _tag: "Conflict",
        error: "config_object_deleted",
        message: "The config object is deleted; restore it first."
      })
      expect(yield* failure(objects.archive(owner, item.id))).toMatchObject({ _tag: "Conflict", error: "config_object_deleted" })

      const restored = yield* objects.restore(owner, item.id)
      expect(restored.item).toMatchObject({ status: "active", deletedAt: null })
      const { createdAt: _a, id: _b, number: _c, ...content } = item.latestVersion
      expect(restored.item.latestVersion).toMatchObject({ ...content, number: 3, isDeletedVersion: false })
      expect((yield* objects.restore(owner, item.id)).item).toEqual(restored.item)

      const archived = yield* objects.archive(owner, item.id)
      expect(archived.item).toMatchObject({ status: "archived", deletedAt: null })
      expect(archived.item.latestVersion.number).toBe(3)
      expect((yield* objects.list(owner, objectsQuery({}))).items.map((object) => object.status)).toEqual(["archived"])
      const reactivated = yield* objects.restore(owner, item.id)
      expect(reactivated.item).toMatchObject({ status: "active" })
      expect(reactivated.item.latestVersion.number).toBe(3)
    }))

  it.effect("config objects: the list filters by type, status, source mode, connector instance and words of the text; a bad cursor refused", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const { owner } = yield* staffed()
      const create = (input: Record<string, unknown>) => Effect.map(objects.create(owner, createObject({ input })), ({ item }) => item.id)
      const skill = yield* create({ objectType: "skill", rawSourceText: SKILL })
      const notes = yield* create({ objectType: "context", rawSourceText: "Kubernetes rollout notes\nblue-green", sourceMode: "import" })
      const hook = yield* create({ objectType: "hook", rawSourceText: '{"name": "pre-commit lint"}' })
      yield* objects.archive(owner, hook)
      const ids = (query: Record<string, string>) => Effect.map(objects.list(owner, objectsQuery(query)), idsOf)
      expect(yield* ids({})).toEqual([hook, notes, skill])
      expect(yield* ids({ objectType: "skill" })).toEqual([skill])
      expect(yield* ids({ status: "archived" })).toEqual([hook])
      expect(yield* ids({ status: "active" })).toEqual([notes, skill])
      expect(yield* ids({ sourceMode: "import" })).toEqual([notes])
      expect(yield* ids({ connectorInstanceId: Db.newId("cin") })).toEqual([])
      expect(yield* ids({ q: "kube" })).toEqual([notes])
      expect(yield* ids({ q: "ROLLOUT kub" })).toEqual([notes])
      expect(yield* ids({ q: "rollout deploy" })).toEqual([])
      expect(yield* ids({ q: "deploy" })).toEqual([skill])
      expect(yield* ids({ q: "blue-gr" })).toEqual([notes])
      expect(yield* ids({ q: "make" })).toEqual([skill])
      expect(yield* ids({ q: "lint" })).toEqual([hook])
      // tsquery syntax is text here, never an operator or an error.
      for (const q of ["a & b", "!kube", "kube | x", "(kube", "kube:*", "'kube'", "\\", "&|!():*<->"]) yield* ids({ q })
      expect(yield* ids({ q: "!kube" })).toEqual([notes])
      expect(yield* failure(objects.list(owner, objectsQuery({ cursor: "nonsense" })))).toMatchObject({ _tag: "InvalidRequest", details: [{ path: ["cursor"] }] })
    }))

  it.effect("config objects: a member needs a grant: none 403, viewer reads, editor adds versions, manager archives; revoking takes it back", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const access = yield* Access
      const { admin, member, owner } = yield* staffed()
      const { item } = yield* objects.create(owner, createObject({ input: { objectType: "context", rawSourceText: "private" } }))
      expect(yield* failure(objects.get(member, item.id))).toEqual(insufficient("viewer", "config object"))
      expect((yield* objects.list(member, objectsQuery({}))).items).toEqual([])
      expect(idsOf(yield* objects.list(admin, objectsQuery({})))).toEqual([item.id])

      const granted = yield* access.grant(owner, ConfigObjectKind, item.id, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))
      expect((yield* objects.get(member, item.id)).item.id).toBe(item.id)
      expect((yield* objects.listVersions(member, item.id, versionsQuery({}))).items).toHaveLength(1)
      expect(idsOf(yield* objects.list(member, objectsQuery({})))).toEqual([item.id])
      expect(yield* failure(objects.createVersion(member, item.id, newVersion({ input: { rawSourceText: "mine now" } })))).toEqual(
        insufficient("editor", "config object")
      )

      yield* access.grant(owner, ConfigObjectKind, item.id, grantRequest({ orgMembershipId: member.membership.id, role: "editor" }))
      expect((yield* objects.createVersion(member, item.id, newVersion({ input: { rawSourceText: "edited" } }))).item.latestVersion.number).toBe(2)
      expect(yield* failure(objects.archive(member, item.id))).toEqual(insufficient("manager", "config object"))
      expect(yield* failure(objects.remove(member, item.id))).toEqual(insufficient("manager", "config object"))
      expect(yield* failure(objects.restore(member, item.id))).toEqual(insufficient("manager", "config object"))

      yield* access.revoke(owner, ConfigObjectKind, item.id, granted.item.id)
      expect(yield* failure(objects.get(member, item.id))).toEqual(insufficient("viewer", "config object"))
      const revoked = yield* access.listGrants(owner, ConfigObjectKind, item.id, grantsQuery({ includeRevoked: "true" }))
      expect(revoked.items.find((grant) => grant.id === granted.item.id)?.removedAt).toBeInstanceOf(Date)
    }))

  it.effect("config objects: another organization's object is 404 everywhere, and changes nothing", () =>
    Effect.gen(function*() {
      const objects = yield* ConfigObjects
      const { owner } = yield* staffed()
      const other = yield* elsewhere()
      const { item } = yield* objects.create(other, createObject({ input: { objectType: "context", rawSourceText: "theirs" } }))
      const notFound = { _tag: "NotFound", error: "config_object_not_found", message: "Config object not found." }
      yield* Effect.all([
        refused(objects.get(owner, item.id), notFound),
        refused(objects.listVersions(owner, item.id, versionsQuery({})), notFound),
        refused(objects.getVersion(owner, item.id, item.latestVersion.id), notFound),
        refused(objects.createVersion(owner, item.id, newVersion({ input: { rawSourceText: "x" } })), notFound),
        refused(objects.archive(owner, item.id), notFound),
        refused(objects.restore(owner, item.id), notFound),
        refused(objects.remove(owner, item.id), notFound)
      ])
      expect((yield* objects.list(owner, objectsQuery({}))).items).toEqual([])
      expect((yield* objects.get(other, item.id)).item).toEqual(item)
    }))

  // Plugins ----------------------------------------------------------------------------------------------------------

  it.effect("plugins: created by members, who then manage them; read with member count, marketplaces and manifest; changed by editors", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const { admin, member, organization } = yield* staffed()
      const created = yield* plugins.create(member, createPlugin({ name: "  Review kit ", description: "Code review helpers" }))
      expect(created.ok).toBe(true)
      const plugin = created.item
      expect(plugin.id).toMatch(/^plg_[0-7][0-9a-z]{25}$/)
      expect(plugin).toMatchObject({
        organizationId: organization.id,
        name: "Review kit",
        description: "Code review helpers",
        status: "active",
        createdByOrgMembershipId: member.membership.id,
        deletedAt: null,
        memberCount: 0,
        marketplaces: [],
        // A plugin people made has no repository behind it.
        sourceMetadata: null,
        skippedFiles: []
      })
      expect(plugin.extension.manifest).toEqual({
        schemaVersion: 1,
        id: plugin.id,
        name: "Review kit",
        description: "Code review helpers",
        source: { trusted: true, reference: `orgplane:plugin/${plugin.id}` },
        resources: [],
        contributions: [],
        setup: {},
        lifecycle: { status: "active", updatedAt: plugin.updatedAt }
      })

      // The creator got a manager grant; reading needs viewer access, which another member does not have.
      const grants = yield* plugins.listGrants(member, plugin.id, grantsQuery({}))
      expect(grants.items).toHaveLength(1)
      expect(grants.items[0]).toMatchObject({ orgMembershipId: member.membership.id, role: "manager", removedAt: null })
      expect(yield* plugins.get(member, plugin.id)).toEqual({ item: plugin })
      expect(yield* plugins.get(admin, plugin.id)).toEqual({ item: plugin })
      const other = yield* join(organization)
      expect(yield* failure(plugins.get(other, plugin.id))).toEqual(insufficient("viewer", "plugin"))
      expect((yield* plugins.list(other, pluginsQuery({}))).items).toEqual([])

      const updated = yield* plugins.update(member, plugin.id, updatePlugin({ description: "Reviews" }))
      expect(updated.ok).toBe(true)
      expect(updated.item).toMatchObject({ name: "Review kit", description: "Reviews" })
      expect(updated.item.extension.manifest.description).toBe("Reviews")
    }))

  it.effect("plugins: 409 plugin_exists for a name another plugin of the organization has, whatever its case; deleted ones free theirs", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const { admin, member } = yield* staffed()
      const other = yield* elsewhere()
      const first = yield* newPlugin(member, "Deploy")
      expect(yield* failure(plugins.create(admin, createPlugin({ name: "DEPLOY" })))).toEqual({
        _tag: "Conflict",
        error: "plugin_exists",
        message: 'The organization already has a plugin named "DEPLOY".'
      })
      const second = yield* newPlugin(member, "Release")
      expect(yield* failure(plugins.update(member, second.id, updatePlugin({ name: "deploy" })))).toMatchObject({ _tag: "Conflict", error: "plugin_exists" })
      expect((yield* plugins.get(member, second.id)).item.name).toBe("Release")
      yield* newPlugin(other, "Deploy")

      // A deleted plugin's name is free again; restoring it then conflicts.
      yield* plugins.remove(member, first.id)
      const reused = yield* newPlugin(member, "deploy")
      expect(yield* failure(plugins.restore(member, first.id))).toMatchObject({ _tag: "Conflict", error: "plugin_exists" })
      yield* plugins.remove(member, reused.id)
      expect((yield* plugins.restore(member, first.id)).item.status).toBe("active")
    }))

  it.effect("plugins: soft-deleted, archived and restored by managers; deleted ones stay readable and refuse changes", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const { member, organization } = yield* staffed()
      const plugin = yield* newPlugin(member, "Lifecycle")
      const editor = yield* join(organization)
      yield* plugins.grant(member, plugin.id, grantRequest({ orgMembershipId: editor.membership.id, role: "editor" }))
      expect(yield* failure(plugins.archive(editor, plugin.id))).toEqual(insufficient("manager", "plugin"))
      expect(yield* failure(plugins.restore(editor, plugin.id))).toEqual(insufficient("manager", "plugin"))
      expect(yield* failure(plugins.remove(editor, plugin.id))).toEqual(insufficient("manager", "plugin"))

      const archived = yield* plugins.archive(member, plugin.id)
      expect(archived.item).toMatchObject({ status: "archived", deletedAt: null })
      expect(archived.item.extension.manifest.lifecycle.status).toBe("archived")
      expect(idsOf(yield* plugins.list(member, pluginsQuery({})))).toEqual([plugin.id])

      const deleted = yield* plugins.remove(member, plugin.id)
      expect(deleted.ok).toBe(true)
      expect(deleted.item.status).toBe("deleted")
      expect(deleted.item.deletedAt).not.toBeNull()
      expect((yield* plugins.remove(member, plugin.id)).item).toEqual(deleted.item)
      expect((yield* plugins.get(member, plugin.id)).item.status).toBe("deleted")
      expect(yield* failure(plugins.update(editor, plugin.id, updatePlugin({ name: "Changed" })))).toEqual({
        _tag: "Conflict",
        error: "plugin_deleted",
        message: "The plugin is deleted; restore it first."
      })
      expect((yield* plugins.list(member, pluginsQuery({}))).items).toEqual([])
      expect(idsOf(yield* plugins.list(member, pluginsQuery({ includeDeleted: "true" })))).toEqual([plugin.id])
      expect(idsOf(yield* plugins.list(member, pluginsQuery({ status: "deleted" })))).toEqual([plugin.id])
      expect((yield* plugins.list(member, pluginsQuery({ status: "active" }))).items).toEqual([])

      const restored = yield* plugins.restore(member, plugin.id)
      expect(restored.item).toMatchObject({ status: "active", deletedAt: null })
      // The creator's grant survived the round trip.
      expect((yield* plugins.listGrants(member, plugin.id, grantsQuery({}))).items).toHaveLength(2)
    }))

  it.effect("plugins: hold config objects, added by editors who can view them, listed in order with their objects, in the manifest", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const { admin } = yield* staffed()
      const other = yield* elsewhere()
      const plugin = yield* newPlugin(admin, "Bundle")
      const mcp = yield* configObject(admin, { type: "mcp", title: "Search server", versions: 2 })
      const skill = yield* configObject(admin, { type: "skill", title: "Review" })
      const archived = yield* configObject(admin, { type: "agent", title: "Old agent", status: "archived" })
      const agent = yield* configObject(admin, { type: "agent", title: "Planner" })
      const deleted = yield* configObject(admin, { type: "skill", title: "Gone", status: "deleted" })
      const foreign = yield* configObject(other, { type: "skill", title: "Theirs" })
      const add = (id: ConfigObjectId) => plugins.addConfigObject(admin, plugin.id, id)

      const added = yield* add(mcp.id)
      expect(added.ok).toBe(true)
      expect(added.item.id).toMatch(/^pco_/)
      expect(added.item).toMatchObject({
        pluginId: plugin.id,
        configObjectId: mcp.id,
        membershipSource: "manual",
        connectorMappingId: null,
        createdByOrgMembershipId: admin.membership.id,
        removedAt: null
      })
      expect(mcp.title).toBe("Search server")
      expect(added.item.configObject).toMatchObject({ id: mcp.id, objectType: "mcp", title: "Search server" })
      expect(added.item.configObject.latestVersion).toMatchObject({ id: mcp.latestVersionId, number: 2 })
      for (const object of [skill, archived, agent]) yield* add(object.id)
      expect((yield* add(mcp.id)).item.id).toBe(added.item.id)

      expect(yield* failure(add(deleted.id))).toMatchObject({ _tag: "Conflict", error: "config_object_deleted" })
      expect(yield* failure(add(foreign.id))).toEqual({ _tag: "NotFound", error: "config_object_not_found", message: "Config object not found." })

      const read = (yield* plugins.get(admin, plugin.id)).item
      expect(read.memberCount).toBe(4)
      // Active objects only, oldest membership first; grouped by type in type order.
      expect(read.extension.manifest.resources).toEqual([
        { configObjectId: mcp.id, objectType: "mcp", title: mcp.title, versionId: mcp.latestVersionId },
        { configObjectId: skill.id, objectType: "skill", title: skill.title, versionId: skill.latestVersionId },
        { configObjectId: agent.id, objectType: "agent", title: agent.title, versionId: agent.latestVersionId }
      ])
      expect(read.extension.manifest.contributions).toEqual([
        { objectType: "skill", configObjectIds: [skill.id] },
        { objectType: "agent", configObjectIds: [agent.id] },
        { objectType: "mcp", configObjectIds: [mcp.id] }
      ])

      const listed = yield* plugins.listConfigObjects(admin, plugin.id, membershipsQuery({}))
      expect(listed.nextCursor).toBeNull()
      expect(listed.items.map((membership) => membership.configObjectId)).toEqual([mcp.id, skill.id, archived.id, agent.id])
      expect(listed.items.map((membership) => membership.configObject.id)).toEqual([mcp.id, skill.id, archived.id, agent.id])
      expect(listed.items[0]).toEqual(added.item)

      yield* plugins.removeConfigObject(admin, plugin.id, skill.id)
      expect(yield* failure(plugins.removeConfigObject(admin, plugin.id, skill.id))).toEqual({
        _tag: "NotFound",
        error: "plugin_membership_not_found",
        message: "The config object is not in this plugin."
      })
      expect(yield* failure(plugins.removeConfigObject(admin, plugin.id, foreign.id))).toMatchObject({ error: "plugin_membership_not_found" })
      const active = yield* plugins.listConfigObjects(admin, plugin.id, membershipsQuery({}))
      expect(active.items.map((membership) => membership.configObjectId)).toEqual([mcp.id, archived.id, agent.id])
      const all = yield* plugins.listConfigObjects(admin, plugin.id, membershipsQuery({ includeRemoved: "true" }))
      expect(all.items.map((membership) => membership.configObjectId)).toEqual([mcp.id, skill.id, archived.id, agent.id])
      expect(all.items[1]?.removedAt).not.toBeNull()
      const afterRemoval = (yield* plugins.get(admin, plugin.id)).item
      expect(afterRemoval.memberCount).toBe(3)
      expect(afterRemoval.extension.manifest.contributions.map((contribution) => contribution.objectType)).toEqual(["agent", "mcp"])

      // A deleted plugin takes no new objects.
      yield* plugins.remove(admin, plugin.id)
      expect(yield* failure(add(skill.id))).toMatchObject({ _tag: "Conflict", error: "plugin_deleted" })
    }))

  it.effect("plugins: adding an object needs editor access on the plugin and viewer access on the object; removing, editor", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const access = yield* Access
      const { admin, member, organization } = yield* staffed()
      const plugin = yield* newPlugin(admin)
      const object = yield* configObject(admin, { type: "skill", title: "Private" })
      yield* plugins.grant(admin, plugin.id, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))
      expect(yield* failure(plugins.addConfigObject(member, plugin.id, object.id))).toEqual(insufficient("editor", "plugin"))
      yield* plugins.grant(admin, plugin.id, grantRequest({ orgMembershipId: member.membership.id, role: "editor" }))
      expect(yield* failure(plugins.addConfigObject(member, plugin.id, object.id))).toEqual(insufficient("viewer", "config object"))
      yield* access.grant(admin, ConfigObjectKind, object.id, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))
      yield* plugins.addConfigObject(member, plugin.id, object.id)
      const viewer = yield* join(organization)
      yield* plugins.grant(admin, plugin.id, grantRequest({ orgMembershipId: viewer.membership.id, role: "viewer" }))
      expect((yield* plugins.listConfigObjects(viewer, plugin.id, membershipsQuery({}))).items).toHaveLength(1)
      expect(yield* failure(plugins.removeConfigObject(viewer, plugin.id, object.id))).toEqual(insufficient("editor", "plugin"))
    }))

  it.effect("plugins: viewable through a marketplace the member can view, until it is deleted or the plugin leaves it", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const marketplaces = yield* Marketplaces
      const { admin, member } = yield* staffed()
      const plugin = yield* newPlugin(admin, "Shared")
      const market = yield* newMarketplace(admin)
      expect(yield* failure(plugins.get(member, plugin.id))).toEqual(insufficient("viewer", "plugin"))
      yield* marketplaces.grant(admin, market.id, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))
      expect(yield* failure(plugins.get(member, plugin.id))).toEqual(insufficient("viewer", "plugin"))

      yield* marketplaces.addPlugin(admin, market.id, plugin.id)
      const seen = yield* plugins.get(member, plugin.id)
      expect(seen.item.marketplaces).toEqual([{ id: market.id, name: market.name }])
      expect(idsOf(yield* plugins.list(member, pluginsQuery({})))).toEqual([plugin.id])
      yield* plugins.listConfigObjects(member, plugin.id, membershipsQuery({}))
      // Viewing is all it gives.
      expect(yield* failure(plugins.update(member, plugin.id, updatePlugin({ name: "Mine" })))).toEqual(insufficient("editor", "plugin"))
      expect(yield* failure(plugins.listGrants(member, plugin.id, grantsQuery({})))).toEqual(insufficient("manager", "plugin"))

      yield* marketplaces.removePlugin(admin, market.id, plugin.id)
      expect(yield* failure(plugins.get(member, plugin.id))).toEqual(insufficient("viewer", "plugin"))
      expect((yield* plugins.list(member, pluginsQuery({}))).items).toEqual([])

      yield* marketplaces.addPlugin(admin, market.id, plugin.id)
      expect((yield* plugins.get(member, plugin.id)).item.id).toBe(plugin.id)
      yield* marketplaces.remove(admin, market.id)
      expect(yield* failure(plugins.get(member, plugin.id))).toEqual(insufficient("viewer", "plugin"))
      expect((yield* plugins.get(admin, plugin.id)).item.marketplaces).toEqual([])
    }))

  it.effect("plugins: another organization's plugin is 404 on every operation, and changes nothing", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const { owner } = yield* staffed()
      const other = yield* elsewhere()
      const plugin = yield* newPlugin(owner, "Ours")
      const object = yield* configObject(other, { type: "skill", title: "Theirs" })
      const notFound = { _tag: "NotFound", error: "plugin_not_found", message: "Plugin not found." }
      yield* Effect.all([
        refused(plugins.get(other, plugin.id), notFound),
        refused(plugins.update(other, plugin.id, updatePlugin({ name: "Taken" })), notFound),
        refused(plugins.archive(other, plugin.id), notFound),
        refused(plugins.restore(other, plugin.id), notFound),
        refused(plugins.remove(other, plugin.id), notFound),
        refused(plugins.listConfigObjects(other, plugin.id, membershipsQuery({})), notFound),
        refused(plugins.addConfigObject(other, plugin.id, object.id), notFound),
        refused(plugins.removeConfigObject(other, plugin.id, object.id), notFound),
        refused(plugins.grant(other, plugin.id, grantRequest({ orgWide: true, role: "viewer" })), notFound),
        refused(plugins.listGrants(other, plugin.id, grantsQuery({})), notFound)
      ])
      expect((yield* plugins.get(owner, plugin.id)).item).toEqual(plugin)
      expect((yield* plugins.list(other, pluginsQuery({}))).items).toEqual([])
    }))

  it.effect("plugins: shared through grants, upserted per member, team or organization, listed newest first, revoked softly", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const teams = yield* Teams
      const { admin, member, organization, owner } = yield* staffed()
      const plugin = yield* newPlugin(member, "Granted")
      const colleague = yield* join(organization)
      const { team } = yield* teams.create(owner, { name: "Crew", memberIds: [colleague.membership.id] })

      expect(yield* failure(plugins.grant(member, plugin.id, grantRequest({ orgWide: true, role: "viewer" })))).toMatchObject({
        _tag: "Forbidden",
        reason: "insufficient_role"
      })
      const byTeam = yield* plugins.grant(member, plugin.id, grantRequest({ teamId: team.id, role: "viewer" }))
      expect(byTeam.ok).toBe(true)
      expect(byTeam.item).toMatchObject({ teamId: team.id, orgMembershipId: null, orgWide: false, role: "viewer", removedAt: null })
      expect(byTeam.item.id).toMatch(/^pag_/)
      expect((yield* plugins.get(colleague, plugin.id)).item.id).toBe(plugin.id)
      expect(yield* failure(plugins.update(colleague, plugin.id, updatePlugin({ name: "No" })))).toEqual(insufficient("editor", "plugin"))

      const upgraded = yield* plugins.grant(member, plugin.id, grantRequest({ teamId: team.id, role: "editor" }))
      expect(upgraded.item).toMatchObject({ id: byTeam.item.id, role: "editor" })
      expect((yield* plugins.update(colleague, plugin.id, updatePlugin({ name: "Renamed" }))).item.name).toBe("Renamed")

      const orgWide = yield* plugins.grant(admin, plugin.id, grantRequest({ orgWide: true, role: "viewer" }))
      const listed = yield* plugins.listGrants(member, plugin.id, grantsQuery({}))
      expect(listed.nextCursor).toBeNull()
      expect(idsOf(listed)).toEqual([orgWide.item.id, byTeam.item.id, expect.stringMatching(/^pag_/)])

      yield* plugins.revoke(member, plugin.id, byTeam.item.id)
      yield* plugins.revoke(member, plugin.id, byTeam.item.id)
      expect(idsOf(yield* plugins.listGrants(member, plugin.id, grantsQuery({})))).not.toContain(byTeam.item.id)
      const withRevoked = yield* plugins.listGrants(member, plugin.id, grantsQuery({ includeRevoked: "true" }))
      expect(withRevoked.items.find((grant) => grant.id === byTeam.item.id)?.removedAt).not.toBeNull()
      // The org-wide viewer grant still lets the colleague read, not edit.
      expect((yield* plugins.get(colleague, plugin.id)).item.id).toBe(plugin.id)
      expect(yield* failure(plugins.update(colleague, plugin.id, updatePlugin({ name: "Again" })))).toEqual(insufficient("editor", "plugin"))
      expect(yield* failure(plugins.revoke(member, plugin.id, newId(PluginAccessGrantId, "pag")))).toMatchObject({ _tag: "NotFound", error: "access_grant_not_found" })
    }))

  it.effect("plugins: listed by name with a keyset cursor that walks 160 plugins without gaps or duplicates while others are created", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const sql = yield* SqlClient.SqlClient
      const { member, organization } = yield* staffed()
      const names = Array.from({ length: 160 }, (_, i) => `${i % 2 === 0 ? "p" : "P"}lugin ${String(i).padStart(3, "0")}`)
      // Written in two statements, each with its creator's manager grant (as creating them through the service does).
      const at = new Date()
      const ids = names.map(() => Db.newId("plg"))
      yield* sql`INSERT INTO plugins ${
        sql.insert(yield* rowsOf(names.map((name, i) => ({
          id: ids[i]!,
          organization_id: organization.id,
          name,
          description: "",
          status: "active",
          created_by_membership_id: member.membership.id,
          created_at: at,
          updated_at: at
        }))))
      }`
      yield* sql`INSERT INTO plugin_grants ${
        sql.insert(yield* rowsOf(ids.map((id) => ({
          id: Db.newId("pag"),
          organization_id: organization.id,
          plugin_id: id,
          membership_id: member.membership.id,
          org_wide: false,
          role: "manager",
          created_by_membership_id: member.membership.id,
          created_at: at
        }))))
      }`
      const seen: Array<{ readonly id: string; readonly name: string }> = []
      let cursor: string | null = null
      let inserted = 0
      do {
        const page: { readonly items: ReadonlyArray<{ readonly id: string; readonly name: string }>; readonly nextCursor: string | null } = yield* plugins.list(
          member,
          pluginsQuery(cursor === null ? { limit: "7" } : { limit: "7", cursor })
        )
        seen.push(...page.items)
        cursor = page.nextCursor
        // Writers between pages: plugins that sort anywhere.
        yield* newPlugin(member, `plugin ${String(inserted * 7).padStart(3, "0")} extra`)
        inserted++
      } while (cursor !== null)
      const seenIds = seen.map((plugin) => plugin.id)
      expect(new Set(seenIds).size).toBe(seenIds.length)
      expect(seen.filter((plugin) => !plugin.name.endsWith("extra")).map((plugin) => plugin.name)).toEqual(names)

      const filtered = yield* plugins.list(member, pluginsQuery({ q: "LUGIN 01", limit: "100" }))
      expect(filtered.items.map((plugin) => plugin.name).filter((name) => !name.endsWith("extra"))).toEqual(names.filter((name) => name.includes("lugin 01")))
      const first = yield* plugins.list(member, pluginsQuery({ limit: "2" }))
      expect(yield* failure(plugins.list(member, pluginsQuery({ limit: "2", q: "plugin", cursor: first.nextCursor })))).toMatchObject({
        _tag: "InvalidRequest",
        details: [{ path: ["cursor"] }]
      })
    }))

  it.effect("plugins: only a marketplace's with marketplaceId; a plugin's config objects paged in the order added", () =>
    Effect.gen(function*() {
      const plugins = yield* Plugins
      const marketplaces = yield* Marketplaces
      const { admin } = yield* staffed()
      const market = yield* newMarketplace(admin)
      const inside = yield* newPlugin(admin, "Inside")
      yield* newPlugin(admin, "Outside")
      yield* marketplaces.addPlugin(admin, market.id, inside.id)
      expect(idsOf(yield* plugins.list(admin, pluginsQuery({ marketplaceId: market.id })))).toEqual([inside.id])

      const objects: Array<{ readonly id: ConfigObjectId }> = []
      for (let i = 0; i < 23; i++) objects.push(yield* configObject(admin, { type: i % 2 === 0 ? "skill" : "hook", title: `Object ${i}` }))
      for (const object of objects) yield* plugins.addConfigObject(admin, inside.id, object.id)
      const walked: Array<string> = []
      let cursor: string | null = null
      do {
        const page: { readonly items: ReadonlyArray<{ readonly configObject: { readonly id: string } }>; readonly nextCursor: string | null } = yield* plugins
          .listConfigObjects(admin, inside.id, membershipsQuery(cursor === null ? { limit: "5" } : { limit: "5", cursor }))
        expect(page.items.length).toBeLessThanOrEqual(5)
        walked.push(...page.items.map((membership) => membership.configObject.id))
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(walked).toEqual(objects.map((object) => object.id))
    }))

  // Marketplaces -----------------------------------------------------------------------------------------------------

  it.effect("marketplaces: created by owners and admins, who then manage them; read by viewers, changed by editors", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const { admin, member, organization } = yield* staffed()
      expect(yield* failure(marketplaces.create(member, createMarketplace({ name: "Mine" })))).toMatchObject({ _tag: "Forbidden", reason: "insufficient_role" })

      const created = yield* marketplaces.create(admin, createMarketplace({ name: " Engineering ", description: "Tools we trust", logoUrl: "https://example.com/logo.png" }))
      expect(created.ok).toBe(true)
      const market = created.item
      expect(market.id).toMatch(/^mkt_[0-7][0-9a-z]{25}$/)
      expect(market).toMatchObject({
        organizationId: organization.id,
        name: "Engineering",
        description: "Tools we trust",
        logoUrl: "https://example.com/logo.png",
        status: "active",
        createdByOrgMembershipId: admin.membership.id,
        deletedAt: null,
        canDelete: true,
        pluginCount: 0
      })
      expect(yield* marketplaces.get(admin, market.id)).toEqual({ item: market })
      const grants = (yield* marketplaces.listGrants(admin, market.id, grantsQuery({}))).items
      expect(grants).toEqual([expect.objectContaining({ orgMembershipId: admin.membership.id, role: "manager" })])
      expect(grants[0]?.id).toMatch(/^mag_/)

      expect(yield* failure(marketplaces.get(member, market.id))).toEqual(insufficient("viewer", "marketplace"))
      expect((yield* marketplaces.list(member, marketplacesQuery({}))).items).toEqual([])
      yield* marketplaces.grant(admin, market.id, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))
      expect((yield* marketplaces.list(member, marketplacesQuery({}))).items).toEqual([market])
      expect(yield* failure(marketplaces.update(member, market.id, updateMarketplace({ name: "Nope" })))).toEqual(insufficient("editor", "marketplace"))
      yield* marketplaces.grant(admin, market.id, grantRequest({ orgMembershipId: member.membership.id, role: "editor" }))
      const updated = yield* marketplaces.update(member, market.id, updateMarketplace({ name: "Platform", logoUrl: null }))
      expect(updated.ok).toBe(true)
      expect(updated.item).toMatchObject({ name: "Platform", description: "Tools we trust", logoUrl: null })
      expect((yield* marketplaces.update(member, market.id, updateMarketplace({ logoUrl: "/logos/p.png" }))).item.logoUrl).toBe("/logos/p.png")
      expect(yield* failure(marketplaces.remove(member, market.id))).toEqual(insufficient("manager", "marketplace"))
    }))

  it.effect("marketplaces: 409 marketplace_exists for a name another marketplace of the organization has; deleted ones free theirs", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const { admin, owner } = yield* staffed()
      const other = yield* elsewhere()
      const first = yield* newMarketplace(admin, "Public")
      expect(yield* failure(marketplaces.create(owner, createMarketplace({ name: "PUBLIC" })))).toEqual({
        _tag: "Conflict",
        error: "marketplace_exists",
        message: 'The organization already has a marketplace named "PUBLIC".'
      })
      const second = yield* newMarketplace(admin, "Internal")
      expect(yield* failure(marketplaces.update(admin, second.id, updateMarketplace({ name: "public" })))).toMatchObject({ error: "marketplace_exists" })
      yield* newMarketplace(other, "Public")
      yield* marketplaces.remove(admin, first.id)
      expect((yield* newMarketplace(admin, "public")).name).toBe("public")
    }))

  it.effect("marketplaces: soft-deleted once; deleted ones stay readable and are listed only on request", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const { admin } = yield* staffed()
      const market = yield* newMarketplace(admin, "Old")
      const deleted = yield* marketplaces.remove(admin, market.id)
      expect(deleted.ok).toBe(true)
      expect(deleted.item).toMatchObject({ id: market.id, status: "deleted" })
      expect(deleted.item.deletedAt).not.toBeNull()
      expect((yield* marketplaces.remove(admin, market.id)).item).toEqual(deleted.item)
      expect((yield* marketplaces.get(admin, market.id)).item).toEqual(deleted.item)
      expect((yield* marketplaces.list(admin, marketplacesQuery({}))).items).toEqual([])
      expect((yield* marketplaces.list(admin, marketplacesQuery({ includeDeleted: "true" }))).items).toEqual([deleted.item])
      expect((yield* marketplaces.list(admin, marketplacesQuery({ status: "deleted" }))).items).toEqual([deleted.item])
    }))

  it.effect("marketplaces: not deleted while a connector or the service lists plugins in them (canDelete false)", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const sql = yield* SqlClient.SqlClient
      const { admin, organization } = yield* staffed()
      const market = yield* newMarketplace(admin, "Synced")
      const synced = yield* newPlugin(admin, "Synced plugin")
      const builtIn = yield* newPlugin(admin, "Built-in plugin")
      const manual = yield* newPlugin(admin, "Manual plugin")
      yield* marketplaces.addPlugin(admin, market.id, manual.id)
      expect((yield* marketplaces.get(admin, market.id)).item).toMatchObject({ canDelete: true, pluginCount: 1 })
      // What a connector's sync or the service itself would write.
      for (const [plugin, source] of [[synced, "connector"], [builtIn, "system"]] as const) {
        yield* sql`INSERT INTO marketplace_plugins (id, organization_id, marketplace_id, plugin_id, membership_source, created_at)
                   VALUES (${Db.newId("mkp")}, ${organization.id}, ${market.id}, ${plugin.id}, ${source}, ${new Date()})`
      }
      expect((yield* marketplaces.get(admin, market.id)).item).toMatchObject({ canDelete: false, pluginCount: 3 })
      expect(yield* failure(marketplaces.remove(admin, market.id))).toEqual({
        _tag: "Conflict",
        error: "managed_marketplace_cannot_be_deleted",
        message: "Built-in and connected marketplaces cannot be deleted here."
      })
      const listed = (yield* marketplaces.listPlugins(admin, market.id, membershipsQuery({}))).items
      expect(listed.map((membership) => [membership.pluginId, membership.membershipSource])).toEqual([
        [manual.id, "manual"],
        [synced.id, "connector"],
        [builtIn.id, "system"]
      ])
      // Removing the connector's entry is not enough while the service's remains.
      yield* marketplaces.removePlugin(admin, market.id, synced.id)
      expect(yield* failure(marketplaces.remove(admin, market.id))).toMatchObject({ error: "managed_marketplace_cannot_be_deleted" })
      yield* marketplaces.removePlugin(admin, market.id, builtIn.id)
      expect((yield* marketplaces.get(admin, market.id)).item).toMatchObject({ canDelete: true, pluginCount: 1 })
      expect((yield* marketplaces.remove(admin, market.id)).item.status).toBe("deleted")
    }))

  it.effect("marketplaces: list plugins added by editors who can view them, in the order added, re-added in place, removed softly", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const plugins = yield* Plugins
      const { admin } = yield* staffed()
      const other = yield* elsewhere()
      const market = yield* newMarketplace(admin, "Store")
      const first = yield* newPlugin(admin, "Zeta")
      const second = yield* newPlugin(admin, "Alpha")
      const foreign = yield* newPlugin(other)
      const added = yield* marketplaces.addPlugin(admin, market.id, first.id)
      expect(added.ok).toBe(true)
      expect(added.item).toMatchObject({
        marketplaceId: market.id,
        pluginId: first.id,
        membershipSource: "manual",
        createdByOrgMembershipId: admin.membership.id,
        removedAt: null
      })
      expect(added.item.id).toMatch(/^mkp_/)
      expect(added.item.plugin).toMatchObject({ id: first.id, name: "Zeta", marketplaces: [{ id: market.id, name: "Store" }] })
      yield* marketplaces.addPlugin(admin, market.id, second.id)
      expect((yield* marketplaces.addPlugin(admin, market.id, first.id)).item.id).toBe(added.item.id)

      const listed = yield* marketplaces.listPlugins(admin, market.id, membershipsQuery({}))
      expect(listed.nextCursor).toBeNull()
      expect(listed.items.map((membership) => membership.pluginId)).toEqual([first.id, second.id])
      expect(listed.items[0]).toEqual(added.item)
      expect((yield* marketplaces.get(admin, market.id)).item.pluginCount).toBe(2)
      expect(yield* failure(marketplaces.addPlugin(admin, market.id, foreign.id))).toEqual({ _tag: "NotFound", error: "plugin_not_found", message: "Plugin not found." })

      yield* marketplaces.removePlugin(admin, market.id, first.id)
      expect(yield* failure(marketplaces.removePlugin(admin, market.id, first.id))).toEqual({
        _tag: "NotFound",
        error: "marketplace_membership_not_found",
        message: "The plugin is not listed in this marketplace."
      })
      expect((yield* marketplaces.listPlugins(admin, market.id, membershipsQuery({}))).items.map((membership) => membership.pluginId)).toEqual([second.id])
      const all = (yield* marketplaces.listPlugins(admin, market.id, membershipsQuery({ includeRemoved: "true" }))).items
      expect(all.map((membership) => membership.pluginId)).toEqual([first.id, second.id])
      expect(all[0]?.removedAt).not.toBeNull()
      expect((yield* marketplaces.addPlugin(admin, market.id, first.id)).item).toMatchObject({ id: added.item.id, removedAt: null })

      // A deleted plugin is not counted, and cannot be added.
      yield* plugins.remove(admin, second.id)
      expect((yield* marketplaces.get(admin, market.id)).item.pluginCount).toBe(1)
      yield* marketplaces.removePlugin(admin, market.id, second.id)
      expect(yield* failure(marketplaces.addPlugin(admin, market.id, second.id))).toEqual({
        _tag: "Conflict",
        error: "plugin_deleted",
        message: "The plugin is deleted; restore it first."
      })
    }))

  it.effect("marketplaces: listing a plugin needs editor access on the marketplace and viewer access on the plugin", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const { admin, member } = yield* staffed()
      const market = yield* newMarketplace(admin)
      const plugin = yield* newPlugin(admin)
      const own = yield* newPlugin(member)
      yield* marketplaces.grant(admin, market.id, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))
      expect(yield* failure(marketplaces.addPlugin(member, market.id, own.id))).toEqual(insufficient("editor", "marketplace"))
      yield* marketplaces.grant(admin, market.id, grantRequest({ orgMembershipId: member.membership.id, role: "editor" }))
      expect(yield* failure(marketplaces.addPlugin(member, market.id, plugin.id))).toEqual(insufficient("viewer", "plugin"))
      yield* marketplaces.addPlugin(member, market.id, own.id)
      expect((yield* marketplaces.listPlugins(member, market.id, membershipsQuery({}))).items).toHaveLength(1)
    }))

  it.effect("marketplaces: resolved to their plugins (not deleted, by name) with component counts and cloud readiness", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const plugins = yield* Plugins
      const { admin, member } = yield* staffed()
      const market = yield* newMarketplace(admin, "Resolved")
      const tools = yield* newPlugin(admin, "tools")
      const guide = yield* newPlugin(admin, "Guide")
      const gone = yield* newPlugin(admin, "Gone")
      const make = (type: string, status?: "archived") => Effect.map(configObject(admin, { type, title: `${type} ${unique()}`, ...status ? { status } : {} }), (object) => object.id)
      const hook = yield* make("hook")
      const mcp = yield* configObject(admin, { type: "mcp", title: "Search" })
      const skill1 = yield* make("skill")
      const skill2 = yield* make("skill")
      const archivedAgent = yield* make("agent", "archived")
      const command = yield* make("command")
      for (const [plugin, object] of [[tools, hook], [tools, mcp.id], [tools, archivedAgent], [guide, skill1], [guide, skill2], [guide, command], [guide, hook]] as const) {
        yield* plugins.addConfigObject(admin, plugin.id, object)
      }
      for (const plugin of [tools, guide, gone]) yield* marketplaces.addPlugin(admin, market.id, plugin.id)
      yield* plugins.remove(admin, gone.id)
      yield* marketplaces.grant(admin, market.id, grantRequest({ orgMembershipId: member.membership.id, role: "viewer" }))

      const resolved = yield* marketplaces.resolved(member, market.id)
      expect(resolved.ok).toBe(true)
      expect(resolved.item.source).toBeNull()
      expect(resolved.item.marketplace).toEqual((yield* marketplaces.get(member, market.id)).item)
      expect(resolved.item.marketplace).toMatchObject({ pluginCount: 2, canDelete: true })
      expect(resolved.item.plugins).toHaveLength(2)
      const [first, second] = resolved.item.plugins
      expect(first).toMatchObject({ id: guide.id, componentCounts: { skill: 2, command: 1, hook: 1 }, cloudReadiness: { hasInstructional: true, connections: [] } })
      expect(second).toMatchObject({ id: tools.id, componentCounts: { hook: 1, mcp: 1 }, cloudReadiness: { hasInstructional: false } })
      // The mcp object's server, which no connection of the organization serves.
      expect(second?.cloudReadiness.connections).toEqual([
        expect.objectContaining({ configObjectId: mcp.id, id: null, url: "https://example.com/mcp/1", connectedForMe: false })
      ])
      if (first === undefined) return
      const { cloudReadiness: _, componentCounts: __, ...plugin } = first
      expect(plugin).toEqual({ ...(yield* plugins.get(member, guide.id)).item })
    }))

  it.effect("marketplaces: another organization's marketplace is 404 on every operation", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const { admin } = yield* staffed()
      const other = yield* elsewhere()
      const market = yield* newMarketplace(admin, "Ours")
      const plugin = yield* newPlugin(other)
      const notFound = { _tag: "NotFound", error: "marketplace_not_found", message: "Marketplace not found." }
      yield* Effect.all([
        refused(marketplaces.get(other, market.id), notFound),
        refused(marketplaces.update(other, market.id, updateMarketplace({ name: "Taken" })), notFound),
        refused(marketplaces.remove(other, market.id), notFound),
        refused(marketplaces.listPlugins(other, market.id, membershipsQuery({})), notFound),
        refused(marketplaces.addPlugin(other, market.id, plugin.id), notFound),
        refused(marketplaces.removePlugin(other, market.id, plugin.id), notFound),
        refused(marketplaces.resolved(other, market.id), notFound),
        refused(marketplaces.grant(other, market.id, grantRequest({ orgWide: true, role: "viewer" })), notFound),
        refused(marketplaces.listGrants(other, market.id, grantsQuery({})), notFound),
        refused(marketplaces.revoke(other, market.id, newId(MarketplaceAccessGrantId, "mag")), notFound)
      ])
      expect((yield* marketplaces.get(admin, market.id)).item).toEqual(market)
    }))

  it.effect("marketplaces: team and org-wide grants let members view; revoking twice keeps the record", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const teams = yield* Teams
      const { admin, member, organization, owner } = yield* staffed()
      const market = yield* newMarketplace(admin, "Granted")
      const { team } = yield* teams.create(owner, { name: "Crew", memberIds: [member.membership.id] })
      const manager = yield* join(organization)
      yield* marketplaces.grant(admin, market.id, grantRequest({ orgMembershipId: manager.membership.id, role: "manager" }))
      expect(yield* failure(marketplaces.grant(manager, market.id, grantRequest({ orgWide: true, role: "viewer" })))).toMatchObject({ reason: "insufficient_role" })

      const byTeam = yield* marketplaces.grant(manager, market.id, grantRequest({ teamId: team.id, role: "viewer" }))
      expect(byTeam.item).toMatchObject({ teamId: team.id, role: "viewer", removedAt: null })
      expect((yield* marketplaces.get(member, market.id)).item.id).toBe(market.id)
      expect((yield* marketplaces.grant(manager, market.id, grantRequest({ teamId: team.id, role: "editor" }))).item).toMatchObject({ id: byTeam.item.id, role: "editor" })

      yield* marketplaces.revoke(manager, market.id, byTeam.item.id)
      yield* marketplaces.revoke(manager, market.id, byTeam.item.id)
      expect(yield* failure(marketplaces.get(member, market.id))).toEqual(insufficient("viewer", "marketplace"))
      const withRevoked = yield* marketplaces.listGrants(manager, market.id, grantsQuery({ includeRevoked: "true" }))
      expect(withRevoked.items.find((grant) => grant.id === byTeam.item.id)?.removedAt).not.toBeNull()
      expect(idsOf(yield* marketplaces.listGrants(manager, market.id, grantsQuery({})))).not.toContain(byTeam.item.id)

      yield* marketplaces.grant(admin, market.id, grantRequest({ orgWide: true, role: "viewer" }))
      expect((yield* marketplaces.get(member, market.id)).item.id).toBe(market.id)
      expect(yield* failure(marketplaces.listGrants(member, market.id, grantsQuery({})))).toEqual(insufficient("manager", "marketplace"))
    }))

  it.effect("marketplaces: their plugins (150 memberships) and themselves paged with keyset cursors, without gaps or duplicates", () =>
    Effect.gen(function*() {
      const marketplaces = yield* Marketplaces
      const sql = yield* SqlClient.SqlClient
      const { admin, organization } = yield* staffed()
      const market = yield* newMarketplace(admin, "Big")
      // 150 plugins listed a millisecond apart, some time ago, written in two statements.
      const plugins: Array<{ readonly id: string }> = Array.from({ length: 150 }, () => ({ id: Db.newId("plg") }))
      const start = Date.now() - 60_000
      yield* sql`INSERT INTO plugins ${
        sql.insert(yield* rowsOf(plugins.map(({ id }, i) => ({
          id,
          organization_id: organization.id,
          name: `Plugin ${String(i).padStart(3, "0")}`,
          description: "",
          status: "active",
          created_at: new Date(start),
          updated_at: new Date(start)
        }))))
      }`
      yield* sql`INSERT INTO marketplace_plugins ${
        sql.insert(yield* rowsOf(plugins.map(({ id }, i) => ({
          id: Db.newId("mkp"),
          organization_id: organization.id,
          marketplace_id: market.id,
          plugin_id: id,
          membership_source: "manual",
          created_at: new Date(start + i)
        }))))
      }`
      const walked: Array<{ readonly pluginId: string; readonly plugin: { readonly id: string } }> = []
      let cursor: string | null = null
      let extra = 0
      do {
        const page: { readonly items: ReadonlyArray<{ readonly pluginId: string; readonly plugin: { readonly id: string } }>; readonly nextCursor: string | null } =
          yield* marketplaces.listPlugins(admin, market.id, membershipsQuery(cursor === null ? { limit: "9" } : { limit: "9", cursor }))
        walked.push(...page.items)
        cursor = page.nextCursor
        // Added while paging: they come after every earlier membership, so the walk ends with them.
        if (extra < 3) {
          const late = yield* newPlugin(admin, `Late ${extra++}`)
          plugins.push(late)
          yield* marketplaces.addPlugin(admin, market.id, late.id)
        }
      } while (cursor !== null)
      expect(walked.map((membership) => membership.pluginId)).toEqual(plugins.map((plugin) => plugin.id))
      expect(walked.every((membership) => membership.plugin.id === membership.pluginId)).toBe(true)

      for (let i = 0; i < 23; i++) yield* newMarketplace(admin, `Market ${String(i).padStart(2, "0")}`)
      const names: Array<string> = []
      cursor = null
      do {
        const page: { readonly items: ReadonlyArray<{ readonly name: string }>; readonly nextCursor: string | null } = yield* marketplaces.list(
          admin,
          marketplacesQuery(cursor === null ? { limit: "4" } : { limit: "4", cursor })
        )
        names.push(...page.items.map((marketplace) => marketplace.name))
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(names).toEqual(["Big", ...Array.from({ length: 23 }, (_, i) => `Market ${String(i).padStart(2, "0")}`)])
      expect((yield* marketplaces.list(admin, marketplacesQuery({ q: "ket 01" }))).items.map((marketplace) => marketplace.name)).toEqual(["Market 01"])
    }))
})
