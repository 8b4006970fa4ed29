/** HTTP handlers of the identity groups: Users, Organizations, API Keys, Bootstrap and Admin. Thin by design. */
import { HttpServerRequest } from "@effect/platform"
import { group } from "../platform/HttpErrors.js"
import { Api, CurrentActor } from "@orgplane/schema"
import { Effect, Layer, Option } from "effect"
import { currentMember, currentMemberWithRole, currentSession } from "../platform/Auth.js"
import { ServerConfig } from "../platform/Config.js"
import { Accounts } from "./Accounts.js"
import { ApiKeys } from "./ApiKeys.js"
import { Bootstrap } from "./Bootstrap.js"
import { Organizations } from "./Organizations.js"

export const UsersHttp = group(Api, "users", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("signUp", ({ payload }) => accounts.signUp(payload))
      .handle("signIn", ({ payload }) => accounts.signIn(payload))
      .handle("signOut", () => Effect.flatMap(currentSession, ({ sessionId }) => accounts.signOut(sessionId)))
      .handle("me", () =>
        Effect.gen(function*() {
          const actor = yield* CurrentActor
          const context = yield* Effect.option(currentMember)
          return yield* accounts.me(actor.userId, context)
        }))
      .handle("switchOrganization", ({ payload }) =>
        Effect.gen(function*() {
          const session = yield* currentSession
          const context = yield* accounts.switchOrganization(session.sessionId, session.userId, payload.organizationId)
          return yield* accounts.me(session.userId, Option.some(context))
        }))
      .handle("updateMe", ({ payload }) =>
        Effect.gen(function*() {
          const session = yield* currentSession
          yield* accounts.updateName(session.userId, payload.name)
          return yield* accounts.me(session.userId, yield* Effect.option(currentMember))
        }))
      .handle("changePassword", ({ payload }) => Effect.flatMap(currentSession, (session) => accounts.changePassword(session, payload)))
      .handle("listOrganizations", ({ urlParams }) =>
        Effect.flatMap(currentSession, (session) => accounts.listOrganizations(session.userId, urlParams)))
  }))

export const OrganizationsHttp = group(Api, "organizations", (handlers) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    return handlers.handle("create", ({ payload }) =>
      Effect.flatMap(currentSession, (session) => organizations.create({ name: payload.name, ...session })))
  }))

export const ApiKeysHttp = group(Api, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    const admin = currentMemberWithRole("admin")
    return handlers
      .handle("create", ({ payload }) => Effect.flatMap(admin, (caller) => apiKeys.create(caller, payload)))
      .handle("list", ({ urlParams }) => Effect.flatMap(admin, (caller) => apiKeys.list(caller, urlParams)))
      .handle("revoke", ({ path }) => Effect.flatMap(admin, (caller) => apiKeys.revoke(caller, path.apiKeyId)))
  }))

/** The address a request came from, for per-client limits. */
const clientAddress = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const request = yield* HttpServerRequest.HttpServerRequest
  const forwarded = settings.trustProxy ? request.headers["x-forwarded-for"]?.split(",")[0]?.trim() : undefined
  return forwarded || Option.getOrElse(request.remoteAddress, () => "unknown")
})

export const BootstrapHttp = group(Api, "bootstrap", (handlers) =>
  Effect.gen(function*() {
    const bootstrap = yield* Bootstrap
    return handlers
      .handle("workspace", ({ payload }) => Effect.flatMap(clientAddress, (address) => bootstrap.createWorkspace(address, payload)))
      .handle("acceptClaim", ({ payload }) =>
        Effect.flatMap(currentSession, (session) => bootstrap.acceptClaim({ token: payload.token, ...session })))
  }))

export const AdminHttp = group(Api, "admin", (handlers) =>
  Effect.gen(function*() {
    const organizations = yield* Organizations
    return handlers.handle("setPlan", ({ path, payload }) =>
      Effect.gen(function*() {
        const caller = yield* currentMember
        const organization = yield* organizations.setPlan(caller, path.organizationId, payload.plan)
        return { organization }
      }))
  }))

export const layer = Layer.mergeAll(UsersHttp, OrganizationsHttp, ApiKeysHttp, BootstrapHttp, AdminHttp).pipe(
  Layer.provide([Accounts.Default, Organizations.Default, ApiKeys.Default, Bootstrap.Default])
)
