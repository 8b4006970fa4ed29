/**
 * HTTP handlers of the identity groups: Users, Organizations, API Keys, Bootstrap and Recovery, thin by design; and
 * the organization purge's job (identity/OrganizationPurge.ts), which runs beside them.
 */
import { Api, CurrentActor, CurrentMember } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { clientAddress } from "../platform/ClientAddress.js"
import { group } from "../platform/HttpErrors.js"
import { Accounts } from "./Accounts.js"
import { ApiKeys } from "./ApiKeys.js"
import { currentSession } from "./Authentication.js"
import { Bootstrap } from "./Bootstrap.js"
import { EmailVerification } from "./EmailVerification.js"
import { OrganizationDeletion } from "./OrganizationDeletion.js"
import * as OrganizationPurge from "./OrganizationPurge.js"
import { Organizations } from "./Organizations.js"
import { PasswordResets } from "./PasswordResets.js"

export const UsersHttp = group(Api, "users", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const deletion = yield* OrganizationDeletion
    return handlers
      .handle("signUp", ({ payload }) => Effect.flatMap(clientAddress, (address) => accounts.signUp(payload, address)))
      .handle("signIn", ({ payload }) => Effect.flatMap(clientAddress, (address) => accounts.signIn(payload, address)))
      .handle("signOut", () => Effect.flatMap(currentSession, ({ sessionId }) => accounts.signOut(sessionId)))
      .handle("me", () => Effect.map(Effect.service(CurrentActor), accounts.me))
      .handle("switchOrganization", ({ payload }) =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) => accounts.switchOrganization(actor, sessionId, payload.organizationId)))
      .handle("updateMe", ({ payload }) => Effect.flatMap(currentSession, ({ actor }) => accounts.updateName(actor, payload.name)))
      .handle("changeEmail", ({ payload }) => Effect.flatMap(currentSession, ({ actor }) => accounts.changeEmail(actor, payload)))
      .handle("changePassword", ({ payload }) =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) => accounts.changePassword({ sessionId, userId: actor.user.id }, payload)))
      .handle("listSessions", ({ query }) =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) => accounts.listSessions({ sessionId, userId: actor.user.id }, query)))
      .handle("endSession", ({ params }) => Effect.flatMap(currentSession, ({ actor }) => accounts.endSession(actor.user.id, params.sessionId)))
      .handle("endOtherSessions", () =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) => accounts.endOtherSessions({ sessionId, userId: actor.user.id })))
      .handle("listOrganizations", ({ query: { deleted, ...page } }) =>
        Effect.flatMap(currentSession, ({ actor }) =>
          deleted === true ? deletion.listRestorable(actor, { ...page, deleted }) : accounts.listOrganizations(actor.user.id, page)))
  }))

export const OrganizationsHttp = group(Api, "organizations", (handlers) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    const deletion = yield* OrganizationDeletion
    return handlers
      .handle("create", ({ payload }) =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) => organizations.create({ name: payload.name, userId: actor.user.id, sessionId })))
      .handle("get", () => Effect.flatMap(Effect.service(CurrentMember), organizations.details))
      .handle("update", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => organizations.update(caller, payload)))
      .handle("delete", ({ payload }) =>
        Effect.flatMap(Effect.service(CurrentMember), (caller) =>
          Effect.map(deletion.schedule(caller, caller.organization.id, { confirmName: payload.confirmName }), (deleted) => ({ deletion: deleted }))))
      .handle("restore", ({ params }) =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) => deletion.restore({ _tag: "Person", actor, sessionId }, params.organizationId)))
  }))

export const ApiKeysHttp = group(Api, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => apiKeys.create(caller, payload)))
      .handle("list", ({ query }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => apiKeys.list(caller, query)))
      .handle("revoke", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => apiKeys.revoke(caller, params.apiKeyId)))
  }))

export const BootstrapHttp = group(Api, "bootstrap", (handlers) =>
  Effect.gen(function*() {
    const bootstrap = yield* Bootstrap
    return handlers
      .handle("workspace", ({ payload }) => Effect.flatMap(clientAddress, (address) => bootstrap.createWorkspace(address, payload)))
      .handle("acceptClaim", ({ payload }) =>
        Effect.flatMap(currentSession, ({ actor, sessionId }) => bootstrap.acceptClaim({ token: payload.token, userId: actor.user.id, sessionId })))
  }))

export const RecoveryHttp = group(Api, "recovery", (handlers) =>
  Effect.gen(function*() {
    const resets = yield* PasswordResets
    const verification = yield* EmailVerification
    return handlers
      .handle("issueMemberPasswordReset", ({ params }) => Effect.flatMap(Effect.service(CurrentMember), (caller) => resets.issueForMember(caller, params.memberId)))
      .handle("resetPassword", ({ payload }) => Effect.flatMap(clientAddress, (address) => resets.reset(payload, address)))
      .handle("forgotPassword", ({ payload }) => Effect.flatMap(clientAddress, (address) => resets.forgotPassword(payload.email, address)))
      .handle("requestEmailVerification", () => Effect.flatMap(currentSession, ({ actor }) => verification.request(actor.user.id)))
      .handle("verifyEmail", ({ payload }) =>
        Effect.flatMap(currentSession, ({ actor }) => Effect.flatMap(clientAddress, (address) => verification.verify(payload.token, actor.user.id, address))))
  }))

export const layer = Layer.mergeAll(UsersHttp, OrganizationsHttp, ApiKeysHttp, BootstrapHttp, RecoveryHttp, OrganizationPurge.layer).pipe(
  Layer.provide([
    Accounts.layer,
    Organizations.layer,
    ApiKeys.layer,
    Bootstrap.layer,
    PasswordResets.layer,
    EmailVerification.layer,
    OrganizationDeletion.layer
  ])
)
