/** Storage of invitations: only the token's hash is kept. `expired` is derived from `expires_at`, never stored. */
import { SqlClient, type Statement } from "@effect/sql"
import {
  Invitation,
  type InvitationId,
  type InvitationStatus,
  type MembershipId,
  type OrganizationId,
  type Role
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import type { PageRequest } from "../platform/Cursor.js"
import { first } from "../platform/Sql.js"

type InvitableRole = Exclude<Role, "owner">

export class InvitationsRepository extends Effect.Service<InvitationsRepository>()(
  "@orgplane/server/InvitationsRepository",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      /** `at` decides which pending invitations read as expired. */
      const select = (at: Date, condition: Statement.Fragment, lock = false) =>
        sql<Invitation>`
          SELECT id, organization_id, email, role,
                 CASE WHEN status = 'pending' AND expires_at <= ${at} THEN 'expired' ELSE status END AS status,
                 created_by_membership_id AS created_by_org_membership_id,
                 accepted_by_membership_id AS accepted_by_org_membership_id,
                 created_at, expires_at
          FROM invitations WHERE ${condition} ${lock ? sql`FOR UPDATE` : sql``}`.pipe(
          // Rows of our own tables: the response schema validates on the way out, not the constructor here.
          Effect.map((rows) => rows.map((row) => new Invitation(row, true))),
          Effect.orDie
        )

      const statusCondition = (status: InvitationStatus, at: Date) => {
        switch (status) {
          case "pending":
            return sql`status = 'pending' AND expires_at > ${at}`
          case "expired":
            return sql`status = 'pending' AND expires_at <= ${at}`
          default:
            return sql`status = ${status}`
        }
      }

      /** Newest first. */
      const list = (organizationId: OrganizationId, status: InvitationStatus | undefined, at: Date, page: PageRequest) =>
        select(
          at,
          sql`${sql.and([
            sql`organization_id = ${organizationId}`,
            status ? statusCondition(status, at) : sql`true`,
            page.after ? sql`id < ${page.after[0]}` : sql`true`
          ])} ORDER BY id DESC LIMIT ${page.limit + 1}`
        )

      /** The invitation, locked for the rest of the transaction. */
      const lock = (organizationId: OrganizationId, id: InvitationId, at: Date) =>
        Effect.map(select(at, sql`organization_id = ${organizationId} AND id = ${id}`, true), first)

      /** The email's pending invitation in the organization (expired or not), locked. */
      const lockPendingFor = (organizationId: OrganizationId, email: string, at: Date) =>
        Effect.map(
          select(at, sql`organization_id = ${organizationId} AND lower(email) = lower(${email}) AND status = 'pending'`, true),
          first
        )

      /** Which organization the invitation with this token hash belongs to, whatever its state. */
      const organizationOf = (tokenHash: string) =>
        sql<{ organizationId: OrganizationId }>`SELECT organization_id FROM invitations WHERE token_hash = ${tokenHash}`.pipe(
          Effect.map((rows) => Option.map(first(rows), (row) => row.organizationId)),
          Effect.orDie
        )

      /** The unexpired pending invitation with this token hash, locked. */
      const lockRedeemable = (tokenHash: string, at: Date) =>
        Effect.map(select(at, sql`token_hash = ${tokenHash} AND status = 'pending' AND expires_at > ${at}`, true), first)

      const insert = (row: {
        readonly id: InvitationId
        readonly organizationId: OrganizationId
        readonly email: string
        readonly role: InvitableRole
        readonly tokenHash: string
        readonly createdByMembershipId: MembershipId
        readonly createdAt: Date
        readonly expiresAt: Date
      }) =>
        sql`INSERT INTO invitations ${sql.insert({ ...row, status: "pending", updatedAt: row.createdAt })}`.pipe(
          Effect.asVoid,
          Effect.orDie
        )

      /** A new token, role and expiry for a pending invitation; whoever refreshed it becomes its inviter. */
      const refresh = (
        id: InvitationId,
        changes: {
          readonly role: InvitableRole
          readonly tokenHash: string
          readonly createdByMembershipId: MembershipId
          readonly expiresAt: Date
        },
        at: Date
      ) => sql`UPDATE invitations SET ${sql.update({ ...changes, updatedAt: at })} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

      const cancel = (id: InvitationId, at: Date) =>
        sql`UPDATE invitations SET status = 'canceled', updated_at = ${at} WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

      const markAccepted = (id: InvitationId, membershipId: MembershipId, at: Date) =>
        sql`UPDATE invitations SET status = 'accepted', accepted_by_membership_id = ${membershipId}, updated_at = ${at}
            WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

      return { list, lock, lockPendingFor, organizationOf, lockRedeemable, insert, refresh, cancel, markAccepted } as const
    })
  }
) {}
