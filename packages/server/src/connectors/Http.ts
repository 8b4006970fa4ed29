/**
 * HTTP handlers of the connector groups. Thin by design: the service authorizes.
 */
import { Api, CurrentMember, InvalidRequest } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Connectors } from "./Connectors.js"
import { DiscoveryService } from "./DiscoveryService.js"
import { Sync } from "./Sync.js"
import { Webhook } from "./Webhook.js"

const AccountsHttp = group(Api, "connectorAccounts", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.createAccount(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.listAccounts(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.getAccount(caller, params.connectorAccountId)))
      .handle("disconnect", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.disconnectAccount(caller, params.connectorAccountId, payload.reason)))
  }))

const InstancesHttp = group(Api, "connectorInstances", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    const discovery = yield* DiscoveryService
    const sync = yield* Sync
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.createInstance(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.listInstances(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.getInstance(caller, params.connectorInstanceId)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.updateInstance(caller, params.connectorInstanceId, payload)))
      .handle("enable", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.enable(caller, params.connectorInstanceId)))
      .handle("disable", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.disable(caller, params.connectorInstanceId)))
      .handle("remove", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.removeInstance(caller, params.connectorInstanceId)))
      .handle("listTargets", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.listTargets(caller, params.connectorInstanceId, query)))
      .handle("createTarget", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.createTarget(caller, params.connectorInstanceId, payload)))
      .handle("discover", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => discovery.discover(caller, params.connectorInstanceId, query.connectorTargetId)))
      .handle("discoveryTree", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => discovery.tree(caller, params.connectorInstanceId, query)))
      .handle("applyDiscovery", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => discovery.apply(caller, params.connectorInstanceId, payload)))
      .handle("sync", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => sync.syncNow(caller, params.connectorInstanceId)))
      .handle("listSyncEvents", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => sync.listEvents(caller, params.connectorInstanceId, query)))
      .handle("connectorInstanceGrant", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.grant(caller, params.connectorInstanceId, payload)))
      .handle("connectorInstanceListAccess", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.listGrants(caller, params.connectorInstanceId, query)))
      .handle("connectorInstanceRevoke", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.revoke(caller, params.connectorInstanceId, params.grantId)))
  }))

const TargetsHttp = group(Api, "connectorTargets", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    const sync = yield* Sync
    return handlers
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.getTarget(caller, params.connectorTargetId)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.updateTarget(caller, params.connectorTargetId, payload)))
      .handle("listMappings", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.listMappings(caller, params.connectorTargetId, query)))
      .handle("createMapping", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.createMapping(caller, params.connectorTargetId, payload)))
      .handle("resync", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => sync.resync(caller, params.connectorTargetId)))
  }))

const MappingsHttp = group(Api, "connectorMappings", (handlers) =>
  Effect.gen(function*() {
    const connectors = yield* Connectors
    return handlers
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.getMapping(caller, params.connectorMappingId)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.updateMapping(caller, params.connectorMappingId, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connectors.deleteMapping(caller, params.connectorMappingId)))
  }))

const SyncEventsHttp = group(Api, "connectorSyncEvents", (handlers) =>
  Effect.map(Effect.service(Sync), (sync) =>
    handlers.handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => sync.getEvent(caller, params.connectorSyncEventId)))))

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

/**
 * The groups with their services. `Sync` (the durable sync, `SyncWorkflow.layer`) is the server's, beside the
 * durable engine: discovery's apply asks for it per request (Server.ts).
 */
export const layer = Layer.mergeAll(AccountsHttp, InstancesHttp, TargetsHttp, MappingsHttp, SyncEventsHttp, WebhooksHttp).pipe(
  Layer.provide(Webhook.layer),
  Layer.provide([Connectors.layer, DiscoveryService.layer])
)
