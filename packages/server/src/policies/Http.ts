/** HTTP handlers of the Desktop policies group. Thin by design: the service checks the plan and the role. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { group } from "../platform/HttpErrors.js"
import { DesktopPolicies } from "./DesktopPolicies.js"

export const DesktopPoliciesHttp = group(Api, "desktopPolicies", (handlers) =>
  Effect.gen(function*() {
    const policies = yield* DesktopPolicies
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => policies.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => policies.list(caller, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentMember, (caller) => policies.get(caller, path.desktopPolicyId)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) => policies.update(caller, path.desktopPolicyId, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentMember, (caller) => policies.remove(caller, path.desktopPolicyId)))
      .handle("effective", () => Effect.flatMap(CurrentMember, (caller) => policies.effective(caller)))
  }))

export const layer = DesktopPoliciesHttp.pipe(Layer.provide(DesktopPolicies.layer))
