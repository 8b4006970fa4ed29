/**
 * HTTP handlers of the SSO group. Thin by design: the service checks the plan and the role.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { requestBaseUrl } from "../platform/PublicUrl.js"
import { clientAddress } from "../platform/ClientAddress.js"
import * as IntentsExpiry from "./IntentsExpiry.js"
import { Policy } from "./Policy.js"
import { SignIn } from "./SignIn.js"
import { Saml } from "./Saml.js"
import { SamlAcs } from "./SamlAcs.js"
import * as SamlRefreshJob from "./SamlRefresh.js"
import { SamlRefresh } from "./SamlRefresh.js"
import { Sso } from "./Sso.js"
import { SsoRepository } from "./SsoRepository.js"


export const SsoHttp = group(Api, "sso", (handlers) =>
  Effect.gen(function*() {
    const sso = yield* Sso
    const signIn = yield* SignIn
    const refresh = yield* SamlRefresh
    const policy = yield* Policy
    const member = Effect.service(CurrentMember)
    return handlers
      .handle("listDomains", () => Effect.flatMap(member, sso.listDomains))
      .handle("requestDomainVerification", ({ query }) =>
        Effect.flatMap(member, (caller) => sso.requestDomainVerification(caller, query.domain)))
      .handle("verifyDomain", ({ query }) => Effect.flatMap(member, (caller) => sso.verifyDomain(caller, query.domain)))
      .handle("deleteDomain", ({ params }) => Effect.flatMap(member, (caller) => sso.deleteDomain(caller, params.domain)))
      .handle("createConnection", ({ payload }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.createConnection(caller, payload, base))))
      .handle("listConnections", () => Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.listConnections(caller, base))))
      .handle("getConnection", ({ params }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.getConnection(caller, params.connectionId, base))))
      .handle("updateConnection", ({ params, payload }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.updateConnection(caller, params.connectionId, payload, base))))
      .handle("deleteConnection", ({ params }) => Effect.flatMap(member, (caller) => sso.deleteConnection(caller, params.connectionId)))
      .handle("activateConnection", ({ params }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.activateConnection(caller, params.connectionId, base))))
      .handle("deactivateConnection", ({ params }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.deactivateConnection(caller, params.connectionId, base))))
      .handle("startTest", ({ params }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => signIn.startTest(caller, params.connectionId, base))))
      .handle("getTest", ({ params }) => Effect.flatMap(member, (caller) => sso.getTest(caller, params.connectionId, params.testId)))
      .handle("refreshMetadata", ({ params }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => refresh.refreshMetadata(caller, params.connectionId, base))))
      .handle("getPolicy", () => Effect.flatMap(member, policy.get))
      .handle("setPolicy", ({ payload }) => Effect.flatMap(member, (caller) => policy.set(caller, payload)))
  }))

export const SsoSignInHttp = group(Api, "ssoSignIn", (handlers) =>
  Effect.gen(function*() {
    const signIn = yield* SignIn
    const samlAcs = yield* SamlAcs
    return handlers
      .handle("discover", ({ payload }) => Effect.flatMap(clientAddress, (address) => signIn.discover(address, payload.email)))
      .handle("start", ({ payload }) =>
        Effect.flatMap(clientAddress, (address) => Effect.flatMap(requestBaseUrl, (base) => signIn.start(address, payload, base))))
      .handle("oidcCallback", ({ query }) => Effect.flatMap(requestBaseUrl, (base) => signIn.oidcCallback(query, base)))
      .handle("samlAcs", ({ params, payload }) => Effect.flatMap(requestBaseUrl, (base) => samlAcs.acs(params.connectionId, payload, base)))
      .handle("samlMetadata", ({ params }) => Effect.flatMap(requestBaseUrl, (base) => samlAcs.metadata(params.connectionId, base)))
      .handle("exchange", ({ payload }) => signIn.exchange(payload.code))
  }))

/** The handlers, the scheduled refresh of SAML metadata URLs and the cleanup of expired intents and assertions. */
export const layer = Layer.mergeAll(SsoHttp, SsoSignInHttp, SamlRefreshJob.layer, IntentsExpiry.layer).pipe(
  Layer.provide(SamlAcs.layer),
  Layer.provide([SignIn.layer, Policy.layer]),
  Layer.provide(SamlRefresh.layer),
  Layer.provide(Sso.layer),
  Layer.provide(SsoRepository.layer),
  Layer.provide(Saml.layer)
)
