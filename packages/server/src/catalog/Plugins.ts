/**
 * Plugins: created by any member (who then manages them), read, changed and shared according to the caller's
 * access (see Access.ts). Archive, restore and delete need manager access; changes and memberships, editor; reads,
 * viewer.
 */
import {
  type AccessListQuery,
  type AccessRole,
  type ConfigObjectId,
  type CreateAccessGrantRequest,
  type CreatePluginRequest,
  type Forbidden,
  type MembershipListQuery,
  NotFound,
  Plugin,
  type PluginAccessGrantId,
  PluginConfigObject,
  type PluginId,
  type PluginListQuery,
  type UpdatePluginRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Access, ConfigObjectKind, configObjectDeleted, insufficientAccess, PluginKind, pluginDeleted } from "../access/Access.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ConfigObjectsRepository } from "./ConfigObjectsRepository.js"
import { ContentsRepository } from "./ContentsRepository.js"
import { type MembershipRow, PluginsRepository } from "./PluginsRepository.js"

const membershipNotFound = () =>
  new NotFound({ error: "plugin_membership_not_found", message: "The config object is not in this plugin." })

const make = Effect.gen(function*() {
  const plugins = yield* PluginsRepository
  const configObjects = yield* ConfigObjectsRepository
  const memberships = yield* ContentsRepository
  const access = yield* Access

  /** The plugin as it is now, which exists: this transaction checked or wrote it. */
  const read = (principal: Principal, id: PluginId) =>
    Effect.flatMap(plugins.find(principal.organization.id, id), Option.match({
      onNone: () => Effect.die(new Error(`plugin ${id} vanished inside its transaction`)),
      onSome: Effect.succeed
    }))

  const respond = (plugin: Plugin) => ({ ok: true as const, item: plugin })

  const create = Effect.fn("Plugins.create")(function*(principal: Principal, input: CreatePluginRequest) {
    yield* authorize(principal, "catalog.create")
    return yield* transaction(
      Effect.gen(function*() {
        const id = yield* makeId("plg")
        const at = yield* now
        yield* plugins.insert({
          id,
          organizationId: principal.organization.id,
          name: input.name,
          description: input.description ?? "",
          createdByMembershipId: actingMembershipId(principal),
          at
        })
        yield* access.grantCreator(principal, PluginKind, id, at)
        return respond(yield* read(principal, id))
      })
    )
  })

  const list = Effect.fn("Plugins.list")(function*(principal: Principal, query: PluginListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(plugins.list(principal.organization.id, query, access.visible(principal, PluginKind, "p")))
  })

  /** One statement: the plugin with the caller's rank on it. */
  const get = Effect.fn("Plugins.get")(function*(principal: Principal, id: PluginId) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(
      Effect.flatMap(plugins.view(principal.organization.id, id, access.rank(principal, PluginKind, "p")), Option.match({
        onNone: () => Effect.fail(PluginKind.notFound()),
        onSome: ({ plugin, rank }): Effect.Effect<{ readonly item: Plugin }, NotFound | Forbidden> =>
          rank >= 1 ? Effect.succeed({ item: plugin }) : Effect.fail(insufficientAccess(PluginKind, "viewer"))
      }))
    )
  })

  /**
   * A change to one plugin, in a transaction holding its row lock after checking the caller has `role` on it;
   * `apply` gets the plugin's status. Answers the plugin after the change.
   */
  const change = <E, R>(
    principal: Principal,
    id: PluginId,
    role: AccessRole,
    apply: (current: { readonly name: string; readonly status: Plugin["status"] }, at: Date) => Effect.Effect<unknown, E, R>
  ) =>
    Effect.andThen(
      authorize(principal, "catalog.read"),
      transaction(
        Effect.gen(function*() {
          yield* access.require(principal, PluginKind, id, role, { lock: true })
          const current = yield* plugins.lock(principal.organization.id, id)
          if (Option.isNone(current)) return yield* PluginKind.notFound()
          const before = yield* read(principal, id)
          yield* apply(current.value, yield* now)
          const after = yield* read(principal, id)
          yield* describeChange(Plugin, before, after)
          return respond(after)
        })
      )
    )

  const update = Effect.fn("Plugins.update")((principal: Principal, id: PluginId, input: UpdatePluginRequest) =>
    change(principal, id, "editor", ({ status }, at) =>
      status === "deleted" ? Effect.fail(pluginDeleted()) : plugins.update(principal.organization.id, id, input, at))
  )

  /** Moves the plugin to `status` (nothing changes when it is there already). */
  const moveTo = (principal: Principal, id: PluginId, target: "active" | "archived") =>
    change(principal, id, "manager", ({ name, status }, at) =>
      status === target ? Effect.void : plugins.setStatus(principal.organization.id, id, name, target, at))

  const archive = Effect.fn("Plugins.archive")((principal: Principal, id: PluginId) => moveTo(principal, id, "archived"))
  const restore = Effect.fn("Plugins.restore")((principal: Principal, id: PluginId) => moveTo(principal, id, "active"))
  /** Soft delete; deleting a deleted plugin changes nothing. */
  const remove = Effect.fn("Plugins.remove")((principal: Principal, id: PluginId) =>
    change(principal, id, "manager", ({ status }, at) =>
      status === "deleted" ? Effect.void : plugins.markDeleted(principal.organization.id, id, at))
  )

  /** Memberships with their config objects: one statement for the page, one for all its config objects. */
  const withConfigObjects = (principal: Principal, rows: ReadonlyArray<MembershipRow>) =>
    Effect.flatMap(
      configObjects.findMany(principal.organization.id, [...new Set(rows.map((row) => row.configObjectId))]),
      (objects) => {
        const byId = new Map(objects.map((object) => [object.id, object]))
        return Effect.forEach(rows, (row) => {
          const configObject = byId.get(row.configObjectId)
          return configObject === undefined
            ? Effect.die(new Error(`config object ${row.configObjectId} of a membership is missing`))
            : Effect.succeed(new PluginConfigObject({ ...row, configObject }, { disableChecks: true }))
        })
      }
    )

  const listConfigObjects = Effect.fn("Plugins.listConfigObjects")(function*(principal: Principal, id: PluginId, query: MembershipListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(
      Effect.gen(function*() {
        yield* access.require(principal, PluginKind, id, "viewer")
        const page = yield* plugins.listMemberships(principal.organization.id, id, query)
        return { items: yield* withConfigObjects(principal, page.items), nextCursor: page.nextCursor }
      })
    )
  })

  const addConfigObject = Effect.fn("Plugins.addConfigObject")(function*(principal: Principal, id: PluginId, configObjectId: ConfigObjectId) {
    yield* authorize(principal, "catalog.read")
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        yield* access.require(principal, PluginKind, id, "editor", { lock: true })
        const plugin = yield* plugins.lock(organizationId, id)
        if (Option.isNone(plugin)) return yield* PluginKind.notFound()
        if (plugin.value.status === "deleted") return yield* pluginDeleted()
        yield* access.require(principal, ConfigObjectKind, configObjectId, "viewer")
        const object = yield* configObjects.find(organizationId, configObjectId)
        if (Option.isNone(object)) return yield* ConfigObjectKind.notFound()
        if (object.value.status === "deleted") return yield* configObjectDeleted()
        const at = yield* now
        const [membershipId] = yield* memberships.addConfigObjects({
          organizationId,
          pairs: [{ pluginId: id, configObjectId }],
          source: "manual",
          createdBy: actingMembershipId(principal),
          at
        })
        if (membershipId === undefined) return yield* Effect.die(new Error("the membership just written is missing"))
        yield* plugins.touch(organizationId, id, at)
        const row = yield* plugins.findMembership(organizationId, membershipId)
        if (Option.isNone(row)) return yield* Effect.die(new Error("the membership just written is missing"))
        return {
          ok: true as const,
          item: new PluginConfigObject({ ...row.value, configObject: object.value }, { disableChecks: true })
        }
      })
    )
  })

  const removeConfigObject = Effect.fn("Plugins.removeConfigObject")(function*(principal: Principal, id: PluginId, configObjectId: ConfigObjectId) {
    yield* authorize(principal, "catalog.read")
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        yield* access.require(principal, PluginKind, id, "editor", { lock: true })
        const at = yield* now
        const removed = yield* memberships.removeConfigObject({ organizationId, pluginId: id, configObjectId, at })
        if (!removed) return yield* membershipNotFound()
        yield* plugins.touch(organizationId, id, at)
      })
    )
  })

  const grant = Effect.fn("Plugins.grant")(function*(principal: Principal, id: PluginId, input: CreateAccessGrantRequest) {
    yield* authorize(principal, "catalog.read")
    return yield* access.grant(principal, PluginKind, id, input)
  })

  const listGrants = Effect.fn("Plugins.listGrants")(function*(principal: Principal, id: PluginId, query: AccessListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* access.listGrants(principal, PluginKind, id, query)
  })

  const revoke = Effect.fn("Plugins.revoke")(function*(principal: Principal, id: PluginId, grantId: PluginAccessGrantId) {
    yield* authorize(principal, "catalog.read")
    return yield* access.revoke(principal, PluginKind, id, grantId)
  })

  return {
    create,
    list,
    get,
    update,
    archive,
    restore,
    remove,
    listConfigObjects,
    addConfigObject,
    removeConfigObject,
    grant,
    listGrants,
    revoke
  } as const
})

export class Plugins extends Context.Service<Plugins>()("@orgplane/server/catalog/Plugins", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([PluginsRepository.layer, ConfigObjectsRepository.layer, ContentsRepository.layer, Access.layer])
  )
}
