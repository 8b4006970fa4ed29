/**
 * Identity's part of a person's export (accounts/AccountExport.ts adds their memories): the profile with its proof,
 * every membership (ended ones too) with its organization's name, the live sessions as `GET /v1/me/sessions` shows
 * them, and the metadata of the API keys their memberships made. Read in the caller's transaction, so the parts agree.
 */
import { type ExportedMembership, type HeldApiKey, type OrganizationId, type SessionId, Unauthorized, type UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServerConfig } from "../platform/Config.js"
import { ApiKeysRepository } from "./ApiKeysRepository.js"
import { Memberships } from "./Memberships.js"
import { OrganizationsRepository } from "./OrganizationsRepository.js"
import { SessionsRepository } from "./SessionsRepository.js"
import { toUser, UsersRepository } from "./UsersRepository.js"

const make = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const users = yield* UsersRepository
  const sessions = yield* SessionsRepository
  const memberships = yield* Memberships
  const organizations = yield* OrganizationsRepository
  const apiKeys = yield* ApiKeysRepository

  return {
    /** What identity keeps of the person (`session`: the one asking, marked `current`), and the organizations they were in. */
    of: Effect.fn("AccountRecords.of")(function*(session: { readonly userId: UserId; readonly sessionId: SessionId }, at: Date) {
      const found = yield* users.findById(session.userId)
      if (Option.isNone(found)) return yield* Unauthorized.because("credential_revoked")
      const user = { ...toUser(found.value), emailVerified: yield* users.emailVerified(session.userId) }
      const organizationIds: Array<OrganizationId> = []
      const held: Array<typeof ExportedMembership.Type> = []
      const keys: Array<HeldApiKey> = []
      for (const organizationId of yield* memberships.organizationsEverOf(session.userId)) {
        organizationIds.push(organizationId)
        const organization = yield* organizations.find(organizationId)
        const name = Option.match(organization, { onNone: () => organizationId, onSome: (value) => value.name })
        for (const row of yield* memberships.allOf(organizationId, session.userId)) {
          held.push({
            organization: { id: organizationId, name },
            membership: { id: row.id, role: row.role, createdAt: row.createdAt, removedAt: row.removedAt, suspendedAt: row.suspendedAt }
          })
        }
      }
      keys.push(...(yield* apiKeys.listForAccount(session.userId)))
      held.sort((a, b) => a.membership.createdAt.getTime() - b.membership.createdAt.getTime() || (a.membership.id < b.membership.id ? -1 : 1))
      const live = yield* sessions.allLive({
        userId: session.userId,
        current: session.sessionId,
        at,
        idleSince: new Date(at.getTime() - Duration.toMillis(settings.sessionIdleTimeout))
      })
      return { user, memberships: held, sessions: live, apiKeys: keys, organizationIds } as const
    })
  } as const
})

/** Needs ServerConfig and the database. */
export class AccountRecords extends Context.Service<AccountRecords>()("@orgplane/server/identity/AccountRecords", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      UsersRepository.layer,
      SessionsRepository.layer,
      Memberships.layer,
      OrganizationsRepository.layer,
      ApiKeysRepository.layer
    ])
  )
}
