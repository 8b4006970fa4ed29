/**
 * HTTP handlers of the Desktop policies group. Thin by design: the service checks the plan and the role.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { group } from "../platform/HttpErrors.js"
import { DesktopPolicies } from "./DesktopPolicies.js"

export const DesktopPoliciesHttp = group(Api, "desktopPolicies", (handlers) =>
  Effect.gen(function*() {
    const policies = yield* DesktopPolicies
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => policies.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => policies.list(caller, query)))
      .handle("get", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => policies.get(caller, params.desktopPolicyId)))
      .handle("update", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => policies.update(caller, params.desktopPolicyId, payload)))
      .handle("delete", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => policies.remove(caller, params.desktopPolicyId)))
      .handle("effective", () => Effect.flatMap(Effect.service(CurrentMember), (caller) => policies.effective(caller)))
  }))

export const layer = DesktopPoliciesHttp.pipe(Layer.provide(DesktopPolicies.layer))
