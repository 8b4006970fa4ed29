/**
 * HTTP handlers of the Admin group: making an organization the operator with the setup token, the operator's plan
 * changes, the instance's usage metrics and password reset links for any account. Thin by design.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { Operator } from "../identity/Operator.js"
import { Organizations } from "../identity/Organizations.js"
import { PasswordResets } from "../identity/PasswordResets.js"
import { group } from "../platform/HttpErrors.js"
import { Metrics } from "./Metrics.js"

export const AdminHttp = group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    const metrics = yield* Metrics
    const operator = yield* Operator
    const resets = yield* PasswordResets
    return handlers
      .handle("claimOperator", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => operator.claim(caller, payload.setupToken)))
      .handle("setPlan", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(organizations.setPlan(caller, path.organizationId, payload.plan), (organization) => ({ organization }))))
      .handle("metrics", () => Effect.flatMap(CurrentMember, metrics.summary))
      .handle("issuePasswordReset", ({ path }) => Effect.flatMap(CurrentMember, (caller) => resets.issueForUser(caller, path.userId)))
  }))

export const layer = AdminHttp.pipe(Layer.provide([Organizations.Default, Metrics.Default, Operator.Default, PasswordResets.layer]))
