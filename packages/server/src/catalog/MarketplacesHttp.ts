/** HTTP handlers of the Marketplaces group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Marketplaces } from "./Marketplaces.js"

export const MarketplacesHttp = group(Api, "marketplaces", (handlers) =>
  Effect.gen(function*() {
    const marketplaces = yield* Marketplaces
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => marketplaces.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => marketplaces.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => marketplaces.get(caller, path.marketplaceId)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => marketplaces.update(caller, path.marketplaceId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => marketplaces.remove(caller, path.marketplaceId)))
      .handle("listPlugins", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => marketplaces.listPlugins(caller, path.marketplaceId, urlParams)))
      .handle("addPlugin", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => marketplaces.addPlugin(caller, path.marketplaceId, payload.pluginId)))
      .handle("removePlugin", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => marketplaces.removePlugin(caller, path.marketplaceId, path.pluginId)))
      .handle("resolved", ({ path }) => Effect.flatMap(CurrentMember, (caller) => marketplaces.resolved(caller, path.marketplaceId)))
      .handle("marketplaceGrant", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => marketplaces.grant(caller, path.marketplaceId, payload)))
      .handle("marketplaceListAccess", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => marketplaces.listGrants(caller, path.marketplaceId, urlParams)))
      .handle("marketplaceRevoke", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => marketplaces.revoke(caller, path.marketplaceId, path.grantId)))
  })).pipe(Layer.provide(Marketplaces.layer))
