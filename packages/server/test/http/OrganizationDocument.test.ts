/**
 * Organization as code: `GET /v1/organization/document` writes the organization the caller acts in as its document,
 * named by email and name, sorted, the same bytes for the same state, valid by the published JSON Schema; `POST
 * /v1/organization/document/plan` says what a document would change, against the hash of those bytes; `POST
 * /v1/organization/document/apply` makes that plan all or nothing, each change recorded naming the plan, and after
 * it the document plans nothing (over generated documents too); `GET /v1/organization/document/drift` and the drift
 * job name what changed outside it since, and who changed it.
 */
import { OrganizationDocument, organizationDocumentJsonSchema, PluginId } from "@orgplane/schema"
import { Ajv2020 } from "ajv/dist/2020.js"
import { createHash, randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeMcp from "../../../../packages/testkit/src/FakeMcp.js"
import * as IdpSaml from "../../../../packages/testkit/src/IdpSaml.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Drift from "../../src/orgdocument/Drift.js"
import { DocumentsRepository } from "../../src/orgdocument/DocumentsRepository.js"
import * as LlmConfig from "../../src/llm/LlmConfig.js"
import { LiveDocuments } from "../../src/orgdocument/LiveDocuments.js"
import { AuditRecorder } from "../../src/platform/AuditRecorder.js"
import * as Config from "../../src/platform/Config.js"
import { IdGenerator } from "../../src/platform/Ids.js"
import { CursorKey } from "../../src/platform/Keyset.js"

const metricsToken = `metrics-${randomBytes(12).toString("hex")}`
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  // The MCP fakes are on loopback: private destinations allowed.
  server = await TestServer.startSharingDatabase({ metricsToken, outboundAllowPrivate: true })
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
      audit: { retentionDays: 365 },
      ssoPolicy: { requireSso: false, ownersPasswordFallback: true },
      members: [
        { email: org.owner.email, role: "owner" },
        { email: org.admin.email, role: "admin" },
        { email: org.member.email, role: "member" }
      ].sort(byEmail),
      invitations: invited.map((email) => ({ email, role: "member", delivery: "shown" })).sort(byEmail),
      teams: [
        { name: "Alpha", externalKey: "grp-alpha", members: [org.member.email, org.owner.email].sort() },
        { name: "Zulu", externalKey: null, members: [org.member.email] }
      ],
      llmProviders: [],
      mcpConnections: [],
      scimConnections: [],
      // Never used: the built-in defaults are the default policy's.
      desktopDefaultPolicy: {
        allowCustomProviders: true,
        allowPartnerModel: true,
        allowMultipleWorkspaces: true,
        allowControlSettings: true,
        allowManageExtensions: true,
        allowBuiltInExtensions: true,
        allowAlphaUpdates: true,
        showWelcomePage: true,
        onboardingPrompts: [],
        onboardingPromptDescriptions: []
      },
      desktopPolicies: [],
      templates: [],
      configObjects: [],
      plugins: [],
      marketplaces: [],
      connectors: [],
      ssoConnections: [],
      auditStreams: [],
      apiKeys: [],
      domains: []
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

describe("applying a plan", () => {
  it("makes the reviewed plan in one go, each change an event naming the plan, and then the document plans nothing", async () => {
    const org = await Http.staffed(server.url)
    const ops = ok(await api.teams.create({ token: org.admin.token, payload: { name: "Ops", memberIds: [org.member.membership.id] } }), 201)
    const document = {
      version: 1 as const,
      authoritative: ["teams" as const],
      // Metadata in another order than the export's: equal values are no change.
      organization: { name: "Acme Applied", logoUrl: null, metadata: { zeta: "1", alpha: "2" } },
      directory: { emailsVisibleToMembers: true },
      members: [{ email: org.member.email, role: "admin" as const }],
      invitations: [{ email: "new.hire@example.com", role: "member" as const, delivery: "shown" as const }],
      teams: [{ name: "Platform", externalKey: "grp-platform", members: [org.admin.email, org.member.email] }]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => `${change.action} ${change.kind} ${change.name}`)).toEqual([
      "update organization organization",
      "update directory directory",
      `update member ${org.member.email}`,
      "create invitation new.hire@example.com",
      "delete team Ops",
      "create team Platform"
    ])

    const applied = ok(await api.organizationDocument.apply({ token: org.admin.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(applied.planHash).toBe(planned.planHash)
    expect(applied.changes).toEqual(planned.changes)
    expect(applied.inviteTokens).toEqual([{ email: "new.hire@example.com", inviteToken: expect.any(String) }])
    const after = await api.organizationDocument.export({ token: org.admin.token })
    expect(applied.liveHash).toBe(`sha256:${createHash("sha256").update(after.text).digest("hex")}`)
    expect(ok(after, 200)).toMatchObject({
      organization: { name: "Acme Applied", metadata: { alpha: "2", zeta: "1" } },
      directory: { emailsVisibleToMembers: true },
      invitations: [{ email: "new.hire@example.com", role: "member", delivery: "shown" }],
      teams: [{ name: "Platform", externalKey: "grp-platform", members: [org.admin.email, org.member.email].sort() }]
    })
    const again = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document } }), 200)
    expect(again).toMatchObject({ changes: [], liveHash: applied.liveHash })

    // One event per change and the apply's own, all through the admin's session, naming the plan.
    const events = ok(await api.audit.listEvents({ token: org.owner.token, query: { limit: "50" } }), 200).items
      .filter((event) => event.via.planHash === planned.planHash)
    expect(events.map((event) => event.action).sort()).toEqual([
      "invitation.create",
      "member.directory.update",
      "member.role.update",
      "organization.document.apply",
      "organization.update",
      "team.create",
      "team.delete"
    ])
    expect(new Set(events.map((event) => `${event.actor.id} ${event.via.credentialId} ${event.requestId}`)).size).toBe(1)
    expect(events.find((event) => event.action === "team.delete")?.targets).toEqual([{ type: "team", id: ops.team.id }])
    expect(events.find((event) => event.action === "organization.document.apply")?.targets).toEqual([{ type: "organization", id: org.organizationId }])
    expect(events.find((event) => event.action === "member.role.update")?.changes).toMatchObject({ before: { role: "member" }, after: { role: "admin" } })

    // Applied again, the plan changes nothing and succeeds; another plan made against the old state is stale.
    const twice = ok(await api.organizationDocument.apply({ token: org.admin.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(twice).toMatchObject({ changes: [], liveHash: applied.liveHash, inviteTokens: [] })
    const stale = await api.organizationDocument.apply({
      token: org.admin.token,
      payload: { document: { ...document, directory: { emailsVisibleToMembers: false } }, planHash: planned.planHash }
    })
    expect(stale.status).toBe(409)
    expect(stale.body).toMatchObject({ error: "plan_stale" })
    expect((await api.organizationDocument.export({ token: org.admin.token })).text).toBe(after.text)
  })

  it("changes nothing when one change is refused, and keeps its applier and the organization's owner", async () => {
    const org = await Http.staffed(server.url)
    const before = await api.organizationDocument.export({ token: org.owner.token })
    const planOf = async (token: string, document: typeof OrganizationDocument.Encoded) =>
      ok(await api.organizationDocument.plan({ token, payload: { document } }), 200).planHash

    // An admin may rename the organization but not make an owner: neither happens.
    const promoting = {
      version: 1 as const,
      organization: { name: "Never Renamed", logoUrl: null, metadata: {} },
      members: [{ email: org.member.email, role: "owner" as const }]
    }
    const refused = await api.organizationDocument.apply({
      token: org.admin.token,
      payload: { document: promoting, planHash: await planOf(org.admin.token, promoting) }
    })
    expect(refused.status).toBe(403)
    expect(refused.body).toMatchObject({ reason: "insufficient_role", message: expect.stringContaining(`member "${org.member.email}" (update)`) })
    expect((await api.organizationDocument.export({ token: org.owner.token })).text).toBe(before.text)

    // Removing or demoting oneself is refused; so is removing the last owner.
    const leaving = { version: 1 as const, authoritative: ["members" as const], members: [{ email: org.owner.email, role: "owner" as const }] }
    const selfRemoval = await api.organizationDocument.apply({ token: org.admin.token, payload: { document: leaving, planHash: await planOf(org.admin.token, leaving) } })
    expect(selfRemoval.status).toBe(409)
    expect(selfRemoval.body).toMatchObject({ error: "document_locks_you_out" })
    const demoting = { version: 1 as const, members: [{ email: org.owner.email, role: "admin" as const }] }
    const selfDemotion = await api.organizationDocument.apply({ token: org.owner.token, payload: { document: demoting, planHash: await planOf(org.owner.token, demoting) } })
    expect(selfDemotion.body).toMatchObject({ error: "document_locks_you_out" })
    expect((await api.organizationDocument.export({ token: org.owner.token })).text).toBe(before.text)

    // A team naming a member the same document removes cannot be planned.
    const contradictory = await api.organizationDocument.plan({
      token: org.owner.token,
      payload: {
        document: {
          version: 1,
          authoritative: ["members"],
          members: [{ email: org.owner.email, role: "owner" }, { email: org.admin.email, role: "admin" }],
          teams: [{ name: "Team", externalKey: null, members: [org.member.email] }]
        }
      }
    })
    expect(contradictory.status).toBe(400)
    expect(contradictory.body).toMatchObject({ details: [{ path: ["document", "teams", 0, "members", 0] }] })

    // The owner removes the member, whose teams and role go with them.
    const removing = { version: 1 as const, authoritative: ["members" as const], members: [{ email: org.owner.email, role: "owner" as const }, { email: org.admin.email, role: "admin" as const }] }
    const removed = ok(await api.organizationDocument.apply({
      token: org.owner.token,
      payload: { document: removing, planHash: await planOf(org.owner.token, removing) }
    }), 200)
    expect(removed.changes).toEqual([{ action: "delete", kind: "member", name: org.member.email, fields: [{ field: "role", before: "member" }] }])
    expect(ok(await api.organizationDocument.export({ token: org.owner.token }), 200).members?.map((member) => member.email)).toEqual(
      [org.owner.email, org.admin.email].sort()
    )
  })

  it("leaves every generated document, and the organization's own export, planning nothing once applied", async () => {
    const org = await Http.staffed(server.url)
    // SCIM connections need the enterprise plan.
    await server.sql((sql) => sql`UPDATE organizations SET plan = 'enterprise' WHERE id = ${org.organizationId}`)
    const people = [org.owner.email, org.admin.email, org.member.email]
    const startedAt = Date.now()
    const word = fc.constantFrom("alpha", "beta", "gamma", "Delta")
    const secretRef = fc.record({ from: fc.constantFrom("env:KEY_A", "env:KEY_B", "file:keys/b.key"), version: fc.integer({ min: 0, max: 2 }) })
    const document = fc.record({
      authoritative: fc.subarray(["invitations" as const, "teams" as const, "llmProviders" as const, "mcpConnections" as const, "scimConnections" as const, "desktopPolicies" as const, "templates" as const, "configObjects" as const, "plugins" as const, "marketplaces" as const, "ssoConnections" as const, "auditStreams" as const, "apiKeys" as const]),
      organization: fc.option(fc.record({
        name: word.map((name) => `Acme ${name}`),
        logoUrl: fc.constantFrom(null, "https://acme.example/logo.png"),
        metadata: fc.dictionary(word, word, { maxKeys: 3 })
      }), { nil: undefined }),
      directory: fc.option(fc.record({ emailsVisibleToMembers: fc.boolean() }), { nil: undefined }),
      audit: fc.option(fc.record({ retentionDays: fc.constantFrom(30, 365, 400) }), { nil: undefined }),
      // Not required: requiring SSO needs an active connection, which needs a test.
      ssoPolicy: fc.option(fc.record({ requireSso: fc.constant(false), ownersPasswordFallback: fc.boolean() }), { nil: undefined }),
      // The owner applies, and keeps their own role.
      members: fc.option(fc.record({ admin: fc.constantFrom("admin" as const, "member" as const), member: fc.constantFrom("owner" as const, "admin" as const, "member" as const) }), { nil: undefined }),
      invitations: fc.option(fc.uniqueArray(fc.record({
        email: word.map((name) => `${name.toLowerCase()}.invitee@example.com`),
        role: fc.constantFrom("admin" as const, "member" as const)
      }), { selector: (invitation) => invitation.email, maxLength: 3 }), { nil: undefined }),
      teams: fc.option(fc.uniqueArray(fc.record({
        name: word,
        keyed: fc.boolean(),
        members: fc.subarray(people),
        upper: fc.boolean()
      }), { selector: (team) => team.name.toLowerCase(), maxLength: 3 }), { nil: undefined }),
      // Catalog providers (a custom one's base URL would be called), figures given or the catalog's, secrets by
      // reference. A provider's catalog is fixed once created, and its key cannot be removed: each name keeps one
      // catalog, and every document names a key (documents the plan refuses are the other tests').
      llmProviders: fc.option(fc.uniqueArray(fc.record({
        name: word,
        picks: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }),
        contextWindow: fc.option(fc.constantFrom(32000, 64000), { nil: undefined }),
        headers: fc.uniqueArray(fc.record({ name: fc.constantFrom("X-Team", "HTTP-Referer"), value: secretRef }), { selector: (header) => header.name, maxLength: 2 }),
        apiKey: secretRef
      }), { selector: (provider) => provider.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      // OAuth connections (the others are checked live). A pre-registered client cannot be removed: each name keeps
      // its kind of client, a name of even length a pre-registered one with its secret.
      mcpConnections: fc.option(fc.uniqueArray(fc.record({
        name: word,
        path: fc.constantFrom("a", "b"),
        perMember: fc.boolean(),
        issuer: fc.constantFrom(null, "https://auth.one.example", "https://auth.two.example"),
        scopes: fc.subarray(["read", "write", "admin"]),
        secret: secretRef,
        allDisabled: fc.boolean(),
        disabledTools: fc.subarray(["delete_issue", "create_issue", "search"])
      }), { selector: (connection) => connection.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      scimConnections: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("Okta", "Entra", "okta"),
        groupMappingMode: fc.constantFrom("metadata_only" as const, "create_teams" as const, "link_by_external_key" as const),
        defaultRole: fc.constantFrom("admin" as const, "member" as const),
        roleRules: fc.uniqueArray(fc.record({ group: word, role: fc.constantFrom("admin" as const, "member" as const) }), { selector: (rule) => rule.group.toLowerCase(), maxLength: 3 })
      }), { selector: (connection) => connection.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      desktopDefaultPolicy: fc.option(fc.record({ allowAlphaUpdates: fc.boolean(), showWelcomePage: fc.boolean() }, { requiredKeys: [] }), { nil: undefined }),
      // Members only: a team named here might be one a generated document deletes.
      desktopPolicies: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("Contractors", "Interns", "contractors"),
        enabled: fc.boolean(),
        priority: fc.constantFrom(0, 10, 20),
        policy: fc.record({ allowCustomProviders: fc.boolean(), onboardingPrompts: fc.constantFrom(["Say hello"], []) }, { requiredKeys: [] }),
        members: fc.subarray(people),
        teams: fc.constant([])
      }), { selector: (policy) => policy.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      templates: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("Starter", "Notes", "starter"),
        description: fc.constantFrom("", "For services"),
        kind: fc.constantFrom("workspace", "note"),
        document: fc.oneof(fc.dictionary(word, fc.oneof(word, fc.integer(), fc.boolean()), { maxKeys: 3 }), fc.array(word, { maxLength: 3 })),
        grants: fc.subarray([{ organization: true as const, role: "viewer" as const }, { member: org.member.email, role: "editor" as const }])
      }), { selector: (template) => template.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      // Skills and context files by path; a path keeps its type (fixed once created), and is written in one case.
      configObjects: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("deploy", "lint", "review"),
        skill: fc.boolean(),
        body: fc.constantFrom("Run it.", "Run it twice."),
        metadata: fc.constantFrom(null, { owner: "platform" }),
        status: fc.constantFrom("active" as const, "archived" as const),
        grants: fc.subarray([{ organization: true as const, role: "viewer" as const }, { member: org.member.email, role: "editor" as const }])
      }), { selector: (object) => `${object.name} ${object.skill}`, maxLength: 2 }), { nil: undefined }),
      plugins: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("Lint", "Deploy", "lint"),
        description: fc.constantFrom("", "Checks"),
        status: fc.constantFrom("active" as const, "archived" as const),
        // Holding only config objects the same document names: an object of an earlier run may be one it deletes.
        objectPicks: fc.option(fc.array(fc.nat(), { maxLength: 2 }), { nil: undefined }),
        grants: fc.subarray([{ organization: true as const, role: "viewer" as const }, { member: org.admin.email, role: "manager" as const }])
      }), { selector: (plugin) => plugin.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      // Listing only plugins the same document names: a plugin of an earlier run may be one this document deletes.
      marketplaces: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("Internal", "Partners", "internal"),
        description: fc.constantFrom("", "Ours"),
        logoUrl: fc.constantFrom(null, "/logos/acme.png", "https://acme.example/m.png"),
        picks: fc.array(fc.nat(), { maxLength: 2 }),
        grants: fc.subarray([{ organization: true as const, role: "viewer" as const }])
      }), { selector: (marketplace) => marketplace.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      // The owner's own keys (a key acts as its maker), expiring within the longest lifetime.
      apiKeys: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("CI", "Deploy", "ci"),
        scopes: fc.subarray<"teams.read" | "members.read" | "teams.*">(["teams.read", "members.read", "teams.*"], { minLength: 1 }),
        days: fc.integer({ min: 1, max: 30 })
      }), { selector: (key) => key.name.toLowerCase(), maxLength: 2 }), { nil: undefined }),
      // Claimed domains, additive: a connection of an earlier run may serve any of its own.
      domains: fc.option(fc.subarray(["three", "four"]), { nil: undefined }),
      // Paused: nothing is sent to these addresses.
      auditStreams: fc.option(fc.uniqueArray(fc.record({
        url: fc.constantFrom("http://127.0.0.1:9/siem", "http://127.0.0.1:9/bucket"),
        description: fc.constantFrom(null, "SIEM", "Bucket")
      }), { selector: (stream) => stream.url, maxLength: 2 }), { nil: undefined }),
      // OIDC connections, inactive (activating needs a test): settings, scopes in any order, endpoints or discovery.
      ssoConnections: fc.option(fc.uniqueArray(fc.record({
        name: fc.constantFrom("Okta", "Entra", "okta"),
        domains: fc.subarray(["one", "two"]),
        jitEnabled: fc.boolean(),
        defaultRole: fc.constantFrom("member" as const, "admin" as const),
        groupsClaim: fc.constantFrom("groups", "roles"),
        endpoints: fc.boolean(),
        scopes: fc.shuffledSubarray(["email", "profile", "groups"]),
        method: fc.constantFrom("client_secret_basic" as const, "client_secret_post" as const),
        secret: secretRef
      }), { selector: (connection) => connection.name.toLowerCase(), maxLength: 2 }), { nil: undefined })
    }).map(({ apiKeys, domains, audit, auditStreams, ssoPolicy, authoritative, configObjects, desktopDefaultPolicy, desktopPolicies, directory, invitations, llmProviders, marketplaces, mcpConnections, members, organization, plugins, scimConnections, ssoConnections, teams, templates }): typeof OrganizationDocument.Encoded => {
      const objectPath = (object: { readonly name: string; readonly skill: boolean }) => object.skill ? `skills/${object.name}/SKILL.md` : `context/${object.name}.txt`
      return {
      version: 1,
      authoritative,
      ...(organization === undefined ? {} : { organization }),
      ...(directory === undefined ? {} : { directory }),
      ...(audit === undefined ? {} : { audit }),
      ...(ssoPolicy === undefined ? {} : { ssoPolicy }),
      ...(domains === undefined ? {} : { domains: domains.map((name) => ({ domain: `${name}.${org.organizationId.toLowerCase().replace(/_/g, "-")}.example` })) }),
      ...(apiKeys === undefined ? {} : {
        apiKeys: apiKeys.map((key) => ({
          name: key.name,
          member: org.owner.email.toUpperCase(),
          scopes: key.scopes,
          expiresAt: new Date(startedAt + key.days * 86_400_000).toISOString()
        }))
      }),
      ...(auditStreams === undefined ? {} : { auditStreams: auditStreams.map((stream) => ({ ...stream, status: "paused" as const })) }),
      ...(members === undefined ? {} : {
        members: [{ email: org.owner.email, role: "owner" }, { email: org.admin.email, role: members.admin }, { email: org.member.email, role: members.member }]
      }),
      ...(invitations === undefined ? {} : { invitations: invitations.map((invitation) => ({ ...invitation, delivery: "shown" as const })) }),
      ...(teams === undefined ? {} : {
        teams: teams.map((team) => ({
          name: team.upper ? team.name.toUpperCase() : team.name,
          externalKey: team.keyed ? `grp-${team.name.toLowerCase()}` : null,
          members: team.members.map((email) => team.upper ? email.toUpperCase() : email)
        }))
      }),
      ...(llmProviders === undefined ? {} : {
        llmProviders: llmProviders.map(({ apiKey, contextWindow, headers, name, picks }) => {
          const catalog = name.length % 2 === 0
            ? { catalogProviderId: "openai", models: ["gpt-4o", "gpt-4o-mini", "gpt-image-1"] }
            : { catalogProviderId: "anthropic", models: ["claude-haiku-4-5", "claude-opus-4-1"] }
          return {
          name: `${name} models`,
          catalogProviderId: catalog.catalogProviderId,
          models: [...new Set(picks.map((pick) => catalog.models[pick % catalog.models.length]!))].map((id, index) =>
            index === 0 && contextWindow !== undefined ? { id, contextWindow } : { id }
          ),
          headers,
          apiKey
          }
        })
      }),
      ...(mcpConnections === undefined ? {} : {
        mcpConnections: mcpConnections.map(({ allDisabled, disabledTools, issuer, name, path, perMember, scopes, secret }) => ({
          name: `${name} server`,
          url: `http://127.0.0.1:9/${path}/mcp`,
          authType: "oauth" as const,
          // Fixed once created: one mode per name.
          credentialMode: name.startsWith("g") ? "per_member" as const : "shared" as const,
          apiKey: null,
          oauth: name.length % 2 === 0
            ? { clientId: `client-${name.toLowerCase()}${perMember ? "" : "-2"}`, clientSecret: secret, authorizationServerIssuer: issuer, requestedScopes: scopes }
            : { clientId: null, clientSecret: null, authorizationServerIssuer: issuer, requestedScopes: scopes },
          toolPolicy: { allDisabled, disabledTools }
        }))
      }),
      ...(scimConnections === undefined ? {} : { scimConnections }),
      ...(desktopDefaultPolicy === undefined ? {} : { desktopDefaultPolicy }),
      ...(desktopPolicies === undefined ? {} : { desktopPolicies }),
      ...(templates === undefined ? {} : { templates: templates.map((template) => ({ ...template, schemaVersion: null })) }),
      ...(configObjects === undefined ? {} : {
        configObjects: configObjects.map((object) => ({
          relativePath: objectPath(object),
          objectType: object.skill ? "skill" as const : "context" as const,
          parserMode: object.skill ? "markdown" as const : "text" as const,
          schemaVersion: "1",
          rawSourceText: object.skill ? `---\nname: ${object.name}\ndescription: Does ${object.name}.\n---\n${object.body}\n` : object.body,
          metadata: object.metadata,
          status: object.status,
          grants: object.grants
        }))
      }),
      ...(plugins === undefined ? {} : {
        plugins: plugins.map(({ objectPicks, ...plugin }) =>
          objectPicks === undefined ? plugin : {
            ...plugin,
            configObjects: configObjects === undefined || configObjects.length === 0
              ? []
              : [...new Set(objectPicks.map((pick) => objectPath(configObjects[pick % configObjects.length]!).toUpperCase()))]
          }
        )
      }),
      ...(marketplaces === undefined ? {} : {
        marketplaces: marketplaces.map(({ picks, ...marketplace }) => ({
          ...marketplace,
          plugins: plugins === undefined || plugins.length === 0 ? [] : [...new Set(picks.map((pick) => plugins[pick % plugins.length]!.name.toUpperCase()))]
        }))
      }),
      ...(ssoConnections === undefined ? {} : {
        ssoConnections: ssoConnections.map((connection) => ({
          name: connection.name,
          kind: "oidc" as const,
          active: false,
          domains: connection.domains.map((name) => `${name}.${org.organizationId.toLowerCase().replace(/_/g, "-")}.example`),
          jit: { enabled: connection.jitEnabled, defaultRole: connection.defaultRole, defaultTeams: [] },
          mapping: { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: connection.groupsClaim, groupRules: [] },
          oidc: {
            issuer: "https://login.acme.example",
            endpoints: connection.endpoints
              ? { authorization: "https://login.acme.example/authorize", token: "https://login.acme.example/token", jwks: "https://login.acme.example/jwks" }
              : null,
            clientId: `client-${connection.name.toLowerCase()}`,
            clientSecret: connection.secret,
            scopes: connection.scopes,
            tokenEndpointAuthMethod: connection.method
          },
          saml: null
        }))
      })
      }
    })
    await fc.assert(fc.asyncProperty(document, async (wanted) => {
      const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: wanted } }), 200)
      // Each secret's value, as the applier would read it from its source.
      const secrets = planned.secrets.map((from) => ({ from, value: `value-of-${from.replace(/\W/g, "-")}` }))
      const applied = ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: wanted, planHash: planned.planHash, secrets } }), 200)
      expect(applied.changes).toEqual(planned.changes)
      const next = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: wanted } }), 200)
      expect(next.changes).toEqual([])
      expect(next.liveHash).toBe(applied.liveHash)
      // And the organization's own export, whatever the generated documents made of it, plans nothing: every kind's
      // export (secrets at their versions, grants, defaults written out) reads back as what it is.
      const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
      expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
      const own = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200)
      expect(own.changes).toEqual([])
      expect(own.liveHash).toBe(applied.liveHash)
    }), { numRuns: 12 })
  })
})

describe("LLM providers in the document", () => {
  it("writes secrets as references, sets and rotates them from values the apply is given, never storing or answering one", async () => {
    const org = await Http.staffed(server.url)
    const created = ok(await api.llmProviders.create({
      token: org.admin.token,
      payload: {
        name: "OpenAI (eng)",
        catalogProviderId: "openai",
        models: [{ id: "gpt-4o" }, { id: "gpt-image-1", name: "Images" }],
        headers: { "OpenAI-Organization": "org-first" },
        apiKey: "sk-first"
      }
    }), 201).item
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
    // Every figure the document can hold; the catalog's 0 tokens of an image model left out. Secrets no document wrote: version 0.
    expect(exported.llmProviders).toEqual([{
      name: "OpenAI (eng)",
      catalogProviderId: "openai",
      apiStyle: "openai-compatible",
      baseUrl: "https://api.openai.com/v1",
      models: [
        { id: "gpt-4o", name: "GPT-4o", contextWindow: 128000, maxOutputTokens: 16384, cost: { input: 2.5, output: 10, cacheRead: 1.25 } },
        { id: "gpt-image-1", name: "Images" }
      ],
      headers: [{ name: "OpenAI-Organization", value: { from: "env:LLM_OPENAI_ENG_OPENAI_ORGANIZATION", version: 0 } }],
      apiKey: { from: "env:LLM_OPENAI_ENG_API_KEY", version: 0 },
      // Its creator's manager grant.
      grants: [{ member: org.admin.email, role: "manager" }]
    }])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    const document = {
      version: 1 as const,
      llmProviders: [
        { ...exported.llmProviders![0]!, apiKey: { from: "env:OPENAI_KEY", version: 1 } },
        { name: "Claude", catalogProviderId: "anthropic", models: [{ id: "claude-haiku-4-5" }], headers: [], apiKey: { from: "file:secrets/claude.key", version: 1 } }
      ]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => [change.action, change.name, change.fields.filter((field) => field.secret !== undefined)])).toEqual([
      ["create", "Claude", [{ field: "apiKey", after: { from: "file:secrets/claude.key", version: 1 }, secret: "set" }]],
      ["update", "OpenAI (eng)", [{
        field: "apiKey",
        before: { from: "env:LLM_OPENAI_ENG_API_KEY", version: 0 },
        after: { from: "env:OPENAI_KEY", version: 1 },
        secret: "rotated"
      }]]
    ])
    expect(planned.secrets).toEqual(["env:OPENAI_KEY", "file:secrets/claude.key"])
    expect(planned.markdown).toContain("(secret rotated)")

    // Without the values, or with one its field cannot take: 400 naming each source, nothing written.
    const missing = await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } })
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ details: [{ path: ["secrets", "env:OPENAI_KEY"] }, { path: ["secrets", "file:secrets/claude.key"] }] })
    const spaced = await api.organizationDocument.apply({
      token: org.owner.token,
      payload: { document, planHash: planned.planHash, secrets: [{ from: "env:OPENAI_KEY", value: "has a space" }, { from: "file:secrets/claude.key", value: "sk-ant-second" }] }
    })
    expect(spaced.status).toBe(400)
    expect(spaced.text).not.toContain("has a space")
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).planHash).toBe(planned.planHash)

    const secrets = [{ from: "env:OPENAI_KEY", value: "sk-second" }, { from: "file:secrets/claude.key", value: "sk-ant-second" }]
    const applied = await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash, secrets } })
    expect(ok(applied, 200).changes).toEqual(planned.changes)
    expect(applied.text).not.toContain("sk-second")
    const providers = ok(await api.llmProviders.list({ token: org.owner.token, query: { scope: "manageable" } }), 200).items
    // Each provider's creator connects: the admin who registered OpenAI, the owner whose apply registered Claude.
    const keyOf = async (token: string, name: string) =>
      ok(await api.llmProviders.connect({ token, path: { llmProviderId: providers.find((item) => item.name === name)!.id } }), 200).apiKey
    expect(await keyOf(org.admin.token, "OpenAI (eng)")).toBe("sk-second")
    expect(await keyOf(org.owner.token, "Claude")).toBe("sk-ant-second")
    // Nothing secret is kept with the applied document or its sources.
    const stored = await server.sql((sql) =>
      sql<{ readonly text: string }>`SELECT document::text AS text FROM organization_documents WHERE organization_id = ${org.organizationId}
        UNION ALL SELECT refs::text FROM organization_document_secrets WHERE organization_id = ${org.organizationId}`
    )
    expect(stored.length).toBe(3)
    expect(JSON.stringify(stored)).not.toMatch(/sk-second|sk-ant-second/)
    // The export reads the versions back; the plan is empty; applying again changes nothing and needs no value.
    const after = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(after.llmProviders?.map((provider) => provider.apiKey)).toEqual([{ from: "file:secrets/claude.key", version: 1 }, { from: "env:OPENAI_KEY", version: 1 }])
    const again = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(again).toMatchObject({ changes: [], secrets: [] })
    expect(ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: again.planHash } }), 200).changes).toEqual([])

    // A key set outside the document reads as version 0 again: drift, named with who set it.
    ok(await api.llmProviders.setCredential({ token: org.admin.token, path: { llmProviderId: created.id }, payload: { type: "api_key", apiKey: "sk-outside" } }), 200)
    const drift = ok(await api.organizationDocument.drift({ token: org.owner.token }), 200)
    expect(drift.changes).toMatchObject([{
      action: "update",
      kind: "llmProvider",
      name: "OpenAI (eng)",
      fields: [{ field: "apiKey", before: { from: "env:OPENAI_KEY", version: 0 }, after: { from: "env:OPENAI_KEY", version: 1 }, secret: "rotated" }],
      changedBy: { action: "llm_provider.credential.set", actor: { id: org.admin.user.id } }
    }])

    // What the document cannot do is refused where it is said: a catalog changed, a key removed, an unknown model.
    const refused = await api.organizationDocument.plan({
      token: org.owner.token,
      payload: {
        document: {
          version: 1,
          llmProviders: [
            { ...document.llmProviders[0]!, catalogProviderId: "anthropic", models: [{ id: "claude-haiku-4-5" }] },
            { ...document.llmProviders[1]!, apiKey: null },
            { name: "Custom", catalogProviderId: null, models: [{ id: "m" }], headers: [], apiKey: null },
            { name: "Unknown", catalogProviderId: "openai", models: [{ id: "no-such-model" }], headers: [], apiKey: null }
          ]
        }
      }
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({
      details: [
        { path: ["document", "llmProviders", 0, "catalogProviderId"] },
        { path: ["document", "llmProviders", 1, "apiKey"] },
        { path: ["document", "llmProviders", 2, "apiStyle"] },
        { path: ["document", "llmProviders", 2, "baseUrl"] },
        { path: ["document", "llmProviders", 3, "models", 0, "id"] }
      ]
    })

    // Authoritative: a provider the list leaves out is deleted, with its sources.
    const emptied = { version: 1 as const, authoritative: ["llmProviders" as const], llmProviders: [] }
    const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
    expect(deleting.changes.map((change) => `${change.action} ${change.name}`)).toEqual(["delete Claude", "delete OpenAI (eng)"])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } }), 200)
    expect(await server.sql((sql) => sql`SELECT 1 FROM organization_document_secrets WHERE organization_id = ${org.organizationId}`)).toEqual([])
  })
})

describe("MCP connections in the document", () => {
  it("registers and changes connections with their secrets by reference, checked live, all or nothing", async () => {
    const KEY = "build-key-0123456789"
    const keyed = await FakeMcp.start({ auth: { apiKey: KEY } })
    try {
      const org = await Http.staffed(server.url)
      ok(await api.mcpConnections.create({
        token: org.admin.token,
        payload: {
          name: "Linear",
          url: `${keyed.origin}/linear/mcp`,
          authType: "oauth",
          oauth: { requestedScopes: ["write", "read"], authorizationServerIssuer: "https://auth.linear.example" }
        }
      }), 201)
      const linearId = ok(await api.mcpConnections.list({ token: org.admin.token, query: { scope: "manageable" } }), 200).items[0]!.id
      ok(await api.mcpConnections.setToolPolicy({ token: org.admin.token, path: { connectionId: linearId }, payload: { allDisabled: false, disabledTools: ["b_tool", "a_tool"] } }), 200)
      const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
      expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
      const linear = {
        name: "Linear",
        url: `${keyed.origin}/linear/mcp`,
        authType: "oauth" as const,
        credentialMode: "shared" as const,
        apiKey: null,
        oauth: { clientId: null, clientSecret: null, authorizationServerIssuer: "https://auth.linear.example", requestedScopes: ["read", "write"] },
        toolPolicy: { allDisabled: false, disabledTools: ["a_tool", "b_tool"] },
        grants: []
      }
      expect(exported.mcpConnections).toEqual([linear])
      expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

      const build = {
        name: "Build",
        url: keyed.url,
        authType: "apikey" as const,
        credentialMode: "shared" as const,
        apiKey: { from: "env:BUILD_KEY", version: 1 },
        oauth: null,
        toolPolicy: { allDisabled: false, disabledTools: [] },
        grants: []
      }
      const document = {
        version: 1 as const,
        mcpConnections: [
          build,
          // An issuer left null is whichever is in use: no change.
          { ...linear, oauth: { ...linear.oauth, clientId: "pre-registered", clientSecret: { from: "env:LINEAR_SECRET", version: 1 }, authorizationServerIssuer: null }, toolPolicy: { allDisabled: true, disabledTools: ["a_tool"] } }
        ]
      }
      const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
      expect(planned.changes.map((change) => [change.action, change.name, change.fields.map((field) => `${field.field}${field.secret === undefined ? "" : ` (${field.secret})`}`)])).toEqual([
        ["create", "Build", ["name", "url", "authType", "credentialMode", "apiKey (set)", "oauth.clientId", "oauth.clientSecret", "oauth.authorizationServerIssuer", "oauth.requestedScopes", "toolPolicy", "grants"]],
        ["update", "Linear", ["oauth.clientId", "oauth.clientSecret (set)", "toolPolicy"]]
      ])
      expect(planned.secrets).toEqual(["env:BUILD_KEY", "env:LINEAR_SECRET"])

      // A key the server refuses: its live check fails, and nothing of the apply stays.
      const refused = await api.organizationDocument.apply({
        token: org.owner.token,
        payload: { document, planHash: planned.planHash, secrets: [{ from: "env:BUILD_KEY", value: "wrong-key" }, { from: "env:LINEAR_SECRET", value: "client-secret" }] }
      })
      expect(refused.status).toBe(502)
      expect(refused.body).toMatchObject({ error: "connection_validation_failed" })
      expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).planHash).toBe(planned.planHash)

      const applied = ok(await api.organizationDocument.apply({
        token: org.owner.token,
        payload: { document, planHash: planned.planHash, secrets: [{ from: "env:BUILD_KEY", value: KEY }, { from: "env:LINEAR_SECRET", value: "client-secret" }] }
      }), 200)
      expect(applied.changes).toEqual(planned.changes)
      expect(keyed.requests.some((request) => request.headers.authorization === `Bearer ${KEY}`)).toBe(true)
      const after = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
      expect(after.mcpConnections).toEqual([
        { ...build, url: keyed.url },
        { ...linear, oauth: { ...linear.oauth, clientId: "pre-registered", clientSecret: { from: "env:LINEAR_SECRET", version: 1 } }, toolPolicy: { allDisabled: true, disabledTools: ["a_tool"] } }
      ])
      expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])

      // A tool policy changed outside the document drifts, named with who changed it.
      ok(await api.mcpConnections.setToolPolicy({ token: org.admin.token, path: { connectionId: linearId }, payload: { allDisabled: false, disabledTools: [] } }), 200)
      expect(ok(await api.organizationDocument.drift({ token: org.owner.token }), 200).changes).toMatchObject([{
        kind: "mcpConnection",
        name: "Linear",
        fields: [{ field: "toolPolicy", before: { allDisabled: false, disabledTools: [] }, after: { allDisabled: true, disabledTools: ["a_tool"] } }],
        changedBy: { action: "mcp_connection.tool_policy.update", actor: { id: org.admin.user.id } }
      }])

      // What a connection cannot be, or cannot become, is refused where it is said.
      const problems = await api.organizationDocument.plan({
        token: org.owner.token,
        payload: {
          document: {
            version: 1,
            mcpConnections: [
              { ...build, authType: "none", apiKey: null },
              { ...linear, oauth: { ...linear.oauth, clientSecret: { from: "env:X", version: 1 } } },
              { ...build, name: "Per member", credentialMode: "per_member" }
            ]
          }
        }
      })
      expect(problems.status).toBe(400)
      expect(problems.body).toMatchObject({
        details: [
          { path: ["document", "mcpConnections", 0, "authType"] },
          { path: ["document", "mcpConnections", 1, "oauth", "clientSecret"] },
          { path: ["document", "mcpConnections", 2, "credentialMode"] }
        ]
      })
    } finally {
      await keyed.close()
    }
  })
})

describe("grants in the document", () => {
  it("gives and changes grants by team and email, revokes only where grants are authoritative, and drifts with who revoked", async () => {
    const org = await Http.staffed(server.url)
    ok(await api.teams.create({ token: org.admin.token, payload: { name: "Platform" } }), 201)
    const provider = ok(await api.llmProviders.create({
      token: org.admin.token,
      payload: { name: "OpenAI", catalogProviderId: "openai", models: [{ id: "gpt-4o" }] }
    }), 201).item
    // Its creator's manager grant.
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(exported.llmProviders?.[0]?.grants).toEqual([{ member: org.admin.email, role: "manager" }])

    const { grants: _grants, ...openai } = exported.llmProviders![0]!
    const document = {
      version: 1 as const,
      teams: [{ name: "Ops", externalKey: null, members: [org.member.email] }],
      llmProviders: [{
        ...openai,
        grants: [{ member: org.member.email.toUpperCase(), role: "viewer" as const }, { team: "platform", role: "editor" as const }, { organization: true as const, role: "viewer" as const }]
      }],
      mcpConnections: [{
        name: "Docs",
        url: "http://127.0.0.1:9/docs/mcp",
        authType: "oauth" as const,
        credentialMode: "shared" as const,
        apiKey: null,
        oauth: { clientId: null, clientSecret: null, authorizationServerIssuer: null, requestedScopes: [] },
        toolPolicy: { allDisabled: false, disabledTools: [] },
        grants: [{ team: "Ops", role: "viewer" as const }]
      }]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    const grantsOf = (name: string) => planned.changes.find((change) => change.name === name)?.fields.find((field) => field.field === "grants")
    // Named as the organization has them, sorted; the creator's grant kept (grants are additive here).
    expect(grantsOf("OpenAI")).toEqual({
      field: "grants",
      before: [{ member: org.admin.email, role: "manager" }],
      after: [
        { organization: true, role: "viewer" },
        { team: "Platform", role: "editor" },
        ...[{ member: org.admin.email, role: "manager" }, { member: org.member.email, role: "viewer" }].sort((left, right) => left.member < right.member ? -1 : 1)
      ]
    })
    expect(grantsOf("Docs")).toEqual({ field: "grants", after: [{ team: "Ops", role: "viewer" }] })
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])
    // The member's grant reaches them: they use the provider.
    expect(ok(await api.llmProviders.list({ token: org.member.token }), 200).items.map((item) => item.name)).toEqual(["OpenAI"])

    // Authoritative grants: what a listed resource's grants leave out is revoked (its creator's too); others untouched.
    const strict = { version: 1 as const, authoritative: ["grants" as const], llmProviders: [{ ...openai, grants: [{ team: "Platform", role: "viewer" as const }] }] }
    const revoking = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: strict } }), 200)
    expect(revoking.changes.map((change) => [change.name, change.fields.map((field) => field.field)])).toEqual([["OpenAI", ["grants"]]])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: strict, planHash: revoking.planHash } }), 200)
    const after = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(after.llmProviders?.[0]?.grants).toEqual([{ team: "Platform", role: "viewer" }])
    // (An MCP connection's creator gets no grant of their own: owners and admins grant them.)
    expect(after.mcpConnections?.[0]?.grants).toEqual([{ team: "Ops", role: "viewer" }])
    expect(ok(await api.llmProviders.list({ token: org.member.token }), 200).items).toEqual([])

    // A grant revoked outside the document drifts, named with who revoked it.
    const [grant] = ok(await api.llmProviders.llmProviderListAccess({ token: org.owner.token, path: { llmProviderId: provider.id } }), 200).items
    expect((await api.llmProviders.llmProviderRevoke({ token: org.admin.token, path: { llmProviderId: provider.id, grantId: grant!.id } })).status).toBe(204)
    expect(ok(await api.organizationDocument.drift({ token: org.owner.token }), 200).changes).toMatchObject([{
      kind: "llmProvider",
      name: "OpenAI",
      fields: [{ field: "grants", before: [], after: [{ team: "Platform", role: "viewer" }] }],
      changedBy: { action: "access.revoke", actor: { id: org.admin.user.id } }
    }])

    // Whom a grant names must be there, once.
    const refused = await api.organizationDocument.plan({
      token: org.owner.token,
      payload: {
        document: {
          version: 1,
          llmProviders: [{ ...openai, grants: [{ team: "Nowhere", role: "viewer" }, { member: "stranger@example.com", role: "viewer" }, { organization: true, role: "viewer" }, { organization: true, role: "editor" }] }]
        }
      }
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({
      details: [
        { path: ["document", "llmProviders", 0, "grants", 0] },
        { path: ["document", "llmProviders", 0, "grants", 1] },
        { path: ["document", "llmProviders", 0, "grants", 3] }
      ]
    })
  })
})

describe("SCIM connections in the document", () => {
  it("plans settings and role rules (groups ignoring case), applies them with a reconcile, and needs the enterprise plan", async () => {
    const org = await Http.staffed(server.url)
    await server.sql((sql) => sql`UPDATE organizations SET plan = 'enterprise' WHERE id = ${org.organizationId}`)
    ok(await api.scimConnections.create({
      token: org.owner.token,
      payload: { name: "Okta", roleRules: [{ group: "Zeta admins", role: "admin" }, { group: "alpha", role: "member" }] }
    }), 201)
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(exported.scimConnections).toEqual([{
      name: "Okta",
      groupMappingMode: "metadata_only",
      defaultRole: "member",
      roleRules: [{ group: "alpha", role: "member" }, { group: "Zeta admins", role: "admin" }]
    }])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    const document = {
      version: 1 as const,
      scimConnections: [
        { name: "Entra", groupMappingMode: "link_by_external_key" as const, defaultRole: "member" as const, roleRules: [] },
        // The same rules in other cases and order: no change of them.
        { name: "Okta", groupMappingMode: "create_teams" as const, defaultRole: "member" as const, roleRules: [{ group: "ZETA ADMINS", role: "admin" as const }, { group: "Alpha", role: "member" as const }] }
      ]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => [change.action, change.name, change.fields.map((field) => field.field)])).toEqual([
      ["create", "Entra", ["name", "groupMappingMode", "defaultRole", "roleRules"]],
      ["update", "Okta", ["groupMappingMode"]]
    ])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])

    const emptied = { version: 1 as const, authoritative: ["scimConnections" as const], scimConnections: [] }
    const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
    expect(deleting.changes.map((change) => `${change.action} ${change.name}`)).toEqual(["delete Entra", "delete Okta"])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } }), 200)
    expect(ok(await api.organizationDocument.export({ token: org.owner.token }), 200).scimConnections).toEqual([])

    // Without the enterprise plan the plan is made, and its apply refused as the API refuses it: nothing written.
    const other = await Http.owner(server.url, "Small Org")
    const small = { version: 1 as const, teams: [{ name: "Ops", externalKey: null, members: [] }], scimConnections: [document.scimConnections[0]!] }
    const smallPlan = ok(await api.organizationDocument.plan({ token: other.token, payload: { document: small } }), 200)
    const refused = await api.organizationDocument.apply({ token: other.token, payload: { document: small, planHash: smallPlan.planHash } })
    expect(refused.status).toBe(402)
    expect(ok(await api.organizationDocument.export({ token: other.token }), 200).teams).toEqual([])
  })
})

describe("desktop policies in the document", () => {
  it("plans the default policy completed and the others with members and teams by name, and applies them", async () => {
    const org = await Http.staffed(server.url)
    await server.sql((sql) => sql`UPDATE organizations SET plan = 'enterprise' WHERE id = ${org.organizationId}`)
    const platform = ok(await api.teams.create({ token: org.admin.token, payload: { name: "Platform" } }), 201)
    ok(await api.desktopPolicies.create({
      token: org.admin.token,
      payload: { policyName: "Contractors", policy: { allowCustomProviders: false }, priority: 10, memberIds: [org.member.membership.id], teamIds: [platform.team.id] }
    }), 201)
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
    expect(exported.desktopPolicies).toEqual([
      { name: "Contractors", enabled: true, priority: 10, policy: { allowCustomProviders: false }, members: [org.member.email], teams: ["Platform"] }
    ])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    const document = {
      version: 1 as const,
      teams: [{ name: "Ops", externalKey: null, members: [org.member.email] }],
      // A partial default: what it leaves out is the built-in default's.
      desktopDefaultPolicy: { allowAlphaUpdates: false },
      desktopPolicies: [
        { name: "contractors", enabled: true, priority: 20, policy: { allowCustomProviders: false }, members: [org.member.email.toUpperCase()], teams: [] },
        { name: "Interns", enabled: true, priority: 5, policy: { showWelcomePage: false }, members: [], teams: ["ops"] }
      ]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => [change.action, change.kind, change.name, change.fields.map((field) => field.field)])).toEqual([
      ["create", "team", "Ops", ["name", "externalKey", "members"]],
      ["update", "desktopPolicy", "Contractors", ["name", "priority", "teams"]],
      ["update", "desktopPolicy", "default", ["policy"]],
      ["create", "desktopPolicy", "Interns", ["name", "enabled", "priority", "policy", "members", "teams"]]
    ])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])
    // The member's effective policy: the default's alpha updates off, Contractors' custom providers off, Interns' (through Ops) welcome page off.
    expect(ok(await api.desktopPolicies.effective({ token: org.member.token }), 200).effectivePolicy).toMatchObject({
      policy: { allowAlphaUpdates: false, allowCustomProviders: false, showWelcomePage: false }
    })

    const emptied = { version: 1 as const, authoritative: ["desktopPolicies" as const], desktopPolicies: [] }
    const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
    expect(deleting.changes.map((change) => `${change.action} ${change.name}`)).toEqual(["delete contractors", "delete Interns"])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } }), 200)
    const after = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(after.desktopPolicies).toEqual([])
    expect(after.desktopDefaultPolicy).toMatchObject({ allowAlphaUpdates: false, allowCustomProviders: true })

    const refused = await api.organizationDocument.plan({
      token: org.owner.token,
      payload: { document: { version: 1, desktopPolicies: [{ name: "Default", enabled: true, priority: 0, policy: {}, members: ["stranger@example.com"], teams: [] }] } }
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ details: [{ path: ["document", "desktopPolicies", 0, "name"] }] })
  })
})

describe("templates in the document", () => {
  it("plans a template's fields and document (a new version), its grants, and applies them", async () => {
    const org = await Http.staffed(server.url)
    ok(await api.teams.create({ token: org.admin.token, payload: { name: "Platform" } }), 201)
    ok(await api.templates.create({
      token: org.member.token,
      payload: { name: "Service starter", kind: "workspace", document: { name: "service", folders: ["src"] } }
    }), 201)
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
    const starter = { name: "Service starter", description: "", kind: "workspace", schemaVersion: null, document: { name: "service", folders: ["src"] }, grants: [] }
    expect(exported.templates).toEqual([starter])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    const document = {
      version: 1 as const,
      templates: [
        // Members in another order are the same document; the folders are not.
        { ...starter, document: { folders: ["src", "test"], name: "service" }, grants: [{ team: "Platform", role: "viewer" as const }] },
        { name: "Notes", description: "Meeting notes", kind: "note", schemaVersion: null, document: ["agenda"] }
      ]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => [change.action, change.name, change.fields.map((field) => field.field)])).toEqual([
      ["create", "Notes", ["name", "description", "kind", "schemaVersion", "document", "grants"]],
      ["update", "Service starter", ["document", "grants"]]
    ])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])
    // The document's change is the template's second version.
    const listed = ok(await api.templates.list({ token: org.owner.token }), 200).items
    expect(listed.find((template) => template.name === "Service starter")?.latestVersion.number).toBe(2)

    const emptied = { version: 1 as const, authoritative: ["templates" as const], templates: [] }
    const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
    expect(deleting.changes.map((change) => `${change.action} ${change.name}`)).toEqual(["delete Notes", "delete Service starter"])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } }), 200)
    expect(ok(await api.organizationDocument.export({ token: org.owner.token }), 200).templates).toEqual([])
  })
})

describe("plugins and marketplaces in the document", () => {
  it("plans the plugins and marketplaces people made, their listings and grants, and applies them", async () => {
    const org = await Http.staffed(server.url)
    const lint = ok(await api.plugins.create({ token: org.member.token, payload: { name: "Lint", description: "Checks" } }), 201).item
    const internal = ok(await api.marketplaces.create({ token: org.admin.token, payload: { name: "Internal" } }), 201).item
    ok(await api.marketplaces.addPlugin({ path: { marketplaceId: internal.id }, token: org.admin.token, payload: { pluginId: lint.id } }), 201)
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
    // Each creator is its resource's manager.
    expect(exported.plugins).toEqual([{ name: "Lint", description: "Checks", status: "active", configObjects: [], grants: [{ member: org.member.email, role: "manager" }] }])
    expect(exported.marketplaces).toEqual([
      { name: "Internal", description: "", logoUrl: null, plugins: ["Lint"], grants: [{ member: org.admin.email, role: "manager" }] }
    ])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    const document = {
      version: 1 as const,
      plugins: [
        { name: "Lint", description: "Checks", status: "archived" as const },
        { name: "Deploy", description: "", status: "active" as const, grants: [{ organization: true as const, role: "viewer" as const }] }
      ],
      // A plugin this document makes, named in any case.
      marketplaces: [{ name: "Internal", description: "Ours", logoUrl: "/logos/acme.png", plugins: ["lint", "DEPLOY"] }]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => [change.action, change.kind, change.name, change.fields.map((field) => field.field)])).toEqual([
      ["create", "plugin", "Deploy", ["name", "description", "status", "configObjects", "grants"]],
      ["update", "plugin", "Lint", ["status"]],
      ["update", "marketplace", "Internal", ["description", "logoUrl", "plugins"]]
    ])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])
    expect(ok(await api.plugins.get({ path: { pluginId: lint.id }, token: org.owner.token }), 200).item.status).toBe("archived")
    const listed = ok(await api.marketplaces.listPlugins({ path: { marketplaceId: internal.id }, token: org.owner.token }), 200).items
    expect(listed.map((item) => item.plugin.name).sort()).toEqual(["Deploy", "Lint"])
    const events = ok(await api.audit.listEvents({ token: org.owner.token, query: { action: "marketplace.plugin.add" } }), 200).items
    expect(events.filter((event) => event.via?.planHash === planned.planHash)).toHaveLength(1)
    // A plugin restored outside the document drifts, named with who restored it.
    ok(await api.plugins.restore({ path: { pluginId: lint.id }, token: org.admin.token }), 200)
    const drift = ok(await api.organizationDocument.drift({ token: org.owner.token }), 200)
    expect(drift.changes).toMatchObject([{
      action: "update",
      kind: "plugin",
      name: "Lint",
      fields: [{ field: "status", before: "active", after: "archived" }],
      changedBy: { action: "plugin.restore", actor: { type: "user", id: org.admin.user.id } }
    }])

    // A marketplace cannot list a plugin the same document deletes.
    const refused = await api.organizationDocument.plan({
      token: org.owner.token,
      payload: { document: { version: 1, authoritative: ["plugins"], plugins: [], marketplaces: [{ ...document.marketplaces[0]!, plugins: ["Lint"] }] } }
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ details: [{ path: ["document", "marketplaces", 0, "plugins", 0] }] })

    const emptied = { version: 1 as const, authoritative: ["plugins" as const, "marketplaces" as const], plugins: [], marketplaces: [] }
    const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
    expect(deleting.changes.map((change) => `${change.action} ${change.kind} ${change.name}`)).toEqual([
      "delete plugin Deploy",
      "delete plugin Lint",
      "delete marketplace Internal"
    ])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } }), 200)
    const after = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect([after.plugins, after.marketplaces]).toEqual([[], []])
  })
})

describe("config objects in the document", () => {
  it("plans objects by path with their latest content, makes a new version for a change, holds them in plugins, and leaves pathless and deleted ones out", async () => {
    const org = await Http.staffed(server.url)
    const skill = (body: string) => `---\nname: deploy\ndescription: Deploys.\n---\n${body}\n`
    const deploy = ok(await api.configObjects.create({
      token: org.member.token,
      payload: { input: { objectType: "skill", rawSourceText: skill("Run make deploy."), relativePath: "skills/deploy/SKILL.md" } }
    }), 201).item
    // Without a path, the document cannot name it: left out, and left alone.
    ok(await api.configObjects.create({ token: org.member.token, payload: { input: { objectType: "context", rawSourceText: "Notes" } } }), 201)
    const gone = ok(await api.configObjects.create({ token: org.member.token, payload: { input: { objectType: "context", rawSourceText: "Old", relativePath: "old.txt" } } }), 201).item
    ok(await api.configObjects.delete({ path: { configObjectId: gone.id }, token: org.member.token }), 200)
    const lint = ok(await api.plugins.create({ token: org.admin.token, payload: { name: "Lint", description: "" } }), 201).item
    ok(await api.plugins.addConfigObject({ path: { pluginId: lint.id }, token: org.admin.token, payload: { configObjectId: deploy.id } }), 201)

    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
    expect(exported.configObjects).toEqual([{
      relativePath: "skills/deploy/SKILL.md",
      objectType: "skill",
      parserMode: "markdown",
      schemaVersion: "1",
      rawSourceText: skill("Run make deploy."),
      metadata: null,
      status: "active",
      grants: [{ member: org.member.email, role: "manager" }]
    }])
    expect(exported.plugins?.map((plugin) => [plugin.name, plugin.configObjects])).toEqual([["Lint", ["skills/deploy/SKILL.md"]]])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    const document = {
      version: 1 as const,
      configObjects: [
        { ...exported.configObjects![0]!, rawSourceText: skill("Run make deploy, then check the preview."), metadata: { owner: "platform" } },
        {
          relativePath: "mcp/linear.json",
          objectType: "mcp" as const,
          parserMode: "json" as const,
          schemaVersion: "1",
          rawSourceText: `{"mcpServers":{"linear":{"url":"https://mcp.linear.app/mcp"}}}`,
          metadata: null,
          status: "archived" as const,
          grants: [{ organization: true as const, role: "viewer" as const }]
        }
      ],
      // Paths in any case; a plugin the document makes holds an object it makes.
      plugins: [
        { name: "Lint", description: "", status: "active" as const, configObjects: ["MCP/linear.json"] },
        { name: "Deploy", description: "", status: "active" as const, configObjects: ["skills/deploy/SKILL.md", "mcp/linear.json"] }
      ]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => [change.action, change.kind, change.name, change.fields.map((field) => field.field)])).toEqual([
      ["create", "configObject", "mcp/linear.json", ["relativePath", "objectType", "parserMode", "schemaVersion", "rawSourceText", "metadata", "status", "grants"]],
      ["update", "configObject", "skills/deploy/SKILL.md", ["rawSourceText", "metadata"]],
      ["create", "plugin", "Deploy", ["name", "description", "status", "configObjects", "grants"]],
      ["update", "plugin", "Lint", ["configObjects"]]
    ])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])
    // The change is a new version named after the plan; the object made is `import`, archived, granted.
    const versions = ok(await api.configObjects.listVersions({ path: { configObjectId: deploy.id }, token: org.owner.token }), 200).items
    expect(versions.map((version) => [version.number, version.sourceRevisionRef])).toEqual([[2, `orgplane plan ${planned.planHash}`], [1, null]])
    const made = ok(await api.configObjects.list({ token: org.owner.token, query: { q: "linear" } }), 200).items
    expect(made.map((object) => [object.currentRelativePath, object.sourceMode, object.status])).toEqual([["mcp/linear.json", "import", "archived"]])
    const held = ok(await api.plugins.listConfigObjects({ path: { pluginId: lint.id }, token: org.owner.token }), 200).items
    expect(held.map((membership) => membership.configObject.currentRelativePath)).toEqual(["mcp/linear.json"])

    // A new version made outside the document drifts, named with who made it.
    ok(await api.configObjects.createVersion({ path: { configObjectId: deploy.id }, token: org.member.token, payload: { input: { rawSourceText: skill("Ship it.") } } }), 201)
    const drift = ok(await api.organizationDocument.drift({ token: org.owner.token }), 200)
    expect(drift.changes).toMatchObject([{
      action: "update",
      kind: "configObject",
      name: "skills/deploy/SKILL.md",
      // A version without metadata has none: both fields drift.
      fields: [
        { field: "rawSourceText", before: skill("Ship it."), after: skill("Run make deploy, then check the preview.") },
        { field: "metadata", before: null, after: { owner: "platform" } }
      ],
      changedBy: { action: "config_object.version.create", actor: { type: "user", id: org.member.user.id } }
    }])

    // A plugin cannot hold an object the same document deletes; deleting is soft, as the API's delete.
    const refused = await api.organizationDocument.plan({
      token: org.owner.token,
      payload: { document: { version: 1, authoritative: ["configObjects"], configObjects: [], plugins: [{ name: "Lint", description: "", status: "active", configObjects: ["mcp/linear.json"] }] } }
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ details: [{ path: ["document", "plugins", 0, "configObjects", 0] }] })
    const emptied = { version: 1 as const, authoritative: ["configObjects" as const], configObjects: [] }
    const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
    expect(deleting.changes.map((change) => `${change.action} ${change.kind} ${change.name}`)).toEqual([
      "delete configObject mcp/linear.json",
      "delete configObject skills/deploy/SKILL.md"
    ])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } }), 200)
    expect(ok(await api.configObjects.get({ path: { configObjectId: deploy.id }, token: org.owner.token }), 200).item.status).toBe("deleted")
    const after = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect([after.configObjects, after.plugins?.map((plugin) => plugin.configObjects)]).toEqual([[], [[], []]])
  })
})

describe("connectors in the document", () => {
  it("grants a connector and what it syncs by name, never makes one, and drifts with who revoked a grant", async () => {
    const org = await Http.staffed(server.url)
    // A connector and what its sync made, seeded: syncing a repository is the connector tests' (test/http/Connector*).
    const id = (prefix: string) => `${prefix}_01jdecaf${String(Math.floor(Math.random() * 1e15)).padStart(18, "0")}`
    const [account, instance, plugin, marketplace] = [id("cac"), id("cin"), id("plg"), id("mkt")]
    await server.sql((sql) =>
      sql`INSERT INTO connector_accounts (id, organization_id, connector_type, kind, display_name, status, token_ciphertext, created_at, updated_at)
          VALUES (${account}, ${org.organizationId}, 'codehost', 'token', 'Acme', 'active', 'sealed', now(), now())`.pipe(
        Effect.andThen(sql`INSERT INTO connector_instances (id, organization_id, connector_account_id, connector_type, remote_id, name, status, instance_config_json, created_at, updated_at)
          VALUES (${instance}, ${org.organizationId}, ${account}, 'codehost', 'acme/agent-plugins', 'Agent plugins', 'active', '{}'::jsonb, now(), now())`),
        Effect.andThen(sql`INSERT INTO plugins (id, organization_id, name, description, status, connector_instance_id, created_at, updated_at)
          VALUES (${plugin}, ${org.organizationId}, 'code-review', '', 'active', ${instance}, now(), now())`),
        Effect.andThen(sql`INSERT INTO marketplaces (id, organization_id, name, description, status, connector_instance_id, created_at, updated_at)
          VALUES (${marketplace}, ${org.organizationId}, 'acme-tools', '', 'active', ${instance}, now(), now())`)
      )
    )
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
    expect(exported.connectors).toEqual([{ name: "Agent plugins", grants: [], plugins: [{ name: "code-review", grants: [] }], marketplaces: [{ name: "acme-tools", grants: [] }] }])
    // What a connector syncs is not a plugin or marketplace people made.
    expect([exported.plugins, exported.marketplaces]).toEqual([[], []])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    const document = {
      version: 1 as const,
      teams: [{ name: "Reviewers", externalKey: null, members: [org.member.email] }],
      connectors: [{
        name: "agent plugins",
        grants: [{ member: org.admin.email, role: "manager" as const }],
        // A team the same document makes.
        plugins: [{ name: "Code-Review", grants: [{ team: "reviewers", role: "viewer" as const }] }],
        marketplaces: [{ name: "acme-tools", grants: [{ organization: true as const, role: "viewer" as const }] }]
      }]
    }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.filter((change) => change.kind === "connector")).toEqual([{
      action: "update",
      kind: "connector",
      name: "Agent plugins",
      fields: [
        { field: "grants", before: [], after: [{ member: org.admin.email, role: "manager" }] },
        { field: "plugins/code-review/grants", before: [], after: [{ team: "Reviewers", role: "viewer" }] },
        { field: "marketplaces/acme-tools/grants", before: [], after: [{ organization: true, role: "viewer" }] }
      ]
    }])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])
    const pluginId = Schema.decodeUnknownSync(PluginId)(plugin)
    const granted = ok(await api.plugins.pluginListAccess({ path: { pluginId }, token: org.owner.token }), 200).items
    expect(granted.map((grant) => grant.role)).toEqual(["viewer"])

    // A grant revoked outside the document drifts, named with who revoked it.
    ok(await api.plugins.pluginRevoke({ path: { pluginId, grantId: granted[0]!.id }, token: org.admin.token }), 204)
    const drift = ok(await api.organizationDocument.drift({ token: org.owner.token }), 200)
    expect(drift.changes).toMatchObject([{
      kind: "connector",
      name: "Agent plugins",
      fields: [{ field: "plugins/code-review/grants", before: [], after: [{ team: "Reviewers", role: "viewer" }] }],
      changedBy: { action: "access.revoke", actor: { type: "user", id: org.admin.user.id } }
    }])

    // A connector or a synced plugin the organization does not have is refused: no document makes one.
    const refused = await api.organizationDocument.plan({
      token: org.owner.token,
      payload: { document: { version: 1, connectors: [{ name: "Agent plugins", plugins: [{ name: "lint" }] }, { name: "Elsewhere" }] } }
    })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ details: [{ path: ["document", "connectors", 0, "plugins", 0, "name"] }, { path: ["document", "connectors", 1, "name"] }] })
  })
})

describe("SSO connections in the document", () => {
  it("plans connections with their secret by reference and teams by name, keeps an active one's settings, and never cuts the applier's own", async () => {
    const idp = await IdpSaml.start()
    try {
      const org = await Http.staffed(server.url)
      await server.sql((sql) => sql`UPDATE organizations SET plan = 'enterprise' WHERE id = ${org.organizationId}`)
      // Requiring SSO needs an active connection: the API's refusal fails the apply.
      const requiring = { version: 1 as const, ssoPolicy: { requireSso: true, ownersPasswordFallback: true } }
      const required = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: requiring } }), 200)
      expect(required.changes).toEqual([{ action: "update", kind: "ssoPolicy", name: "ssoPolicy", fields: [{ field: "requireSso", before: false, after: true }] }])
      const noConnection = await api.organizationDocument.apply({ token: org.owner.token, payload: { document: requiring, planHash: required.planHash } })
      expect(noConnection.status).toBe(409)
      expect(noConnection.body).toMatchObject({ error: "sso_connection_required" })
      const engineering = ok(await api.teams.create({ token: org.admin.token, payload: { name: "Engineering" } }), 201).team
      const domain = `acme-${randomBytes(4).toString("hex")}.example`
      const mapping = {
        email: "email",
        name: "name",
        givenName: "given_name",
        familyName: "family_name",
        groups: "groups",
        groupRules: [{ group: "eng", team: "ENGINEERING" }]
      }
      const jit = { enabled: true, defaultRole: "member" as const, defaultTeams: ["engineering"] }
      const okta = {
        name: "Okta",
        kind: "oidc" as const,
        active: false,
        domains: [domain],
        jit,
        mapping,
        oidc: {
          issuer: "https://login.acme.example",
          endpoints: null,
          clientId: "orgplane",
          clientSecret: { from: "env:OKTA_SECRET", version: 1 },
          scopes: ["profile", "email"],
          tokenEndpointAuthMethod: "client_secret_basic" as const
        },
        saml: null
      }
      // The IdP's certificate with its lines joined otherwise: the same certificate.
      const certificate = idp.certificates()[0]!.replace(/\n(?!-----END)/g, "\n\n")
      const adfs = {
        name: "ADFS",
        kind: "saml" as const,
        active: false,
        domains: [],
        jit,
        mapping,
        oidc: null,
        saml: { source: "manual" as const, entityId: "urn:acme:idp", ssoUrl: "https://idp.acme.example/sso", certificates: [certificate] }
      }
      const entra = { ...adfs, name: "Entra", saml: { source: "metadataXml" as const, xml: idp.metadata() } }
      const document = { version: 1 as const, ssoConnections: [adfs, entra, okta] }
      const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
      expect(planned.changes.map((change) => `${change.action} ${change.name}`)).toEqual(["create ADFS", "create Entra", "create Okta"])
      expect(planned.secrets).toEqual(["env:OKTA_SECRET"])
      expect(planned.changes[2]!.fields.find((field) => field.field === "oidc.clientSecret")).toMatchObject({ secret: "set" })
      ok(await api.organizationDocument.apply({
        token: org.owner.token,
        payload: { document, planHash: planned.planHash, secrets: [{ from: "env:OKTA_SECRET", value: "okta-client-secret" }] }
      }), 200)
      expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200).changes).toEqual([])
      const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
      expect(validate(exported), JSON.stringify(validate.errors)).toBe(true)
      expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])
      const connections = ok(await api.sso.listConnections({ token: org.owner.token }), 200).connections
      const made = connections.find((connection) => connection.name === "Okta")!
      expect(made).toMatchObject({
        state: "draft",
        domains: [{ domain, verified: false }],
        jit: { defaultTeamIds: [engineering.id] },
        mapping: { groupRules: [{ group: "eng", teamId: engineering.id }] },
        oidc: { clientSecretSet: true, scopes: ["openid", "profile", "email"] }
      })

      // Activating needs a tested connection: the API's refusal fails the whole apply.
      const activating = { version: 1 as const, ssoConnections: [{ ...okta, active: true }] }
      const activation = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: activating } }), 200)
      const untested = await api.organizationDocument.apply({ token: org.owner.token, payload: { document: activating, planHash: activation.planHash } })
      expect(untested.status).toBe(409)
      expect(untested.body).toMatchObject({ error: "sso_connection_untested" })

      // An active connection (as a successful test and activation leave it): its settings change only with it inactive.
      await server.sql((sql) => sql`UPDATE sso_connections SET state = 'active' WHERE organization_id = ${org.organizationId} AND id = ${made.id}`)
      const moved = { ...okta, active: true, oidc: { ...okta.oidc, clientId: "orgplane-2" } }
      const refused = await api.organizationDocument.plan({ token: org.owner.token, payload: { document: { version: 1, ssoConnections: [moved] } } })
      expect(refused.status).toBe(400)
      expect(refused.body).toMatchObject({ details: [{ path: ["document", "ssoConnections", 0, "active"] }] })

      // The applier signed in through it: the document may not deactivate or delete it.
      await server.sql((sql) => sql`UPDATE sessions SET sso_connection_id = ${made.id}, authenticated_organization_id = ${org.organizationId} WHERE user_id = ${org.owner.user.id}`)
      const cutting = { version: 1 as const, ssoConnections: [{ ...moved, active: false }] }
      const cut = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: cutting } }), 200)
      expect(cut.changes.map((change) => change.fields.map((field) => field.field))).toEqual([["active", "oidc.clientId"]])
      const lockedOut = await api.organizationDocument.apply({ token: org.owner.token, payload: { document: cutting, planHash: cut.planHash } })
      expect(lockedOut.status).toBe(409)
      expect(lockedOut.body).toMatchObject({ error: "document_locks_you_out" })
      const emptied = { version: 1 as const, authoritative: ["ssoConnections" as const], ssoConnections: [] }
      const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
      const deleted = await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } })
      expect(deleted.status).toBe(409)
      expect(deleted.body).toMatchObject({ error: "document_locks_you_out" })

      // Another admin, signed in with a password, applies it: deactivated, then changed.
      const recut = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document: cutting } }), 200)
      ok(await api.organizationDocument.apply({ token: org.admin.token, payload: { document: cutting, planHash: recut.planHash } }), 200)
      expect(ok(await api.sso.getConnection({ token: org.admin.token, path: { connectionId: made.id } }), 200).connection).toMatchObject({
        state: "inactive",
        oidc: { clientId: "orgplane-2" }
      })

      // Domains: claimed by naming them, given up where authoritative, never one a connection serves.
      const other = `other-${domain}`
      const claiming = { version: 1 as const, domains: [{ domain: other.toUpperCase() }] }
      const claim = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document: claiming } }), 200)
      expect(claim.changes).toEqual([{ action: "create", kind: "domain", name: other, fields: [{ field: "domain", after: other }] }])
      ok(await api.organizationDocument.apply({ token: org.admin.token, payload: { document: claiming, planHash: claim.planHash } }), 200)
      expect(ok(await api.sso.listDomains({ token: org.admin.token }), 200).domains.map((each) => [each.domain, each.verified]).sort())
        .toEqual([[domain, false], [other, false]])
      const served = await api.organizationDocument.plan({ token: org.admin.token, payload: { document: { version: 1, authoritative: ["domains"], domains: [] } } })
      expect(served.status).toBe(400)
      expect(served.body).toMatchObject({ details: [{ path: ["document", "domains"] }] })
      const givingUp = { version: 1 as const, authoritative: ["domains" as const], domains: [{ domain }] }
      const release = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document: givingUp } }), 200)
      expect(release.changes.map((change) => `${change.action} ${change.name}`)).toEqual([`delete ${other}`])
      ok(await api.organizationDocument.apply({ token: org.admin.token, payload: { document: givingUp, planHash: release.planHash } }), 200)
      expect(ok(await api.organizationDocument.export({ token: org.admin.token }), 200).domains).toEqual([{ domain }])
    } finally {
      await idp.close()
    }
  })
})

describe("API keys in the document", () => {
  it("makes the applier's keys from their metadata, answers each key once, makes one again to change it, and never revokes the applier's own", async () => {
    const org = await Http.staffed(server.url)
    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString()
    const reads = ["organizations.*", "members.*", "invitations.*", "teams.*", "audit.*", "llmProviders.*", "mcp.*", "scim.*", "desktopPolicies.*", "templates.*", "catalog.*", "sso.*", "apiKeys.*"] as const
    const deploy = { name: "Deploy", member: org.owner.email, scopes: ["teams.read" as const], expiresAt }
    const document = { version: 1 as const, apiKeys: [deploy] }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes.map((change) => `${change.action} ${change.kind} ${change.name}`)).toEqual(["create apiKey Deploy"])
    const applied = ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(applied.apiKeys).toEqual([{ name: "Deploy", key: expect.stringMatching(/^opk_/) }])
    const first = applied.apiKeys[0]!.key
    expect((await api.teams.list({ apiKey: first })).status).toBe(200)
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(exported.apiKeys).toEqual([{ ...deploy, expiresAt: new Date(expiresAt).toISOString() }])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])

    // Other scopes: the key is made again; the old one stops working.
    const wider = { version: 1 as const, apiKeys: [{ ...deploy, scopes: [...reads] }] }
    const widening = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: wider } }), 200)
    expect(widening.changes.map((change) => change.fields.map((field) => field.field))).toEqual([["scopes"]])
    const remade = ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: wider, planHash: widening.planHash } }), 200).apiKeys[0]!.key
    expect((await api.teams.list({ apiKey: first })).status).toBe(401)

    // Applied with that key, a document that revokes it is refused; so is a key for another member.
    const emptied = { version: 1 as const, authoritative: ["apiKeys" as const], apiKeys: [] }
    const revoking = ok(await api.organizationDocument.plan({ apiKey: remade, payload: { document: emptied } }), 200)
    const ownKey = await api.organizationDocument.apply({ apiKey: remade, payload: { document: emptied, planHash: revoking.planHash } })
    expect(ownKey.status).toBe(409)
    expect(ownKey.body).toMatchObject({ error: "document_locks_you_out" })
    const forAdmin = { version: 1 as const, apiKeys: [{ ...deploy, name: "Admin's", member: org.admin.email }] }
    const adminKey = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: forAdmin } }), 200)
    const notMaker = await api.organizationDocument.apply({ token: org.owner.token, payload: { document: forAdmin, planHash: adminKey.planHash } })
    expect(notMaker.status).toBe(409)
    expect(notMaker.body).toMatchObject({ error: "api_key_maker" })
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: revoking.planHash } }), 200)
    expect((await api.teams.list({ apiKey: remade })).status).toBe(401)
  })
})

describe("audit streams in the document", () => {
  it("makes streams named by URL, answers each new one's secret once, and changes and deletes them", async () => {
    const org = await Http.staffed(server.url)
    const siem = { url: "http://127.0.0.1:9/siem", description: "SIEM", status: "paused" as const }
    const document = { version: 1 as const, auditStreams: [siem] }
    const planned = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document } }), 200)
    expect(planned.changes).toEqual([{
      action: "create",
      kind: "auditStream",
      name: siem.url,
      fields: [{ field: "url", after: siem.url }, { field: "description", after: "SIEM" }, { field: "status", after: "paused" }]
    }])
    const applied = ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200)
    expect(applied.auditStreamSecrets).toEqual([{ url: siem.url, secret: expect.stringMatching(/^whsec_/) }])
    const exported = ok(await api.organizationDocument.export({ token: org.owner.token }), 200)
    expect(exported.auditStreams).toEqual([siem])
    expect(ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: exported } }), 200).changes).toEqual([])
    // Applied again: nothing made, no secret.
    expect(ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document, planHash: planned.planHash } }), 200).auditStreamSecrets).toEqual([])

    const changed = { version: 1 as const, auditStreams: [{ ...siem, description: null }] }
    const update = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: changed } }), 200)
    expect(update.changes.map((change) => change.fields)).toEqual([[{ field: "description", before: "SIEM", after: null }]])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: changed, planHash: update.planHash } }), 200)
    const emptied = { version: 1 as const, authoritative: ["auditStreams" as const], auditStreams: [] }
    const deleting = ok(await api.organizationDocument.plan({ token: org.owner.token, payload: { document: emptied } }), 200)
    expect(deleting.changes.map((change) => `${change.action} ${change.name}`)).toEqual([`delete ${siem.url}`])
    ok(await api.organizationDocument.apply({ token: org.owner.token, payload: { document: emptied, planHash: deleting.planHash } }), 200)
    expect(ok(await api.auditStreams.list({ token: org.owner.token }), 200).items).toEqual([])
  })
})

describe("drift from the applied document", () => {
  /** One run of the drift job, as the cluster's cron runs it. */
  const runDrift = () =>
    server.sql((sql) =>
      Effect.flatMap(Effect.sync(() => new Date()), Drift.check).pipe(
        Effect.provide(Layer.mergeAll(LiveDocuments.layer, DocumentsRepository.layer, AuditRecorder.layer.pipe(Layer.provide(Config.layer())))),
        Effect.provide(LlmConfig.layer()),
        Effect.provide(IdGenerator.layer),
        // The job's lists page with cursors of their own, never shown to anyone.
        Effect.provideService(CursorKey, randomBytes(32)),
        Effect.provideService(SqlClient.SqlClient, sql)
      ))

  it("names each field changed outside it with who changed it and how, recorded once by the job, until applied again", async () => {
    const org = await Http.staffed(server.url)
    expect(ok(await api.organizationDocument.drift({ token: org.admin.token }), 200)).toEqual({ applied: null, changes: [], problems: [] })
    const document = {
      version: 1 as const,
      members: [{ email: org.member.email, role: "admin" as const }],
      teams: [{ name: "Core", externalKey: null, members: [org.member.email] }]
    }
    const apply = async () => {
      const { planHash } = ok(await api.organizationDocument.plan({ token: org.admin.token, payload: { document } }), 200)
      ok(await api.organizationDocument.apply({ token: org.admin.token, payload: { document, planHash } }), 200)
      return planHash
    }
    const planHash = await apply()
    expect(ok(await api.organizationDocument.drift({ token: org.admin.token }), 200)).toMatchObject({
      applied: { planHash, appliedByMembershipId: org.admin.membership.id },
      changes: [],
      problems: []
    })
    expect((await runDrift()).filter((run) => run.organizationId === org.organizationId)).toEqual([])

    // The owner makes the member a plain member again, outside the document.
    ok(await api.members.changeRole({ token: org.owner.token, path: { memberId: org.member.membership.id }, payload: { role: "member" } }), 200)
    const drifted = ok(await api.organizationDocument.drift({ token: org.admin.token }), 200)
    expect(drifted.changes).toEqual([{
      action: "update",
      kind: "member",
      name: org.member.email,
      fields: [{ field: "role", before: "member", after: "admin" }],
      changedBy: {
        eventId: expect.stringMatching(/^aev_/),
        action: "member.role.update",
        occurredAt: expect.any(String),
        actor: { type: "user", id: org.owner.user.id, label: expect.stringContaining(org.owner.email) },
        credentialId: expect.stringMatching(/^ses_/)
      }
    }])

    // The job records it once, naming the field, the owner and the session.
    expect(await runDrift()).toContainEqual({ organizationId: org.organizationId, differences: 1 })
    expect((await runDrift()).filter((run) => run.organizationId === org.organizationId)).toEqual([])
    const recorded = ok(await api.audit.listEvents({ token: org.owner.token, query: { action: "organization.document.drift" } }), 200).items
    expect(recorded).toHaveLength(1)
    expect(recorded[0]).toMatchObject({ actor: { type: "system", id: "system:document-drift" }, targets: expect.arrayContaining([{ type: "member", id: org.member.membership.id }]) })
    expect(recorded[0]?.reason).toContain(`member ${org.member.email}: role "admin" → "member" by`)
    expect(recorded[0]?.reason).toContain(org.owner.email)
    expect(recorded[0]?.reason).toContain(drifted.changes[0]!.changedBy!.credentialId!)

    // `/metrics` counts the drifted field at the next scrape, and 0 once the document is applied again.
    const driftedRole = async () => {
      const scrape = await Http.request(server.url, "GET", "/metrics", { token: metricsToken })
      const line = scrape.text.split("\n").find((text) =>
        text.startsWith("orgplane_document_drift_fields{") && text.includes(`kind="member"`) && text.includes(`field="role"`)
      )
      return line?.slice(line.lastIndexOf(" ") + 1)
    }
    expect(await driftedRole()).toBe("1")
    await apply()
    expect(await driftedRole()).toBe("0")
    expect(ok(await api.organizationDocument.drift({ token: org.admin.token }), 200).changes).toEqual([])
    expect((await runDrift()).filter((run) => run.organizationId === org.organizationId)).toEqual([])
  })
})
