/**
 * The Templates group through HTTP and the Promise client: immutable versions, search and paging, the 256 KiB
 * document limit, validation against a registered JSON Schema (and the defaults instantiate fills in), who may
 * create, change and delete, grants to members and teams, soft delete, the organization boundary, and bad input.
 */
import { createClient, OrgplaneError } from "@orgplane/client"
import { type CreateTemplateRequest, MAX_TEMPLATE_DOCUMENT_BYTES } from "@orgplane/schema"
import { calls, invalid, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

type Org = Awaited<ReturnType<typeof Http.staffed>>
type Person = Org["member"]

let server: TestServer.RunningServer
let schemasDir: string
let org: Org
let other: Org
/** A second plain member, in `team`; `org.member` is in no team. */
let bob: Person
let team: { readonly id: string }

/** The registered schema: `workspace-1` needs a `name` and `folders` of strings; `shell` defaults to `bash`. */
const workspaceSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  required: ["name", "folders"],
  properties: {
    name: { type: "string", minLength: 1 },
    folders: { type: "array", items: { type: "string" } },
    shell: { type: "string", default: "bash" },
    settings: { type: "object", properties: { tabs: { type: "integer", default: 2 } } }
  }
}

beforeAll(async () => {
  schemasDir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-template-schemas-"))
  await Fs.writeFile(Path.join(schemasDir, "workspace-1.json"), JSON.stringify(workspaceSchema))
  await Fs.writeFile(Path.join(schemasDir, "README.txt"), "not a schema: ignored")
  server = await TestServer.start({ templateSchemasDir: schemasDir })
  ;[org, other] = await Promise.all([Http.staffed(server.url), Http.staffed(server.url, "Elsewhere")])
  bob = await Http.join(server.url, org.owner.token, "member", "Bob")
  team = ok(await calls(server.url).teams.create({ token: org.owner.token, payload: { name: `Team ${unique()}`, memberIds: [bob.membership.id] } }), 201).team
})
afterAll(async () => {
  await server?.close()
  await Fs.rm(schemasDir, { recursive: true, force: true })
})

type Method = "GET" | "POST" | "PATCH" | "DELETE"
const call = (method: Method, path: string, who: { readonly token: string }, body?: unknown) =>
  Http.request(server.url, method, path, { token: who.token, body })
const { templates } = calls(() => server.url)
const unique = () => Math.random().toString(36).slice(2, 10)

const create = async (who: Person, overrides: Partial<typeof CreateTemplateRequest.Encoded> = {}) =>
  ok(await templates.create({
    token: who.token,
    payload: { name: `Template ${unique()}`, kind: "workspace", document: { name: "starter", folders: ["src"] }, ...overrides }
  }), 201)

describe("templates", () => {
  it("creates a template with its first version and reads it back", async () => {
    const created = await create(org.member, { name: "Service starter", description: "For services", document: { b: 1, a: [true, null, "x"] } })
    expect(created.template).toMatchObject({
      name: "Service starter",
      description: "For services",
      kind: "workspace",
      organizationId: org.organizationId,
      createdByOrgMembershipId: org.member.membership.id,
      latestVersion: { number: 1, schemaVersion: null, validated: false, sizeBytes: JSON.stringify({ b: 1, a: [true, null, "x"] }).length }
    })
    expect(created.template.id).toMatch(/^tpl_/)
    expect(created.template.latestVersion.id).toMatch(/^tpv_/)
    const read = ok(await templates.get({ token: org.member.token, path: { templateId: created.template.id } }), 200)
    expect(read).toEqual(created)
    // Member order is the author's (a `json` column, not `jsonb`).
    expect(Object.keys(read.document ?? {})).toEqual(["b", "a"])
  })

  it("keeps every version immutable: a document change adds one, a rename does not", async () => {
    const { template } = await create(org.member, { document: { step: 1 } })
    const token = org.member.token
    const path = { templateId: template.id }
    const renamed = ok(await templates.update({ token, path, payload: { name: "Renamed", description: "now described" } }), 200)
    expect(renamed.template).toMatchObject({ name: "Renamed", description: "now described", latestVersion: { number: 1 } })
    expect(renamed.document).toEqual({ step: 1 })
    const second = ok(await templates.update({ token, path, payload: { document: { step: 2 } } }), 200)
    expect(second.template.latestVersion.number).toBe(2)
    expect(second.document).toEqual({ step: 2 })
    const third = ok(await templates.update({ token, path, payload: { schemaVersion: "unregistered-7" } }), 200)
    expect(third.template.latestVersion).toMatchObject({ number: 3, schemaVersion: "unregistered-7", validated: false })
    expect(third.document).toEqual({ step: 2 })

    const versions = ok(await templates.listVersions({ token, path }), 200)
    expect(versions.items.map((v) => v.number)).toEqual([3, 2, 1])
    const first = versions.items[2]!
    const one = ok(await templates.getVersion({ token, path: { ...path, versionId: first.id } }), 200)
    expect(one).toEqual({ version: first, document: { step: 1 } })
    // An old version instantiates as it was.
    const old = ok(await templates.instantiate({ token, path, query: { versionId: first.id } }), 200)
    expect(old).toMatchObject({ templateId: template.id, version: { number: 1 }, document: { step: 1 }, defaultsApplied: false })
    // Another template's version id is not this template's.
    const elsewhere = await create(org.member)
    const wrong = await templates.getVersion({ token, path: { templateId: elsewhere.template.id, versionId: first.id } })
    expect(wrong.status).toBe(404)
    expect(wrong.body).toMatchObject({ error: "template_version_not_found" })
  })

  it("searches names by word prefix, filters by kind and pages across a boundary", async () => {
    const word = `zq${unique()}`
    const made: Array<string> = []
    for (let i = 0; i < 5; i++) made.push((await create(org.member, { name: `${word} alpha ${i}`, kind: i % 2 === 0 ? "workspace" : "agent-profile" })).template.id)
    await create(org.member, { name: "unrelated" })
    const token = org.member.token
    const byPrefix = ok(await templates.list({ token, query: { q: word.slice(0, 6) } }), 200)
    expect(byPrefix.items.map((t) => t.id)).toEqual([...made].reverse())
    const both = ok(await templates.list({ token, query: { q: `${word} alph`, kind: "agent-profile" } }), 200)
    expect(both.items.map((t) => t.id)).toEqual([made[3], made[1]])
    const none = ok(await templates.list({ token, query: { q: `${word}zzz` } }), 200)
    expect(none.items).toEqual([])

    const page1 = ok(await templates.list({ token, query: { q: word, limit: "2" } }), 200)
    const page2 = ok(await templates.list({ token, query: { q: word, limit: "2", cursor: String(page1.nextCursor) } }), 200)
    const page3 = ok(await templates.list({ token, query: { q: word, limit: "2", cursor: String(page2.nextCursor) } }), 200)
    expect([...page1.items, ...page2.items, ...page3.items].map((t) => t.id)).toEqual([...made].reverse())
    expect(page3.nextCursor).toBeNull()
    // A cursor belongs to its filters.
    const mixed = await call("GET", `/v1/templates?q=other&limit=2&cursor=${page1.nextCursor}`, org.member)
    expect(mixed.status).toBe(400)
  })

  it("takes a document of exactly 256 KiB and refuses one byte more", async () => {
    // {"x":"aaa…"} is 8 bytes of JSON around the string.
    const exact = "a".repeat(MAX_TEMPLATE_DOCUMENT_BYTES - 8)
    const accepted = await create(org.member, { document: { x: exact } })
    expect(accepted.template.latestVersion.sizeBytes).toBe(MAX_TEMPLATE_DOCUMENT_BYTES)
    const read = ok(await templates.get({ token: org.member.token, path: { templateId: accepted.template.id } }), 200)
    expect(read.document).toEqual({ x: exact })

    const over = await call("POST", "/v1/templates", org.member, { name: "big", kind: "workspace", document: { x: `${exact}a` } })
    expect(over.status).toBe(400)
    const [tooBig] = invalid(over).details
    expect(tooBig?.path).toEqual(["document"])
    expect(tooBig?.message).toContain("256 KiB")
    // Multi-byte characters count as their UTF-8 bytes.
    const wide = await call("POST", "/v1/templates", org.member, { name: "wide", kind: "workspace", document: "é".repeat(MAX_TEMPLATE_DOCUMENT_BYTES / 2) })
    expect(wide.status).toBe(400)
    // Past the body limit, the request guard answers before anything is parsed.
    const huge = await call("POST", "/v1/templates", org.member, { name: "huge", kind: "workspace", document: "a".repeat(1024 * 1024) })
    expect(huge.status).toBe(413)
    expect(huge.body).toMatchObject({ error: "payload_too_large" })
  })

  it("validates against the registered schema, with every violation's path", async () => {
    const valid = await create(org.member, { schemaVersion: "workspace-1", document: { name: "svc", folders: ["src"], settings: {} } })
    expect(valid.template.latestVersion).toMatchObject({ schemaVersion: "workspace-1", validated: true })
    // The stored document is the one sent: defaults are not written into it.
    expect(valid.document).toEqual({ name: "svc", folders: ["src"], settings: {} })

    const violating = await templates.create({
      token: org.member.token,
      payload: { name: "bad", kind: "workspace", schemaVersion: "workspace-1", document: { name: "", folders: ["src", 7], shell: 1 } }
    })
    expect(violating.status).toBe(400)
    const found = invalid(violating).details.map((d) => ({ path: d.path, keyword: d.keyword, code: d.code }))
    expect(found).toEqual(expect.arrayContaining([
      { path: ["document", "name"], keyword: "minLength", code: "schema_violation" },
      { path: ["document", "folders", 1], keyword: "type", code: "schema_violation" },
      { path: ["document", "shell"], keyword: "type", code: "schema_violation" }
    ]))
    expect(found).toHaveLength(3)
    const missing = await templates.create({ token: org.member.token, payload: { name: "bad", kind: "workspace", schemaVersion: "workspace-1", document: {} } })
    expect(invalid(missing).details.map((d) => d.path)).toEqual([["document", "name"], ["document", "folders"]])

    // An update is validated too, also when only the schemaVersion changes.
    const loose = await create(org.member, { document: { anything: true } })
    const refused = await templates.update({ token: org.member.token, path: { templateId: loose.template.id }, payload: { schemaVersion: "workspace-1" } })
    expect(refused.status).toBe(400)
    const unchanged = ok(await templates.listVersions({ token: org.member.token, path: { templateId: loose.template.id } }), 200)
    expect(unchanged.items).toHaveLength(1)
  })

  it("instantiates with the registered schema's defaults filled in", async () => {
    const { template } = await create(org.member, { schemaVersion: "workspace-1", document: { name: "svc", folders: [], settings: {} } })
    const path = { templateId: template.id }
    const instance = ok(await templates.instantiate({ token: org.member.token, path }), 200)
    expect(instance).toMatchObject({
      templateId: template.id,
      kind: "workspace",
      defaultsApplied: true,
      document: { name: "svc", folders: [], settings: { tabs: 2 }, shell: "bash" }
    })
    // The stored document is unchanged by instantiating.
    const read = ok(await templates.get({ token: org.member.token, path }), 200)
    expect(read.document).toEqual({ name: "svc", folders: [], settings: {} })
  })

  it("lets the creator, admins and owners change and delete, and not another member", async () => {
    const { template } = await create(org.member)
    const path = { templateId: template.id }
    // Bob sees nothing of a template nobody shared with him.
    expect((await templates.get({ token: bob.token, path })).status).toBe(404)
    expect((await templates.update({ token: bob.token, path, payload: { name: "mine now" } })).status).toBe(404)
    expect((await templates.delete({ token: bob.token, path })).status).toBe(404)
    // With a viewer grant he reads but cannot change.
    ok(await templates.templateGrant({ token: org.member.token, path, payload: { orgMembershipId: bob.membership.id, role: "viewer" } }), 201)
    ok(await templates.get({ token: bob.token, path }), 200)
    const change = await templates.update({ token: bob.token, path, payload: { name: "mine now" } })
    expect(change.status).toBe(403)
    expect(change.body).toMatchObject({ reason: "insufficient_access" })
    expect((await templates.delete({ token: bob.token, path })).status).toBe(403)
    // Admins and owners change any template.
    ok(await templates.update({ token: org.admin.token, path, payload: { name: "Admin's name" } }), 200)
    ok(await templates.update({ token: org.owner.token, path, payload: { description: "Owner's words" } }), 200)
    // An admin deletes it; then it is gone for everyone.
    expect((await templates.delete({ token: org.admin.token, path })).status).toBe(204)
    for (const who of [org.member, org.owner, bob]) {
      const gone = await templates.get({ token: who.token, path })
      expect(gone.status).toBe(404)
      expect(gone.body).toMatchObject({ error: "template_not_found" })
    }
    expect((await templates.delete({ token: org.member.token, path })).status).toBe(404)
    expect((await templates.listVersions({ token: org.member.token, path })).status).toBe(404)
    expect((await templates.instantiate({ token: org.member.token, path })).status).toBe(404)
    const listed = ok(await templates.list({ token: org.owner.token, query: { limit: "100" } }), 200)
    expect(listed.items.map((t) => t.id)).not.toContain(template.id)
  })

  it("keeps the creator's access even when their own grants are revoked", async () => {
    const { template } = await create(org.member)
    const token = org.member.token
    const path = { templateId: template.id }
    const granted = ok(await templates.templateGrant({ token, path, payload: { teamId: team.id, role: "editor" } }), 201)
    const grants = ok(await templates.templateListAccess({ token, path }), 200)
    expect(grants.items.map((g) => g.id)).toEqual([granted.item.id])
    expect((await templates.templateRevoke({ token, path: { ...path, grantId: granted.item.id } })).status).toBe(204)
    ok(await templates.update({ token, path, payload: { name: "still mine" } }), 200)
  })

  it("shares through team grants: a team member sees it, a member outside the team does not", async () => {
    const { template } = await create(org.admin, { name: `Team shared ${unique()}` })
    const path = { templateId: template.id }
    const grant = ok(await templates.templateGrant({ token: org.admin.token, path, payload: { teamId: team.id, role: "editor" } }), 201)
    ok(await templates.get({ token: bob.token, path }), 200)
    ok(await templates.update({ token: bob.token, path, payload: { document: { edited: "by bob" } } }), 200)
    const bobs = ok(await templates.list({ token: bob.token, query: { limit: "100" } }), 200)
    expect(bobs.items.map((t) => t.id)).toContain(template.id)
    // A member outside the team: 404, and not listed.
    const outside = await templates.get({ token: org.member.token, path })
    expect(outside.status).toBe(404)
    const members = ok(await templates.list({ token: org.member.token, query: { limit: "100" } }), 200)
    expect(members.items.map((t) => t.id)).not.toContain(template.id)
    // An editor may not manage grants; revoking takes effect at once.
    expect((await templates.templateListAccess({ token: bob.token, path })).status).toBe(403)
    expect((await templates.templateRevoke({ token: org.admin.token, path: { ...path, grantId: grant.item.id } })).status).toBe(204)
    expect((await templates.get({ token: bob.token, path })).status).toBe(404)
    // Only owners and admins share with the whole organization.
    const orgWide = await templates.templateGrant({ token: org.member.token, path, payload: { orgWide: true, role: "viewer" } })
    expect(orgWide.status).toBe(404)
    ok(await templates.templateGrant({ token: org.admin.token, path, payload: { orgWide: true, role: "viewer" } }), 201)
    ok(await templates.get({ token: org.member.token, path }), 200)
    const mine = await create(org.member)
    const refused = await templates.templateGrant({ token: org.member.token, path: { templateId: mine.template.id }, payload: { orgWide: true, role: "viewer" } })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "insufficient_role" })
  })

  it("answers 404 for another organization's template on every operation", async () => {
    const { template } = await create(other.owner)
    const path = { templateId: template.id }
    const token = org.owner.token
    for (const response of [
      await templates.get({ token, path }),
      await templates.update({ token, path, payload: { name: "taken" } }),
      await templates.delete({ token, path }),
      await templates.listVersions({ token, path }),
      await templates.getVersion({ token, path: { ...path, versionId: template.latestVersion.id } }),
      await templates.instantiate({ token, path }),
      await templates.templateGrant({ token, path, payload: { orgMembershipId: org.member.membership.id, role: "viewer" } }),
      await templates.templateListAccess({ token, path })
    ]) {
      expect(response.status).toBe(404)
      expect(response.body).toMatchObject({ error: "template_not_found" })
    }
    const listed = ok(await templates.list({ token, query: { limit: "100" } }), 200)
    expect(listed.items.map((t) => t.id)).not.toContain(template.id)
    ok(await templates.get({ token: other.owner.token, path }), 200)
  })

  it("refuses bad input with a 4xx in the error shape", async () => {
    const post = (body: unknown) => call("POST", "/v1/templates", org.member, body)
    const base = { name: "x", kind: "workspace", document: {} }
    const cases: ReadonlyArray<[string, unknown, ReadonlyArray<string | number>]> = [
      ["no document", { name: "x", kind: "workspace" }, ["document"]],
      ["no name", { kind: "workspace", document: {} }, ["name"]],
      ["blank name", { ...base, name: "   " }, ["name"]],
      ["name of the wrong type", { ...base, name: 7 }, ["name"]],
      ["kind with capitals", { ...base, kind: "Workspace" }, ["kind"]],
      ["kind of the wrong type", { ...base, kind: ["workspace"] }, ["kind"]],
      ["schemaVersion with a slash", { ...base, schemaVersion: "../etc/passwd" }, ["schemaVersion"]],
      ["unknown member", { ...base, templateData: {} }, ["templateData"]],
      ["NUL in the document", { ...base, document: { a: "x\u0000y" } }, ["document", "a"]],
      ["NUL in a member name", { ...base, document: { "a\u0000": 1 } }, ["document"]],
      ["lone surrogate", { ...base, document: { a: "\ud800" } }, ["document", "a"]]
    ]
    for (const [what, body, path] of cases) {
      const response = await post(body)
      expect(response.status, what).toBe(400)
      const refused = invalid(response)
      expect(refused.error, what).toBe("invalid_request")
      expect(refused.details.map((d) => d.path), what).toContainEqual(expect.arrayContaining([...path]))
    }
    // Deep JSON: the request guard's 64 levels (the body's own level included).
    let deep: unknown = 1
    for (let i = 0; i < 70; i++) deep = [deep]
    const tooDeep = await post({ ...base, document: deep })
    expect(tooDeep.status).toBe(400)
    let fits: unknown = 1
    for (let i = 0; i < 62; i++) fits = [fits]
    Http.expectStatus("62 levels inside the document fit", await post({ ...base, document: fits }), 201)
    // Malformed JSON, bad ids, an empty update, a bad query.
    const malformed = await Http.request(server.url, "POST", "/v1/templates", { token: org.member.token, rawBody: "{\"name\": " })
    expect(malformed.status).toBe(400)
    expect((await call("GET", "/v1/templates/tpl_nope", org.member)).status).toBe(400)
    expect((await call("GET", "/v1/templates/cob_01h455vb4pex5vsknk084sn02q", org.member)).status).toBe(400)
    const { template } = await create(org.member)
    const empty = await call("PATCH", `/v1/templates/${template.id}`, org.member, {})
    expect(empty.status).toBe(400)
    expect((await call("GET", `/v1/templates?kind=Nope`, org.member)).status).toBe(400)
    expect((await call("GET", `/v1/templates/${template.id}/instantiate?versionId=tpv_x`, org.member)).status).toBe(400)
  })

  it("works through the Promise client", async () => {
    const client = createClient({ baseUrl: server.url, token: org.member.token })
    const created = await client.templates.create({ payload: { name: `Client ${unique()}`, kind: "workspace", document: { name: "c", folders: [] } } })
    const updated = await client.templates.update({ path: { templateId: created.template.id }, payload: { schemaVersion: "workspace-1" } })
    expect(updated.template.latestVersion).toMatchObject({ number: 2, validated: true })
    const versions = await client.templates.listVersions({ path: { templateId: created.template.id } })
    expect(versions.items.map((v) => v.number)).toEqual([2, 1])
    const instance = await client.templates.instantiate({ path: { templateId: created.template.id } })
    expect(instance.document).toEqual({ name: "c", folders: [], shell: "bash" })
    await client.templates.delete({ path: { templateId: created.template.id } })
    const error = await client.templates.get({ path: { templateId: created.template.id } }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OrgplaneError)
    expect((error as OrgplaneError).status).toBe(404)
  })

  it("answers 401 without credentials", async () => {
    for (const response of [
      await Http.request(server.url, "GET", "/v1/templates"),
      await Http.request(server.url, "POST", "/v1/templates", { body: { name: "x", kind: "workspace", document: {} } })
    ]) {
      expect(response.status).toBe(401)
    }
  })
})
