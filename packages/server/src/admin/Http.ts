/**
 * HTTP handlers of the Admin group: making an organization the operator with the setup token, the operator's plan
 * changes, the instance's usage metrics, its organizations (listed, deleted, restored), its accounts (list, disable,
 * enable, delete) and password reset links for any account. Thin by design.
 */
import { Api, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AccountDeletion } from "../accounts/AccountDeletion.js"
import { Operator } from "../identity/Operator.js"
import { OperatorUsers } from "../identity/OperatorUsers.js"
import { OrganizationDeletion } from "../identity/OrganizationDeletion.js"
import { Organizations } from "../identity/Organizations.js"
import { PasswordResets } from "../identity/PasswordResets.js"
import { clientAddress } from "../platform/ClientAddress.js"
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
      .handle("claimOperator", ({ payload }) =>
        Effect.flatMap(Effect.all([Effect.service(CurrentMember), clientAddress]), ([caller, address]) => operator.claim(caller, payload.setupToken, address)))
      .handle("setPlan", ({ params, payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) =>
          Effect.map(organizations.setPlan(caller, params.organizationId, payload.plan), (organization) => ({ organization }))))
      .handle("metrics", () => Effect.flatMap(Effect.service(CurrentMember), metrics.summary))
      .handle("issuePasswordReset", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => resets.issueForUser(caller, params.userId)))
      .handle("listUsers", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => people.list(caller, query)))
      .handle("disableUser", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => people.disable(caller, params.userId)))
      .handle("enableUser", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => people.enable(caller, params.userId)))
      .handle("deleteUser", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => accountDeletion.deleteByOperator(caller, params.userId)))
      .handle("listOrganizations", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => organizations.listForAdmin(caller, query)))
      .handle("deleteOrganization", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) =>
          Effect.map(deletion.schedule({ _tag: "Operator", caller }, params.organizationId), (deleted) => ({ deletion: deleted }))))
      .handle("restoreOrganization", ({ params }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) => deletion.restore({ _tag: "Operator", caller }, params.organizationId)))
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
