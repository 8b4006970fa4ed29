/**
 * access/Access.ts and the teams area (Teams, TeamsRepository, DirectoryTeams) as services, on a fresh migrated
 * database (the embedded one, or Postgres with DATABASE_URL): who may do what to a shared resource (the grants, the
 * marketplace and plugin viewer fallbacks, a template's creator, using against managing), teams made, changed and
 * listed by the teams area's rules, a directory's teams, and another organization's ids answering 404. The errors are
 * held word for word, as the API answers them (http/Teams.test.ts and CatalogAccess.test.ts say them too).
 */
import { expect, layer } from "@effect/vitest"
import {
  type AccessListQuery,
  ConfigObjectId,
  MarketplaceId,
  type MemberContext,
  type Organization,
  PluginId,
  ScimConnectionId,
  TeamId,
  type TeamListQuery,
  TemplateId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import {
  Access,
  ConfigObjectKind,
  type Grant,
  type Kind,
  MarketplaceKind,
  notGranted,
  PluginKind,
  ranked,
  requireRanked,
  TemplateKind
} from "../src/access/Access.js"
import { IdGenerator } from "../src/platform/Ids.js"
import { findOne, trusted } from "../src/platform/Statements.js"
import * as Principal from "../src/platform/Principal.js"
import { candidateNames, DirectoryTeams } from "../src/teams/DirectoryTeams.js"
import { Teams } from "../src/teams/Teams.js"
import { TeamsRepository } from "../src/teams/TeamsRepository.js"
import * as Db from "./support/IdentityDatabase.js"
import * as Members from "./support/Members.js"
import * as TestDatabase from "./support/TestDatabase.js"

const services = Layer.mergeAll(Teams.layer, Access.layer, TeamsRepository.layer, DirectoryTeams.layer)
const TestLayer = Layer.provideMerge(services, Layer.merge(Db.layer, IdGenerator.layer))

/** An organization with an owner, an admin and two members, their rows written. */
const staffed = Effect.fn("AccessTeams.staffed")(function*() {
  const organization = Members.organization("team")
  const owner = Members.member(organization, "owner")
  const admin = Members.member(organization, "admin")
  const member = Members.member(organization, "member")
  const other = Members.member(organization, "member")
  yield* Members.seed(owner, admin, member, other)
  return { organization, owner, admin, member, other }
})

const membershipOf = (caller: MemberContext) => caller.membership.id
const newId = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, prefix: string): S["Type"] =>
  Schema.decodeUnknownSync(schema)(Db.newId(prefix))
const teamId = () => newId(TeamId, "tem")
const listQuery = (query: TeamListQuery = {}) => query
const grantsQuery = (query: AccessListQuery = {}) => query

/** The error an effect fails with, as its plain members (`_tag` and the body: Effect 4 keeps `message` off the object's own). */
const plain = (error: object): object => ({ ...error, ..."message" in error ? { message: error.message } : {} })
const failure = <A, E extends object, R>(effect: Effect.Effect<A, E, R>) => Effect.map(Effect.flip(effect), plain)

layer(TestLayer, { timeout: 120_000, excludeTestServices: true })(`access and teams on ${TestDatabase.kind}`, (it) => {
  it.effect("teams: created with members (deduplicated, sorted), read by every member, managed by owners and admins", () =>
    Effect.gen(function*() {
      const teams = yield* Teams
      const { admin, member, organization, other, owner } = yield* staffed()
      const created = yield* teams.create(admin, { name: "Platform", memberIds: [membershipOf(member), membershipOf(owner), membershipOf(member)] })
      expect(created.team).toMatchObject({
        organizationId: organization.id,
        name: "Platform",
        memberIds: [membershipOf(member), membershipOf(owner)].sort(),
        createdByOrgMembershipId: membershipOf(admin),
        externalKey: null
      })
      expect(created.team.id).toMatch(/^tem_[0-9a-z]{26}$/)
      expect(yield* teams.get(member, created.team.id)).toEqual(created)
      expect(yield* failure(teams.create(member, { name: "Mine" }))).toEqual({
        _tag: "Forbidden",
        reason: "insufficient_role",
        message: "This action requires the admin role or higher (teams.manage)."
      })
      expect(yield* failure(teams.create(owner, { name: "PLATFORM" }))).toEqual({
        _tag: "Conflict",
        error: "team_exists",
        message: 'The organization already has a team named "PLATFORM".'
      })

      const renamed = yield* teams.update(owner, created.team.id, { name: "Infrastructure", memberIds: [membershipOf(other)] })
      expect(renamed.team).toMatchObject({ name: "Infrastructure", memberIds: [membershipOf(other)] })
      const added = yield* teams.addMembers(admin, created.team.id, [membershipOf(member), membershipOf(other)])
      expect(added.team.memberIds).toEqual([membershipOf(member), membershipOf(other)].sort())
      yield* teams.removeMember(admin, created.team.id, membershipOf(other))
      // Idempotent for a member who is not in the team.
      yield* teams.removeMember(admin, created.team.id, membershipOf(other))
      expect((yield* teams.get(member, created.team.id)).team.memberIds).toEqual([membershipOf(member)])
      expect(yield* failure(teams.update(member, created.team.id, { name: "x" }))).toMatchObject({ reason: "insufficient_role" })

      yield* teams.remove(admin, created.team.id)
      expect(yield* failure(teams.get(owner, created.team.id))).toEqual({ _tag: "NotFound", error: "team_not_found", message: "Team not found." })
      expect(yield* failure(teams.remove(admin, created.team.id))).toMatchObject({ error: "team_not_found" })
      // The name is free again.
      expect((yield* teams.create(owner, { name: "Platform" })).team.name).toBe("Platform")
    }))

  it.effect("teams: only active members of the organization, nothing written otherwise; another organization's team is 404", () =>
    Effect.gen(function*() {
      const teams = yield* Teams
      const sql = yield* SqlClient.SqlClient
      const org = yield* staffed()
      const elsewhere = yield* staffed()
      const foreign = membershipOf(elsewhere.member)
      expect(yield* failure(teams.create(org.owner, { name: "Mixed", memberIds: [membershipOf(org.member), foreign] }))).toEqual({
        _tag: "NotFound",
        error: "member_not_found",
        message: `${foreign} is not a member of this organization.`
      })
      expect((yield* teams.list(org.owner, listQuery({ q: "Mixed" }))).items).toEqual([])

      const core = (yield* teams.create(org.owner, { name: "Core", memberIds: [membershipOf(org.member)] })).team
      expect(yield* failure(teams.update(org.owner, core.id, { name: "Renamed", memberIds: [foreign] }))).toMatchObject({ error: "member_not_found" })
      expect((yield* teams.get(org.owner, core.id)).team).toMatchObject({ name: "Core", memberIds: [membershipOf(org.member)] })

      yield* sql`UPDATE memberships SET removed_at = ${Members.at} WHERE id = ${membershipOf(org.admin)}`
      expect(yield* failure(teams.addMembers(org.owner, core.id, [membershipOf(org.admin)]))).toMatchObject({ error: "member_not_found" })
      expect(yield* failure(teams.removeMember(org.owner, core.id, foreign))).toEqual({
        _tag: "NotFound",
        error: "member_not_found",
        message: `${foreign} is not a member of this organization.`
      })

      expect(yield* failure(teams.get(elsewhere.owner, core.id))).toMatchObject({ error: "team_not_found" })
      expect(yield* failure(teams.update(elsewhere.owner, core.id, { name: "Stolen" }))).toMatchObject({ error: "team_not_found" })
      expect(yield* failure(teams.remove(elsewhere.owner, core.id))).toMatchObject({ error: "team_not_found" })
      expect(yield* failure(teams.get(org.owner, teamId()))).toMatchObject({ error: "team_not_found" })
    }))

  it.effect("teams: listed by name with a cursor, filtered by text and by member", () =>
    Effect.gen(function*() {
      const teams = yield* Teams
      const { admin, member } = yield* staffed()
      for (const name of ["beta", "Alpha", "gamma", "Delta", "Eps_lon"]) {
        yield* teams.create(admin, name === "gamma" || name === "Alpha" ? { name, memberIds: [membershipOf(member)] } : { name })
      }
      const names: Array<string> = []
      let cursor: string | null = null
      do {
        const page: { readonly items: ReadonlyArray<{ readonly name: string }>; readonly nextCursor: string | null } = yield* teams.list(
          member,
          listQuery({ limit: 2, ...(cursor === null ? {} : { cursor }) })
        )
        expect(page.items.length).toBeLessThanOrEqual(2)
        names.push(...page.items.map((team) => team.name))
        cursor = page.nextCursor
      } while (cursor !== null)
      expect(names).toEqual(["Alpha", "beta", "Delta", "Eps_lon", "gamma"])
      expect((yield* teams.list(member, listQuery({ q: "ELT" }))).items.map((team) => team.name)).toEqual(["Delta"])
      // `_` matches itself, not any character.
      expect((yield* teams.list(member, listQuery({ q: "s_l" }))).items.map((team) => team.name)).toEqual(["Eps_lon"])
      expect((yield* teams.list(member, listQuery({ q: "a_p" }))).items).toEqual([])
      expect((yield* teams.list(member, listQuery({ memberId: membershipOf(member) }))).items.map((team) => team.name)).toEqual(["Alpha", "gamma"])
      expect(yield* failure(teams.list(member, listQuery({ cursor: "nonsense" })))).toMatchObject({ _tag: "InvalidRequest" })
    }))

  it.effect("teams: external keys are unique in an organization; a directory's team refuses manual changes but its key", () =>
    Effect.gen(function*() {
      const teams = yield* Teams
      const directory = yield* DirectoryTeams
      const sql = yield* SqlClient.SqlClient
      const { admin, member, organization, owner } = yield* staffed()
      const keyed = (yield* teams.create(owner, { name: "Keyed", externalKey: "grp-1" })).team
      expect(keyed.externalKey).toBe("grp-1")
      expect(yield* failure(teams.create(owner, { name: "Other", externalKey: "grp-1" }))).toEqual({
        _tag: "Conflict",
        error: "team_external_key_taken",
        message: 'Another team of the organization has the external key "grp-1".'
      })
      const plain = (yield* teams.create(owner, { name: "Plain" })).team
      expect(yield* failure(teams.update(owner, plain.id, { externalKey: "grp-1" }))).toMatchObject({ error: "team_external_key_taken" })
      expect((yield* teams.update(owner, keyed.id, { externalKey: null })).team.externalKey).toBeNull()
      expect((yield* teams.update(owner, plain.id, { externalKey: "grp-1" })).team.externalKey).toBe("grp-1")

      const connectionId = Schema.decodeUnknownSync(ScimConnectionId)(Db.newId("scc"))
      yield* sql`INSERT INTO scim_connections (id, organization_id, name, group_mapping_mode, default_role, created_at, updated_at)
                 VALUES (${connectionId}, ${organization.id}, 'Okta', 'create_teams', 'member', ${Members.at}, ${Members.at})`
      const owned = yield* directory.create({ organizationId: organization.id, connectionId, name: "  keyed " })
      const read = (yield* teams.get(member, owned)).team
      expect(read).toMatchObject({ name: "keyed (SCIM)", createdByOrgMembershipId: null, memberIds: [] })
      const refused = {
        _tag: "Conflict",
        error: "team_managed_by_directory",
        message: "The organization's directory (SCIM) manages this team: change it in the directory."
      }
      expect(yield* failure(teams.update(admin, owned, { name: "Mine now" }))).toEqual(refused)
      expect(yield* failure(teams.update(admin, owned, { memberIds: [] }))).toEqual(refused)
      expect(yield* failure(teams.addMembers(admin, owned, [membershipOf(member)]))).toEqual(refused)
      expect(yield* failure(teams.removeMember(admin, owned, membershipOf(member)))).toEqual(refused)
      expect(yield* failure(teams.remove(admin, owned))).toEqual(refused)
      expect((yield* teams.update(admin, owned, { externalKey: "grp-2" })).team.externalKey).toBe("grp-2")
      expect(yield* directory.findByExternalKey(organization.id, "grp-2")).toEqual(Option.some(owned))
      expect(yield* directory.findByExternalKey(Members.organizationId(), "grp-2")).toEqual(Option.none())

      yield* directory.setMembers(organization.id, owned, [membershipOf(member), membershipOf(admin)])
      expect((yield* teams.get(member, owned)).team.memberIds).toEqual([membershipOf(member), membershipOf(admin)].sort())
      yield* directory.setMembers(organization.id, owned, [membershipOf(admin)])
      expect((yield* teams.get(member, owned)).team.memberIds).toEqual([membershipOf(admin)])
      yield* directory.setMembers(organization.id, owned, [])
      expect((yield* teams.get(member, owned)).team.memberIds).toEqual([])
      // Renamed to a name another team has: the next free one.
      yield* directory.rename(organization.id, owned, "Plain")
      expect((yield* teams.get(member, owned)).team.name).toBe("Plain (SCIM)")
      yield* directory.rename(organization.id, owned, "Plain")
      expect((yield* teams.get(member, owned)).team.name).toBe("Plain (SCIM)")

      yield* directory.claim(organization.id, plain.id, connectionId)
      expect(yield* failure(teams.update(admin, plain.id, { name: "x" }))).toEqual(refused)
      yield* directory.release(organization.id, plain.id)
      yield* directory.release(organization.id, owned)
      expect((yield* teams.update(admin, owned, { name: "Released" })).team.name).toBe("Released")
      yield* teams.remove(admin, owned)
    }))

  it.effect("DirectoryTeams.candidateNames: the group's name, then (SCIM), (SCIM 2), ..., cut to 255 characters", () =>
    Effect.sync(() => {
      expect(candidateNames("  Sales   EU ", 4)).toEqual(["Sales EU", "Sales EU (SCIM)", "Sales EU (SCIM 2)", "Sales EU (SCIM 3)"])
      expect(candidateNames("   ", 1)).toEqual(["Directory group"])
      const long = candidateNames("x".repeat(300), 3)
      expect(long.map((name) => name.length)).toEqual([255, 255, 255])
      expect(long[2]?.endsWith(" (SCIM 2)")).toBe(true)
    }))

  /** A marketplace listing a plugin that holds a config object, and a template, made by `creator`. */
  const catalog = Effect.fn("AccessTeams.catalog")(function*(organization: Organization, creator: MemberContext) {
    const sql = yield* SqlClient.SqlClient
    const ids = {
      marketplace: newId(MarketplaceId, "mkt"),
      plugin: newId(PluginId, "plg"),
      configObject: newId(ConfigObjectId, "cob"),
      template: newId(TemplateId, "tpl")
    }
    const at = Members.at
    const by = membershipOf(creator)
    // Names are unique among an organization's live marketplaces and plugins.
    const suffix = ids.plugin.slice(-6)
    yield* sql`INSERT INTO marketplaces (id, organization_id, name, description, status, created_by_membership_id, created_at, updated_at)
               VALUES (${ids.marketplace}, ${organization.id}, ${`Market ${suffix}`}, '', 'active', ${by}, ${at}, ${at})`
    yield* sql`INSERT INTO plugins (id, organization_id, name, description, status, created_by_membership_id, created_at, updated_at)
               VALUES (${ids.plugin}, ${organization.id}, ${`Deploy ${suffix}`}, '', 'active', ${by}, ${at}, ${at})`
    yield* sql`INSERT INTO config_objects (id, organization_id, object_type, source_mode, status, title, description, search_text,
                 created_by_membership_id, created_at, updated_at)
               VALUES (${ids.configObject}, ${organization.id}, 'skill', 'cloud', 'active', 'Ship it', '', '', ${by}, ${at}, ${at})`
    yield* sql`INSERT INTO marketplace_plugins (id, organization_id, marketplace_id, plugin_id, membership_source, created_at)
               VALUES (${Db.newId("mkp")}, ${organization.id}, ${ids.marketplace}, ${ids.plugin}, 'manual', ${at})`
    yield* sql`INSERT INTO plugin_config_objects (id, organization_id, plugin_id, config_object_id, membership_source, created_at)
               VALUES (${Db.newId("pco")}, ${organization.id}, ${ids.plugin}, ${ids.configObject}, 'manual', ${at})`
    yield* sql`INSERT INTO templates (id, organization_id, name, description, kind, latest_version, created_by_membership_id, created_at, updated_at)
               VALUES (${ids.template}, ${organization.id}, 'Onboarding', '', 'doc', 1, ${by}, ${at}, ${at})`
    return ids
  })

  it.effect("access: owners and admins manage everything; a member's role is the highest grant that reaches them", () =>
    Effect.gen(function*() {
      const access = yield* Access
      const teams = yield* Teams
      const { admin, member, organization, other, owner } = yield* staffed()
      const ids = yield* catalog(organization, owner)
      for (const manager of [owner, admin]) {
        expect(yield* access.roleOn(manager, PluginKind, ids.plugin)).toEqual(Option.some("manager"))
        yield* access.require(manager, MarketplaceKind, ids.marketplace, "manager")
      }
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.none())
      expect(yield* failure(access.require(member, PluginKind, ids.plugin, "viewer"))).toEqual({
        _tag: "Forbidden",
        reason: "insufficient_access",
        message: "Missing viewer access for plugin."
      })

      const team = (yield* teams.create(owner, { name: "Builders", memberIds: [membershipOf(member)] })).team
      const teamGrant = yield* access.grant(owner, PluginKind, ids.plugin, { teamId: team.id, role: "editor" })
      expect(teamGrant).toMatchObject({ ok: true, item: { teamId: team.id, role: "editor", orgWide: false, orgMembershipId: null, removedAt: null, createdByOrgMembershipId: membershipOf(owner) } })
      expect(teamGrant.item.id).toMatch(/^pag_/)
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.some("editor"))
      expect(yield* access.roleOn(other, PluginKind, ids.plugin)).toEqual(Option.none())
      expect(yield* failure(access.require(member, PluginKind, ids.plugin, "manager"))).toMatchObject({ message: "Missing manager access for plugin." })
      // An editor grants nothing; a direct grant raises the member's role, granting again updates it.
      expect(yield* failure(access.grant(member, PluginKind, ids.plugin, { orgMembershipId: membershipOf(other), role: "viewer" }))).toMatchObject({ reason: "insufficient_access" })
      const direct = yield* access.grant(owner, PluginKind, ids.plugin, { orgMembershipId: membershipOf(member), role: "viewer" })
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.some("editor"))
      const raised = yield* access.grant(owner, PluginKind, ids.plugin, { orgMembershipId: membershipOf(member), role: "manager" })
      expect(raised.item.id).toBe(direct.item.id)
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.some("manager"))
      // Now a manager, the member grants and lists; org-wide grants are for owners and admins.
      yield* access.grant(member, PluginKind, ids.plugin, { orgMembershipId: membershipOf(other), role: "viewer" })
      expect(yield* failure(access.grant(member, PluginKind, ids.plugin, { orgWide: true, role: "viewer" }))).toEqual({
        _tag: "Forbidden",
        reason: "insufficient_role",
        message: "This action requires the admin role or higher (catalog.grantOrgWide)."
      })
      expect(yield* failure(access.grant(owner, PluginKind, ids.plugin, { orgMembershipId: membershipOf((yield* staffed()).member), role: "viewer" }))).toMatchObject({
        error: "member_not_found"
      })
      expect(yield* failure(access.grant(owner, PluginKind, ids.plugin, { teamId: teamId(), role: "viewer" }))).toEqual({
        _tag: "NotFound",
        error: "team_not_found",
        message: "Team not found."
      })

      // Revoked grants stop applying, revoking again keeps the first time, and lists leave them out unless asked.
      const page1 = yield* access.listGrants(owner, PluginKind, ids.plugin, grantsQuery({ limit: 2 }))
      expect(page1.items.length).toBe(2)
      expect(page1.nextCursor).not.toBeNull()
      const page2 = yield* access.listGrants(owner, PluginKind, ids.plugin, grantsQuery({ limit: 2, cursor: page1.nextCursor ?? "" }))
      expect([...page1.items, ...page2.items].map((grant) => grant.id).sort()).toEqual(
        [teamGrant.item.id, direct.item.id, (yield* access.listGrants(owner, PluginKind, ids.plugin, grantsQuery())).items.find((grant) => grant.orgMembershipId === membershipOf(other))?.id].sort()
      )
      yield* access.revoke(owner, PluginKind, ids.plugin, direct.item.id)
      const revokedAt = (yield* access.listGrants(owner, PluginKind, ids.plugin, grantsQuery({ includeRevoked: true }))).items.find((grant) => grant.id === direct.item.id)?.removedAt
      expect(revokedAt).toBeInstanceOf(Date)
      yield* access.revoke(owner, PluginKind, ids.plugin, direct.item.id)
      expect((yield* access.listGrants(owner, PluginKind, ids.plugin, grantsQuery({ includeRevoked: true }))).items.find((grant) => grant.id === direct.item.id)?.removedAt).toEqual(revokedAt)
      expect((yield* access.listGrants(owner, PluginKind, ids.plugin, grantsQuery())).items.map((grant) => grant.id)).not.toContain(direct.item.id)
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.some("editor"))
      expect(yield* failure(access.revoke(owner, PluginKind, ids.plugin, Db.newId("pag")))).toEqual({
        _tag: "NotFound",
        error: "access_grant_not_found",
        message: "Access grant not found."
      })
      expect(yield* failure(access.listGrants(other, PluginKind, ids.plugin, grantsQuery()))).toMatchObject({ reason: "insufficient_access" })
      // A deleted team takes its grants with it.
      yield* teams.remove(owner, team.id)
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.none())
    }))

  it.effect("access: viewer through a marketplace or a plugin; a template's creator manages it; using needs a grant; other organizations 404", () =>
    Effect.gen(function*() {
      const access = yield* Access
      const sql = yield* SqlClient.SqlClient
      const { admin, member, organization, other, owner } = yield* staffed()
      const ids = yield* catalog(organization, owner)
      expect(yield* access.roleOn(member, ConfigObjectKind, ids.configObject)).toEqual(Option.none())
      yield* access.grant(admin, MarketplaceKind, ids.marketplace, { orgWide: true, role: "viewer" })
      expect(yield* access.roleOn(member, MarketplaceKind, ids.marketplace)).toEqual(Option.some("viewer"))
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.some("viewer"))
      expect(yield* access.roleOn(member, ConfigObjectKind, ids.configObject)).toEqual(Option.some("viewer"))
      yield* access.require(member, ConfigObjectKind, ids.configObject, "viewer")
      expect(yield* failure(access.require(member, ConfigObjectKind, ids.configObject, "editor"))).toEqual({
        _tag: "Forbidden",
        reason: "insufficient_access",
        message: "Missing editor access for config object."
      })

      // The fallback is SQL over the row: lists filter with it.
      const visibleTo = (caller: MemberContext) =>
        sql<{ id: string }>`SELECT c.id FROM config_objects c WHERE c.organization_id = ${organization.id}
                              AND ${access.visible(caller, ConfigObjectKind, "c")}`.pipe(Effect.map((rows) => rows.map((row) => row.id)))
      expect(yield* visibleTo(member)).toEqual([ids.configObject])
      yield* sql`UPDATE marketplace_plugins SET removed_at = ${Members.at} WHERE plugin_id = ${ids.plugin}`
      expect(yield* visibleTo(member)).toEqual([])
      expect(yield* visibleTo(owner)).toEqual([ids.configObject])
      expect(yield* access.roleOn(member, PluginKind, ids.plugin)).toEqual(Option.none())

      // The rank beside a row (`ranked`), decided by `requireRanked`.
      const readRanked = (caller: MemberContext) =>
        findOne({
          Request: Schema.String,
          Result: ranked(trusted<{ readonly id: string }>()),
          execute: (id) =>
            sql`SELECT p.id, ${access.rank(caller, PluginKind, "p")} AS access_rank FROM plugins p
                  WHERE p.organization_id = ${organization.id} AND p.id = ${id}`
        })(ids.plugin)
      expect(Option.map(yield* readRanked(owner), (found) => found.accessRank)).toEqual(Option.some(3))
      expect(yield* requireRanked(PluginKind, "manager")(yield* readRanked(owner))).toMatchObject({ id: ids.plugin })
      expect(yield* failure(requireRanked(PluginKind, "viewer")(yield* readRanked(member)))).toMatchObject({ reason: "insufficient_access" })
      expect(yield* failure(requireRanked(PluginKind, "viewer")(Option.none()))).toEqual({
        _tag: "NotFound",
        error: "plugin_not_found",
        message: "Plugin not found."
      })

      // A template is its creator's whatever the grants say; nobody else's until shared.
      const byMember = (yield* catalog(organization, member)).template
      expect(yield* access.roleOn(member, TemplateKind, byMember)).toEqual(Option.some("manager"))
      expect(yield* access.roleOn(other, TemplateKind, byMember)).toEqual(Option.none())
      yield* access.grant(member, TemplateKind, byMember, { orgMembershipId: membershipOf(other), role: "viewer" })
      expect(yield* access.roleOn(other, TemplateKind, byMember)).toEqual(Option.some("viewer"))

      // Managing is not using: an owner without a grant is refused, naming the resource.
      const pluginName = `Deploy ${ids.plugin.slice(-6)}`
      expect(yield* failure(access.requireUsable(owner, PluginKind, ids.plugin))).toEqual(plain(notGranted(pluginName)))
      expect(notGranted(pluginName).message).toBe(`You have not been granted access to "${pluginName}".`)
      yield* access.grant(owner, PluginKind, ids.plugin, { orgMembershipId: membershipOf(owner), role: "viewer" })
      yield* access.requireUsable(owner, PluginKind, ids.plugin)
      expect(yield* failure(access.requireUsable(owner, ConfigObjectKind, ids.configObject))).toMatchObject({
        message: 'You have not been granted access to "Ship it".'
      })
      yield* access.requireUsable(Principal.system("test", organization), ConfigObjectKind, ids.configObject)

      // The creator's manager grant (none for the system).
      const fresh = yield* catalog(organization, owner)
      yield* access.grantCreator(member, PluginKind, fresh.plugin, Members.at)
      expect(yield* access.roleOn(member, PluginKind, fresh.plugin)).toEqual(Option.some("manager"))
      yield* access.grantCreator(Principal.system("test", organization), PluginKind, fresh.plugin, Members.at)
      expect((yield* access.listGrants(owner, PluginKind, fresh.plugin, grantsQuery())).items.map((grant) => grant.orgMembershipId)).toEqual([membershipOf(member)])

      // Another organization's resources are not found, whatever the caller's role.
      const elsewhere = yield* staffed()
      const notFoundElsewhere = <Id extends string, G extends Grant>(kind: Kind<Id, G>, id: Id) =>
        Effect.gen(function*() {
          expect(yield* failure(access.require(elsewhere.owner, kind, id, "viewer"))).toEqual(plain(kind.notFound()))
          expect(yield* failure(access.roleOn(elsewhere.owner, kind, id))).toEqual(plain(kind.notFound()))
          expect(yield* failure(access.grant(elsewhere.owner, kind, id, { orgWide: true, role: "viewer" }))).toEqual(plain(kind.notFound()))
          expect(yield* failure(access.listGrants(elsewhere.owner, kind, id, grantsQuery()))).toEqual(plain(kind.notFound()))
          expect(yield* failure(access.revoke(elsewhere.owner, kind, id, "x"))).toEqual(plain(kind.notFound()))
        })
      yield* notFoundElsewhere(PluginKind, ids.plugin)
      yield* notFoundElsewhere(MarketplaceKind, ids.marketplace)
      yield* notFoundElsewhere(TemplateKind, ids.template)
      expect(yield* failure(access.require(elsewhere.owner, ConfigObjectKind, ids.configObject, "viewer"))).toEqual({
        _tag: "NotFound",
        error: "config_object_not_found",
        message: "Config object not found."
      })
    }))
})
