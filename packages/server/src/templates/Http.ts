/** HTTP handlers of the Templates group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Templates } from "./Templates.js"

export const TemplatesHttp = group(Api, "templates", (handlers) =>
  Effect.gen(function*() {
    const templates = yield* Templates
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => templates.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => templates.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => templates.get(caller, path.templateId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => templates.update(caller, path.templateId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => templates.remove(caller, path.templateId)))
      .handle("listVersions", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => templates.listVersions(caller, path.templateId, urlParams)))
      .handle("getVersion", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => templates.getVersion(caller, path.templateId, path.versionId)))
      .handle("instantiate", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => templates.instantiate(caller, path.templateId, urlParams)))
      .handle("templateGrant", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => templates.grant(caller, path.templateId, payload)))
      .handle("templateListAccess", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => templates.listGrants(caller, path.templateId, urlParams)))
      .handle("templateRevoke", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => templates.revoke(caller, path.templateId, path.grantId)))
  }))

export const layer = TemplatesHttp.pipe(Layer.provide(Templates.layer))
