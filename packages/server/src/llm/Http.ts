/**
 * HTTP handlers of the LLM Providers group. Thin by design: the service authorizes.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { LlmProviders } from "./LlmProviders.js"

export const LlmProvidersHttp = group(Api, "llmProviders", (handlers) =>
  Effect.gen(function*() {
    const providers = yield* LlmProviders
    return handlers
      .handle("catalog", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.readCatalog(caller, query)))
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.get(caller, params.llmProviderId)))
      .handle("update", ({ params, payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.update(caller, params.llmProviderId, payload)))
      .handle("setCredential", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.setCredential(caller, params.llmProviderId, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.remove(caller, params.llmProviderId)))
      .handle("llmProviderGrant", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.grant(caller, params.llmProviderId, payload)))
      .handle("llmProviderListAccess", ({ params, query }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.listGrants(caller, params.llmProviderId, query)))
      .handle("llmProviderRevoke", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.revoke(caller, params.llmProviderId, params.grantId)))
      .handle("connect", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.connect(caller, params.llmProviderId)))
      .handle("test", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => providers.test(caller, params.llmProviderId)))
  }))

export const layer = LlmProvidersHttp.pipe(Layer.provide(LlmProviders.layer))
