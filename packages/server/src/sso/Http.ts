/** HTTP handlers of the SSO group. Thin by design: the service checks the plan and the role. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
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
    const member = CurrentMember
    return handlers
      .handle("listDomains", () => Effect.flatMap(member, sso.listDomains))
      .handle("requestDomainVerification", ({ urlParams }) =>
        Effect.flatMap(member, (caller) => sso.requestDomainVerification(caller, urlParams.domain)))
      .handle("verifyDomain", ({ urlParams }) => Effect.flatMap(member, (caller) => sso.verifyDomain(caller, urlParams.domain)))
      .handle("deleteDomain", ({ path }) => Effect.flatMap(member, (caller) => sso.deleteDomain(caller, path.domain)))
      .handle("createConnection", ({ payload }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.createConnection(caller, payload, base))))
      .handle("listConnections", () => Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.listConnections(caller, base))))
      .handle("getConnection", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.getConnection(caller, path.connectionId, base))))
      .handle("updateConnection", ({ path, payload }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.updateConnection(caller, path.connectionId, payload, base))))
      .handle("deleteConnection", ({ path }) => Effect.flatMap(member, (caller) => sso.deleteConnection(caller, path.connectionId)))
      .handle("activateConnection", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.activateConnection(caller, path.connectionId, base))))
      .handle("deactivateConnection", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => sso.deactivateConnection(caller, path.connectionId, base))))
      .handle("startTest", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => signIn.startTest(caller, path.connectionId, base))))
      .handle("getTest", ({ path }) => Effect.flatMap(member, (caller) => sso.getTest(caller, path.connectionId, path.testId)))
      .handle("refreshMetadata", ({ path }) =>
        Effect.flatMap(member, (caller) => Effect.flatMap(requestBaseUrl, (base) => refresh.refreshMetadata(caller, path.connectionId, base))))
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
      .handle("oidcCallback", ({ urlParams }) => Effect.flatMap(requestBaseUrl, (base) => signIn.oidcCallback(urlParams, base)))
      .handle("samlAcs", ({ path, payload }) => Effect.flatMap(requestBaseUrl, (base) => samlAcs.acs(path.connectionId, payload, base)))
      .handle("samlMetadata", ({ path }) => Effect.flatMap(requestBaseUrl, (base) => samlAcs.metadata(path.connectionId, base)))
      .handle("exchange", ({ payload }) => signIn.exchange(payload.code))
  }))

/** The handlers, the scheduled refresh of SAML metadata URLs and the cleanup of expired intents and assertions. */
export const layer = Layer.mergeAll(SsoHttp, SsoSignInHttp, SamlRefreshJob.layer, IntentsExpiry.layer).pipe(
  Layer.provide(SamlAcs.layer),
  Layer.provide([SignIn.layer, Policy.layer]),
  Layer.provide(SamlRefresh.layer),
  Layer.provide(Sso.layer),
  Layer.provide(SsoRepository.layer),
  Layer.provide(Saml.Live)
)
