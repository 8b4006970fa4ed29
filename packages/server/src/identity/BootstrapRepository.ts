/** Storage of provisional workspaces and their one-time claims. */
import { SqlClient } from "@effect/sql"
import type { BootstrapId, MembershipId, OrganizationId, Role, UserId, WorkspaceClaimId } from "@orgplane/schema"
import { Effect } from "effect"
import { first } from "../platform/Sql.js"

export interface ClaimRow {
  readonly id: WorkspaceClaimId
  readonly organizationId: OrganizationId
  readonly bootstrapId: BootstrapId
  readonly role: Role
  readonly expiresAt: Date
}

export class BootstrapRepository extends Effect.Service<BootstrapRepository>()("@orgplane/server/BootstrapRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertBootstrap = (row: {
      readonly id: BootstrapId
      readonly organizationId: OrganizationId
      readonly setupMembershipId: MembershipId
      readonly createdAt: Date
      readonly expiresAt: Date
    }) => sql`INSERT INTO workspace_bootstraps ${sql.insert({ ...row, status: "provisional" })}`.pipe(Effect.asVoid, Effect.orDie)

    const insertClaim = (row: ClaimRow & { readonly tokenHash: string; readonly createdAt: Date }) =>
      sql`INSERT INTO workspace_claims ${sql.insert({ ...row, status: "pending" })}`.pipe(Effect.asVoid, Effect.orDie)

    /** The pending, unexpired claim with this token hash, locked until the transaction ends. */
    const lockPendingClaim = (tokenHash: string, at: Date) =>
      sql<ClaimRow>`SELECT id, organization_id, bootstrap_id, role, expires_at FROM workspace_claims
                    WHERE token_hash = ${tokenHash} AND status = 'pending' AND expires_at > ${at}
                    FOR UPDATE`.pipe(Effect.map(first), Effect.orDie)

    const markClaimed = (claim: ClaimRow, userId: UserId, at: Date) =>
      Effect.gen(function*() {
        yield* sql`UPDATE workspace_claims SET status = 'claimed', claimed_by_user_id = ${userId}, claimed_at = ${at}
                   WHERE id = ${claim.id}`
        const rows = yield* sql<{ setupMembershipId: MembershipId }>`
          UPDATE workspace_bootstraps SET status = 'claimed' WHERE id = ${claim.bootstrapId}
          RETURNING setup_membership_id`
        return rows[0].setupMembershipId
      }).pipe(Effect.orDie)

    return { insertBootstrap, insertClaim, lockPendingClaim, markClaimed } as const
  })
}) {}
