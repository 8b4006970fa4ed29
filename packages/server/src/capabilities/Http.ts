/** HTTP handlers of the suite clients, suite connections and capabilities groups. Thin: the services decide. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
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
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => Effect.flatMap(baseUrl, (base) => clients.get(caller, path.suite, base))))
      .handle("put", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => Effect.flatMap(baseUrl, (base) => clients.put(caller, path.suite, payload, base))))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => clients.remove(caller, path.suite)))
  }))

export const SuiteConnectionsHttp = group(Api, "suiteConnections", (handlers) =>
  Effect.gen(function*() {
    const connections = yield* SuiteConnections
    return handlers
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connections.status(caller, path.suite)))
      .handle("connect", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => Effect.flatMap(baseUrl, (base) => connections.connect(caller, path.suite, base))))
      .handle("disconnect", ({ path }) => Effect.flatMap(CurrentMember, (caller) => connections.disconnect(caller, path.suite)))
      .handle("callback", ({ urlParams }) => connections.callback(urlParams))
  }))

export const CapabilitiesHttp = group(Api, "capabilities", (handlers) =>
  Effect.gen(function*() {
    const capabilities = yield* Capabilities
    return handlers
      .handle("createMailDraft", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => capabilities.createMailDraft(caller, payload)))
      .handle("readMailMessage", ({ path }) => Effect.flatMap(CurrentMember, (caller) => capabilities.readMailMessage(caller, path.messageId)))
      .handle("patchCalendarEvent", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => capabilities.patchCalendarEvent(caller, path.eventId, payload)))
  }))

export const layer = Layer.mergeAll(SuiteClientsHttp, SuiteConnectionsHttp, CapabilitiesHttp).pipe(
  Layer.provide(Capabilities.layer),
  Layer.provide(SuiteClients.layer),
  Layer.provide(SuiteConnections.layer),
  Layer.provide(Upstream.layer)
)
