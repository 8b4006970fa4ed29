/**
 * Organization as code: `GET /v1/organization/document` writes the organization the caller acts in as its document,
 * named by email and name, sorted, the same bytes for the same state, valid by the published JSON Schema; `POST
 * /v1/organization/document/plan` says what a document would change, against the hash of those bytes.
 */
import { OrganizationDocument, organizationDocumentJsonSchema } from "@orgplane/schema"
import { Ajv2020 } from "ajv/dist/2020.js"
import { createHash } from "node:crypto"
import * as Schema from "effect/Schema"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
})
afterAll(() => server.close())

const api = calls(() => server.url)
const validate = new Ajv2020({ strict: false, validateFormats: false }).compile(organizationDocumentJsonSchema())

describe("the organization's document", () => {
  it("names members, invitations and teams by email and name, sorted, over every page, and is stable", async () => {
    const org = await Http.staffed(server.url)
    const other = await Http.owner(server.url, "Other")
    ok(await api.organizations.update({ token: org.owner.token, payload: { metadata: { zeta: "1", alpha: "2" } } }), 200)
    ok(await api.members.setDirectorySettings({ token: org.admin.token, payload: { emailsVisibleToMembers: true } }), 200)
    ok(await api.teams.create({ token: org.admin.token, payload: { name: "Zulu", memberIds: [org.member.membership.id] } }), 201)
    ok(await api.teams.create({
      token: org.admin.token,
      payload: { name: "Alpha", externalKey: "grp-alpha", memberIds: [org.member.membership.id, org.owner.membership.id] }
    }), 201)
    ok(await api.teams.create({ token: other.token, payload: { name: "Elsewhere" } }), 201)
    // More pending invitations than one page holds (100), in an order that is not the document's.
    const invited = Array.from({ length: 103 }, (_, index) => `invitee.${String(102 - index).padStart(3, "0")}@example.com`)
    for (const email of invited) {
      ok(await api.invitations.create({ token: org.admin.token, payload: { email, role: "member", delivery: "shown" } }), 201)
    }

    const exported = await api.organizationDocument.export({ token: org.admin.token })
    const document = ok(exported, 200)
    expect(validate(document), JSON.stringify(validate.errors)).toBe(true)
    expect(Schema.decodeUnknownSync(OrganizationDocument)(document)).toEqual(document)
    const byEmail = (left: { readonly email: string }, right: { readonly email: string }) => left.email < right.email ? -1 : 1
    expect(document).toEqual({
      version: 1,
      organization: { name: "Acme", logoUrl: null, metadata: { alpha: "2", zeta: "1" } },
      directory: { emailsVisibleToMembers: true },
      members: [
        { email: org.owner.email, role: "owner" },
        { email: org.admin.email, role: "admin" },
        { email: org.member.email, role: "member" }
      ].sort(byEmail),
      invitations: invited.map((email) => ({ email, role: "member", delivery: "shown" })).sort(byEmail),
      teams: [
        { name: "Alpha", externalKey: "grp-alpha", members: [org.member.email, org.owner.email].sort() },
        { name: "Zulu", externalKey: null, members: [org.member.email] }
      ]
    })
    expect(Object.keys(document.organization?.metadata ?? {})).toEqual(["alpha", "zeta"])
    // The same state, the same bytes.
    expect((await api.organizationDocument.export({ token: org.owner.token })).text).toBe(exported.text)
    // Another organization's document holds only its own.
    expect(ok(await api.organizationDocument.export({ token: other.token }), 200)).toMatchObject({
      members: [{ email: other.email, role: "owner" }],
      invitations: [],
      teams: [{ name: "Elsewhere", externalKey: null, members: [] }]
    })
  })

  it("plans nothing for its own export, and each difference as its change, against the live state's hash", async () => {
    const org = await Http.staffed(server.url)
    ok(await api.teams.create({ token: org.admin.token, payload: { name: "Ops", memberIds: [org.member.membership.id] } }), 201)
    const exported = await api.organizationDocument.export({ token: org.admin.token })
    const document = ok(exported, 200)
    const empty = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document } }), 200)
    expect(empty.changes).toEqual([])
    expect(empty.liveHash).toBe(`sha256:${createHash("sha256").update(exported.text).digest("hex")}`)
    expect(empty.markdown).toContain("0 to create, 0 to update, 0 to delete")

    const planned = ok(await api.organizationDocument.plan({
      token: org.admin.token,
      payload: {
        document: {
          version: 1,
          authoritative: ["teams"],
          members: [{ email: org.member.email.toUpperCase(), role: "admin" }],
          invitations: [{ email: "new.hire@example.com", role: "member", delivery: "shown" }],
          teams: [{ name: "Platform", externalKey: "grp-platform", members: [org.admin.email] }]
        }
      }
    }), 200)
    expect(planned.liveHash).toBe(empty.liveHash)
    expect(planned.changes).toEqual([
      { action: "update", kind: "member", name: org.member.email, fields: [{ field: "role", before: "member", after: "admin" }] },
      { action: "create", kind: "invitation", name: "new.hire@example.com", fields: [{ field: "role", after: "member" }, { field: "delivery", after: "shown" }] },
      { action: "delete", kind: "team", name: "Ops", fields: [{ field: "name", before: "Ops" }, { field: "externalKey", before: null }, { field: "members", before: [org.member.email] }] },
      {
        action: "create",
        kind: "team",
        name: "Platform",
        fields: [{ field: "name", after: "Platform" }, { field: "externalKey", after: "grp-platform" }, { field: "members", after: [org.admin.email] }]
      }
    ])
    expect(planned.markdown).toContain("2 to create, 1 to update, 1 to delete")
    expect(planned.markdown).toContain(`| update | member | ${org.member.email} | role | "member" | "admin" |`)
    // Nothing changed: the export is the same bytes.
    expect((await api.organizationDocument.export({ token: org.admin.token })).text).toBe(exported.text)

    // A change outside the plan moves the live state's hash.
    ok(await api.organizations.update({ token: org.owner.token, payload: { name: "Acme Renamed" } }), 200)
    const moved = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document } }), 200)
    expect(moved.liveHash).not.toBe(empty.liveHash)
    expect(moved.changes).toEqual([
      { action: "update", kind: "organization", name: "organization", fields: [{ field: "name", before: "Acme Renamed", after: "Acme" }] }
    ])

    const refused = await api.organizationDocument.plan({
      token: org.admin.token,
      payload: { document: { version: 1, members: [{ email: "stranger@example.com", role: "member" }] } }
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ error: "invalid_request", details: [{ path: ["document", "members", 0, "email"] }] })
    const unknownMember = await Http.request(server.url, "POST", "/v1/organization/document/plan", {
      token: org.admin.token,
      body: { document: { version: 1, colour: "blue" } }
    })
    expect(unknownMember.status).toBe(400)
    expect((await api.organizationDocument.plan({ token: org.member.token, payload: { document: { version: 1 } } })).status).toBe(403)
  })

  it("is an admin's: a plain member is refused, and so is an API key without the scope", async () => {
    const org = await Http.staffed(server.url)
    const refused = await api.organizationDocument.export({ token: org.member.token })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "insufficient_role" })
    const { key } = ok(await api.apiKeys.create({ token: org.admin.token, payload: { name: "teams only", scopes: ["teams.read"] } }), 201)
    const scoped = await api.organizationDocument.export({ apiKey: key })
    expect(scoped.status).toBe(403)
    expect(scoped.body).toMatchObject({ reason: "insufficient_scope" })
    expect((await api.organizationDocument.export({})).status).toBe(401)
  })
})
