/**
 * HTTP handlers of the Admin group: making an organization the operator with the setup token, the operator's plan
 * changes, the instance's usage metrics, its organizations (listed, deleted, restored), its accounts (list, disable,
 * enable, delete) and password reset links for any account. Thin by design.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import { Effect, Layer } from "effect"
import { AccountDeletion } from "../accounts/AccountDeletion.js"
import { Operator } from "../identity/Operator.js"
import { OperatorUsers } from "../identity/OperatorUsers.js"
import { OrganizationDeletion } from "../identity/OrganizationDeletion.js"
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
    const people = yield* OperatorUsers
    const accountDeletion = yield* AccountDeletion
    const deletion = yield* OrganizationDeletion
    return handlers
      .handle("claimOperator", ({ payload }) => Effect.flatMap(CurrentMember, (caller) => operator.claim(caller, payload.setupToken)))
      .handle("setPlan", ({ path, payload }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(organizations.setPlan(caller, path.organizationId, payload.plan), (organization) => ({ organization }))))
      .handle("metrics", () => Effect.flatMap(CurrentMember, metrics.summary))
      .handle("issuePasswordReset", ({ path }) => Effect.flatMap(CurrentMember, (caller) => resets.issueForUser(caller, path.userId)))
      .handle("listUsers", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => people.list(caller, urlParams)))
      .handle("disableUser", ({ path }) => Effect.flatMap(CurrentMember, (caller) => people.disable(caller, path.userId)))
      .handle("enableUser", ({ path }) => Effect.flatMap(CurrentMember, (caller) => people.enable(caller, path.userId)))
      .handle("deleteUser", ({ path }) => Effect.flatMap(CurrentMember, (caller) => accountDeletion.deleteByOperator(caller, path.userId)))
      .handle("listOrganizations", ({ urlParams }) => Effect.flatMap(CurrentMember, (caller) => organizations.listForAdmin(caller, urlParams)))
      .handle("deleteOrganization", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) =>
          Effect.map(deletion.schedule({ _tag: "Operator", caller }, path.organizationId), (deleted) => ({ deletion: deleted }))))
      .handle("restoreOrganization", ({ path }) =>
        Effect.flatMap(CurrentMember, (caller) => deletion.restore({ _tag: "Operator", caller }, path.organizationId)))
  }))

export const layer = AdminHttp.pipe(
  Layer.provide([
    Organizations.layer,
    Metrics.layer,
    Operator.layer,
    PasswordResets.layer,
    OperatorUsers.layer,
    AccountDeletion.layer,
    OrganizationDeletion.layer
  ])
)
