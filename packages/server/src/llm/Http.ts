/** HTTP handlers of the LLM Providers group. Thin by design: the service authorizes. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { LlmProviders } from "./LlmProviders.js"

export const LlmProvidersHttp = group(Api, "llmProviders", (handlers) =>
  Effect.gen(function*() {
    const providers = yield* LlmProviders
    return handlers
      .handle("catalog", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => providers.readCatalog(caller, urlParams)))
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => providers.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => providers.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => providers.get(caller, path.llmProviderId)))
      .handle("update", ({ path, payload }) => Effect.flatMap(CurrentMember, (caller) => providers.update(caller, path.llmProviderId, payload)))
      .handle("setCredential", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => providers.setCredential(caller, path.llmProviderId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => providers.remove(caller, path.llmProviderId)))
      .handle("llmProviderGrant", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => providers.grant(caller, path.llmProviderId, payload)))
      .handle("llmProviderListAccess", ({ path, urlParams }) =>
        Effect.flatMap(CurrentMember, (caller) => providers.listGrants(caller, path.llmProviderId, urlParams)))
      .handle("llmProviderRevoke", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => providers.revoke(caller, path.llmProviderId, path.grantId)))
      .handle("connect", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => providers.connect(caller, path.llmProviderId)))
      .handle("test", ({ path }) => Effect.flatMap(CurrentMember, (caller) => providers.test(caller, path.llmProviderId)))
  }))

export const layer = LlmProvidersHttp.pipe(Layer.provide(LlmProviders.layer))
