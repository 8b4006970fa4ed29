/**
 * The suites' OAuth clients an organization's admins configure: read, replace (the secret encrypted; a new client,
 * tenant or endpoint drops the members' credentials, which belong to the old one), remove.
 */
import {
  InvalidRequest,
  NotFound,
  type OrganizationId,
  type Suite,
  SuiteClient,
  type SuiteClientRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { checkUserMember, Outbound } from "../platform/Outbound.js"
import { authorize, type Principal } from "../platform/Principal.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { type SuiteClientRow, SuiteRepository } from "./SuiteRepository.js"
import { endpointsOf, featuresOf, scopesFor } from "./Suites.js"

export const CALLBACK_PATH = "/v1/capabilities/oauth/callback"

/** Where the suites send the browser back, for a server reached at `baseUrl`. */
export const suiteCallbackUrl = (baseUrl: string) => `${baseUrl}${CALLBACK_PATH}`

export const clientNotFound = (suite: Suite) =>
  new NotFound({ error: "suite_client_not_found", message: `No OAuth client is configured for ${suite}.` })

/** The client as admins read it. */
export const present = (row: SuiteClientRow, baseUrl: string) =>
  new SuiteClient({
    suite: row.suite,
    clientId: row.clientId,
    hasClientSecret: row.clientSecretCiphertext !== null,
    tenant: row.tenant,
    features: row.features,
    ...endpointsOf(row),
    redirectUri: suiteCallbackUrl(baseUrl),
    scopes: scopesFor(row.suite, row.features),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    updatedByOrgMembershipId: row.updatedByMembershipId
  })

/** The request's rules the schema cannot state, since they depend on the path's suite: its features; a tenant only on suite-a. */
const checkRequest = (suite: Suite, request: SuiteClientRequest) => {
  for (const [index, feature] of request.features.entries()) {
    if (!featuresOf[suite].includes(feature)) {
      return Effect.fail(InvalidRequest.field(["features", index], `\`${feature}\` is not a feature of ${suite} (${featuresOf[suite].join(", ")})`))
    }
  }
  if (suite === "suite-b" && request.tenant !== undefined && request.tenant !== null) {
    return Effect.fail(InvalidRequest.field(["tenant"], "suite-b has no tenant"))
  }
  return Effect.void
}

const make = Effect.gen(function*() {
  const repository = yield* SuiteRepository
  const crypto = yield* Crypto
  const outbound = yield* Outbound
  const config = yield* ServerConfig

  const find = (organizationId: OrganizationId, suite: Suite) =>
    Effect.flatMap(orUnavailable(repository.findClient({ organizationId, suite })), Option.match({
      onNone: () => Effect.fail(clientNotFound(suite)),
      onSome: Effect.succeed
    }))

  /** Unless private destinations are allowed, an endpoint must be https with public addresses: a 400 on it. */
  const checkEndpoint = (name: "authorizationEndpoint" | "tokenEndpoint" | "apiBaseUrl", url: string | null | undefined) =>
    url === undefined || url === null ? Effect.void : checkUserMember(outbound, config.outboundAllowPrivate, [name], url)

  const get = Effect.fn("SuiteClients.get")(function*(principal: Principal, suite: Suite, baseUrl: string) {
    yield* authorize(principal, "capabilities.manage")
    return present(yield* find(principal.organization.id, suite), baseUrl)
  })

  const put = Effect.fn("SuiteClients.put")(function*(principal: Principal, suite: Suite, request: SuiteClientRequest, baseUrl: string) {
    yield* authorize(principal, "capabilities.manage")
    yield* checkRequest(suite, request)
    yield* checkEndpoint("authorizationEndpoint", request.authorizationEndpoint)
    yield* checkEndpoint("tokenEndpoint", request.tokenEndpoint)
    yield* checkEndpoint("apiBaseUrl", request.apiBaseUrl)
    const secret = request.clientSecret === undefined || request.clientSecret === null
      ? request.clientSecret
      : yield* Effect.orDie(crypto.encrypt(request.clientSecret, bind(SecretColumns.suiteClientSecret, principal.organization.id, suite)))
    const organizationId = principal.organization.id
    const at = yield* now
    const row = yield* transaction(Effect.gen(function*() {
      const existing = Option.getOrUndefined(yield* repository.lockClient({ organizationId, suite }))
      const next: SuiteClientRow = {
        organizationId,
        suite,
        clientId: request.clientId,
        clientSecretCiphertext: secret === undefined ? existing?.clientSecretCiphertext ?? null : secret,
        tenant: suite === "suite-a" ? request.tenant ?? null : null,
        features: request.features,
        authorizationEndpoint: request.authorizationEndpoint ?? null,
        tokenEndpoint: request.tokenEndpoint ?? null,
        apiBaseUrl: request.apiBaseUrl ?? null,
        createdAt: existing?.createdAt ?? at,
        updatedAt: at,
        updatedByMembershipId: principal._tag === "Member" ? principal.membership.id : null
      }
      if (existing !== undefined) {
        const before = endpointsOf(existing)
        const after = endpointsOf(next)
        // Tokens belong to the client that obtained them, from the authorization server that issued them.
        if (
          existing.clientId !== next.clientId || before.tokenEndpoint !== after.tokenEndpoint ||
          before.authorizationEndpoint !== after.authorizationEndpoint
        ) yield* repository.dropAllCredentials({ organizationId, suite })
      }
      yield* repository.upsertClient(next)
      return next
    }))
    return present(row, baseUrl)
  })

  const remove = Effect.fn("SuiteClients.remove")(function*(principal: Principal, suite: Suite) {
    yield* authorize(principal, "capabilities.manage")
    const removed = yield* transaction(repository.deleteClient({ organizationId: principal.organization.id, suite }))
    if (!removed) return yield* Effect.fail(clientNotFound(suite))
    return { ok: true } as const
  })

  return { get, put, remove } as const
})

export class SuiteClients extends Context.Service<SuiteClients>()("@orgplane/server/capabilities/SuiteClients", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(SuiteRepository.layer))
}
