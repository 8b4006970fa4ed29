/** Storage of sessions: only the token's hash is kept. */
import { SqlClient } from "@effect/sql"
import type { OrganizationId, SessionId, UserId } from "@orgplane/schema"
import { Effect } from "effect"
import { first } from "../platform/Sql.js"

export interface SessionRow {
  readonly id: SessionId
  readonly userId: UserId
  readonly tokenHash: string
  readonly activeOrganizationId: OrganizationId | null
  readonly createdAt: Date
  readonly expiresAt: Date
}

export class SessionsRepository extends Effect.Service<SessionsRepository>()("@orgplane/server/SessionsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = (row: SessionRow) => sql`INSERT INTO sessions ${sql.insert({ ...row })}`.pipe(Effect.asVoid, Effect.orDie)

    /** The live session with this token hash: not revoked, not expired at `at`. */
    const findLive = (tokenHash: string, at: Date) =>
      sql<SessionRow>`SELECT id, user_id, token_hash, active_organization_id, created_at, expires_at FROM sessions
                      WHERE token_hash = ${tokenHash} AND revoked_at IS NULL AND expires_at > ${at}`.pipe(
        Effect.map(first),
        Effect.orDie
      )

    const revoke = (id: SessionId, at: Date) =>
      sql`UPDATE sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`.pipe(Effect.asVoid, Effect.orDie)

    const setActiveOrganization = (id: SessionId, organizationId: OrganizationId) =>
      sql`UPDATE sessions SET active_organization_id = ${organizationId} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    /** Revokes every live session of the user except `keep`. */
    const revokeOthers = (userId: UserId, keep: SessionId, at: Date) =>
      sql`UPDATE sessions SET revoked_at = ${at} WHERE user_id = ${userId} AND id <> ${keep} AND revoked_at IS NULL`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return { insert, findLive, revoke, revokeOthers, setActiveOrganization } as const
  })
}) {}
