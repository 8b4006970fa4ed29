/**
 * HTTP handlers of the Admin group: making an organization the operator with the setup token, the operator's plan
 * changes, the instance's usage metrics, and its organizations (listed, deleted, restored). Thin by design.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { Operator } from "../identity/Operator.js"
import { OrganizationDeletion } from "../identity/OrganizationDeletion.js"
import { Organizations } from "../identity/Organizations.js"
import { group } from "../platform/HttpErrors.js"
import { Metrics } from "./Metrics.js"

export const AdminHttp = group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    const metrics = yield* Metrics
    const operator = yield* Operator
    const deletion = yield* OrganizationDeletion
    return handlers
      .handle("claimOperator", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => operator.claim(caller, payload.setupToken)))
      .handle("setPlan", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(organizations.setPlan(caller, path.organizationId, payload.plan), (organization) => ({ organization }))))
      .handle("metrics", () => Effect.flatMap(CurrentMember, metrics.summary))
      .handle("listOrganizations", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => organizations.listForAdmin(caller, urlParams)))
      .handle("deleteOrganization", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(deletion.schedule({ _tag: "Operator", caller }, path.organizationId), (deleted) => ({ deletion: deleted }))))
      .handle("restoreOrganization", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => deletion.restore({ _tag: "Operator", caller }, path.organizationId)))
  }))

export const layer = AdminHttp.pipe(Layer.provide([Organizations.Default, Metrics.Default, Operator.Default, OrganizationDeletion.layer]))
