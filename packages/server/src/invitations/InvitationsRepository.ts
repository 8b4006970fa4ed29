/**
 * Storage of invitations: only the token's hash is kept. `expired` is derived from `expires_at`, never stored;
 * `canceled` is set by an admin's cancellation, or by the database when the API key that made a pending invitation
 * is deleted (migration 0043).
 */
import {
  ApiKeyId,
  InvitableRole,
  Invitation,
  InvitationDelivery,
  InvitationId,
  InvitationListQuery,
  type InvitationStatus,
  MembershipId,
  OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, execute, findAll, findOne, trustedClassRow } from "../platform/Statements.js"

export class InvitationRow extends Model.Class<InvitationRow>("InvitationRow")({
  id: Model.GeneratedByApp(InvitationId),
  organizationId: OrganizationId,
  email: Invitation.fields.email,
  role: InvitableRole,
  tokenHash: Model.Sensitive(Schema.String),
  /** Who saw the token: only the address's mailbox (`mailed`), or the inviter (`shown`). */
  delivery: InvitationDelivery,
  status: Schema.Literals(["pending", "accepted", "canceled"]),
  createdByMembershipId: MembershipId,
  /**
   * The API key the inviter made it with (null: a session). Its pending invitations are canceled when the key's row
   * is deleted, whatever deletes it (migration 0043's trigger).
   */
  createdByApiKeyId: Schema.NullOr(ApiKeyId),
  acceptedByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn,
  expiresAt: DateColumn
}) {}

/** Newest first. */
const newestFirst = Keyset.make<Invitation>("invitations", "desc", [{ column: "id", value: (invitation) => invitation.id }])

const InvitationResult = classRow(Invitation)
/** Lists skip validating each row: see `trustedClassRow`. */
const InvitationListResult = trustedClassRow(Invitation)
const Scoped = Schema.Struct({ organizationId: OrganizationId, id: InvitationId })
const Changes = Schema.Struct({
  role: InvitableRole,
  tokenHash: Schema.String,
  delivery: InvitationDelivery,
  createdByMembershipId: MembershipId,
  createdByApiKeyId: Schema.NullOr(ApiKeyId),
  expiresAt: DateColumn
})

const makeInvitationsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /** The invitation as the API shows it at `at` (which decides what reads as expired). */
  const select = (at: Date) =>
    sql`SELECT id, organization_id, email, role,
                 CASE WHEN status = 'pending' AND expires_at <= ${at} THEN 'expired' ELSE status END AS status, delivery,
                 created_by_membership_id AS created_by_org_membership_id,
                 accepted_by_membership_id AS accepted_by_org_membership_id,
                 created_at, expires_at
          FROM invitations`

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

  const listRows = findAll({
    Request: Schema.Struct({
      organizationId: OrganizationId,
      query: Schema.toType(InvitationListQuery),
      at: DateColumn,
      page: Keyset.PageRequest
    }),
    Result: InvitationListResult,
    execute: ({ at, organizationId, page, query }) =>
      sql`${select(at)} WHERE ${
          sql.and([
            sql`organization_id = ${organizationId}`,
            query.status ? statusCondition(query.status, at) : sql`true`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  const list = (organizationId: OrganizationId, query: InvitationListQuery, at: Date) =>
    Keyset.page(newestFirst, query, (page) => listRows({ organizationId, query, at, page }))

  /** The invitation, locked for the rest of the transaction. */
  const lock = findOne({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    Result: InvitationResult,
    execute: ({ at, id, organizationId }) =>
      sql`${select(at)} WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`
  })

  /** The email's pending invitation in the organization (expired or not), locked. */
  const lockPendingFor = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, email: Schema.String, at: DateColumn }),
    Result: InvitationResult,
    execute: ({ at, email, organizationId }) =>
      sql`${select(at)} WHERE organization_id = ${organizationId} AND lower(email) = lower(${email}) AND status = 'pending'
            FOR UPDATE`
  })

  /** Which organization the invitation with this token hash belongs to, whatever its state: tokens are global. */
  const organizationOf = (tokenHash: string) =>
    sql<{ organizationId: OrganizationId }>`SELECT organization_id FROM invitations WHERE token_hash = ${tokenHash}`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0]?.organizationId))
    )

  /** The organization's unexpired pending invitation with this token hash, locked; none once the organization is deleted. */
  const lockRedeemable = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, tokenHash: Schema.String, at: DateColumn }),
    Result: InvitationResult,
    execute: ({ at, organizationId, tokenHash }) =>
      sql`${select(at)} WHERE organization_id = ${organizationId} AND token_hash = ${tokenHash}
            AND status = 'pending' AND expires_at > ${at}
            AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = ${organizationId} AND o.deleted_at IS NOT NULL)
            FOR UPDATE`
  })

  const insertRow = execute({ Request: InvitationRow.insert, execute: (row) => sql`INSERT INTO invitations ${sql.insert(row)}` })
  const insert = (row: Omit<typeof InvitationRow.insert.Type, "status" | "acceptedByMembershipId" | "updatedAt">) =>
    insertRow({ ...row, status: "pending", acceptedByMembershipId: null, updatedAt: row.createdAt })

  /** A new token, role, delivery and expiry for a pending invitation; whoever refreshed it (and with which key) becomes its inviter. */
  const refresh = execute({
    Request: Schema.Struct({ ...Scoped.fields, changes: Changes, at: DateColumn }),
    execute: ({ at, changes, id, organizationId }) =>
      sql`UPDATE invitations SET ${sql.update({ ...changes, updatedAt: at })}
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  const cancel = execute({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    execute: ({ at, id, organizationId }) =>
      sql`UPDATE invitations SET status = 'canceled', updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  const markAccepted = execute({
    Request: Schema.Struct({ ...Scoped.fields, membershipId: MembershipId, at: DateColumn }),
    execute: ({ at, id, membershipId, organizationId }) =>
      sql`UPDATE invitations SET status = 'accepted', accepted_by_membership_id = ${membershipId}, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  /** One of the organization's invitations, in whatever status. */
  const find = findOne({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    Result: InvitationResult,
    execute: ({ at, id, organizationId }) => sql`${select(at)} WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  /**
   * What the unexpired pending invitation with this token hash shows before it is accepted (tokens are global:
   * the row names its organization): the organization's name, the role, the inviter's name, the expiry. None once the
   * organization is deleted, as `lockRedeemable` reads it: what cannot be accepted shows nothing.
   */
  const preview = findOne({
    Request: Schema.Struct({ tokenHash: Schema.String, at: DateColumn }),
    Result: Schema.Struct({ organizationName: Schema.String, role: InvitableRole, inviterName: Schema.NullOr(Schema.String), expiresAt: DateColumn }),
    execute: ({ at, tokenHash }) =>
      sql`SELECT o.name AS organization_name, i.role, u.name AS inviter_name, i.expires_at
            FROM invitations i
            JOIN organizations o ON o.id = i.organization_id
            JOIN memberships m ON m.organization_id = i.organization_id AND m.id = i.created_by_membership_id
            LEFT JOIN users u ON u.id = m.user_id
            WHERE i.token_hash = ${tokenHash} AND i.status = 'pending' AND i.expires_at > ${at} AND o.deleted_at IS NULL`
  })

  /** The organization's invitations still pending at `at` (expired ones no longer count against the quota). */
  const countPending = (input: { readonly organizationId: OrganizationId; readonly at: Date }) =>
    sql<{ count: number }>`SELECT count(*)::int AS count FROM invitations
          WHERE organization_id = ${input.organizationId} AND ${statusCondition("pending", input.at)}`.pipe(
      Effect.map((rows) => rows[0]?.count ?? 0)
    )

  return { list, find, preview, lock, lockPendingFor, countPending, organizationOf, lockRedeemable, insert, refresh, cancel, markAccepted } as const
})

export class InvitationsRepository extends Context.Service<InvitationsRepository>()("@orgplane/server/invitations/InvitationsRepository", {
  make: makeInvitationsRepository
}) {
  static readonly layer = Layer.effect(this, this.make)
}
