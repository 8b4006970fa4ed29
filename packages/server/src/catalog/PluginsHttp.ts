/** HTTP handlers of the Plugins group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Plugins } from "./Plugins.js"

export const PluginsHttp = group(Api, "plugins", (handlers) =>
  Effect.gen(function*() {
    const plugins = yield* Plugins
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => plugins.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => plugins.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => plugins.get(caller, path.pluginId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => plugins.update(caller, path.pluginId, payload)))
      .handle("archive", ({ path }) => Effect.flatMap(CurrentMember, (caller) => plugins.archive(caller, path.pluginId)))
      .handle("restore", ({ path }) => Effect.flatMap(CurrentMember, (caller) => plugins.restore(caller, path.pluginId)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => plugins.remove(caller, path.pluginId)))
      .handle("listConfigObjects", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => plugins.listConfigObjects(caller, path.pluginId, urlParams)))
      .handle("addConfigObject", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => plugins.addConfigObject(caller, path.pluginId, payload.configObjectId)))
      .handle("removeConfigObject", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => plugins.removeConfigObject(caller, path.pluginId, path.configObjectId)))
      .handle("pluginGrant", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => plugins.grant(caller, path.pluginId, payload)))
      .handle("pluginListAccess", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => plugins.listGrants(caller, path.pluginId, urlParams)))
      .handle("pluginRevoke", ({ path }) => Effect.flatMap(CurrentMember, (caller) => plugins.revoke(caller, path.pluginId, path.grantId)))
  })).pipe(Layer.provide(Plugins.layer))
