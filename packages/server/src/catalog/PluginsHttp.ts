/**
 * HTTP handlers of the Plugins group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Plugins } from "./Plugins.js"

export const PluginsHttp = group(Api, "plugins", (handlers) =>
  Effect.gen(function*() {
    const plugins = yield* Plugins
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.get(caller, params.pluginId)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.update(caller, params.pluginId, payload)))
      .handle("archive", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.archive(caller, params.pluginId)))
      .handle("restore", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.restore(caller, params.pluginId)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.remove(caller, params.pluginId)))
      .handle("listConfigObjects", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.listConfigObjects(caller, params.pluginId, query)))
      .handle("addConfigObject", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.addConfigObject(caller, params.pluginId, payload.configObjectId)))
      .handle("removeConfigObject", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.removeConfigObject(caller, params.pluginId, params.configObjectId)))
      .handle("pluginGrant", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.grant(caller, params.pluginId, payload)))
      .handle("pluginListAccess", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.listGrants(caller, params.pluginId, query)))
      .handle("pluginRevoke", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => plugins.revoke(caller, params.pluginId, params.grantId)))
  })).pipe(Layer.provide(Plugins.layer))
