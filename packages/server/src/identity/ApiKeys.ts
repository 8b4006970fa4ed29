/** Organization API keys: issued by owners and admins, acting as the member who created them. */
import { type ApiKeyId, InvalidRequest, NotFound, type PageQuery } from "@orgplane/schema"
import { Effect } from "effect"
import type { MemberContext } from "../platform/Auth.js"
import { Crypto } from "../platform/Crypto.js"
import * as Cursor from "../platform/Cursor.js"
import { makeId } from "../platform/Ids.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"

export const API_KEY_PREFIX = "opk"
/** How much of the key is kept in clear, to recognise it in lists: the prefix and 8 characters. */
const DISPLAY_LENGTH = API_KEY_PREFIX.length + 1 + 8

export class ApiKeys extends Effect.Service<ApiKeys>()("@orgplane/server/ApiKeys", {
  effect: Effect.gen(function*() {
    const crypto = yield* Crypto
    const apiKeys = yield* ApiKeysRepository

    const create = (caller: MemberContext, input: { readonly name: string; readonly expiresAt?: Date | undefined }) =>
      Effect.gen(function*() {
        const createdAt = yield* now
        if (input.expiresAt !== undefined && input.expiresAt.getTime() <= createdAt.getTime()) {
          return yield* InvalidRequest.field(["expiresAt"], "must be in the future")
        }
        const key = yield* crypto.newToken(API_KEY_PREFIX)
        const apiKey = yield* apiKeys.insert({
          id: yield* makeId<ApiKeyId>("apk"),
          organizationId: caller.organization.id,
          membershipId: caller.membership.id,
          name: input.name,
          prefix: key.slice(0, DISPLAY_LENGTH),
          keyHash: crypto.hashToken(key),
          createdAt,
          expiresAt: input.expiresAt ?? null
        })
        return { apiKey, key }
      })

    const list = (caller: MemberContext, query: PageQuery) =>
      Effect.gen(function*() {
        const page = yield* Cursor.request(query)
        const rows = yield* apiKeys.list(caller.organization.id, page)
        return Cursor.page(rows, page.limit, (key) => [key.id])
      })

    const revoke = (caller: MemberContext, id: ApiKeyId) =>
      Effect.flatMap(apiKeys.remove(caller.organization.id, id), (removed) =>
        removed ? Effect.void : Effect.fail(new NotFound({ error: "api_key_not_found", message: "API key not found." })))

    return { create, list, revoke } as const
  }),
  dependencies: [ApiKeysRepository.Default]
}) {}
