/**
 * Organization API keys: issued by owners and admins, acting as the member who created them, and recording how that
 * member authenticated (SSO enforcement judges the key by it: SsoEnforcement.ts).
 */
import {
  type Action,
  allows,
  type ApiKeyId,
  ApiKeyScope,
  Conflict,
  type CreateApiKeyRequest,
  defaultScopes,
  expandScopes,
  InvalidRequest,
  type MemberContext,
  NotFound,
  type PageQuery,
  Unauthorized
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { describeChange } from "../platform/AuditRecorder.js"
import * as Authority from "../platform/Authority.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { authorize, requireRecentAuthentication } from "../platform/Principal.js"
import { ServerConfig } from "../platform/Config.js"
import { lockLimit, orUnavailable, pgCode, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"
import { assuranceOrNone, keyMakingRefusal, SsoEnforcement } from "./SsoEnforcement.js"

/** What the audit log records of a new key: its scopes. */
const KeyScopes = Schema.Struct({ scopes: Schema.Array(ApiKeyScope) })

/** A maker who authenticated outside any SSO. */
const outsideSso = { ssoConnectionId: null, authenticatedOrganizationId: null }

export const API_KEY_PREFIX = "opk"
/** How much of the key is kept in clear, to recognise it in lists: the prefix and 8 characters. */
const DISPLAY_LENGTH = API_KEY_PREFIX.length + 1 + 8

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const crypto = yield* Crypto
  const apiKeys = yield* ApiKeysRepository
  const enforcement = yield* SsoEnforcement

  /**
   * How the caller authenticated, which the new key records (SsoEnforcement.ts): their session's SSO, or what the key
   * they use recorded, if that key may make keys: under enforcement only an SSO session may.
   */
  const makerAssurance = (caller: MemberContext) =>
    caller.credential._tag === "Session"
      ? Effect.map(orUnavailable(apiKeys.sessionAssurance(caller.credential.sessionId)), Option.getOrElse(() => outsideSso))
      : Effect.flatMap(
        orUnavailable(enforcement.forApiKey({ organizationId: caller.organization.id, apiKeyId: caller.credential.apiKeyId })),
        (found) => {
          const assurance = assuranceOrNone(found)
          return Option.match(keyMakingRefusal(caller.organization, caller.membership.role, assurance), {
            onNone: () => Effect.succeed(assurance),
            onSome: Effect.fail
          })
        }
      )

  /**
   * The new key's scopes: those asked for, or the default (`defaultScopes`), each within the caller's role and, when
   * an API key makes it, within that key's scopes (400 naming the first that is not).
   */
  const scopesFor = Effect.fn("ApiKeys.scopesFor")(function*(caller: MemberContext, requested: (typeof CreateApiKeyRequest.Type)["scopes"]) {
    const maker = caller.credential._tag === "ApiKey" ? caller.credential.scopes : null
    const within = (action: Action) => allows(caller.membership.role, action) && (maker === null || maker.includes(action))
    if (requested === undefined) return defaultScopes(within)
    const scopes = expandScopes(requested)
    const beyond = scopes.find((action) => !within(action))
    if (beyond !== undefined) {
      const index = requested.findIndex((scope) => scope === beyond || (scope.endsWith(".*") && beyond.startsWith(scope.slice(0, -1))))
      return yield* InvalidRequest.field(
        ["scopes", Math.max(index, 0)],
        allows(caller.membership.role, beyond)
          ? `${beyond} is beyond the scopes of the API key making this one`
          : `${beyond} is beyond your role (${caller.membership.role})`
      )
    }
    return scopes
  })

  /**
   * A key acting as the caller, within its scopes, under the member's quota: the member's creations one at a time
   * until their transaction ends (`lockLimit`, keyed by the membership), so racing ones cannot both count room.
   */
  const create = Effect.fn("ApiKeys.create")(function*(caller: MemberContext, input: typeof CreateApiKeyRequest.Type) {
    yield* authorize(caller, "apiKeys.manage")
    yield* requireRecentAuthentication(caller, settings.recentAuthentication)
    const scopes = yield* scopesFor(caller, input.scopes)
    const createdAt = yield* now
    const latest = new Date(createdAt.getTime() + Duration.toMillis(settings.apiKeyMaxLifetime))
    if (input.expiresAt !== undefined && input.expiresAt.getTime() <= createdAt.getTime()) {
      return yield* InvalidRequest.field(["expiresAt"], "must be in the future")
    }
    if (input.expiresAt !== undefined && input.expiresAt.getTime() > latest.getTime()) {
      return yield* InvalidRequest.field(
        ["expiresAt"],
        `must be within ${Duration.format(settings.apiKeyMaxLifetime)} from now (ORGPLANE_API_KEY_MAX_LIFETIME), by ${latest.toISOString()}`
      )
    }
    const maker = yield* makerAssurance(caller)
    const key = yield* crypto.newToken(API_KEY_PREFIX)
    const id = yield* makeId("apk")
    // The caller's authority is checked where the transaction commits (Authority.ts); the key's scopes go in the
    // audit event, written as it commits.
    const apiKey = yield* transaction(Effect.gen(function*() {
      const organizationId = caller.organization.id
      const membershipId = caller.membership.id
      yield* lockLimit("api_keys", membershipId)
      const quota = settings.apiKeysPerMember
      if ((yield* apiKeys.countUnexpired({ organizationId, membershipId, at: createdAt })) >= quota) {
        return yield* new Conflict({
          error: "api_key_quota_reached",
          message: `You have ${quota} API keys in this organization, the most this instance allows per member (ORGPLANE_API_KEYS_PER_MEMBER): revoke one, or ask the instance's operator to raise the setting.`
        })
      }
      return yield* apiKeys.insert({
        id,
        organizationId,
        membershipId,
        name: input.name,
        prefix: key.slice(0, DISPLAY_LENGTH),
        keyHash: crypto.hashToken(key),
        createdAt,
        expiresAt: input.expiresAt ?? latest,
        ssoConnectionId: maker.ssoConnectionId,
        authenticatedOrganizationId: maker.authenticatedOrganizationId,
        scopes,
        parentApiKeyId: caller.credential._tag === "ApiKey" ? caller.credential.apiKeyId : null
      }).pipe(
        // The making key was revoked (deleted) after this request found it: 401, as the check at commit would say.
        Effect.catchIf((error) => pgCode(error) === "23503", () => Effect.fail(Unauthorized.because("credential_revoked"))),
        Effect.tap(() => describeChange(KeyScopes, { scopes: [] }, { scopes }))
      )
    }))
    return { apiKey, key }
  })

  const list = Effect.fn("ApiKeys.list")(function*(caller: MemberContext, query: PageQuery) {
    yield* authorize(caller, "apiKeys.manage")
    return yield* orUnavailable(apiKeys.list(caller.organization.id, query))
  })

  const revoke = Effect.fn("ApiKeys.revoke")(function*(caller: MemberContext, id: ApiKeyId) {
    yield* authorize(caller, "apiKeys.manage")
    // The keys it made go with it, each named for the check at commit (revoking the caller's own key is decided here).
    const removed = yield* transaction(
      Effect.tap(apiKeys.revoke({ organizationId: caller.organization.id, id }), (rows) =>
        Effect.forEach(rows, (row) => Authority.changedHere({ apiKeyId: row.id }), { discard: true }))
    )
    if (removed.length === 0) return yield* new NotFound({ error: "api_key_not_found", message: "API key not found." })
  })

  return { create, list, revoke } as const
})

export class ApiKeys extends Context.Service<ApiKeys>()("@orgplane/server/identity/ApiKeys", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      ApiKeysRepository.layer,
      SsoEnforcement.layer
    ])
  )
}
