/**
 * Marketplaces: created by owners and admins (who then manage them), read, changed and shared according to the
 * caller's access (see Access.ts). Deleting needs manager access; changes and memberships, editor; reads, viewer.
 *
 * Its `layer` leaves `McpPresets` to the server.
 */
import {
  type AccessListQuery,
  type AccessRole,
  type CloudConnection,
  type ConfigObjectId,
  Conflict,
  type CreateAccessGrantRequest,
  type CreateMarketplaceRequest,
  type Forbidden,
  Marketplace,
  type MarketplaceAccessGrantId,
  type MarketplaceId,
  type MarketplaceListQuery,
  type MembershipListQuery,
  NotFound,
  type ObjectType,
  type Plugin,
  type PluginId,
  type UpdateMarketplaceRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type { SqlError } from "effect/sql/SqlError"
import { Access, insufficientAccess, MarketplaceKind, PluginKind, pluginDeleted } from "../access/Access.js"
import { cloudConnections } from "../mcp/Connections.js"
import { ConnectionsRepository } from "../mcp/ConnectionsRepository.js"
import { McpPresets } from "../mcp/PresetsConfig.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ContentsRepository } from "./ContentsRepository.js"
import { MarketplacesRepository } from "./MarketplacesRepository.js"
import { PluginsRepository } from "./PluginsRepository.js"

const managedMarketplace = () =>
  new Conflict({
    error: "managed_marketplace_cannot_be_deleted",
    message: "Built-in and connected marketplaces cannot be deleted here."
  })
const membershipNotFound = () =>
  new NotFound({ error: "marketplace_membership_not_found", message: "The plugin is not listed in this marketplace." })

/** Object types a cloud agent can read. */
const instructional: ReadonlySet<ObjectType> = new Set(["skill", "agent", "command", "context", "custom"])

/** The ids of a plugin's active `mcp` config objects. */
const mcpObjectsOf = (plugin: Plugin): ReadonlyArray<ConfigObjectId> =>
  plugin.extension.manifest.contributions.filter((entry) => entry.objectType === "mcp").flatMap((entry) => entry.configObjectIds)

/**
 * A plugin as the resolved marketplace shows it: its active config objects counted per type, and its readiness:
 * the MCP servers its `mcp` objects declare, matched to connections (`cloud`, by config object).
 */
const resolvePlugin = (cloud: ReadonlyMap<string, ReadonlyArray<typeof CloudConnection.Type>>) => (plugin: Plugin) => {
  const contributions = plugin.extension.manifest.contributions
  return {
    ...plugin,
    componentCounts: Object.fromEntries(contributions.map((entry) => [entry.objectType, entry.configObjectIds.length])),
    cloudReadiness: {
      hasInstructional: contributions.some((entry) => instructional.has(entry.objectType)),
      connections: mcpObjectsOf(plugin).flatMap((id) => cloud.get(id) ?? [])
    }
  }
}

const make = Effect.gen(function*() {
  const marketplaces = yield* MarketplacesRepository
  const plugins = yield* PluginsRepository
  const memberships = yield* ContentsRepository
  const access = yield* Access
  const mcpConnections = yield* ConnectionsRepository
  const presets = yield* McpPresets

  /** The marketplace as it is now, which exists: this transaction checked or wrote it. */
  const read = (principal: Principal, id: MarketplaceId) =>
    Effect.flatMap(marketplaces.find(principal.organization.id, id), Option.match({
      onNone: () => Effect.die(new Error(`marketplace ${id} vanished inside its transaction`)),
      onSome: Effect.succeed
    }))

  const respond = (marketplace: Marketplace) => ({ ok: true as const, item: marketplace })

  /** One statement: the marketplace, if the caller can view it. */
  const viewable = (principal: Principal, id: MarketplaceId) =>
    Effect.flatMap(
      marketplaces.view(principal.organization.id, id, access.rank(principal, MarketplaceKind, "m")),
      Option.match({
        onNone: () => Effect.fail(MarketplaceKind.notFound()),
        onSome: ({ marketplace, rank }): Effect.Effect<Marketplace, NotFound | Forbidden> =>
          rank >= 1 ? Effect.succeed(marketplace) : Effect.fail(insufficientAccess(MarketplaceKind, "viewer"))
      })
    )

  const create = Effect.fn("Marketplaces.create")(function*(principal: Principal, input: CreateMarketplaceRequest) {
    yield* authorize(principal, "marketplaces.create")
    return yield* transaction(
      Effect.gen(function*() {
        const id = yield* makeId("mkt")
        const at = yield* now
        yield* marketplaces.insert({
          id,
          organizationId: principal.organization.id,
          name: input.name,
          description: input.description ?? "",
          logoUrl: input.logoUrl ?? null,
          createdByMembershipId: actingMembershipId(principal),
          at
        })
        yield* access.grantCreator(principal, MarketplaceKind, id, at)
        return respond(yield* read(principal, id))
      })
    )
  })

  const list = Effect.fn("Marketplaces.list")(function*(principal: Principal, query: MarketplaceListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(marketplaces.list(principal.organization.id, query, access.visible(principal, MarketplaceKind, "m")))
  })

  const get = Effect.fn("Marketplaces.get")(function*(principal: Principal, id: MarketplaceId) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(Effect.map(viewable(principal, id), (item) => ({ item })))
  })

  /** A change to one marketplace the caller has `role` on, in a transaction holding its row lock. */
  const change = <E, R>(
    principal: Principal,
    id: MarketplaceId,
    role: AccessRole,
    apply: (current: { readonly status: Marketplace["status"]; readonly managed: boolean }, at: Date) => Effect.Effect<unknown, E, R>
  ) =>
    Effect.andThen(
      authorize(principal, "catalog.read"),
      transaction(
        Effect.gen(function*() {
          yield* access.require(principal, MarketplaceKind, id, role, { lock: true })
          const current = yield* marketplaces.lock(principal.organization.id, id)
          if (Option.isNone(current)) return yield* MarketplaceKind.notFound()
          const before = yield* read(principal, id)
          yield* apply(current.value, yield* now)
          const after = yield* read(principal, id)
          yield* describeChange(Marketplace, before, after)
          return respond(after)
        })
      )
    )

  const update = Effect.fn("Marketplaces.update")((principal: Principal, id: MarketplaceId, input: UpdateMarketplaceRequest) =>
    change(principal, id, "editor", (_, at) => marketplaces.update(principal.organization.id, id, input, at))
  )

  /** Soft delete, refused while a connector or the service lists plugins in it; deleting a deleted one changes nothing. */
  const remove = Effect.fn("Marketplaces.remove")((principal: Principal, id: MarketplaceId) =>
    change(principal, id, "manager", ({ managed, status }, at): Effect.Effect<unknown, Conflict | SqlError> =>
      status === "deleted"
        ? Effect.void
        : managed
        ? Effect.fail(managedMarketplace())
        : marketplaces.markDeleted(principal.organization.id, id, at))
  )

  const listPlugins = Effect.fn("Marketplaces.listPlugins")(function*(principal: Principal, id: MarketplaceId, query: MembershipListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(
      Effect.andThen(
        access.require(principal, MarketplaceKind, id, "viewer"),
        marketplaces.listMemberships(principal.organization.id, id, query)
      )
    )
  })

  const addPlugin = Effect.fn("Marketplaces.addPlugin")(function*(principal: Principal, id: MarketplaceId, pluginId: PluginId) {
    yield* authorize(principal, "catalog.read")
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        yield* access.require(principal, MarketplaceKind, id, "editor", { lock: true })
        yield* access.require(principal, PluginKind, pluginId, "viewer")
        const plugin = yield* plugins.lock(organizationId, pluginId)
        if (Option.isNone(plugin)) return yield* PluginKind.notFound()
        if (plugin.value.status === "deleted") return yield* pluginDeleted()
        // A name is unique within a marketplace, as Claude Code has it (`name@marketplace`).
        const holder = yield* marketplaces.listedUnder(organizationId, id, plugin.value.name, pluginId)
        if (Option.isSome(holder)) {
          return yield* new Conflict({
            error: "plugin_name_listed",
            message: `The marketplace already lists a plugin named "${plugin.value.name}" (${holder.value}); a name is unique within a marketplace.`
          })
        }
        const at = yield* now
        const membershipId = yield* memberships.addPlugin({
          organizationId,
          marketplaceId: id,
          pluginId,
          source: "manual",
          createdBy: actingMembershipId(principal),
          at
        })
        yield* marketplaces.touch(organizationId, id, at)
        const item = yield* marketplaces.findMembership(organizationId, membershipId)
        if (Option.isNone(item)) return yield* Effect.die(new Error("the membership just written is missing"))
        return { ok: true as const, item: item.value }
      })
    )
  })

  const removePlugin = Effect.fn("Marketplaces.removePlugin")(function*(principal: Principal, id: MarketplaceId, pluginId: PluginId) {
    yield* authorize(principal, "catalog.read")
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        yield* access.require(principal, MarketplaceKind, id, "editor", { lock: true })
        const at = yield* now
        const removed = yield* memberships.removePlugin({ organizationId, marketplaceId: id, pluginId, at })
        if (!removed) return yield* membershipNotFound()
        yield* marketplaces.touch(organizationId, id, at)
      })
    )
  })

  /**
   * Six statements: the marketplace with the caller's rank, its plugins with their manifests, its source, and for
   * the readiness the plugins' MCP definitions, the connections the caller sees, the caller's own credentials.
   */
  const resolved = Effect.fn("Marketplaces.resolved")(function*(principal: Principal, id: MarketplaceId) {
    yield* authorize(principal, "catalog.read")
    return yield* transaction(
      Effect.gen(function*() {
        const marketplace = yield* viewable(principal, id)
        const listed = yield* marketplaces.listedPlugins(principal.organization.id, id)
        const source = yield* marketplaces.source(principal.organization.id, id)
        const cloud = yield* cloudConnections(mcpConnections, access, principal, [...new Set(listed.flatMap(mcpObjectsOf))], presets)
        return {
          ok: true as const,
          item: { marketplace, plugins: listed.map(resolvePlugin(cloud)), source: Option.getOrNull(source) }
        }
      })
    )
  })

  const grant = Effect.fn("Marketplaces.grant")(function*(principal: Principal, id: MarketplaceId, input: CreateAccessGrantRequest) {
    yield* authorize(principal, "catalog.read")
    return yield* access.grant(principal, MarketplaceKind, id, input)
  })

  const listGrants = Effect.fn("Marketplaces.listGrants")(function*(principal: Principal, id: MarketplaceId, query: AccessListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* access.listGrants(principal, MarketplaceKind, id, query)
  })

  const revoke = Effect.fn("Marketplaces.revoke")(function*(principal: Principal, id: MarketplaceId, grantId: MarketplaceAccessGrantId) {
    yield* authorize(principal, "catalog.read")
    return yield* access.revoke(principal, MarketplaceKind, id, grantId)
  })

  return { create, list, get, update, remove, listPlugins, addPlugin, removePlugin, resolved, grant, listGrants, revoke } as const
})

export class Marketplaces extends Context.Service<Marketplaces>()("@orgplane/server/catalog/Marketplaces", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([MarketplacesRepository.layer, PluginsRepository.layer, ContentsRepository.layer, Access.layer, ConnectionsRepository.layer])
  )
}
