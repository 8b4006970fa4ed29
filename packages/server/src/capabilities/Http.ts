/**
 * HTTP handlers of the suite clients, suite connections and capabilities groups. Thin: the services decide.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl as baseUrl } from "../platform/PublicUrl.js"
import { Capabilities } from "./Capabilities.js"
import { SuiteClients } from "./SuiteClients.js"
import { SuiteConnections } from "./SuiteConnections.js"
import { Upstream } from "./Upstream.js"

export const SuiteClientsHttp = group(Api, "suiteClients", (handlers) =>
  Effect.gen(function*() {
    const clients = yield* SuiteClients
    return handlers
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => Effect.flatMap(baseUrl, (base) => clients.get(caller, params.suite, base))))
      .handle("put", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => Effect.flatMap(baseUrl, (base) => clients.put(caller, params.suite, payload, base))))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => clients.remove(caller, params.suite)))
  }))

export const SuiteConnectionsHttp = group(Api, "suiteConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* SuiteConnections
    return handlers
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.status(caller, params.suite)))
      .handle("connect", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => Effect.flatMap(baseUrl, (base) => connections.connect(caller, params.suite, base))))
      .handle("disconnect", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => connections.disconnect(caller, params.suite)))
      .handle("callback", ({ query }) => connections.callback(query))
  }))

export const CapabilitiesHttp = group(Api, "capabilities", (handlers) =>
  Effect.gen(function*() {
    const capabilities = yield* Capabilities
    return handlers
      .handle("createMailDraft", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => capabilities.createMailDraft(caller, payload)))
      .handle("readMailMessage", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => capabilities.readMailMessage(caller, params.messageId)))
      .handle("patchCalendarEvent", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => capabilities.patchCalendarEvent(caller, params.eventId, payload)))
  }))

export const layer = Layer.mergeAll(SuiteClientsHttp, SuiteConnectionsHttp, CapabilitiesHttp).pipe(
  Layer.provide(Capabilities.layer),
  Layer.provide(SuiteClients.layer),
  Layer.provide(SuiteConnections.layer),
  Layer.provide(Upstream.layer)
)
