/** HTTP handlers of the connector groups. Thin by design: the service authorizes. */
import { Api, CurrentMember, InvalidRequest } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Connectors } from "./Connectors.js"
import { DiscoveryService } from "./DiscoveryService.js"
import { Sync } from "./Sync.js"
import * as SyncWorkflow from "./SyncWorkflow.js"
import { Webhook } from "./Webhook.js"

const AccountsHttp = group(Api, "connectorAccounts", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => connectors.createAccount(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => connectors.listAccounts(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.getAccount(caller, path.connectorAccountId)))
      .handle("disconnect", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.disconnectAccount(caller, path.connectorAccountId, payload.reason)))
  }))

const InstancesHttp = group(Api, "connectorInstances", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    const discovery = yield* DiscoveryService
    const sync = yield* Sync
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => connectors.createInstance(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => connectors.listInstances(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.getInstance(caller, path.connectorInstanceId)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.updateInstance(caller, path.connectorInstanceId, payload)))
      .handle("enable", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.enable(caller, path.connectorInstanceId)))
      .handle("disable", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.disable(caller, path.connectorInstanceId)))
      .handle("remove", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.removeInstance(caller, path.connectorInstanceId)))
      .handle("listTargets", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.listTargets(caller, path.connectorInstanceId, urlParams)))
      .handle("createTarget", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.createTarget(caller, path.connectorInstanceId, payload)))
      .handle("discover", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => discovery.discover(caller, path.connectorInstanceId, urlParams.connectorTargetId)))
      .handle("discoveryTree", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => discovery.tree(caller, path.connectorInstanceId, urlParams)))
      .handle("applyDiscovery", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => discovery.apply(caller, path.connectorInstanceId, payload)))
      .handle("sync", ({ path }) => Effect.flatMap(CurrentMember, (caller) => sync.syncNow(caller, path.connectorInstanceId)))
      .handle("listSyncEvents", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => sync.listEvents(caller, path.connectorInstanceId, urlParams)))
      .handle("connectorInstanceGrant", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.grant(caller, path.connectorInstanceId, payload)))
      .handle("connectorInstanceListAccess", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.listGrants(caller, path.connectorInstanceId, urlParams)))
      .handle("connectorInstanceRevoke", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.revoke(caller, path.connectorInstanceId, path.grantId)))
  }))

const TargetsHttp = group(Api, "connectorTargets", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    const sync = yield* Sync
    return handlers
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.getTarget(caller, path.connectorTargetId)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.updateTarget(caller, path.connectorTargetId, payload)))
      .handle("listMappings", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.listMappings(caller, path.connectorTargetId, urlParams)))
      .handle("createMapping", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.createMapping(caller, path.connectorTargetId, payload)))
      .handle("resync", ({ path }) => Effect.flatMap(CurrentMember, (caller) => sync.resync(caller, path.connectorTargetId)))
  }))

const MappingsHttp = group(Api, "connectorMappings", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    return handlers
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.getMapping(caller, path.connectorMappingId)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => connectors.updateMapping(caller, path.connectorMappingId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connectors.deleteMapping(caller, path.connectorMappingId)))
  }))

const SyncEventsHttp = group(Api, "connectorSyncEvents", (handlers) =>
  Effect.map(Sync, (sync) =>
    handlers.handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => sync.getEvent(caller, path.connectorSyncEventId)))))

/** The body is read here, as it came: the signature covers the raw bytes, so nothing may parse it first. */
const WebhooksHttp = group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const webhook = yield* Webhook
    return handlers.handle("codehost", ({ request }) =>
      Effect.flatMap(
        Effect.mapError(request.text, () => InvalidRequest.field([], "The request body could not be read.")),
        (rawBody) =>
          webhook.receive({
            rawBody,
            signature: request.headers["x-hub-signature-256"],
            event: request.headers["x-github-event"],
            deliveryId: request.headers["x-github-delivery"]
          })
      ))
  }))

export const layer = Layer.mergeAll(AccountsHttp, InstancesHttp, TargetsHttp, MappingsHttp, SyncEventsHttp, WebhooksHttp).pipe(
  Layer.provide(Webhook.layer),
  Layer.provide([Connectors.layer, DiscoveryService.layer, SyncWorkflow.layer])
)
