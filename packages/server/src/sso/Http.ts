/** HTTP handlers of the SSO group. Thin by design: the service checks the plan and the role. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { Sso } from "./Sso.js"

export const SsoHttp = group(Api, "sso", (handlers) =>
  Effect.gen(function*() {
    const sso = yield* Sso
    return handlers
      .handle("put", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => sso.put(caller, payload)))
      .handle("get", () => Effect.flatMap(CurrentMember, (caller) => sso.get(caller)))
      .handle("delete", () => Effect.flatMap(CurrentMember, (caller) => sso.remove(caller)))
      .handle("requestDomainVerification", () => Effect.flatMap(CurrentMember, (caller) => sso.requestDomainVerification(caller)))
      .handle("verifyDomain", () => Effect.flatMap(CurrentMember, (caller) => sso.verifyDomain(caller)))
  }))

export const layer = SsoHttp.pipe(Layer.provide(Sso.Default))
