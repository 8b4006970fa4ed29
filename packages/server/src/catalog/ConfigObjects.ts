/**
 * Config objects: created by any member (who then manages them), read with viewer access, given new versions with
 * editor access, archived, restored and soft-deleted with manager access. Versions are never changed: deleting adds
 * a version recording it, restoring adds one with the content from before.
 */
import {
  type ConfigObjectId,
  type ConfigObjectListQuery,
  type ConfigObjectVersionId,
  type CreateConfigObjectRequest,
  type CreateVersionRequest,
  InvalidRequest,
  NotFound,
  type PluginId,
  type VersionListQuery
} from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Access, ConfigObjectKind, configObjectDeleted, insufficientAccess, PluginKind } from "../access/Access.js"
import { makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ConfigObjectsRepository, type ObjectState } from "./ConfigObjectsRepository.js"
import { ContentsRepository } from "./ContentsRepository.js"
import { derive, fileOf, parse } from "./Parsing.js"

const versionNotFound = () => new NotFound({ error: "config_object_version_not_found", message: "Config object version not found." })

const DEFAULT_SCHEMA_VERSION = "1"

const make = Effect.gen(function*() {
  const objects = yield* ConfigObjectsRepository
  const access = yield* Access
  const memberships = yield* ContentsRepository

  const read = (principal: Principal, id: ConfigObjectId) =>
    Effect.flatMap(objects.find(principal.organization.id, id), Option.match({
      onNone: () => Effect.fail(ConfigObjectKind.notFound()),
      onSome: Effect.succeed
    }))

  /** The object's state, inside a transaction that already checked access to it (so it exists). */
  const stateOf = (principal: Principal, id: ConfigObjectId) =>
    Effect.flatMap(objects.state(principal.organization.id, id), Option.match({
      onNone: () => Effect.fail(ConfigObjectKind.notFound()),
      onSome: (state: ObjectState) => Effect.succeed(state)
    }))

  /**
   * Fails unless every plugin is the organization's and not deleted (400 on each that is not: the spec gives this
   * operation no 404 or 409) and the caller's to edit (403); one statement however many plugins, which stay
   * share-locked until the transaction ends. `ids` as the request gave them, repeats included, for the paths.
   */
  const requirePlugins = Effect.fn("ConfigObjects.requirePlugins")(function*(principal: Principal, ids: ReadonlyArray<PluginId>) {
    const rows = yield* objects.pluginsForMembership(principal.organization.id, Arr.dedupe(ids), access.rank(principal, PluginKind, "p"))
    const byId = new Map(rows.map((row) => [row.id, row]))
    const details = ids.flatMap((id, index) => {
      const row = byId.get(id)
      // `code`: what the other operations on a plugin answer as their 404 and 409.
      if (row === undefined) return [{ path: ["pluginIds", index], message: `${id} is not a plugin of this organization`, code: "plugin_not_found" }]
      return row.deleted ? [{ path: ["pluginIds", index], message: `${id} is a deleted plugin: restore it first`, code: "plugin_deleted" }] : []
    })
    if (details.length > 0) return yield* new InvalidRequest({ details })
    if (rows.some((row) => row.rank < 2)) return yield* insufficientAccess(PluginKind, "editor")
  })

  const create = Effect.fn("ConfigObjects.create")(function*(principal: Principal, request: CreateConfigObjectRequest) {
    yield* authorize(principal, "catalog.create")
    const { input } = request
    if (input.sourceMode === "connector") {
      return yield* InvalidRequest.field(
        ["input", "sourceMode"],
        "is `connector`: connector-sourced config objects come from a connector sync (POST /v1/connector-instances/{id}/sync), not a direct create; use `cloud` or `import`"
      )
    }
    const sourceMode = input.sourceMode ?? "cloud"
    const parsed = yield* Effect.fromResult(parse(input.objectType, input))
    const pluginIds = Arr.dedupe(request.pluginIds ?? [])
    return yield* transaction(
      Effect.gen(function*() {
        yield* requirePlugins(principal, request.pluginIds ?? [])
        const organizationId = principal.organization.id
        const at = yield* now
        const id = yield* makeId("cob")
        const createdBy = actingMembershipId(principal)
        yield* objects.insert({
          id,
          organizationId,
          objectType: input.objectType,
          sourceMode,
          ...derive(input.objectType, parsed, input.metadata, at),
          ...fileOf(input.relativePath),
          createdByMembershipId: createdBy,
          connectorInstanceId: null,
          createdAt: at,
          updatedAt: at
        })
        yield* objects.insertVersion({
          id: yield* makeId("cov"),
          organizationId,
          configObjectId: id,
          number: 1,
          schemaVersion: input.schemaVersion ?? DEFAULT_SCHEMA_VERSION,
          ...parsed,
          metadata: input.metadata ?? null,
          createdVia: sourceMode,
          createdByMembershipId: createdBy,
          sourceRevisionRef: null,
          isDeletedVersion: false,
          createdAt: at
        })
        yield* access.grantCreator(principal, ConfigObjectKind, id, at)
        yield* memberships.addConfigObjects({
          organizationId,
          pairs: pluginIds.map((pluginId) => ({ pluginId, configObjectId: id })),
          source: "manual",
          createdBy,
          at
        })
        // Made above, in this transaction: not finding it is a defect, not an answer.
        return { ok: true as const, item: yield* Effect.catchTag(read(principal, id), "NotFound", Effect.die) }
      })
    )
  })

  const list = Effect.fn("ConfigObjects.list")(function*(principal: Principal, query: ConfigObjectListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(objects.list(principal.organization.id, access.visible(principal, ConfigObjectKind, "c"), query))
  })

  const get = Effect.fn("ConfigObjects.get")(function*(principal: Principal, id: ConfigObjectId) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(Effect.andThen(access.require(principal, ConfigObjectKind, id, "viewer"), Effect.map(read(principal, id), (item) => ({ item }))))
  })

  const createVersion = Effect.fn("ConfigObjects.createVersion")(function*(principal: Principal, id: ConfigObjectId, request: CreateVersionRequest) {
    yield* authorize(principal, "catalog.read")
    return yield* transaction(
      Effect.gen(function*() {
        yield* access.require(principal, ConfigObjectKind, id, "editor", { lock: true })
        const organizationId = principal.organization.id
        const state = yield* stateOf(principal, id)
        if (state.status === "deleted") return yield* configObjectDeleted()
        const { input } = request
        const parsed = yield* Effect.fromResult(parse(state.objectType, input))
        const at = yield* now
        yield* objects.insertVersion({
          id: yield* makeId("cov"),
          organizationId,
          configObjectId: id,
          number: yield* objects.nextNumber(organizationId, id),
          schemaVersion: input.schemaVersion ?? DEFAULT_SCHEMA_VERSION,
          ...parsed,
          metadata: input.metadata ?? null,
          createdVia: state.sourceMode,
          createdByMembershipId: actingMembershipId(principal),
          sourceRevisionRef: request.reason ?? null,
          isDeletedVersion: false,
          createdAt: at
        })
        yield* objects.updateDerived(organizationId, id, derive(state.objectType, parsed, input.metadata, at), at)
        return { ok: true as const, item: yield* read(principal, id) }
      })
    )
  })

  const listVersions = Effect.fn("ConfigObjects.listVersions")(function*(principal: Principal, id: ConfigObjectId, query: VersionListQuery) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(Effect.andThen(access.require(principal, ConfigObjectKind, id, "viewer"), objects.listVersions(principal.organization.id, id, query)))
  })

  const getVersion = Effect.fn("ConfigObjects.getVersion")(function*(principal: Principal, id: ConfigObjectId, versionId: ConfigObjectVersionId) {
    yield* authorize(principal, "catalog.read")
    return yield* orUnavailable(
      Effect.gen(function*() {
        yield* access.require(principal, ConfigObjectKind, id, "viewer")
        const version = yield* objects.findVersion(principal.organization.id, id, versionId)
        if (Option.isNone(version)) return yield* versionNotFound()
        return { item: version.value }
      })
    )
  })

  /** A lifecycle change, in a transaction holding the object's lock, by a manager; answers the object. */
  const lifecycle = <E, R>(
    principal: Principal,
    id: ConfigObjectId,
    apply: (state: ObjectState, at: Date) => Effect.Effect<unknown, E, R>
  ) =>
    Effect.andThen(
      authorize(principal, "catalog.read"),
      transaction(
        Effect.gen(function*() {
          yield* access.require(principal, ConfigObjectKind, id, "manager", { lock: true })
          yield* apply(yield* stateOf(principal, id), yield* now)
          return { ok: true as const, item: yield* read(principal, id) }
        })
      )
    )

  const organizationOf = (principal: Principal) => principal.organization.id

  /** Archiving an archived object changes nothing; a deleted one must be restored first. */
  const archive = Effect.fn("ConfigObjects.archive")((principal: Principal, id: ConfigObjectId) =>
    lifecycle(principal, id, (state, at) =>
      Effect.gen(function*() {
        if (state.status === "deleted") return yield* configObjectDeleted()
        if (state.status === "active") yield* objects.setStatus(organizationOf(principal), id, "archived", at)
      }))
  )

  /** Restoring a deleted object adds a version with the content of its last version before the deletion. */
  const restore = Effect.fn("ConfigObjects.restore")((principal: Principal, id: ConfigObjectId) =>
    lifecycle(principal, id, (state, at) =>
      Effect.gen(function*() {
        if (state.status === "active") return
        const organizationId = organizationOf(principal)
        if (state.status === "deleted") {
          const content = yield* objects.lastContent(organizationId, id)
          if (Option.isSome(content)) {
            const last = content.value
            yield* objects.insertVersion({
              id: yield* makeId("cov"),
              organizationId,
              configObjectId: id,
              number: yield* objects.nextNumber(organizationId, id),
              schemaVersion: last.schemaVersion,
              parserMode: last.parserMode,
              normalizedPayloadJson: last.normalizedPayloadJson,
              rawSourceText: last.rawSourceText,
              metadata: last.metadata,
              createdVia: state.sourceMode,
              createdByMembershipId: actingMembershipId(principal),
              sourceRevisionRef: null,
              isDeletedVersion: false,
              createdAt: at
            })
          }
        }
        yield* objects.setStatus(organizationId, id, "active", at)
      }))
  )

  /** Soft delete: status `deleted`, a version recording it; deleting a deleted object changes nothing. */
  const remove = Effect.fn("ConfigObjects.remove")((principal: Principal, id: ConfigObjectId) =>
    lifecycle(principal, id, (state, at) =>
      Effect.gen(function*() {
        if (state.status === "deleted") return
        const organizationId = organizationOf(principal)
        const latest = (yield* read(principal, id)).latestVersion
        yield* objects.insertVersion({
          id: yield* makeId("cov"),
          organizationId,
          configObjectId: id,
          number: latest.number + 1,
          schemaVersion: latest.schemaVersion,
          parserMode: latest.parserMode,
          normalizedPayloadJson: null,
          rawSourceText: null,
          metadata: null,
          createdVia: state.sourceMode,
          createdByMembershipId: actingMembershipId(principal),
          sourceRevisionRef: null,
          isDeletedVersion: true,
          createdAt: at
        })
        yield* objects.setStatus(organizationId, id, "deleted", at)
      }))
  )

  return { create, list, get, createVersion, listVersions, getVersion, archive, restore, remove } as const
})

export class ConfigObjects extends Context.Service<ConfigObjects>()("@orgplane/server/catalog/ConfigObjects", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([ConfigObjectsRepository.layer, Access.layer, ContentsRepository.layer])
  )
}
