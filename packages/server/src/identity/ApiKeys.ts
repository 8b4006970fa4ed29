/** Organization API keys: issued by owners and admins, acting as the member who created them. */
import { type ApiKeyId, Conflict, InvalidRequest, type MemberContext, NotFound, type PageQuery } from "@orgplane/schema"
import { Effect, Option } from "effect"
import * as Authority from "../platform/Authority.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { authorize } from "../platform/Principal.js"
import { ServerConfig } from "../platform/Config.js"
import { lockLimit, orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"

export const API_KEY_PREFIX = "opk"
/** How much of the key is kept in clear, to recognise it in lists: the prefix and 8 characters. */
const DISPLAY_LENGTH = API_KEY_PREFIX.length + 1 + 8

export class ApiKeys extends Effect.Service<ApiKeys>()("@orgplane/server/identity/ApiKeys", {
  effect: Effect.gen(function*() {
    const settings = yield* ServerConfig
    const crypto = yield* Crypto
    const apiKeys = yield* ApiKeysRepository

    /**
     * A key acting as the caller, under the member's quota: the member's creations one at a time until their
     * transaction ends (`lockLimit`, keyed by the membership), so racing ones cannot both count room.
     */
    const create = Effect.fn("ApiKeys.create")(function*(caller: MemberContext, input: { readonly name: string; readonly expiresAt?: Date | undefined }) {
      yield* authorize(caller, "apiKeys.manage")
      const createdAt = yield* now
      if (input.expiresAt !== undefined && input.expiresAt.getTime() <= createdAt.getTime()) {
        return yield* InvalidRequest.field(["expiresAt"], "must be in the future")
      }
      const key = yield* crypto.newToken(API_KEY_PREFIX)
      const id = yield* makeId("apk")
      // The caller's authority is checked where the transaction commits (Authority.ts).
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
          expiresAt: input.expiresAt ?? null
        })
      }))
      return { apiKey, key }
    })

    const list = (caller: MemberContext, query: PageQuery) =>
      Effect.zipRight(authorize(caller, "apiKeys.manage"), orUnavailable(apiKeys.list(caller.organization.id, query)))

    const revoke = (caller: MemberContext, id: ApiKeyId) =>
      Effect.gen(function*() {
        yield* authorize(caller, "apiKeys.manage")
        const removed = yield* transaction(
          Effect.zipRight(Authority.changedHere({ apiKeyId: id }), apiKeys.revoke({ organizationId: caller.organization.id, id }))
        )
        if (Option.isNone(removed)) return yield* new NotFound({ error: "api_key_not_found", message: "API key not found." })
      })

    return { create, list, revoke } as const
  }),
  dependencies: [ApiKeysRepository.Default]
}) {}
