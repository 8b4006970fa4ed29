/**
 * Organization API keys: issued by owners and admins, acting as the member who created them, and recording how that
 * member authenticated (SSO enforcement judges the key by it: SsoEnforcement.ts).
 */
import { type ApiKeyId, InvalidRequest, type MemberContext, NotFound, type PageQuery } from "@orgplane/schema"
import { Effect, Option } from "effect"
import * as Authority from "../platform/Authority.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { authorize } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"
import { assuranceOrNone, keyMakingRefusal, SsoEnforcement } from "./SsoEnforcement.js"

/** A maker who authenticated outside any SSO. */
const outsideSso = { ssoConnectionId: null, authenticatedOrganizationId: null }

export const API_KEY_PREFIX = "opk"
/** How much of the key is kept in clear, to recognise it in lists: the prefix and 8 characters. */
const DISPLAY_LENGTH = API_KEY_PREFIX.length + 1 + 8

export class ApiKeys extends Effect.Service<ApiKeys>()("@orgplane/server/identity/ApiKeys", {
  effect: Effect.gen(function*() {
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

    const create = (caller: MemberContext, input: { readonly name: string; readonly expiresAt?: Date | undefined }) =>
      Effect.gen(function*() {
        yield* authorize(caller, "apiKeys.manage")
        const createdAt = yield* now
        if (input.expiresAt !== undefined && input.expiresAt.getTime() <= createdAt.getTime()) {
          return yield* InvalidRequest.field(["expiresAt"], "must be in the future")
        }
        const maker = yield* makerAssurance(caller)
        const key = yield* crypto.newToken(API_KEY_PREFIX)
        // A transaction, though one statement: the caller's authority is checked where it commits (Authority.ts).
        const apiKey = yield* transaction(apiKeys.insert({
          id: yield* makeId("apk"),
          organizationId: caller.organization.id,
          membershipId: caller.membership.id,
          name: input.name,
          prefix: key.slice(0, DISPLAY_LENGTH),
          keyHash: crypto.hashToken(key),
          createdAt,
          expiresAt: input.expiresAt ?? null,
          ssoConnectionId: maker.ssoConnectionId,
          authenticatedOrganizationId: maker.authenticatedOrganizationId
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
  dependencies: [ApiKeysRepository.Default, SsoEnforcement.Default]
}) {}
