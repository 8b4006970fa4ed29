/**
 * Connector accounts, instances, targets and mappings. Owners and admins connect accounts and create instances
 * (`connectors.manage`); everything about one instance is decided by the caller's role on it (see
 * access/Access.ts: viewer reads, editor changes, manager removes and shares).
 */
import {
  type AccessListQuery,
  type AccessRole,
  Conflict,
  type ConnectorAccountId,
  type ConnectorAccountListQuery,
  ConnectorInstance,
  ConnectorMapping,
  type ConnectorInstanceAccessGrantId,
  type ConnectorInstanceId,
  type ConnectorInstanceListQuery,
  type ConnectorMappingId,
  type ConnectorMappingListQuery,
  ConnectorTarget,
  type ConnectorTargetId,
  type ConnectorTargetListQuery,
  type CreateAccessGrantRequest,
  type CreateConnectorAccountRequest,
  type CreateConnectorInstanceRequest,
  type CreateConnectorMappingRequest,
  type CreateConnectorTargetRequest,
  NotFound,
  type PluginId,
  type UpdateConnectorInstanceRequest,
  type UpdateConnectorMappingRequest,
  type UpdateConnectorTargetRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { Access, ConnectorInstanceKind, PluginKind, pluginDeleted, requireRanked } from "../access/Access.js"
import { PluginsRepository } from "../catalog/PluginsRepository.js"
import { Crypto } from "../platform/Crypto.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { makeId } from "../platform/Ids.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { catchUniqueViolation, orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ConnectorsRepository } from "./ConnectorsRepository.js"
import { MappingsRepository } from "./MappingsRepository.js"
import { RemovalRepository } from "./RemovalRepository.js"

export const accountNotFound = () => new NotFound({ error: "connector_account_not_found", message: "Connector account not found." })
export const targetNotFound = () => new NotFound({ error: "connector_target_not_found", message: "Connector target not found." })
export const mappingNotFound = () => new NotFound({ error: "connector_mapping_not_found", message: "Connector mapping not found." })
export const accountDisconnected = () =>
  new Conflict({ error: "connector_account_disconnected", message: "The connector account is disconnected; connect it again." })
const accountExists = () =>
  new Conflict({ error: "connector_account_exists", message: "This installation is already connected to the organization." })
const instanceExists = (name: string) =>
  new Conflict({ error: "connector_instance_exists", message: `The organization already has a connector instance named "${name}".` })
const targetExists = () =>
  new Conflict({ error: "connector_target_exists", message: "The instance already follows this branch of this repository." })

const make = Effect.gen(function*() {
  const repository = yield* ConnectorsRepository
  const mappings = yield* MappingsRepository
  const removal = yield* RemovalRepository
  const plugins = yield* PluginsRepository
  const access = yield* Access
  const crypto = yield* Crypto

  // Accounts

  const createAccount = Effect.fn("Connectors.createAccount")(function*(principal: Principal, input: CreateConnectorAccountRequest) {
    yield* authorize(principal, "connectors.manage")
    // Encrypted before the transaction (nothing that cannot be repeated belongs inside one), bound to the row.
    const id = yield* makeId("cac")
    const tokenCiphertext = input.kind === "token"
      ? yield* Effect.orDie(crypto.encrypt(input.token, bind(SecretColumns.connectorToken, principal.organization.id, id)))
      : null
    return yield* transaction(
      Effect.gen(function*() {
        const at = yield* now
        const remoteId = input.kind === "app_installation" ? String(input.installationId) : null
        yield* repository.insertAccount({
          id,
          organizationId: principal.organization.id,
          kind: input.kind,
          remoteId,
          externalAccountRef: input.accountLogin ?? null,
          displayName: input.displayName ?? input.accountLogin ??
            (remoteId !== null ? `GitHub installation ${remoteId}` : "GitHub token"),
          tokenCiphertext,
          createdByMembershipId: actingMembershipId(principal),
          at
        }).pipe(catchUniqueViolation(accountExists))
        const found = yield* repository.findAccount(principal.organization.id, id)
        return { ok: true as const, item: Option.getOrThrow(found).account }
      })
    )
  })

  const listAccounts = Effect.fn("Connectors.listAccounts")(function*(principal: Principal, query: ConnectorAccountListQuery) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(repository.listAccounts(principal.organization.id, query))
  })

  const getAccount = Effect.fn("Connectors.getAccount")(function*(principal: Principal, id: ConnectorAccountId) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(Effect.flatMap(repository.findAccount(principal.organization.id, id), Option.match({
      onNone: () => Effect.fail(accountNotFound()),
      onSome: ({ account }) => Effect.succeed({ item: account })
    })))
  })

  /** Removes every instance of the account as `remove` does, then the account, in one transaction. */
  const disconnectAccount = Effect.fn("Connectors.disconnectAccount")(function*(principal: Principal, id: ConnectorAccountId, reason: string | undefined) {
    yield* authorize(principal, "connectors.manage")
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        const found = yield* repository.findAccount(organizationId, id, true)
        if (Option.isNone(found)) return yield* accountNotFound()
        const totals = { configObjects: 0, mappings: 0, plugins: 0, marketplaces: 0 }
        const instanceIds = yield* repository.instanceIdsOfAccount(organizationId, id)
        for (const instanceId of instanceIds) {
          const counts = yield* removal.remove(organizationId, instanceId)
          totals.configObjects += counts.deletedConfigObjectCount
          totals.mappings += counts.deletedConnectorMappingCount
          totals.plugins += counts.deletedPluginCount
          totals.marketplaces += counts.deletedMarketplaceCount
        }
        yield* repository.deleteAccount(organizationId, id)
        yield* Effect.logInfo("connector account disconnected").pipe(
          Effect.annotateLogs({ connectorAccountId: id, instances: instanceIds.length, reason: reason ?? null })
        )
        return {
          ok: true as const,
          item: {
            disconnectedAccountId: id,
            deletedConnectorInstanceCount: instanceIds.length,
            deletedConfigObjectCount: totals.configObjects,
            deletedConnectorMappingCount: totals.mappings,
            deletedPluginCount: totals.plugins,
            deletedMarketplaceCount: totals.marketplaces,
            reason: reason ?? null
          }
        }
      })
    )
  })

  // Instances

  /** The instance as it is now, which exists: this transaction checked or wrote it. */
  const readInstance = (principal: Principal, id: ConnectorInstanceId) =>
    Effect.flatMap(repository.findInstance(principal.organization.id, id), Option.match({
      onNone: () => Effect.die(new Error(`connector instance ${id} vanished inside its transaction`)),
      onSome: Effect.succeed
    }))

  const createInstance = Effect.fn("Connectors.createInstance")(function*(principal: Principal, input: CreateConnectorInstanceRequest) {
    yield* authorize(principal, "connectors.manage")
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        const account = yield* repository.findAccount(organizationId, input.connectorAccountId)
        if (Option.isNone(account)) return yield* accountNotFound()
        if (account.value.account.status !== "active") return yield* accountDisconnected()
        const id = yield* makeId("cin")
        const at = yield* now
        yield* repository.insertInstance({
          id,
          organizationId,
          connectorAccountId: input.connectorAccountId,
          remoteId: input.remoteId,
          name: input.name,
          config: input.config ?? {},
          createdByMembershipId: actingMembershipId(principal),
          at
        }).pipe(catchUniqueViolation(() => instanceExists(input.name)))
        yield* access.grantCreator(principal, ConnectorInstanceKind, id, at)
        return { ok: true as const, item: yield* readInstance(principal, id) }
      })
    )
  })

  const listInstances = Effect.fn("Connectors.listInstances")(function*(principal: Principal, query: ConnectorInstanceListQuery) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(repository.listInstances(principal.organization.id, query, access.visible(principal, ConnectorInstanceKind, "i")))
  })

  /**
   * The instance, when the caller has `role` on it (404 for another organization's, 403 without the role): one
   * statement reads it with the caller's rank. With `lock`, its row stays locked for the rest of the transaction.
   */
  const instanceWith = Effect.fn("Connectors.instanceWith")((principal: Principal, id: ConnectorInstanceId, role: AccessRole, lock = false) =>
    Effect.flatMap(
      repository.findInstanceRanked({
        organizationId: principal.organization.id,
        id,
        rank: access.rank(principal, ConnectorInstanceKind, "i"),
        lock
      }),
      requireRanked(ConnectorInstanceKind, role)
    ))

  const getInstance = Effect.fn("Connectors.getInstance")(function*(principal: Principal, id: ConnectorInstanceId) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(Effect.map(instanceWith(principal, id, "viewer"), (item) => ({ item })))
  })

  /** A change to one instance the caller has `role` on, under its row lock; answers the instance after it. */
  const changeInstance = <E, R>(
    principal: Principal,
    id: ConnectorInstanceId,
    role: AccessRole,
    apply: (instance: ConnectorInstance, at: Date) => Effect.Effect<unknown, E, R>
  ) =>
    Effect.andThen(
      authorize(principal, "connectors.read"),
      transaction(
        Effect.gen(function*() {
          const instance = yield* instanceWith(principal, id, role, true)
          yield* apply(instance, yield* now)
          const item = yield* readInstance(principal, id)
          yield* describeChange(ConnectorInstance, instance, item)
          return { ok: true as const, item }
        })
      )
    )

  const updateInstance = Effect.fn("Connectors.updateInstance")((principal: Principal, id: ConnectorInstanceId, input: UpdateConnectorInstanceRequest) =>
    changeInstance(principal, id, "editor", (_, at) =>
      repository.updateInstance(principal.organization.id, id, {
        ...(input.remoteId !== undefined ? { remoteId: input.remoteId } : {}),
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.config !== undefined ? { instanceConfigJson: input.config } : {})
      }, at).pipe(catchUniqueViolation(() => instanceExists(input.name ?? "")))))

  const setStatus = (principal: Principal, id: ConnectorInstanceId, status: "active" | "disabled") =>
    changeInstance(principal, id, "editor", (instance, at) =>
      instance.status === status ? Effect.void : repository.updateInstance(principal.organization.id, id, { status }, at))

  const removeInstance = Effect.fn("Connectors.removeInstance")(function*(principal: Principal, id: ConnectorInstanceId) {
    yield* authorize(principal, "connectors.read")
    return yield* transaction(
      Effect.gen(function*() {
        yield* access.require(principal, ConnectorInstanceKind, id, "manager", { lock: true })
        const counts = yield* removal.remove(principal.organization.id, id)
        return { ok: true as const, item: { removedConnectorInstanceId: id, ...counts } }
      })
    )
  })

  const grant = Effect.fn("Connectors.grant")(function*(principal: Principal, id: ConnectorInstanceId, input: CreateAccessGrantRequest) {
    yield* authorize(principal, "connectors.read")
    return yield* access.grant(principal, ConnectorInstanceKind, id, input)
  })
  const listGrants = Effect.fn("Connectors.listGrants")(function*(principal: Principal, id: ConnectorInstanceId, query: AccessListQuery) {
    yield* authorize(principal, "connectors.read")
    return yield* access.listGrants(principal, ConnectorInstanceKind, id, query)
  })
  const revoke = Effect.fn("Connectors.revoke")(function*(principal: Principal, id: ConnectorInstanceId, grantId: ConnectorInstanceAccessGrantId) {
    yield* authorize(principal, "connectors.read")
    return yield* access.revoke(principal, ConnectorInstanceKind, id, grantId)
  })

  // Targets

  const listTargets = Effect.fn("Connectors.listTargets")(function*(principal: Principal, id: ConnectorInstanceId, query: ConnectorTargetListQuery) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(Effect.andThen(
      access.require(principal, ConnectorInstanceKind, id, "viewer"),
      repository.listTargets(principal.organization.id, id, query)
    ))
  })

  const createTarget = Effect.fn("Connectors.createTarget")(function*(principal: Principal, id: ConnectorInstanceId, input: CreateConnectorTargetRequest) {
    yield* authorize(principal, "connectors.read")
    return yield* transaction(
      Effect.gen(function*() {
        const instance = yield* instanceWith(principal, id, "editor", true)
        const targetId = yield* makeId("ctg")
        yield* repository.insertTarget({
          id: targetId,
          organizationId: principal.organization.id,
          connectorInstanceId: id,
          remoteId: input.remoteId ?? instance.remoteId,
          externalTargetRef: input.externalTargetRef,
          config: input.config ?? {},
          at: yield* now
        }).pipe(catchUniqueViolation(targetExists))
        const target = yield* repository.findTarget(principal.organization.id, targetId)
        return { ok: true as const, item: Option.getOrThrow(target) }
      })
    )
  })

  /**
   * The target, when the caller has `role` on its instance: 404 when it is missing or another organization's,
   * 403 `insufficient_access` without the role. One statement, as `instanceWith`; `lock` locks the instance.
   */
  const targetWith = Effect.fn("Connectors.targetWith")((principal: Principal, id: ConnectorTargetId, role: AccessRole, lock = false) =>
    Effect.flatMap(
      repository.findTargetRanked({
        organizationId: principal.organization.id,
        id,
        rank: access.rank(principal, ConnectorInstanceKind, "i"),
        lock
      }),
      requireRanked(ConnectorInstanceKind, role, targetNotFound)
    ))

  const getTarget = Effect.fn("Connectors.getTarget")(function*(principal: Principal, id: ConnectorTargetId) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(Effect.map(targetWith(principal, id, "viewer"), (item) => ({ item })))
  })

  const updateTarget = Effect.fn("Connectors.updateTarget")(function*(principal: Principal, id: ConnectorTargetId, input: UpdateConnectorTargetRequest) {
    yield* authorize(principal, "connectors.read")
    return yield* transaction(
      Effect.gen(function*() {
        const before = yield* targetWith(principal, id, "editor", true)
        yield* repository.updateTarget(principal.organization.id, id, {
          ...(input.remoteId !== undefined ? { remoteId: input.remoteId } : {}),
          ...(input.externalTargetRef !== undefined ? { externalTargetRef: input.externalTargetRef } : {}),
          ...(input.config !== undefined ? { targetConfigJson: input.config } : {})
        }, yield* now).pipe(catchUniqueViolation(targetExists))
        const item = Option.getOrThrow(yield* repository.findTarget(principal.organization.id, id))
        yield* describeChange(ConnectorTarget, before, item)
        return { ok: true as const, item }
      })
    )
  })

  // Mappings

  const listMappings = Effect.fn("Connectors.listMappings")(function*(principal: Principal, id: ConnectorTargetId, query: ConnectorMappingListQuery) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(Effect.andThen(targetWith(principal, id, "viewer"), mappings.list(principal.organization.id, id, query)))
  })

  /** The plugin a mapping names must be live, and the caller an editor of it. */
  const checkPlugin = (principal: Principal, pluginId: PluginId | null | undefined) =>
    Effect.gen(function*() {
      if (pluginId === null || pluginId === undefined) return
      yield* access.require(principal, PluginKind, pluginId, "editor")
      const plugin = yield* plugins.lock(principal.organization.id, pluginId)
      if (Option.isNone(plugin)) return yield* PluginKind.notFound()
      if (plugin.value.status === "deleted") return yield* pluginDeleted()
    })

  const readMapping = (principal: Principal, id: ConnectorMappingId) =>
    Effect.map(mappings.find(principal.organization.id, id), Option.getOrThrow)

  const createMapping = Effect.fn("Connectors.createMapping")(function*(principal: Principal, targetId: ConnectorTargetId, input: CreateConnectorMappingRequest) {
    yield* authorize(principal, "connectors.read")
    return yield* transaction(
      Effect.gen(function*() {
        const target: ConnectorTarget = yield* targetWith(principal, targetId, "editor", true)
        yield* checkPlugin(principal, input.pluginId)
        const id = yield* makeId("cmp")
        yield* mappings.insert({
          id,
          organizationId: principal.organization.id,
          connectorInstanceId: target.connectorInstanceId,
          connectorTargetId: targetId,
          mappingKind: input.mappingKind,
          selector: input.selector,
          objectType: input.objectType,
          pluginId: input.pluginId ?? null,
          autoAddToPlugin: input.autoAddToPlugin ?? false,
          config: input.config ?? null,
          at: yield* now
        })
        return { ok: true as const, item: yield* readMapping(principal, id) }
      })
    )
  })

  /** The mapping, when the caller has `role` on its instance (as `targetWith`). */
  const mappingWith = (principal: Principal, id: ConnectorMappingId, role: AccessRole, lock = false) =>
    Effect.flatMap(
      mappings.findRanked({
        organizationId: principal.organization.id,
        id,
        rank: access.rank(principal, ConnectorInstanceKind, "i"),
        lock
      }),
      requireRanked(ConnectorInstanceKind, role, mappingNotFound)
    )

  const getMapping = Effect.fn("Connectors.getMapping")(function*(principal: Principal, id: ConnectorMappingId) {
    yield* authorize(principal, "connectors.read")
    return yield* orUnavailable(Effect.map(mappingWith(principal, id, "viewer"), (item) => ({ item })))
  })

  const updateMapping = Effect.fn("Connectors.updateMapping")(function*(principal: Principal, id: ConnectorMappingId, input: UpdateConnectorMappingRequest) {
    yield* authorize(principal, "connectors.read")
    return yield* transaction(
      Effect.gen(function*() {
        yield* mappingWith(principal, id, "editor", true)
        const before = yield* readMapping(principal, id)
        yield* checkPlugin(principal, input.pluginId)
        yield* mappings.update(principal.organization.id, id, input, yield* now)
        const item = yield* readMapping(principal, id)
        yield* describeChange(ConnectorMapping, before, item)
        return { ok: true as const, item }
      })
    )
  })

  const deleteMapping = Effect.fn("Connectors.deleteMapping")(function*(principal: Principal, id: ConnectorMappingId) {
    yield* authorize(principal, "connectors.read")
    return yield* transaction(
      Effect.gen(function*() {
        yield* mappingWith(principal, id, "editor", true)
        yield* mappings.remove(principal.organization.id, id)
      })
    )
  })

  return {
    createAccount,
    listAccounts,
    getAccount,
    disconnectAccount,
    createInstance,
    listInstances,
    getInstance,
    instanceWith,
    updateInstance,
    enable: Effect.fn("Connectors.enable")((principal: Principal, id: ConnectorInstanceId) => setStatus(principal, id, "active")),
    disable: Effect.fn("Connectors.disable")((principal: Principal, id: ConnectorInstanceId) => setStatus(principal, id, "disabled")),
    removeInstance,
    grant,
    listGrants,
    revoke,
    listTargets,
    createTarget,
    targetWith,
    getTarget,
    updateTarget,
    listMappings,
    createMapping,
    getMapping,
    updateMapping,
    deleteMapping
  } as const
})

export class Connectors extends Context.Service<Connectors>()("@orgplane/server/connectors/Connectors", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      ConnectorsRepository.layer,
      MappingsRepository.layer,
      RemovalRepository.layer,
      PluginsRepository.layer,
      Access.layer
    ])
  )
}
