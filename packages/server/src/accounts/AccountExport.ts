/**
 * A person's export (`GET /v1/me/export`): what identity keeps of them (identity/AccountRecords.ts) and the memories
 * they saved in every organization, as one `AccountExport` document.
 */
import type { AccountExport as AccountExportDocument, ExportedMemory, SessionId, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AccountRecords } from "../identity/AccountRecords.js"
import { MemoryRepository } from "../memory/MemoryRepository.js"
import { orUnavailable } from "../platform/Sql.js"
import { now } from "../platform/Time.js"

const make = Effect.gen(function*() {
  const records = yield* AccountRecords
  const memories = yield* MemoryRepository

  return {
    /** The document of the session's person (`current` marks this session among theirs). */
    of: Effect.fn("AccountExport.of")(function*(session: { readonly userId: UserId; readonly sessionId: SessionId }) {
      const at = yield* now
      return yield* orUnavailable(Effect.gen(function*() {
        const kept = yield* records.of(session, at)
        const saved: Array<typeof ExportedMemory.Type> = []
        for (const organizationId of kept.organizationIds) {
          for (const memory of yield* memories.allOf({ organizationId, userId: session.userId })) saved.push({ organizationId, memory })
        }
        saved.sort((a, b) => b.memory.createdAt.getTime() - a.memory.createdAt.getTime() || (a.memory.id < b.memory.id ? 1 : -1))
        return {
          format: "orgplane.account-export.v1",
          exportedAt: at,
          user: kept.user,
          memberships: kept.memberships,
          memories: saved,
          sessions: kept.sessions,
          apiKeys: kept.apiKeys
        } satisfies typeof AccountExportDocument.Type
      }))
    })
  } as const
})

export class AccountExport extends Context.Service<AccountExport>()("@orgplane/server/accounts/AccountExport", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide([AccountRecords.layer, MemoryRepository.layer]))
}
