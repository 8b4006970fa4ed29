/** HTTP handlers of the Admin group: the operator's plan changes and the instance's usage metrics. Thin by design. */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { Organizations } from "../identity/Organizations.js"
import { group } from "../platform/HttpErrors.js"
import { Metrics } from "./Metrics.js"

export const AdminHttp = group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    const metrics = yield* Metrics
    return handlers
      .handle("setPlan", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(organizations.setPlan(caller, path.organizationId, payload.plan), (organization) => ({ organization }))))
      .handle("metrics", () => Effect.flatMap(CurrentMember, metrics.summary))
  }))

export const layer = AdminHttp.pipe(Layer.provide([Organizations.Default, Metrics.Default]))
