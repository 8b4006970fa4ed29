/**
 * The planner (src/orgdocument/Plan.ts) over generated organizations: the plan of an export against itself is empty,
 * whatever the organization; a part left out plans nothing, `[]` plans deletes only where its list is authoritative;
 * and each kind of difference is planned as exactly the change that makes it.
 */
import { describe, expect, it } from "@effect/vitest"
import type { DocumentTeam, ExportedDocument } from "@orgplane/schema"
import * as fc from "fast-check"
import { plan as planWith } from "../src/orgdocument/Plan.js"
import { defaultDocument } from "../src/policies/Effective.js"

/** The planner with a catalog of no providers: these documents name no LLM provider. */
const plan = (live: ExportedDocument, document: Parameters<typeof planWith>[1]) => planWith(live, document, { source: "test", revision: "0", providers: [] })

const byText = (left: string, right: string) => left < right ? -1 : left > right ? 1 : 0
const word = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/)
const role = fc.constantFrom("owner" as const, "admin" as const, "member" as const)

/** An organization as its export writes it: unique emails and team names, teams made of its members, sorted. */
const exported: fc.Arbitrary<ExportedDocument> = fc.record({
  members: fc.uniqueArray(fc.record({ email: word.map((name) => `${name}@example.com`), role, suspended: fc.boolean() }), {
    selector: (member) => member.email,
    maxLength: 8
  }),
  invited: fc.uniqueArray(word.map((name) => `invitee.${name}@example.com`), { maxLength: 5 }),
  teams: fc.uniqueArray(fc.record({ name: word, externalKey: fc.option(word, { nil: null }), picks: fc.array(fc.nat(), { maxLength: 4 }), managed: fc.boolean() }), {
    selector: (team) => team.name,
    maxLength: 5
  }),
  name: word.map((name) => `Org ${name}`),
  metadata: fc.dictionary(word, word, { maxKeys: 3 }),
  visible: fc.boolean(),
  retentionDays: fc.integer({ min: 7, max: 3650 }),
  objects: fc.uniqueArray(fc.record({
    name: word,
    archived: fc.boolean(),
    metadata: fc.option(fc.dictionary(word, word, { maxKeys: 2 }), { nil: null })
  }), { selector: (object) => object.name, maxLength: 4 }),
  plugins: fc.uniqueArray(fc.record({ name: word.map((name) => `plugin ${name}`), archived: fc.boolean(), picks: fc.array(fc.nat(), { maxLength: 3 }) }), {
    selector: (plugin) => plugin.name,
    maxLength: 4
  }),
  marketplaces: fc.uniqueArray(fc.record({ name: word, picks: fc.array(fc.nat(), { maxLength: 3 }) }), { selector: (marketplace) => marketplace.name, maxLength: 3 }),
  // Connectors with what they sync (a plugin's name is unique in its connector only), granted to teams.
  connectors: fc.uniqueArray(fc.record({
    name: word.map((name) => `repo ${name}`),
    plugins: fc.uniqueArray(word, { maxLength: 3 }),
    marketplace: fc.boolean(),
    picks: fc.array(fc.nat(), { maxLength: 2 })
  }), { selector: (connector) => connector.name, maxLength: 3 }),
  streams: fc.uniqueArray(fc.record({ url: word.map((name) => `https://${name}.example/ingest`), paused: fc.boolean(), description: fc.option(word, { nil: null }) }), {
    selector: (stream) => stream.url,
    maxLength: 3
  }),
  sso: fc.uniqueArray(fc.record({
    name: word,
    saml: fc.boolean(),
    active: fc.boolean(),
    domains: fc.uniqueArray(word.map((name) => `${name}.example`), { maxLength: 2 }),
    picks: fc.array(fc.nat(), { maxLength: 2 })
  }), { selector: (connection) => connection.name, maxLength: 2 })
}).map(({ connectors, invited, marketplaces, members, metadata, name, objects, plugins, retentionDays, sso, streams, teams, visible }) => ({
  version: 1 as const,
  organization: { name, logoUrl: null, metadata },
  directory: { emailsVisibleToMembers: visible },
  audit: { retentionDays },
  ssoPolicy: { requireSso: false, ownersPasswordFallback: true },
  members: members.map(({ email, role, suspended }) => suspended ? { email, role, suspended: true as const } : { email, role })
    .sort((left, right) => byText(left.email, right.email)),
  invitations: [...invited].sort(byText).map((email) => ({ email, role: "member" as const, delivery: "shown" as const })),
  teams: teams.map(({ externalKey, managed, name: teamName, picks }): DocumentTeam => {
    const picked = members.length === 0 ? [] : [...new Set(picks.map((pick) => members[pick % members.length]!.email))].sort(byText)
    return managed ? { name: teamName, externalKey, members: picked, directoryManaged: true } : { name: teamName, externalKey, members: picked }
  }).sort((left, right) => byText(left.name, right.name)),
  llmProviders: [],
  mcpConnections: [],
  scimConnections: [],
  desktopDefaultPolicy: defaultDocument,
  desktopPolicies: [],
  templates: [],
  configObjects: objects.map((object) => ({
    relativePath: `skills/${object.name}/SKILL.md`,
    objectType: "skill" as const,
    parserMode: "markdown" as const,
    schemaVersion: "1",
    rawSourceText: `---\nname: ${object.name}\ndescription: Does ${object.name}.\n---\nDo it.\n`,
    metadata: object.metadata,
    status: object.archived ? "archived" as const : "active" as const,
    grants: []
  })).sort((left, right) => byText(left.relativePath, right.relativePath)),
  plugins: plugins.map((plugin) => ({
    name: plugin.name,
    description: "",
    status: plugin.archived ? "archived" as const : "active" as const,
    configObjects: objects.length === 0 ? [] : [...new Set(plugin.picks.map((pick) => `skills/${objects[pick % objects.length]!.name}/SKILL.md`))].sort(byText),
    grants: []
  })).sort((left, right) => byText(left.name, right.name)),
  marketplaces: marketplaces.map((marketplace) => ({
    name: marketplace.name,
    description: "",
    logoUrl: null,
    plugins: plugins.length === 0 ? [] : [...new Set(marketplace.picks.map((pick) => plugins[pick % plugins.length]!.name))].sort(byText),
    grants: []
  })).sort((left, right) => byText(left.name, right.name)),
  connectors: connectors.map((connector) => {
    const grants = teams.length === 0 ? [] : [...new Set(connector.picks.map((pick) => teams[pick % teams.length]!.name))].sort(byText)
      .map((team) => ({ team, role: "viewer" as const }))
    return {
      name: connector.name,
      grants,
      plugins: [...connector.plugins].sort(byText).map((plugin) => ({ name: plugin, grants })),
      marketplaces: connector.marketplace ? [{ name: `${connector.name} marketplace`, grants: [] }] : []
    }
  }).sort((left, right) => byText(left.name, right.name)),
  // Every domain a connection serves is the organization's.
  domains: [...new Set(sso.flatMap((connection) => connection.domains))].sort(byText).map((domain) => ({ domain })),
  ssoConnections: sso.map((connection) => {
    const named = teams.length === 0 ? [] : [...new Set(connection.picks.map((pick) => teams[pick % teams.length]!.name))].sort(byText)
    return {
      name: connection.name,
      kind: connection.saml ? "saml" as const : "oidc" as const,
      active: connection.active,
      domains: [...connection.domains].sort(byText),
      jit: { enabled: true, defaultRole: "member" as const, defaultTeams: named },
      mapping: { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: "groups", groupRules: named.map((team) => ({ group: `grp-${team}`, team })) },
      oidc: connection.saml ? null : {
        issuer: "https://login.example",
        endpoints: null,
        clientId: connection.name,
        clientSecret: { from: "env:SSO_SECRET", version: 1 },
        scopes: ["email", "openid", "profile"],
        tokenEndpointAuthMethod: "client_secret_basic" as const
      },
      saml: connection.saml ? { source: "metadataUrl" as const, url: "https://idp.example/metadata", allowIdpInitiated: false, relayStateAllowList: [] } : null
    }
  }).sort((left, right) => byText(left.name, right.name)),
  apiKeys: members.slice(0, 2).map((member, index) => ({
    name: `key ${index}`,
    member: member.email,
    scopes: index === 0 ? ["teams.read", "members.read"] : null,
    expiresAt: new Date(Date.UTC(2030, 0, 1 + index))
  })),
  auditStreams: streams.map((stream) => ({ url: stream.url, description: stream.description, status: stream.paused ? "paused" as const : "active" as const }))
    .sort((left, right) => byText(left.url, right.url))
}))

describe("the planner", () => {
  it("plans nothing for an organization's own export, with every list authoritative or none", () => {
    fc.assert(fc.property(exported, fc.boolean(), (live, all) => {
      const document = all ? { ...live, authoritative: ["members", "invitations", "teams", "configObjects", "plugins", "marketplaces", "domains", "grants"] as const } : live
      expect(plan(live, document)).toEqual({ changes: [], problems: [] })
      // The same metadata in another order is no change either.
      const reversed = Object.fromEntries(Object.entries(live.organization.metadata).reverse())
      expect(plan(live, { ...document, organization: { ...live.organization, metadata: reversed } })).toEqual({ changes: [], problems: [] })
    }))
  })

  it("plans a config object's new content as an update of those fields, and a plugin's holdings only where it names them", () => {
    fc.assert(fc.property(exported.filter((live) => live.configObjects.length > 0 && live.plugins.length > 0), (live) => {
      const object = live.configObjects[0]!
      const plugin = live.plugins[0]!
      const source = `${object.rawSourceText}More.\n`
      const edited = plan(live, {
        version: 1,
        configObjects: [{ ...object, rawSourceText: source, metadata: { Owner: "Platform team" } }],
        plugins: [{ name: plugin.name, description: plugin.description, status: plugin.status }]
      })
      expect(edited).toEqual({
        changes: [{
          action: "update",
          kind: "configObject",
          name: object.relativePath,
          fields: [
            { field: "rawSourceText", before: object.rawSourceText, after: source },
            { field: "metadata", before: object.metadata, after: { Owner: "Platform team" } }
          ]
        }],
        problems: []
      })
      const emptied = plan(live, { version: 1, plugins: [{ ...plugin, configObjects: [] }] })
      expect(emptied.changes).toEqual(
        plugin.configObjects.length === 0
          ? []
          : [{ action: "update", kind: "plugin", name: plugin.name, fields: [{ field: "configObjects", before: plugin.configObjects, after: [] }] }]
      )
    }))
  })

  it("plans a connector's grants and those of what it syncs as fields of one change, names in any case", () => {
    fc.assert(fc.property(exported.filter((live) => live.connectors.some((connector) => connector.plugins.length > 0)), (live) => {
      const connector = live.connectors.find((each) => each.plugins.length > 0)!
      const plugin = connector.plugins[0]!
      const everyone = { organization: true as const, role: "editor" as const }
      const planned = plan(live, { version: 1, connectors: [{ name: connector.name.toUpperCase(), plugins: [{ name: plugin.name.toUpperCase(), grants: [everyone] }] }] })
      expect(planned).toEqual({
        changes: [{ action: "update", kind: "connector", name: connector.name, fields: [{ field: `plugins/${plugin.name}/grants`, before: plugin.grants, after: [everyone, ...plugin.grants ?? []] }] }],
        problems: []
      })
    }))
  })

  it("plans nothing for a part left out, and deletes for [] only where the list is authoritative", () => {
    fc.assert(fc.property(exported, (live) => {
      expect(plan(live, { version: 1, authoritative: ["members", "invitations", "teams"] })).toEqual({ changes: [], problems: [] })
      expect(plan(live, { version: 1, members: [], invitations: [], teams: [] })).toEqual({ changes: [], problems: [] })
      const emptied = plan(live, { version: 1, authoritative: ["invitations", "teams"], invitations: [], teams: [] })
      const managed = live.teams.filter((team) => team.directoryManaged === true)
      expect(emptied.problems).toHaveLength(managed.length)
      expect(emptied.changes.map((change) => `${change.action} ${change.kind} ${change.name}`)).toEqual([
        ...live.invitations.map((invitation) => `delete invitation ${invitation.email}`),
        ...live.teams.filter((team) => team.directoryManaged !== true).map((team) => `delete team ${team.name}`)
      ])
    }))
  })

  it("plans a role change, a new team and a new invitation as exactly those changes, whatever the case of their names", () => {
    fc.assert(fc.property(exported.filter((live) => live.members.length > 0), (live) => {
      const first = live.members[0]!
      const role = first.role === "admin" ? "member" : "admin"
      const document: ExportedDocument = {
        ...live,
        members: [{ ...first, email: first.email.toUpperCase(), role }, ...live.members.slice(1)],
        invitations: [...live.invitations, { email: "new.person@example.com", role: "admin", delivery: "mailed" }],
        teams: [...live.teams, { name: "a brand new team", externalKey: null, members: [first.email.toUpperCase()] }]
      }
      expect(plan(live, document)).toEqual({
        problems: [],
        changes: [
          { action: "update", kind: "member", name: first.email, fields: [{ field: "role", before: first.role, after: role }] },
          { action: "create", kind: "invitation", name: "new.person@example.com", fields: [{ field: "role", after: "admin" }, { field: "delivery", after: "mailed" }] },
          {
            action: "create",
            kind: "team",
            name: "a brand new team",
            fields: [{ field: "name", after: "a brand new team" }, { field: "externalKey", after: null }, { field: "members", after: [first.email.toUpperCase()] }]
          }
        ]
      })
    }))
  })

  it("refuses what it cannot plan, each problem at its path", () => {
    const live: ExportedDocument = {
      version: 1,
      organization: { name: "Acme", logoUrl: null, metadata: {} },
      directory: { emailsVisibleToMembers: false },
      audit: { retentionDays: 365 },
      ssoPolicy: { requireSso: false, ownersPasswordFallback: true },
      members: [{ email: "ada@example.com", role: "owner" }],
      invitations: [],
      teams: [{ name: "Directory", externalKey: null, members: [], directoryManaged: true }],
      llmProviders: [],
      mcpConnections: [],
      scimConnections: [],
      desktopDefaultPolicy: defaultDocument,
      desktopPolicies: [],
      templates: [],
      configObjects: [{
        relativePath: "skills/deploy/SKILL.md",
        objectType: "skill",
        parserMode: "markdown",
        schemaVersion: "1",
        rawSourceText: "---\nname: deploy\ndescription: Deploys.\n---\nDeploy.\n",
        metadata: null,
        status: "active",
        grants: []
      }],
      plugins: [{ name: "Release tooling", description: "", status: "active", configObjects: ["skills/deploy/SKILL.md"], grants: [] }],
      marketplaces: [],
      connectors: [{ name: "Agent plugins", grants: [], plugins: [{ name: "code-review", grants: [] }], marketplaces: [] }],
      ssoConnections: [{
        name: "Okta",
        kind: "oidc",
        active: true,
        domains: ["acme.example"],
        jit: { enabled: true, defaultRole: "member", defaultTeams: [] },
        mapping: { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: "groups", groupRules: [] },
        oidc: { issuer: "https://login.acme.example", endpoints: null, clientId: "orgplane", clientSecret: { from: "env:OKTA", version: 1 }, scopes: ["openid"], tokenEndpointAuthMethod: "client_secret_basic" },
        saml: null
      }],
      auditStreams: [],
      apiKeys: [],
      domains: [{ domain: "acme.example", verified: true }]
    }
    const { problems } = plan(live, {
      version: 1,
      members: [{ email: "ada@example.com", role: "owner" }, { email: "ADA@example.com", role: "admin" }, { email: "bob@example.com", role: "member" }],
      invitations: [{ email: "ada@example.com", role: "member", delivery: "shown" }],
      teams: [{ name: "Directory", externalKey: null, members: ["ada@example.com"] }, { name: "New", externalKey: null, members: ["carol@example.com"] }],
      authoritative: ["plugins", "configObjects"],
      configObjects: [
        // A path differing only in case names the same object; its type does not change; a skill is Markdown.
        { ...live.configObjects[0]!, relativePath: "Skills/deploy/SKILL.md", objectType: "command" },
        { ...live.configObjects[0]!, relativePath: "skills/lint/SKILL.md", parserMode: "json" }
      ],
      plugins: [{ name: "Linting", description: "", status: "active", configObjects: ["skills/lint/SKILL.md", "skills/LINT/SKILL.md", "skills/gone.md"] }],
      marketplaces: [{ name: "Internal", description: "", logoUrl: null, plugins: ["linting", "LINTING", "Release tooling", "Nowhere"] }],
      // Connectors are made through the API; what one syncs is its repository's.
      connectors: [
        { name: "agent PLUGINS", plugins: [{ name: "Code-Review", grants: [{ team: "Nowhere", role: "viewer" }] }, { name: "lint" }] },
        { name: "Elsewhere", grants: [] }
      ],
      ssoConnections: [
        // An active connection's domains do not change; a new one is made inactive, and names a team that exists.
        { ...live.ssoConnections[0]!, name: "OKTA", domains: ["acme.example", "acme.test"] },
        { ...live.ssoConnections[0]!, name: "Entra", jit: { enabled: true, defaultRole: "member", defaultTeams: ["Nowhere"] } }
      ]
    })
    expect(problems.map((problem) => problem.path.join("."))).toEqual([
      "document.members.1.email",
      "document.members.2.email",
      "document.invitations.0.email",
      "document.teams.0",
      "document.teams.1.members.0",
      "document.configObjects.0.relativePath",
      "document.configObjects.0.objectType",
      "document.configObjects.1.parserMode",
      "document.plugins.0.configObjects.1",
      "document.plugins.0.configObjects.2",
      "document.marketplaces.0.plugins.1",
      "document.marketplaces.0.plugins.2",
      "document.marketplaces.0.plugins.3",
      "document.connectors.0.plugins.0.grants.0",
      "document.connectors.0.plugins.1.name",
      "document.connectors.1.name",
      "document.ssoConnections.0.active",
      "document.ssoConnections.1.jit.defaultTeams.0"
    ])
  })
})
