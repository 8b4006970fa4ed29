/**
 * HTTP handlers of the Marketplaces group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Marketplaces } from "./Marketplaces.js"

export const MarketplacesHttp = group(Api, "marketplaces", (handlers) =>
  Effect.gen(function*() {
    const marketplaces = yield* Marketplaces
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.get(caller, params.marketplaceId)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.update(caller, params.marketplaceId, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.remove(caller, params.marketplaceId)))
      .handle("listPlugins", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.listPlugins(caller, params.marketplaceId, query)))
      .handle("addPlugin", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.addPlugin(caller, params.marketplaceId, payload.pluginId)))
      .handle("removePlugin", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.removePlugin(caller, params.marketplaceId, params.pluginId)))
      .handle("resolved", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.resolved(caller, params.marketplaceId)))
      .handle("marketplaceGrant", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.grant(caller, params.marketplaceId, payload)))
      .handle("marketplaceListAccess", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.listGrants(caller, params.marketplaceId, query)))
      .handle("marketplaceRevoke", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => marketplaces.revoke(caller, params.marketplaceId, params.grantId)))
  })).pipe(Layer.provide(Marketplaces.layer))
