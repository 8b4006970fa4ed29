/**
 * Config objects through HTTP: creation with parsing and plugin checks, immutable numbered versions, lifecycle with
 * the versions it adds, filtered keyset lists, per-object access and the organization boundary. Plugins are written
 * with SQL on the server's own database until the plugins group exists.
 */
import * as SqlClient from "effect/sql/SqlClient"
import type { ConfigObjectInput, ConfigObjectPage } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import { typeid } from "typeid-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

/** The server shares its database with the tests, so they can write what no endpoint writes yet. */
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
})
afterAll(() => server?.close())

const { get, post } = Http.verbs(() => server.url)
const api = calls(() => server.url)
const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) => server.sql(use)

/** A plugin written straight to the database; `deleted` soft-deletes it. */
const insertPlugin = async (organizationId: string, options: { readonly deleted?: boolean } = {}) => {
  const id = typeid("plg").toString()
  const at = new Date()
  await sql((q) =>
    q`INSERT INTO plugins ${
      q.insert({
        id,
        organizationId,
        name: `Plugin ${id}`,
        description: "",
        status: options.deleted ? "deleted" : "active",
        createdAt: at,
        updatedAt: at,
        deletedAt: options.deleted ? at : null
      })
    }`
  )
  return id
}

const grantPlugin = (organizationId: string, pluginId: string, membershipId: string, role: "viewer" | "editor" | "manager") =>
  sql((q) =>
    q`INSERT INTO plugin_grants ${
      q.insert({ id: typeid("pag").toString(), organizationId, pluginId, membershipId, orgWide: false, role, createdAt: new Date() })
    }`
  )

const SKILL = "---\nname: deploy-to-staging\ndescription: Deploys the app to staging.\n---\n# Deploy\n\nRun `make deploy`.\n"

const create = (token: string, input: typeof ConfigObjectInput.Encoded, pluginIds?: ReadonlyArray<string>) =>
  api.configObjects.create({ token, payload: pluginIds === undefined ? { input } : { input, pluginIds } })

const created = async (token: string, input: typeof ConfigObjectInput.Encoded, pluginIds?: ReadonlyArray<string>) => {
  const response = await create(token, input, pluginIds)
  return ok(response, 201).item
}

const ISO = expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)

describe("creating config objects", () => {
  it("answers 201 {ok, item} with the spec's fields and latestVersion; the creator manages it", async () => {
    const org = await Http.staffed(server.url)
    const response = await create(org.member.token, { objectType: "skill", rawSourceText: SKILL, relativePath: "skills/deploy/SKILL.md" })
    expect(response.status).toBe(201)
    expect(ok(response, 201).ok).toBe(true)
    const item = ok(response, 201).item
    expect(item).toEqual({
      id: expect.stringMatching(/^cob_[0-9a-z]{26}$/),
      organizationId: org.organizationId,
      objectType: "skill",
      sourceMode: "cloud",
      status: "active",
      title: "deploy-to-staging",
      description: "Deploys the app to staging.",
      searchText: "deploy-to-staging\nDeploys the app to staging.\n# Deploy\n\nRun `make deploy`.",
      currentFileName: "SKILL.md",
      currentFileExtension: "md",
      currentRelativePath: "skills/deploy/SKILL.md",
      createdByOrgMembershipId: org.member.membership.id,
      connectorInstanceId: null,
      createdAt: ISO,
      updatedAt: item.createdAt,
      deletedAt: null,
      latestVersion: {
        id: expect.stringMatching(/^cov_[0-9a-z]{26}$/),
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
        createdByOrgMembershipId: org.member.membership.id,
        connectorSyncEventId: null,
        sourceRevisionRef: null,
        isDeletedVersion: false,
        createdAt: item.createdAt
      }
    })
    const read = await api.configObjects.get({ path: { configObjectId: item.id }, token: org.member.token })
    expect(read.status).toBe(200)
    expect(read.body).toEqual({ item })
    const grants = await api.configObjects.configObjectListAccess({ path: { configObjectId: item.id }, token: org.member.token })
    expect(grants.status).toBe(200)
    expect(ok(grants, 200).items).toEqual([
      expect.objectContaining({ orgMembershipId: org.member.membership.id, role: "manager", orgWide: false, teamId: null, removedAt: null })
    ])
  })

  it("keeps JSON content as written: member names and their order", async () => {
    const org = await Http.owner(server.url)
    const source = '{"mcpServers": {"zeta": {"url": "https://z.example.com"}, "alpha_one": {"command": "npx", "env": {"API_KEY_NAME": "x"}}}}'
    const item = await created(org.token, { objectType: "mcp", rawSourceText: source, metadata: { title: "Servers", some_key: 1 } })
    expect(item.title).toBe("Servers")
    expect(item.latestVersion.parserMode).toBe("json")
    expect(item.latestVersion.rawSourceText).toBe(source)
    expect(JSON.stringify(item.latestVersion.normalizedPayloadJson)).toBe(JSON.stringify(JSON.parse(source)))
    expect(item.latestVersion.metadata).toEqual({ title: "Servers", some_key: 1 })
    const read = ok(await api.configObjects.get({ path: { configObjectId: item.id }, token: org.token }), 200)
    expect(JSON.stringify(read.item.latestVersion.normalizedPayloadJson)).toBe(JSON.stringify(JSON.parse(source)))

    const fromObject = await created(org.token, { objectType: "hook", normalizedPayloadJson: { name: "lint", on: ["pre_commit"] }, schemaVersion: "2" })
    expect(fromObject.latestVersion).toMatchObject({
      parserMode: "json",
      schemaVersion: "2",
      rawSourceText: '{\n  "name": "lint",\n  "on": [\n    "pre_commit"\n  ]\n}',
      normalizedPayloadJson: { name: "lint", on: ["pre_commit"] }
    })
    expect(fromObject.title).toBe("lint")
  })

  it("refuses invalid skill front matter with each code and the path of the bad member", async () => {
    const org = await Http.owner(server.url)
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
      const response = await create(org.token, { objectType: "skill", rawSourceText: source })
      expect(response.status).toBe(400)
      expect(response.body).toMatchObject({ error: "invalid_request" })
      expect(invalid(response).details.map(({ code, path }) => ({ code, path }))).toEqual(expected)
      expect(invalid(response).details[0]?.message).toEqual(expect.any(String))
    }
    const viaObject = await create(org.token, { objectType: "skill", normalizedPayloadJson: { frontmatter: { name: "a" }, body: "b" } })
    expect(viaObject.status).toBe(400)
    expect(invalid(viaObject).details[0]).toMatchObject({ code: "invalid_skill_source", path: ["input", "normalizedPayloadJson"] })
    const badMcp = await create(org.token, { objectType: "mcp", rawSourceText: '{"mcpServers": {"x": {"port": 1}}}' })
    expect(invalid(badMcp).details).toEqual([expect.objectContaining({ code: "invalid_mcp_server", path: ["input", "rawSourceText", "mcpServers", "x"] })])
    const both = await create(org.token, { objectType: "context", rawSourceText: "a", normalizedPayloadJson: {} })
    expect(both.status).toBe(400)
    // `connector` is a value of the spec's enumeration (the document offers it), not one a person creates with.
    const connector = await create(org.token, { objectType: "context", rawSourceText: "a", sourceMode: "connector" })
    expect([connector.status, invalid(connector).details]).toEqual([400, [{
      path: ["input", "sourceMode"],
      message: "is `connector`: connector-sourced config objects come from a connector sync (POST /v1/connector-instances/{id}/sync), not a direct create; use `cloud` or `import`"
    }]])
    expect(ok(await api.configObjects.list({ token: org.token }), 200).items).toEqual([])
  })

  it("checks plugin ids: at most 100, the organization's, not deleted, editable by the caller; then adds the object to each", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    const input: typeof ConfigObjectInput.Encoded = { objectType: "context", rawSourceText: "Shared notes" }
    const mine = await insertPlugin(org.organizationId)
    const tooMany = await create(org.owner.token, input, Array.from({ length: 101 }, () => mine))
    expect(tooMany.status).toBe(400)
    expect(invalid(tooMany).details[0].path).toEqual(["pluginIds"])

    // The spec lists no 404 or 409 for this operation: each bad id is a 400 on its place in `pluginIds`.
    const stranger = typeid("plg").toString()
    const unknown = await create(org.owner.token, input, [mine, stranger])
    expect([unknown.status, unknown.body]).toEqual([400, {
      error: "invalid_request",
      details: [{ path: ["pluginIds", 1], message: `${stranger} is not a plugin of this organization`, code: "plugin_not_found" }]
    }])
    const theirs = await insertPlugin(other.organization.id)
    const gone = await insertPlugin(org.organizationId, { deleted: true })
    const foreignAndDeleted = await create(org.owner.token, input, [theirs, mine, gone, theirs])
    expect([foreignAndDeleted.status, invalid(foreignAndDeleted).details]).toEqual([400, [
      { path: ["pluginIds", 0], message: `${theirs} is not a plugin of this organization`, code: "plugin_not_found" },
      { path: ["pluginIds", 2], message: `${gone} is a deleted plugin: restore it first`, code: "plugin_deleted" },
      { path: ["pluginIds", 3], message: `${theirs} is not a plugin of this organization`, code: "plugin_not_found" }
    ]])
    const notEditor = await create(org.member.token, input, [mine])
    expect(notEditor.status).toBe(403)
    expect(notEditor.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for plugin." })
    await grantPlugin(org.organizationId, mine, org.member.membership.id, "viewer")
    expect((await create(org.member.token, input, [mine])).status).toBe(403)
    // Nothing was written by the refusals.
    expect(ok(await api.configObjects.list({ token: org.owner.token }), 200).items).toEqual([])

    await grantPlugin(org.organizationId, mine, org.admin.membership.id, "editor")
    const second = await insertPlugin(org.organizationId)
    const item = await created(org.owner.token, input, [mine, second, mine])
    const rows = await sql((q) =>
      q<{ pluginId: string; membershipSource: string }>`SELECT plugin_id, membership_source FROM plugin_config_objects
        WHERE organization_id = ${org.organizationId} AND config_object_id = ${item.id} ORDER BY plugin_id`
    )
    expect(rows).toEqual([mine, second].sort().map((pluginId) => ({ pluginId, membershipSource: "manual" })))
    const inPlugin = ok(await api.configObjects.list({ query: { pluginId: second }, token: org.owner.token }), 200)
    expect(inPlugin.items.map((o) => o.id)).toEqual([item.id])
    // The member views it through the plugin they can view.
    expect((await api.configObjects.get({ path: { configObjectId: item.id }, token: org.member.token })).status).toBe(200)
  })
})

describe("versions", () => {
  it("are immutable and numbered; a new one re-derives the object and records its reason", async () => {
    const org = await Http.owner(server.url)
    const item = await created(org.token, { objectType: "context", rawSourceText: "# First\nabout one" })
    const added = await api.configObjects.createVersion({ path: { configObjectId: item.id }, token: org.token, payload: { input: { rawSourceText: "# Second\nabout two", metadata: { note: 1 } }, reason: "rewrote it" } })
    expect(added.status).toBe(201)
    expect(ok(added, 201).ok).toBe(true)
    expect(ok(added, 201).item).toMatchObject({ id: item.id, title: "Second", description: "about two", createdAt: item.createdAt })
    expect(new Date(ok(added, 201).item.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(item.updatedAt).getTime())
    expect(ok(added, 201).item.latestVersion).toMatchObject({ number: 2, sourceRevisionRef: "rewrote it", createdVia: "cloud", metadata: { note: 1 } })

    const first = await api.configObjects.getVersion({ path: { configObjectId: item.id, versionId: item.latestVersion.id }, token: org.token })
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ item: item.latestVersion })
    const versions = ok(await api.configObjects.listVersions({ path: { configObjectId: item.id }, token: org.token }), 200)
    expect(versions.items.map((v) => v.number)).toEqual([2, 1])
    expect(versions.items[1]).toEqual(item.latestVersion)
    const onePage = ok(await api.configObjects.listVersions({ path: { configObjectId: item.id }, query: { limit: "1" }, token: org.token }), 200)
    expect(onePage.items.map((v) => v.number)).toEqual([2])
    const next = await api.configObjects.listVersions({ path: { configObjectId: item.id }, query: { limit: "1", cursor: onePage.nextCursor ?? "" }, token: org.token })
    expect(next.body).toEqual({ items: [item.latestVersion], nextCursor: null })

    const bad = await api.configObjects.createVersion({ path: { configObjectId: item.id }, token: org.token, payload: { input: { rawSourceText: "- a list", parserMode: "yaml" } } })
    expect(bad.status).toBe(400)
    expect(invalid(bad).details[0]).toMatchObject({ code: "invalid_yaml", path: ["input", "rawSourceText"] })
    expect(ok(await api.configObjects.listVersions({ path: { configObjectId: item.id }, token: org.token }), 200).items.length).toBe(2)
    const skill = await created(org.token, { objectType: "skill", rawSourceText: SKILL })
    const badSkill = await api.configObjects.createVersion({ path: { configObjectId: skill.id }, token: org.token, payload: { input: { rawSourceText: "no front matter" } } })
    expect(badSkill.status).toBe(400)
    expect(invalid(badSkill).details[0]).toMatchObject({ code: "invalid_skill_frontmatter", path: ["input", "rawSourceText", "frontmatter"] })
    const missing = await api.configObjects.getVersion({ path: { configObjectId: item.id, versionId: skill.latestVersion.id }, token: org.token })
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ error: "config_object_version_not_found", message: "Config object version not found." })
  })

  it("delete adds a deletion version, twice changes nothing; restore adds the content back; archive keeps it listed", async () => {
    const org = await Http.owner(server.url)
    const item = await created(org.token, { objectType: "agent", rawSourceText: "---\nname: reviewer\n---\nReview code." })
    const deleted = await api.configObjects.delete({ path: { configObjectId: item.id }, token: org.token })
    expect(deleted.status).toBe(200)
    expect(ok(deleted, 200).ok).toBe(true)
    expect(ok(deleted, 200).item).toMatchObject({ status: "deleted", deletedAt: ISO, title: "reviewer" })
    expect(ok(deleted, 200).item.latestVersion).toMatchObject({
      number: 2,
      isDeletedVersion: true,
      normalizedPayloadJson: null,
      rawSourceText: null,
      metadata: null,
      schemaVersion: "1",
      parserMode: "markdown"
    })
    const again = ok(await api.configObjects.delete({ path: { configObjectId: item.id }, token: org.token }), 200)
    expect(again.item).toEqual(ok(deleted, 200).item)

    const listed = ok(await api.configObjects.list({ token: org.token }), 200)
    expect(listed.items).toEqual([])
    expect(ok(await api.configObjects.list({ query: { includeDeleted: "true" }, token: org.token }), 200).items.map((o) => o.id)).toEqual([item.id])
    expect(ok(await api.configObjects.list({ query: { status: "deleted" }, token: org.token }), 200).items.map((o) => o.id)).toEqual([item.id])
    expect(ok(await api.configObjects.listVersions({ path: { configObjectId: item.id }, token: org.token }), 200).items.map((v) => v.number)).toEqual([1])
    expect(ok(await api.configObjects.listVersions({ path: { configObjectId: item.id }, query: { includeDeleted: "true" }, token: org.token }), 200).items.map((v) => v.number))
      .toEqual([2, 1])
    const blocked = await api.configObjects.createVersion({ path: { configObjectId: item.id }, token: org.token, payload: { input: { rawSourceText: "x" } } })
    expect(blocked.status).toBe(409)
    expect(blocked.body).toMatchObject({ error: "config_object_deleted" })
    const archiveDeleted = await api.configObjects.archive({ path: { configObjectId: item.id }, token: org.token })
    expect(archiveDeleted.status).toBe(409)

    const restored = await api.configObjects.restore({ path: { configObjectId: item.id }, token: org.token })
    expect(restored.status).toBe(200)
    expect(ok(restored, 200).item).toMatchObject({ status: "active", deletedAt: null })
    const { createdAt: _a, id: _b, number: _c, ...content } = item.latestVersion
    expect(ok(restored, 200).item.latestVersion).toMatchObject({ ...content, number: 3, isDeletedVersion: false })
    expect(ok(await api.configObjects.restore({ path: { configObjectId: item.id }, token: org.token }), 200).item).toEqual(ok(restored, 200).item)

    const archived = await api.configObjects.archive({ path: { configObjectId: item.id }, token: org.token })
    expect(ok(archived, 200).item).toMatchObject({ status: "archived", deletedAt: null })
    expect(ok(archived, 200).item.latestVersion.number).toBe(3)
    expect(ok(await api.configObjects.list({ token: org.token }), 200).items.map((o) => o.status)).toEqual(["archived"])
    const reactivated = ok(await api.configObjects.restore({ path: { configObjectId: item.id }, token: org.token }), 200)
    expect(reactivated.item).toMatchObject({ status: "active" })
    expect(reactivated.item.latestVersion.number).toBe(3)
  })
})

describe("the list", () => {
  it("filters by type, status, source mode, connector instance and words of the text", async () => {
    const org = await Http.owner(server.url)
    const skill = await created(org.token, { objectType: "skill", rawSourceText: SKILL })
    const notes = await created(org.token, { objectType: "context", rawSourceText: "Kubernetes rollout notes\nblue-green", sourceMode: "import" })
    const hook = await created(org.token, { objectType: "hook", rawSourceText: '{"name": "pre-commit lint"}' })
    await api.configObjects.archive({ path: { configObjectId: hook.id }, token: org.token })
    const ids = async (query: string) => {
      const response = await get(`/v1/config-objects${query}`, { token: org.token })
      return Http.expectStatus<typeof ConfigObjectPage.Encoded>("listing", response, 200).items.map((o) => o.id)
    }
    expect(await ids("")).toEqual([hook.id, notes.id, skill.id])
    expect(await ids("?objectType=skill")).toEqual([skill.id])
    expect(await ids("?status=archived")).toEqual([hook.id])
    expect(await ids("?status=active")).toEqual([notes.id, skill.id])
    expect(await ids("?sourceMode=import")).toEqual([notes.id])
    expect(await ids(`?connectorInstanceId=${typeid("cin").toString()}`)).toEqual([])
    expect(await ids("?q=kube")).toEqual([notes.id])
    expect(await ids("?q=ROLLOUT%20kub")).toEqual([notes.id])
    expect(await ids("?q=rollout%20deploy")).toEqual([])
    expect(await ids("?q=deploy")).toEqual([skill.id])
    expect(await ids("?q=blue-gr")).toEqual([notes.id])
    expect(await ids("?q=make")).toEqual([skill.id])
    expect(await ids("?q=lint")).toEqual([hook.id])
    // tsquery syntax is text here, never an operator or an error.
    for (const q of ["a & b", "!kube", "kube | x", "(kube", "kube:*", "'kube'", "\\", "&|!():*<->"]) {
      expect((await api.configObjects.list({ query: { q }, token: org.token })).status).toBe(200)
    }
    expect(await ids(`?q=${encodeURIComponent("!kube")}`)).toEqual([notes.id])
    const badCursor = await api.configObjects.list({ query: { cursor: "nonsense" }, token: org.token })
    expect(badCursor.status).toBe(400)
  })

  it("walks 160 objects by keyset without gaps or duplicates while others are added", async () => {
    const org = await Http.owner(server.url)
    const made: Array<string> = []
    for (let batch = 0; batch < 16; batch++) {
      const items = await Promise.all(Array.from({ length: 10 }, (_, i) => created(org.token, { objectType: "custom", rawSourceText: `item ${batch}-${i}` })))
      made.push(...items.map((item) => item.id))
    }
    const seen: Array<string> = []
    let cursor: string | null = null
    let pages = 0
    do {
      const page = await api.configObjects.list({ query: { limit: "23", ...(cursor ? { cursor } : {}) }, token: org.token })
      expect(page.status).toBe(200)
      seen.push(...ok(page, 200).items.map((o) => o.id))
      cursor = ok(page, 200).nextCursor
      if (pages++ % 2 === 0) await created(org.token, { objectType: "custom", rawSourceText: `added while paging ${pages}` })
    } while (cursor)
    expect(new Set(seen).size).toBe(seen.length)
    expect([...seen].sort()).toEqual([...made].sort())
    const all = ok(await api.configObjects.list({ query: { limit: "100" }, token: org.token }), 200)
    const times = all.items.map((o) => o.createdAt)
    expect(times).toEqual([...times].sort().reverse())
  })
})

describe("access", () => {
  it("a member needs a grant: none 403, viewer reads but cannot add versions, editor adds versions, manager archives", async () => {
    const org = await Http.staffed(server.url)
    const item = await created(org.owner.token, { objectType: "context", rawSourceText: "private" })
    const forbidden = await api.configObjects.get({ path: { configObjectId: item.id }, token: org.member.token })
    expect(forbidden.status).toBe(403)
    expect(forbidden.body).toEqual({ reason: "insufficient_access", message: "Missing viewer access for config object." })
    expect(ok(await api.configObjects.list({ token: org.member.token }), 200).items).toEqual([])
    expect(ok(await api.configObjects.list({ token: org.admin.token }), 200).items.map((o) => o.id)).toEqual([item.id])

    const granted = await api.configObjects.configObjectGrant({ path: { configObjectId: item.id }, token: org.owner.token, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } })
    expect(granted.status).toBe(201)
    expect((await api.configObjects.get({ path: { configObjectId: item.id }, token: org.member.token })).status).toBe(200)
    expect((await api.configObjects.listVersions({ path: { configObjectId: item.id }, token: org.member.token })).status).toBe(200)
    expect(ok(await api.configObjects.list({ token: org.member.token }), 200).items.map((o) => o.id)).toEqual([item.id])
    const version = await api.configObjects.createVersion({ path: { configObjectId: item.id }, token: org.member.token, payload: { input: { rawSourceText: "mine now" } } })
    expect(version.status).toBe(403)
    expect(version.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for config object." })
    expect((await api.configObjects.configObjectListAccess({ path: { configObjectId: item.id }, token: org.member.token })).status).toBe(403)

    await api.configObjects.configObjectGrant({ path: { configObjectId: item.id }, token: org.owner.token, payload: { orgMembershipId: org.member.membership.id, role: "editor" } })
    expect((await api.configObjects.createVersion({ path: { configObjectId: item.id }, token: org.member.token, payload: { input: { rawSourceText: "edited" } } })).status)
      .toBe(201)
    expect((await api.configObjects.archive({ path: { configObjectId: item.id }, token: org.member.token })).status).toBe(403)
    expect((await api.configObjects.delete({ path: { configObjectId: item.id }, token: org.member.token })).status).toBe(403)

    const grantId = ok(granted, 201).item.id
    expect((await api.configObjects.configObjectRevoke({ path: { configObjectId: item.id, grantId }, token: org.owner.token })).status).toBe(204)
    expect((await api.configObjects.get({ path: { configObjectId: item.id }, token: org.member.token })).status).toBe(403)
    const revoked = ok(await api.configObjects.configObjectListAccess({ path: { configObjectId: item.id }, query: { includeRevoked: "true" }, token: org.owner.token }), 200)
    expect(revoked.items.find((g) => g.id === grantId)?.removedAt).toEqual(ISO)
  })

  it("another organization's object is 404 everywhere", async () => {
    const org = await Http.owner(server.url)
    const other = await Http.owner(server.url, "Other")
    const item = await created(other.token, { objectType: "context", rawSourceText: "theirs" })
    const notFound = { error: "config_object_not_found", message: "Config object not found." }
    for (
      const response of [
        await api.configObjects.get({ path: { configObjectId: item.id }, token: org.token }),
        await api.configObjects.listVersions({ path: { configObjectId: item.id }, token: org.token }),
        await api.configObjects.getVersion({ path: { configObjectId: item.id, versionId: item.latestVersion.id }, token: org.token }),
        await api.configObjects.createVersion({ path: { configObjectId: item.id }, token: org.token, payload: { input: { rawSourceText: "x" } } }),
        await api.configObjects.archive({ path: { configObjectId: item.id }, token: org.token }),
        await api.configObjects.restore({ path: { configObjectId: item.id }, token: org.token }),
        await api.configObjects.delete({ path: { configObjectId: item.id }, token: org.token }),
        await api.configObjects.configObjectListAccess({ path: { configObjectId: item.id }, token: org.token })
      ]
    ) {
      expect(response.status).toBe(404)
      expect(response.body).toEqual(notFound)
    }
    expect(ok(await api.configObjects.list({ token: org.token }), 200).items).toEqual([])
    expect((await api.configObjects.get({ path: { configObjectId: item.id }, token: other.token })).status).toBe(200)
  })
})

describe("hostile bodies", () => {
  it("refuse NUL, a source over 1 MiB, and a body over 4 MiB with 4xx; a source under 1 MiB is taken", async () => {
    const org = await Http.owner(server.url)
    const nul = await create(org.token, { objectType: "context", rawSourceText: "a\u0000b" })
    expect(nul.status).toBe(400)
    const tooLong = await create(org.token, { objectType: "context", rawSourceText: "x".repeat(1024 * 1024 + 1) })
    expect(tooLong.status).toBe(400)
    expect(invalid(tooLong).details[0].path).toEqual(["input", "rawSourceText"])
    const huge = await post("/v1/config-objects", {
      token: org.token,
      rawBody: JSON.stringify({ input: { objectType: "context", rawSourceText: "x".repeat(100) }, pad: "y".repeat(5 * 1024 * 1024) })
    })
    expect(huge.status).toBe(413)
    const big = await created(org.token, { objectType: "context", rawSourceText: "é".repeat(500_000) })
    expect(new TextEncoder().encode(big.searchText).length).toBeLessThanOrEqual(60_000)
    expect(big.latestVersion.rawSourceText?.length).toBe(500_000)
    const deep = await create(org.token, { objectType: "hook", rawSourceText: "[".repeat(1000) + "]".repeat(1000) })
    expect(deep.status).toBe(400)
    const yamlNul = await create(org.token, { objectType: "hook", rawSourceText: 'command: "a\\0b"', parserMode: "yaml" })
    expect(yamlNul.status).toBe(400)
    expect(invalid(yamlNul).details[0]).toMatchObject({ code: "invalid_character", path: ["input", "rawSourceText", "command"] })
  })
})
