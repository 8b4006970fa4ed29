/**
 * Who may do what to one config object, plugin, marketplace, connector instance, MCP connection or template: the one
 * place that answers it, for every kind.
 *
 * - Organization owners and admins (and the system) are managers of everything.
 * - Otherwise a member's role is the highest of the grants that apply to them (their own, their teams', the
 *   organization-wide one) that are not revoked.
 * - A template's creator manages it whatever the grants say.
 * - When no grant applies, a plugin listed (not removed) in a marketplace the member can view is viewable, and a
 *   config object in a plugin (not deleted) the member can view is viewable.
 *
 * Each rule is a SQL expression over the row being checked (`visible`, `rank`), so lists filter in the database
 * with a fixed number of statements whatever their length, and single checks are one statement.
 *
 * A kind carries its grant's row readers (`grantRows`, made from the API's grant class) rather than the class, so no
 * `any` types a kind whatever its grant (`AnyKind` is any kind).
 */
import {
  AccessListQuery,
  type AccessRole,
  AccessRoles,
  ConfigObjectAccessGrant,
  type ConfigObjectId,
  Conflict,
  ConnectorInstanceAccessGrant,
  type ConnectorInstanceId,
  type CreateAccessGrantRequest,
  type ExternalMcpConnectionId,
  Forbidden,
  hasRole,
  LlmProviderAccessGrant,
  type LlmProviderId,
  MarketplaceAccessGrant,
  type MarketplaceId,
  McpConnectionAccessGrant,
  type MembershipId,
  NotFound,
  type OrganizationId,
  PluginAccessGrant,
  type PluginId,
  type Prefix,
  TemplateAccessGrant,
  type TeamId,
  type TemplateId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import { memberNotFound, Memberships } from "../identity/Memberships.js"
import { makeId } from "../platform/Ids.js"
import * as Keyset from "../platform/Keyset.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import {
  classRow,
  findAll,
  findOne,
  type ResourceClass,
  type Row,
  single,
  trustedClassRow,
  withColumns
} from "../platform/Statements.js"
import { now } from "../platform/Time.js"
import { teamNotFound } from "../teams/Teams.js"

/** What every grant of the API is (`ConfigObjectAccessGrant`, `PluginAccessGrant`, ...) as far as lists go. */
export interface Grant {
  readonly id: string
  readonly createdAt: Date
}

/** How a kind's grants are read from rows: validated (one grant just written) or trusted (lists). */
export interface GrantRows<G> {
  readonly checked: Row<G>
  readonly trusted: Row<G>
}

/** The row readers of an API grant class. */
export const grantRows = <G extends Grant, F extends Schema.Struct.Fields>(grant: ResourceClass<G, F>): GrantRows<G> => ({
  checked: classRow(grant),
  trusted: trustedClassRow(grant)
})

/** Any kind of shared resource, whatever its id and grant: what the SQL and the messages need. */
export interface AnyKind {
  /** As messages name it: "config object". */
  readonly name: "config object" | "plugin" | "marketplace" | "connector instance" | "connection" | "template" | "LLM provider"
  readonly table: "config_objects" | "plugins" | "marketplaces" | "connector_instances" | "mcp_connections" | "templates" | "llm_providers"
  readonly grants:
    | "config_object_grants"
    | "plugin_grants"
    | "marketplace_grants"
    | "connector_instance_grants"
    | "mcp_connection_grants"
    | "template_grants"
    | "llm_provider_grants"
  /** The grant table's column naming the resource. */
  readonly column: "config_object_id" | "plugin_id" | "marketplace_id" | "connector_instance_id" | "mcp_connection_id" | "template_id" | "llm_provider_id"
  readonly grantPrefix: Extract<Prefix, "coa" | "pag" | "mag" | "cia" | "emg" | "tpa" | "lpg">
  /**
   * Whether the member in the resource's `created_by_membership_id` manages it whatever its grants say (their own
   * manager grant revoked included): "the creator keeps access".
   */
  readonly creatorManages?: true
  readonly notFound: () => NotFound
}

/** A grant that applies, with the resource it is on (`activeGrants`). */
export interface ActiveGrant {
  readonly resourceId: string
  readonly id: string
  readonly membershipId: MembershipId | null
  readonly teamId: TeamId | null
  readonly orgWide: boolean
  readonly role: AccessRole
}

/** One kind of shared resource: its table, its grant table and how it is named in messages. */
export interface Kind<Id extends string, G extends Grant = Grant> extends AnyKind {
  readonly grant: GrantRows<G>
  /** Phantom: the resource's id type. */
  readonly _id?: Id
}

export const ConfigObjectKind: Kind<ConfigObjectId, ConfigObjectAccessGrant> = {
  name: "config object",
  table: "config_objects",
  grants: "config_object_grants",
  column: "config_object_id",
  grantPrefix: "coa",
  grant: grantRows(ConfigObjectAccessGrant),
  notFound: () => new NotFound({ error: "config_object_not_found", message: "Config object not found." })
}

export const PluginKind: Kind<PluginId, PluginAccessGrant> = {
  name: "plugin",
  table: "plugins",
  grants: "plugin_grants",
  column: "plugin_id",
  grantPrefix: "pag",
  grant: grantRows(PluginAccessGrant),
  notFound: () => new NotFound({ error: "plugin_not_found", message: "Plugin not found." })
}

export const MarketplaceKind: Kind<MarketplaceId, MarketplaceAccessGrant> = {
  name: "marketplace",
  table: "marketplaces",
  grants: "marketplace_grants",
  column: "marketplace_id",
  grantPrefix: "mag",
  grant: grantRows(MarketplaceAccessGrant),
  notFound: () => new NotFound({ error: "marketplace_not_found", message: "Marketplace not found." })
}

export const ConnectorInstanceKind: Kind<ConnectorInstanceId, ConnectorInstanceAccessGrant> = {
  name: "connector instance",
  table: "connector_instances",
  grants: "connector_instance_grants",
  column: "connector_instance_id",
  grantPrefix: "cia",
  grant: grantRows(ConnectorInstanceAccessGrant),
  notFound: () => new NotFound({ error: "connector_instance_not_found", message: "Connector instance not found." })
}

/**
 * External MCP connections: any grant (whatever its role) lets a member use the connection; only owners and admins
 * grant them (`mcp.manage`, checked before `grant`). Owners and admins manage every connection, but using it (its
 * tools, readiness, the `usable` list) still needs a grant that reaches them (`usable`, `requireUsable`).
 */
export const McpConnectionKind: Kind<ExternalMcpConnectionId, McpConnectionAccessGrant> = {
  name: "connection",
  table: "mcp_connections",
  grants: "mcp_connection_grants",
  column: "mcp_connection_id",
  grantPrefix: "emg",
  grant: grantRows(McpConnectionAccessGrant),
  notFound: () => new NotFound({ error: "connection_not_found", message: "Unknown connection." })
}

/** Templates: private to their creator, who manages them for good, until shared with grants. */
export const TemplateKind: Kind<TemplateId, TemplateAccessGrant> = {
  name: "template",
  table: "templates",
  grants: "template_grants",
  column: "template_id",
  grantPrefix: "tpa",
  grant: grantRows(TemplateAccessGrant),
  notFound: () => new NotFound({ error: "template_not_found", message: "Template not found." }),
  creatorManages: true
}

/**
 * LLM providers: any grant (whatever its role) lets a member use the provider (read it, connect); `manager` also
 * lets them change, test, grant and delete it. Owners and admins manage every provider, but connecting still needs
 * a grant that reaches them (`usable`, `requireUsable`); a provider's creator gets a manager grant.
 */
export const LlmProviderKind: Kind<LlmProviderId, LlmProviderAccessGrant> = {
  name: "LLM provider",
  table: "llm_providers",
  grants: "llm_provider_grants",
  column: "llm_provider_id",
  grantPrefix: "lpg",
  grant: grantRows(LlmProviderAccessGrant),
  notFound: () => new NotFound({ error: "llm_provider_not_found", message: "LLM provider not found." })
}

export const insufficientAccess = (kind: AnyKind, role: AccessRole) =>
  new Forbidden({ reason: "insufficient_access", message: `Missing ${role} access for ${kind.name}.` })

/** Whether a rank (`rank`'s value: 0 none, 1 viewer, 2 editor, 3 manager) is at least `role`. */
const reaches = (rank: number, role: AccessRole) => rank >= AccessRoles.indexOf(role) + 1

/**
 * A resource's row read with the principal's rank on it, in one statement: its statement selects
 * `${access.rank(principal, kind, alias)} AS access_rank` beside the row's columns; `requireRanked` decides.
 */
export const ranked = <A>(row: Row<A>) => withColumns(row, { accessRank: Schema.Int })
export interface Ranked<A> {
  readonly row: A
  readonly accessRank: number
}

/**
 * `require` for a row read with the principal's rank on a resource of `kind` (`ranked`): the row when the rank is
 * at least `role`, `notFound` when no row was read, 403 `insufficient_access` otherwise.
 */
export const requireRanked = <A>(kind: AnyKind, role: AccessRole, notFound: () => NotFound = kind.notFound) =>
(found: Option.Option<Ranked<A>>): Effect.Effect<A, NotFound | Forbidden> =>
  Option.isNone(found)
    ? Effect.fail(notFound())
    : reaches(found.value.accessRank, role)
    ? Effect.succeed(found.value.row)
    : Effect.fail(insufficientAccess(kind, role))

/** The refusal of a resource no grant gives the caller (`requireUsable`), naming it. */
export const notGranted = (name: string) =>
  new Forbidden({ reason: "insufficient_access", message: `You have not been granted access to "${name}".` })

/** Whether the principal manages every resource of its organization: owners, admins and the system. */
export const managesAll = (principal: Principal): boolean => restricted(principal) === undefined

/** The membership whose grants decide what the principal may do; undefined for those who manage everything. */
const restricted = (principal: Principal): MembershipId | undefined =>
  principal._tag === "Member" && !hasRole(principal.membership.role, "admin") ? principal.membership.id : undefined

/** A deleted config object, where an operation needs a live one (restore it first). */
export const configObjectDeleted = () =>
  new Conflict({ error: "config_object_deleted", message: "The config object is deleted; restore it first." })

/** A deleted plugin, where an operation needs a live one; `id` names it among several. */
export const pluginDeleted = (id?: string) =>
  new Conflict({
    error: "plugin_deleted",
    message: id === undefined ? "The plugin is deleted; restore it first." : `Plugin ${id} is deleted.`
  })

const grantNotFound = () => new NotFound({ error: "access_grant_not_found", message: "Access grant not found." })

/** Grants by creation, newest first. */
const grantsByCreation = <G extends Grant>(kind: Kind<string, G>) =>
  Keyset.make<G>(`${kind.grants}`, "desc", [
    { column: "g.created_at", value: (grant) => grant.createdAt.toISOString() },
    { column: "g.id", value: (grant) => grant.id }
  ])

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const memberships = yield* Memberships
  const id = (name: string) => sql.literal(name)

  /** The grants of `kind` on the row `alias` that apply to member `me` and are not revoked (alias `g`). */
  const applying = (kind: AnyKind, alias: string, me: MembershipId) =>
    sql`${id(kind.grants)} g
          WHERE g.organization_id = ${id(alias)}.organization_id AND g.${id(kind.column)} = ${id(alias)}.id
            AND g.removed_at IS NULL
            AND (g.org_wide OR g.membership_id = ${me}
                 OR g.team_id IN (SELECT tm.team_id FROM team_members tm
                                  WHERE tm.organization_id = g.organization_id AND tm.membership_id = ${me}))`

  const granted = (kind: AnyKind, alias: string, me: MembershipId) => sql`EXISTS (SELECT 1 FROM ${applying(kind, alias, me)})`

  /** Whether member `me` can view plugin row `alias` through a marketplace (not deleted) that lists it. */
  const viaMarketplace = (alias: string, me: MembershipId) =>
    sql`EXISTS (SELECT 1 FROM marketplace_plugins vmp
                  JOIN marketplaces vm ON vm.organization_id = vmp.organization_id AND vm.id = vmp.marketplace_id
                  WHERE vmp.organization_id = ${id(alias)}.organization_id AND vmp.plugin_id = ${id(alias)}.id
                    AND vmp.removed_at IS NULL AND vm.deleted_at IS NULL AND ${granted(MarketplaceKind, "vm", me)})`

  /** Whether member `me` can view config object row `alias` through a plugin (not deleted) that holds it. */
  const viaPlugin = (alias: string, me: MembershipId) =>
    sql`EXISTS (SELECT 1 FROM plugin_config_objects vpc
                  JOIN plugins vp ON vp.organization_id = vpc.organization_id AND vp.id = vpc.plugin_id
                  WHERE vpc.organization_id = ${id(alias)}.organization_id AND vpc.config_object_id = ${id(alias)}.id
                    AND vpc.removed_at IS NULL AND vp.deleted_at IS NULL
                    AND (${granted(PluginKind, "vp", me)} OR ${viaMarketplace("vp", me)}))`

  /** Whether member `me` created row `alias` (of a kind whose creator manages it). */
  const createdBy = (alias: string, me: MembershipId) => sql`${id(alias)}.created_by_membership_id = ${me}`

  /** The viewer fallback of a kind, or undefined for kinds without one. */
  const fallback = (kind: AnyKind, alias: string, me: MembershipId): Statement.Fragment | undefined =>
    kind.table === "plugins" ? viaMarketplace(alias, me) : kind.table === "config_objects" ? viaPlugin(alias, me) : undefined

  /**
   * A boolean SQL expression: whether the principal can view the row `alias` of `kind`. AND it into a list's WHERE
   * clause; `true` for principals who manage everything.
   */
  const visible = (principal: Principal, kind: AnyKind, alias: string): Statement.Fragment => {
    const me = restricted(principal)
    if (me === undefined) return sql`true`
    const other = kind.creatorManages ? createdBy(alias, me) : fallback(kind, alias, me)
    return other === undefined ? granted(kind, alias, me) : sql`(${granted(kind, alias, me)} OR ${other})`
  }

  /**
   * A boolean SQL expression: whether a grant (any role, not revoked) on row `alias` of `kind` reaches the
   * principal: their own, one of their teams', or the organization-wide one. Unlike `visible`, owners and admins
   * are not exempt: managing a resource is not using it (an MCP connection's tools run only for those granted it).
   * The system: `true`.
   */
  const usable = (principal: Principal, kind: AnyKind, alias: string): Statement.Fragment =>
    principal._tag === "System" ? sql`true` : granted(kind, alias, principal.membership.id)

  const Usable = Schema.Struct({ name: Schema.String, usable: Schema.Boolean })

  /**
   * Fails unless the resource is the organization's (404, as for a missing one) and a grant reaches the principal
   * (403 `insufficient_access`: 'You have not been granted access to "<name>".'), whatever their role.
   */
  const requireUsable = Effect.fn("Access.requireUsable")(<Id extends string>(principal: Principal, kind: Kind<Id>, resource: Id) =>
    Effect.flatMap(
      findOne({
        Request: Schema.String,
        Result: Usable,
        execute: (resourceId) =>
          sql`SELECT ${kind.table === "config_objects" ? sql`r.title` : sql`r.name`} AS name, ${usable(principal, kind, "r")} AS usable FROM ${id(kind.table)} r
                WHERE r.organization_id = ${principal.organization.id} AND r.id = ${resourceId}`
      })(resource),
      (found): Effect.Effect<void, NotFound | Forbidden> =>
        Option.isNone(found)
          ? Effect.fail(kind.notFound())
          : found.value.usable
          ? Effect.void
          : Effect.fail(notGranted(found.value.name))
    ))

  /** An integer SQL expression: the principal's role on row `alias` (0 none, 1 viewer, 2 editor, 3 manager). */
  const rank = (principal: Principal, kind: AnyKind, alias: string): Statement.Fragment => {
    const me = restricted(principal)
    if (me === undefined) return sql`3`
    const grants = sql`(SELECT max(CASE g.role WHEN 'manager' THEN 3 WHEN 'editor' THEN 2 ELSE 1 END) FROM ${applying(kind, alias, me)})`
    if (kind.creatorManages) return sql`CASE WHEN ${createdBy(alias, me)} THEN 3 ELSE COALESCE(${grants}, 0) END`
    const other = fallback(kind, alias, me)
    return other === undefined
      ? sql`COALESCE(${grants}, 0)`
      : sql`COALESCE(${grants}, CASE WHEN ${other} THEN 1 ELSE 0 END)`
  }

  const Ranked = Schema.Struct({ rank: Schema.Number })

  const rankOf = (principal: Principal, kind: AnyKind, resource: string, lock: boolean) =>
    findOne({
      Request: Schema.String,
      Result: Ranked,
      execute: (resourceId) =>
        sql`SELECT ${rank(principal, kind, "r")} AS rank FROM ${id(kind.table)} r
              WHERE r.organization_id = ${principal.organization.id} AND r.id = ${resourceId}
              ${lock ? sql`FOR UPDATE OF r` : sql``}`
    })(resource)

  /**
   * Fails unless the resource is the organization's (404) and the principal has at least `role` on it (403
   * `insufficient_access`). With `lock`, the resource's row stays locked for the rest of the transaction.
   */
  const require = Effect.fn("Access.require")(<Id extends string>(
    principal: Principal,
    kind: Kind<Id>,
    resource: Id,
    role: AccessRole,
    options: { readonly lock?: boolean } = {}
  ) =>
    Effect.flatMap(rankOf(principal, kind, resource, options.lock ?? false), (found): Effect.Effect<void, NotFound | Forbidden> =>
      Option.isNone(found)
        ? Effect.fail(kind.notFound())
        : reaches(found.value.rank, role)
        ? Effect.void
        : Effect.fail(insufficientAccess(kind, role))))

  /** The principal's role on one resource, or none; fails with 404 when the organization has no such resource. */
  const roleOn = Effect.fn("Access.roleOn")(<Id extends string>(principal: Principal, kind: Kind<Id>, resource: Id) =>
    Effect.flatMap(rankOf(principal, kind, resource, false), (found) =>
      Option.isNone(found)
        ? Effect.fail(kind.notFound())
        : Effect.succeed(Option.fromNullishOr(AccessRoles[found.value.rank - 1]))))

  const grantColumns = sql`g.id, g.membership_id AS org_membership_id, g.team_id, g.org_wide, g.role,
      g.created_by_membership_id AS created_by_org_membership_id, g.created_at, g.removed_at`

  /** The manager grant a resource's creator gets (none for the system, which manages everything anyway). */
  const grantCreator = Effect.fn("Access.grantCreator")(<Id extends string>(principal: Principal, kind: Kind<Id>, resource: Id, at: Date) => {
    const membershipId = actingMembershipId(principal)
    return membershipId === null ? Effect.void : grantManager(principal.organization.id, kind, resource, membershipId, at)
  })

  /** A member's manager grant on a resource made for them (by the system acting as them, for example). */
  const grantManager = Effect.fn("Access.grantManager")(function*<Id extends string>(
    organizationId: OrganizationId,
    kind: Kind<Id>,
    resource: Id,
    membershipId: MembershipId,
    at: Date
  ) {
    const grantId = yield* makeId(kind.grantPrefix)
    yield* sql`INSERT INTO ${id(kind.grants)} ${
          sql.insert({
            id: grantId,
            organizationId,
            [kind.column]: resource,
            membershipId,
            orgWide: false,
            role: "manager",
            createdByMembershipId: membershipId,
            createdAt: at
          })
        }`
  })

  /** `grant` for a resource whose manager access the caller has already been checked for, inside a transaction. */
  const upsertGrant = <Id extends string, G extends Grant>(
    principal: Principal,
    kind: Kind<Id, G>,
    resource: Id,
    input: CreateAccessGrantRequest
  ) =>
    Effect.gen(function*() {
      const organizationId = principal.organization.id
      if (input.orgWide) yield* authorize(principal, "catalog.grantOrgWide")
      if (input.orgMembershipId !== undefined) {
        const missing = yield* memberships.missingActive(organizationId, [input.orgMembershipId])
        if (missing.length > 0) return yield* memberNotFound(input.orgMembershipId)
      }
      if (input.teamId !== undefined) {
        const teams = yield* sql`SELECT id FROM teams WHERE organization_id = ${organizationId} AND id = ${input.teamId} FOR SHARE`
        if (teams.length === 0) return yield* teamNotFound()
      }
      const at = yield* now
      const grantId = yield* makeId(kind.grantPrefix)
      const target = input.orgMembershipId !== undefined
        ? sql`(organization_id, ${id(kind.column)}, membership_id) WHERE membership_id IS NOT NULL`
        : input.teamId !== undefined
        ? sql`(organization_id, ${id(kind.column)}, team_id) WHERE team_id IS NOT NULL`
        : sql`(organization_id, ${id(kind.column)}) WHERE org_wide`
      const row = {
        id: grantId,
        organizationId,
        [kind.column]: resource,
        membershipId: input.orgMembershipId ?? null,
        teamId: input.teamId ?? null,
        orgWide: input.orgWide === true,
        role: input.role,
        createdByMembershipId: actingMembershipId(principal),
        createdAt: at
      }
      return yield* single({
        Request: Schema.Unknown,
        Result: kind.grant.checked,
        execute: () =>
          sql`WITH g AS (
                  INSERT INTO ${id(kind.grants)} ${sql.insert(row)}
                  ON CONFLICT ${target} DO UPDATE
                    SET role = EXCLUDED.role, removed_at = NULL, created_by_membership_id = EXCLUDED.created_by_membership_id
                  RETURNING *)
                SELECT ${grantColumns} FROM g`
      })(null)
    })

  const grant = Effect.fn("Access.grant")(<Id extends string, G extends Grant>(principal: Principal, kind: Kind<Id, G>, resource: Id, input: CreateAccessGrantRequest) =>
    transaction(
      Effect.andThen(
        require(principal, kind, resource, "manager", { lock: true }),
        Effect.map(upsertGrant(principal, kind, resource, input), (item) => ({ ok: true as const, item }))
      )
    ))

  /** A kind's grants on one resource, a page of them. */
  const listOf = <G extends Grant>(kind: Kind<string, G>) => {
    const rows = findAll({
      Request: Schema.Struct({
        organizationId: Schema.String,
        resource: Schema.String,
        query: Schema.toType(AccessListQuery),
        page: Keyset.PageRequest
      }),
      Result: kind.grant.trusted,
      execute: ({ organizationId, page, query, resource }) =>
        sql`SELECT ${grantColumns} FROM ${id(kind.grants)} g
              WHERE ${
          sql.and([
            sql`g.organization_id = ${organizationId}`,
            sql`g.${id(kind.column)} = ${resource}`,
            query.includeRevoked ? sql`true` : sql`g.removed_at IS NULL`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
    })
    return (organizationId: OrganizationId, resource: string, query: AccessListQuery) =>
      Keyset.page(grantsByCreation(kind), query, (page) => rows({ organizationId, resource, query, page }))
  }

  const listGrants = Effect.fn("Access.listGrants")(<Id extends string, G extends Grant>(principal: Principal, kind: Kind<Id, G>, resource: Id, query: AccessListQuery) =>
    orUnavailable(
      Effect.andThen(
        require(principal, kind, resource, "manager"),
        listOf(kind)(principal.organization.id, resource, query)
      )
    ))

  /** Soft revoke: sets `removedAt` once; revoking again keeps the first time. */
  const revoke = Effect.fn("Access.revoke")(<Id extends string>(principal: Principal, kind: Kind<Id>, resource: Id, grantId: string) =>
    transaction(
      Effect.gen(function*() {
        yield* require(principal, kind, resource, "manager", { lock: true })
        const at = yield* now
        const rows = yield* sql`
            UPDATE ${id(kind.grants)} SET removed_at = COALESCE(removed_at, ${at})
            WHERE organization_id = ${principal.organization.id} AND ${id(kind.column)} = ${resource} AND id = ${grantId}
            RETURNING id`
        if (rows.length === 0) return yield* grantNotFound()
      })
    ))

  /**
   * Every grant that applies (not revoked) on every resource of a kind in the organization, or on `resource` alone,
   * whoever reads (the organization's document checks authority): the resource, the grant and whom it is for.
   */
  const activeGrants = Effect.fn("Access.activeGrants")(function*(organizationId: OrganizationId, kind: AnyKind, resource?: string) {
    return yield* sql<ActiveGrant>`
        SELECT g.${id(kind.column)} AS resource_id, g.id, g.membership_id, g.team_id, g.org_wide, g.role
        FROM ${id(kind.grants)} g WHERE g.organization_id = ${organizationId} AND g.removed_at IS NULL
          ${resource === undefined ? sql`` : sql`AND g.${id(kind.column)} = ${resource}`}
        ORDER BY g.created_at, g.id`
  })

  return { visible, usable, requireUsable, rank, require, roleOn, grantCreator, grantManager, grant, listGrants, revoke, activeGrants } as const
})

export class Access extends Context.Service<Access>()("@orgplane/server/access/Access", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(Memberships.layer))
}
