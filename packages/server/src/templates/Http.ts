/**
 * HTTP handlers of the Templates group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { Templates } from "./Templates.js"

export const TemplatesHttp = group(Api, "templates", (handlers) =>
  Effect.gen(function*() {
    const templates = yield* Templates
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.get(caller, params.templateId)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.update(caller, params.templateId, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.remove(caller, params.templateId)))
      .handle("listVersions", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.listVersions(caller, params.templateId, query)))
      .handle("getVersion", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.getVersion(caller, params.templateId, params.versionId)))
      .handle("instantiate", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.instantiate(caller, params.templateId, query)))
      .handle("templateGrant", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.grant(caller, params.templateId, payload)))
      .handle("templateListAccess", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.listGrants(caller, params.templateId, query)))
      .handle("templateRevoke", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => templates.revoke(caller, params.templateId, params.grantId)))
  }))

export const layer = TemplatesHttp.pipe(Layer.provide(Templates.layer))
