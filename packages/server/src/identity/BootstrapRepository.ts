/**
 * Storage of provisional workspaces and their one-time claims.
 */
import { BootstrapId, MembershipId, OrganizationId, Role, UserId, WorkspaceClaimId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import { DateColumn, execute, findOne, single } from "../platform/Statements.js"

export class BootstrapRow extends Model.Class<BootstrapRow>("BootstrapRow")({
  id: Model.GeneratedByApp(BootstrapId),
  organizationId: OrganizationId,
  /** The placeholder owner, removed when the owner claim is redeemed. */
  setupMembershipId: MembershipId,
  status: Schema.Literals(["provisional", "claimed"]),
  createdAt: DateColumn,
  expiresAt: DateColumn
}) {}

export class ClaimRow extends Model.Class<ClaimRow>("ClaimRow")({
  id: Model.GeneratedByApp(WorkspaceClaimId),
  organizationId: OrganizationId,
  bootstrapId: BootstrapId,
  role: Role,
  tokenHash: Model.Sensitive(Schema.String),
  status: Schema.Literals(["pending", "claimed"]),
  createdAt: DateColumn,
  expiresAt: DateColumn,
  claimedByUserId: Schema.NullOr(UserId),
  claimedAt: Schema.NullOr(DateColumn)
}) {}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertBootstrap = execute({
    Request: BootstrapRow.insert,
    execute: (row) => sql`INSERT INTO workspace_bootstraps ${sql.insert(row)}`
  })

  const insertClaimRow = execute({ Request: ClaimRow.insert, execute: (row) => sql`INSERT INTO workspace_claims ${sql.insert(row)}` })
  const insertClaim = (row: Omit<typeof ClaimRow.insert.Type, "status" | "claimedByUserId" | "claimedAt">) =>
    insertClaimRow({ ...row, status: "pending", claimedByUserId: null, claimedAt: null })

  /**
   * The pending, unexpired claim with this token hash, locked until the transaction ends. A token is global: its
   * row says which organization it opens.
   */
  const lockPendingClaim = findOne({
    Request: Schema.Struct({ tokenHash: Schema.String, at: DateColumn }),
    Result: ClaimRow,
    execute: ({ at, tokenHash }) =>
      sql`SELECT id, organization_id, bootstrap_id, role, token_hash, status, created_at, expires_at,
                   claimed_by_user_id, claimed_at
            FROM workspace_claims c
            WHERE token_hash = ${tokenHash} AND status = 'pending' AND expires_at > ${at}
              AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = c.organization_id AND o.deleted_at IS NOT NULL)
            FOR UPDATE`
  })

  const markClaimRow = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, id: WorkspaceClaimId, userId: UserId, at: DateColumn }),
    execute: ({ at, id, organizationId, userId }) =>
      sql`UPDATE workspace_claims SET status = 'claimed', claimed_by_user_id = ${userId}, claimed_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const markBootstrap = single({
    Request: Schema.Struct({ organizationId: OrganizationId, id: BootstrapId }),
    Result: Schema.Struct({ setupMembershipId: MembershipId }),
    execute: ({ id, organizationId }) =>
      sql`UPDATE workspace_bootstraps SET status = 'claimed' WHERE organization_id = ${organizationId} AND id = ${id}
            RETURNING setup_membership_id`
  })

  /** Marks the claim redeemed by the user and its workspace claimed; answers the placeholder owner's membership. */
  const markClaimed = (claim: ClaimRow, userId: UserId, at: Date) =>
    Effect.andThen(
      markClaimRow({ organizationId: claim.organizationId, id: claim.id, userId, at }),
      Effect.map(markBootstrap({ organizationId: claim.organizationId, id: claim.bootstrapId }), (row) => row.setupMembershipId)
    )

  /** Whether `POST /v1/bootstrap/workspace` made the organization (claimed since or not). */
  const isBootstrapped = (organizationId: OrganizationId) =>
    sql`SELECT 1 FROM workspace_bootstraps WHERE organization_id = ${organizationId} LIMIT 1`.pipe(Effect.map((rows) => rows.length > 0))

  return { insertBootstrap, insertClaim, lockPendingClaim, markClaimed, isBootstrapped } as const
})

export class BootstrapRepository extends Context.Service<BootstrapRepository>()("@orgplane/server/identity/BootstrapRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
