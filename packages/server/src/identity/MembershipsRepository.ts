/**
 * Storage of memberships: who belongs to which organization, with which role. The table's one repository (its row,
 * every write, the reads); other areas reach it through the `Memberships` service. A membership is written as a
 * `MembershipRow` and read as the API's `Member` (the row with its person's name and email); `toMembership`
 * narrows a member to the `Membership` the identity endpoints answer.
 */
import {
  type Credential,
  Member,
  MemberListQuery,
  Membership,
  MembershipId,
  OrganizationId,
  type MyOrganization,
  OrganizationWithMembership,
  Role,
  User,
  UserId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, execute, findAll, findOne, likePattern, trustedClassRow } from "../platform/Statements.js"
import { OrganizationRow, ownersMayRestoreSql, toOrganization } from "./OrganizationsRepository.js"

export class MembershipRow extends Model.Class<MembershipRow>("MembershipRow")({
  id: Model.GeneratedByApp(MembershipId),
  organizationId: OrganizationId,
  userId: Membership.fields.userId,
  role: Role,
  createdAt: DateColumn,
  updatedAt: DateColumn,
  removedAt: Schema.NullOr(DateColumn),
  /** The directory (SCIM) deactivated the member: kept, not admitted; also set when the directory removed them. */
  suspendedAt: Schema.NullOr(DateColumn)
}) {}

/** The API's membership from a member or a row (decoded, so valid: the class does not check it again). */
/** A membership from its row, or from a member as the directory reads it whole (a member's view has no `userId`). */
export const toMembership = (
  row: Pick<MembershipRow, "id" | "organizationId" | "role" | "createdAt"> & { readonly userId?: MembershipRow["userId"] }
) => new Membership({ id: row.id, organizationId: row.organizationId, userId: row.userId ?? null, role: row.role, createdAt: row.createdAt }, { disableChecks: true })

/** An organization's members, oldest first. */
const oldestFirst = Keyset.make<Member>("members", "asc", [{ column: "m.id", value: (member) => member.id }])

/** A user's organizations, oldest membership first. */
const myOrganizations = Keyset.make<typeof OrganizationWithMembership.Type>("my-organizations", "asc", [
  { column: "m.id", value: (entry) => entry.membership.id }
])

/** The deleted organizations a user may restore, oldest membership first. */
const myRestorableOrganizations = Keyset.make<MyOrganization>("my-organizations", "asc", [
  { column: "m.id", value: (entry) => entry.membership.id }
])

const MemberRow = classRow(Member)
/** Lists skip validating each row: see `trustedClassRow`. */
const MemberListRow = trustedClassRow(Member)

/** A membership row with its organization's columns, prefixed. */
const MyOrganizationRow = Schema.Struct({
  ...MembershipRow.fields,
  organizationName: OrganizationRow.fields.name,
  organizationPlan: OrganizationRow.fields.plan,
  organizationProvisional: OrganizationRow.fields.provisional,
  organizationCreatedAt: DateColumn
})

/** The organization of a row that carries its columns prefixed with `organization_`. */
const organizationOf = (row: {
  readonly organizationId: OrganizationId
  readonly organizationName: string
  readonly organizationPlan: OrganizationRow["plan"]
  readonly organizationProvisional: boolean
  readonly organizationCreatedAt: Date
}) =>
  toOrganization({
    id: row.organizationId,
    name: row.organizationName,
    plan: row.organizationPlan,
    provisional: row.organizationProvisional,
    createdAt: row.organizationCreatedAt
  })

/**
 * The membership and organization a request acts in, as authentication resolves them in its one statement:
 * `callerColumns` over the person `u`, a membership `m` and its organization `o`, the latter two LEFT JOINed (null
 * for a person without one).
 */
export const CallerColumns = Schema.Struct({
  userId: UserId,
  userEmail: User.fields.email,
  userName: User.fields.name,
  userCreatedAt: DateColumn,
  membershipId: Schema.NullOr(MembershipId),
  organizationId: Schema.NullOr(OrganizationId),
  role: Schema.NullOr(Role),
  membershipCreatedAt: Schema.NullOr(DateColumn),
  organizationName: Schema.NullOr(OrganizationRow.fields.name),
  organizationPlan: Schema.NullOr(OrganizationRow.fields.plan),
  organizationProvisional: Schema.NullOr(OrganizationRow.fields.provisional),
  organizationCreatedAt: Schema.NullOr(DateColumn)
})

export const callerColumns = (sql: SqlClient.SqlClient) =>
  sql`u.id AS user_id, u.email AS user_email, u.name AS user_name, u.created_at AS user_created_at,
      m.id AS membership_id, m.organization_id, m.role, m.created_at AS membership_created_at,
      o.name AS organization_name, o.plan AS organization_plan, o.provisional AS organization_provisional,
      o.created_at AS organization_created_at`

/** The caller, and their organization and membership (or nulls), from `CallerColumns`. */
export const toCaller = (row: typeof CallerColumns.Type) => ({
  user: new User({ id: row.userId, email: row.userEmail, name: row.userName, createdAt: row.userCreatedAt }, { disableChecks: true }),
  ...toMembershipOf(row)
})

type CallerRow = typeof CallerColumns.Type

/** Whether the caller's row found a membership (the LEFT JOINed columns are all there). */
const hasMembership = (row: CallerRow): row is { readonly [K in keyof CallerRow]: NonNullable<CallerRow[K]> } =>
  row.membershipId !== null && row.organizationId !== null && row.role !== null && row.membershipCreatedAt !== null &&
  row.organizationName !== null && row.organizationPlan !== null && row.organizationProvisional !== null &&
  row.organizationCreatedAt !== null

const toMembershipOf = (row: CallerRow) =>
  hasMembership(row)
    ? {
      organization: organizationOf(row),
      membership: toMembership({
        id: row.membershipId,
        organizationId: row.organizationId,
        userId: row.userId,
        role: row.role,
        createdAt: row.membershipCreatedAt
      })
    }
    : { organization: null, membership: null }

/** Whose active membership to find: by its id, its person, or its person's email (case-insensitive). */
export type Who = { readonly id: MembershipId } | { readonly userId: UserId } | { readonly email: string }

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: MembershipId })
const ScopedWho = Schema.Struct({
  organizationId: OrganizationId,
  who: Schema.Union([
    Schema.Struct({ id: MembershipId }),
    Schema.Struct({ userId: UserId }),
    Schema.Struct({ email: Schema.String })
  ])
})

/** What a change of one member by another decides on: both as they are now, and how many owners there are. */
export interface ChangeState {
  /** The member making the change; none when they have left. */
  readonly caller: Option.Option<Member>
  /** The member changed; none when there is no such active member. */
  readonly target: Option.Option<Member>
  /** The organization's active owners. */
  readonly owners: number
}

const makeMembershipsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  /** A member's columns: the membership `m` with its person `u`. */
  const member = sql`m.id, m.organization_id, m.user_id, u.name, u.email, m.role, m.created_at, m.removed_at, m.suspended_at`
  const members = sql`memberships m LEFT JOIN users u ON u.id = m.user_id`
  const select = sql`SELECT ${member} FROM ${members}`

  const insertRow = execute({ Request: MembershipRow.insert, execute: (row) => sql`INSERT INTO memberships ${sql.insert(row)}` })
  const insert = (row: Omit<typeof MembershipRow.insert.Type, "updatedAt" | "removedAt" | "suspendedAt">) =>
    Effect.as(insertRow({ ...row, updatedAt: row.createdAt, removedAt: null, suspendedAt: null }), toMembership(row))

  /** The member with this id in the organization, removed or not. */
  const find = findOne({
    Request: Scoped,
    Result: MemberRow,
    execute: ({ id, organizationId }) => sql`${select} WHERE m.organization_id = ${organizationId} AND m.id = ${id}`
  })

  const findActiveRow = findOne({
    Request: ScopedWho,
    Result: MemberRow,
    execute: ({ organizationId, who }) =>
      sql`${select} WHERE m.organization_id = ${organizationId} AND ${
          "id" in who ? sql`m.id = ${who.id}` : "userId" in who ? sql`m.user_id = ${who.userId}` : sql`lower(u.email) = lower(${who.email})`
        } AND m.removed_at IS NULL`
  })
  /** The active member with this id, person or email in the organization. */
  const findActive = (organizationId: OrganizationId, who: Who) => findActiveRow({ organizationId, who })

  const forChangeRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, callerId: MembershipId, targetId: MembershipId }),
    Result: Schema.Struct({ member: MemberRow, owners: Schema.Int }),
    execute: ({ callerId, organizationId, targetId }) =>
      Effect.map(
        sql<{ readonly owners: unknown }>`
            SELECT ${member},
                   (SELECT count(*)::int FROM memberships o
                    WHERE o.organization_id = ${organizationId} AND o.role = 'owner' AND o.removed_at IS NULL) AS owners
            FROM ${members}
            WHERE m.organization_id = ${organizationId} AND m.id IN (${callerId}, ${targetId}) AND m.removed_at IS NULL`,
        (rows) => rows.map((row) => ({ member: row, owners: row.owners }))
      )
  })
  /**
   * In one statement, what a change of `targetId` by `callerId` decides on (see `ChangeState`). Run it under the
   * membership lock, after the statement that took it.
   */
  const findForChange = (organizationId: OrganizationId, ids: { readonly callerId: MembershipId; readonly targetId: MembershipId }) =>
    Effect.map(forChangeRows({ organizationId, ...ids }), (rows): ChangeState => ({
      caller: Option.fromNullishOr(rows.find((row) => row.member.id === ids.callerId)?.member),
      target: Option.fromNullishOr(rows.find((row) => row.member.id === ids.targetId)?.member),
      owners: rows[0]?.owners ?? 0
    }))

  const roleNow = (organizationId: OrganizationId, membershipId: MembershipId) =>
    sql`(SELECT m.role FROM memberships m
           WHERE m.organization_id = ${organizationId} AND m.id = ${membershipId} AND m.removed_at IS NULL AND m.suspended_at IS NULL
           FOR SHARE) AS role`
  const credentialNow = (organizationId: OrganizationId, membershipId: MembershipId, credential: Credential, at: Date) =>
    credential._tag === "ApiKey"
      ? sql`EXISTS (SELECT 1 FROM api_keys k
                      WHERE k.organization_id = ${organizationId} AND k.id = ${credential.apiKeyId}
                        AND k.membership_id = ${membershipId} AND (k.expires_at IS NULL OR k.expires_at > ${at})
                      FOR KEY SHARE) AS credential`
      : sql`EXISTS (SELECT 1 FROM sessions s
                      WHERE s.id = ${credential.sessionId} AND s.revoked_at IS NULL AND s.expires_at > ${at}
                      FOR SHARE) AS credential`
  const personNow = (userId: UserId) =>
    sql`EXISTS (SELECT 1 FROM users u WHERE u.id = ${userId} AND u.disabled_at IS NULL AND u.deleted_at IS NULL FOR SHARE) AS person`
  /**
   * A member's standing for a write's check at commit (platform/Authority.ts): the membership's role while it is
   * neither removed nor suspended, and whether the request's API key or session still works (its person's account
   * neither disabled nor deleted), each row read with a lock that its change conflicts with (removal, suspension
   * and role changes update the membership, disabling or deleting the account its row, and a session's revocation
   * the session: FOR SHARE; a key's revocation deletes it: FOR KEY SHARE, which its `last_used_at` touches do not
   * wait for). Such a change waits for the checking transaction, or committed first and the check sees it. The
   * membership first, then the account, then the credential, as their changes take them (disabling updates the
   * account, then ends its sessions): no deadlock between them.
   */
  const standing = (request: {
    readonly organizationId: OrganizationId
    readonly membershipId: MembershipId
    readonly userId: UserId
    readonly credential: Credential
    readonly at: Date
  }) =>
    // Run by every write as it commits: three columns Postgres types (text, boolean), taken as they come.
    Effect.map(
      sql<{ readonly role: Role | null; readonly person: boolean; readonly credential: boolean }>`SELECT ${roleNow(request.organizationId, request.membershipId)},
          ${personNow(request.userId)},
          ${credentialNow(request.organizationId, request.membershipId, request.credential, request.at)}`,
      (rows) => {
        const row = rows[0]
        return row === undefined ? { role: null, credential: false } : { role: row.role, credential: row.person && row.credential }
      }
    )

  const listRows = findAll({
    Request: Schema.Struct({
      organizationId: OrganizationId,
      query: Schema.toType(MemberListQuery),
      searchEmails: Schema.Boolean,
      page: Keyset.PageRequest
    }),
    Result: MemberListRow,
    execute: ({ organizationId, page, query, searchEmails }) =>
      sql`${select} WHERE ${
          sql.and([
            sql`m.organization_id = ${organizationId}`,
            query.includeRemoved ? sql`true` : sql`m.removed_at IS NULL`,
            query.role ? sql`m.role = ${query.role}` : sql`true`,
            !query.q
              ? sql`true`
              : searchEmails
              ? sql`(u.name ILIKE ${likePattern(query.q)} OR u.email ILIKE ${likePattern(query.q)})`
              : sql`u.name ILIKE ${likePattern(query.q)}`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /**
   * The organization's members, oldest first; `q` matches emails too unless `searchEmails` is false (a caller who
   * may not see them must not find members by them either).
   */
  const list = (organizationId: OrganizationId, query: MemberListQuery, searchEmails = true) =>
    Keyset.page(oldestFirst, query, (page) => listRows({ organizationId, query, searchEmails, page }))

  /** Every member of the organization (removed ones not), oldest first, in one statement: what its document names. */
  const every = findAll({
    Request: OrganizationId,
    Result: MemberListRow,
    execute: (organizationId) => sql`${select} WHERE m.organization_id = ${organizationId} AND m.removed_at IS NULL ORDER BY m.id`
  })

  /**
   * Which of `ids` are not active members of the organization. The found rows stay share-locked until the
   * transaction ends, so a member being added to a team cannot be removed from the organization meanwhile.
   */
  const missingActive = (organizationId: OrganizationId, ids: ReadonlyArray<MembershipId>) =>
    ids.length === 0
      ? Effect.succeed([] as ReadonlyArray<MembershipId>)
      : sql<{ id: MembershipId }>`
            SELECT id FROM memberships
            WHERE organization_id = ${organizationId} AND removed_at IS NULL AND id IN ${sql.in(ids)}
            FOR SHARE`.pipe(
          Effect.map((rows) => {
            const found = new Set(rows.map((row) => row.id))
            return ids.filter((id) => !found.has(id))
          })
        )

  /** Whether the user was a member of the organization and has been removed (and is not a member again). */
  const wasRemoved = (organizationId: OrganizationId, userId: UserId) =>
    sql<{ removed: boolean }>`SELECT bool_and(removed_at IS NOT NULL) AS removed FROM memberships
                                WHERE organization_id = ${organizationId} AND user_id = ${userId}`.pipe(
      Effect.map((rows) => rows[0]?.removed === true)
    )

  /**
   * The organization of the user's oldest active (and not suspended) membership of an organization that is not
   * deleted: where a new session starts.
   */
  const oldestOrganizationOf = (userId: UserId) =>
    sql<{ organizationId: OrganizationId }>`SELECT m.organization_id FROM memberships m
                                              JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL
                                              WHERE m.user_id = ${userId} AND m.removed_at IS NULL AND m.suspended_at IS NULL
                                              ORDER BY m.id LIMIT 1`.pipe(
      Effect.map((rows) => Option.fromNullishOr(rows[0]?.organizationId))
    )

  /** The organizations the person is an active member of, deleted ones aside (at most 100, oldest membership first). */
  const activeOrganizationsOf = (userId: UserId) =>
    Effect.map(
      sql<{ organizationId: OrganizationId }>`SELECT m.organization_id FROM memberships m
                                                JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL
                                                WHERE m.user_id = ${userId} AND m.removed_at IS NULL AND m.suspended_at IS NULL
                                                ORDER BY m.id LIMIT 100`,
      (rows) => rows.map((row) => row.organizationId)
    )

  /**
   * Every organization that holds the person's account: their memberships not removed, suspended ones included,
   * with their roles (a password reset link decides by them: docs/security.md).
   */
  const holdersOf = (userId: UserId) =>
    sql<{ organizationId: OrganizationId; role: Role }>`SELECT organization_id, role FROM memberships
                                                          WHERE user_id = ${userId} AND removed_at IS NULL
                                                          ORDER BY id LIMIT 100`

  const listForUserRows = findAll({
    Request: Schema.Struct({ userId: UserId, page: Keyset.PageRequest }),
    Result: MyOrganizationRow,
    execute: ({ page, userId: id }) =>
      sql`SELECT m.*, o.name AS organization_name, o.plan AS organization_plan,
                   o.provisional AS organization_provisional, o.created_at AS organization_created_at
            FROM memberships m JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL
            WHERE m.user_id = ${id} AND m.removed_at IS NULL AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /** The user's organizations with their membership in each. */
  const listForUser = (userId: UserId, query: Keyset.PageQuery) =>
    Keyset.page(myOrganizations, query, (page) =>
      Effect.map(listForUserRows({ userId, page }), (rows) =>
        rows.map((row) => ({ organization: organizationOf(row), membership: toMembership(row) }))))

  const restorableRows = findAll({
    Request: Schema.Struct({ userId: UserId, at: DateColumn, page: Keyset.PageRequest }),
    Result: Schema.Struct({ ...MyOrganizationRow.fields, organizationDeletedAt: DateColumn, organizationPurgeAfter: DateColumn }),
    execute: ({ at, page, userId: id }) =>
      sql`SELECT m.*, o.name AS organization_name, o.plan AS organization_plan,
                   o.provisional AS organization_provisional, o.created_at AS organization_created_at,
                   o.deleted_at AS organization_deleted_at, o.purge_after AS organization_purge_after
            FROM memberships m JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NOT NULL AND o.purge_after > ${at}
                                    AND ${ownersMayRestoreSql(sql, "o")}
            WHERE m.user_id = ${id} AND m.removed_at IS NULL AND m.suspended_at IS NULL AND m.role = 'owner' AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /**
   * The deleted organizations the user is an active owner of whose grace runs past `at` and whose deletion their
   * owners may undo (`ownersMayRestore`): the ones they may restore.
   */
  const listRestorable = (userId: UserId, at: Date, query: Keyset.PageQuery) =>
    Keyset.page(myRestorableOrganizations, query, (page) =>
      Effect.map(restorableRows({ userId, at, page }), (rows) =>
        rows.map((row) => ({
          organization: organizationOf(row),
          membership: toMembership(row),
          deletedAt: row.organizationDeletedAt,
          purgeAfter: row.organizationPurgeAfter
        }))))

  const changeRole = execute({
    Request: Schema.Struct({ ...Scoped.fields, role: Role, updatedAt: DateColumn }),
    execute: ({ id, organizationId, role, updatedAt }) =>
      sql`UPDATE memberships SET role = ${role}, updated_at = ${updatedAt}
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  /** Marks the membership removed, takes it out of every team and deletes the API keys it created. */
  const remove = execute({
    Request: Schema.Struct({ ...Scoped.fields, removedAt: DateColumn }),
    execute: ({ id, organizationId, removedAt }) =>
      Effect.all([
        sql`UPDATE memberships SET removed_at = ${removedAt}, updated_at = ${removedAt}
              WHERE organization_id = ${organizationId} AND id = ${id}`,
        sql`DELETE FROM team_members WHERE organization_id = ${organizationId} AND membership_id = ${id}`,
        sql`DELETE FROM api_keys WHERE organization_id = ${organizationId} AND membership_id = ${id}`
      ], { discard: true })
  })

  /**
   * Suspends the active membership (the directory deactivated it): `suspended_at` set, the person's sessions acting
   * in the organization revoked (sessions are a person's, not the organization's: the statement names the
   * organization through `active_organization_id` and the membership), and the API keys the member created in the
   * organization deleted. False when there is no such active membership.
   */
  const suspend = Effect.fn("MembershipsRepository.suspend")(function*(input: typeof Scoped.Type & { readonly at: Date }) {
    const rows = yield* sql<{ userId: UserId | null }>`
          UPDATE memberships SET suspended_at = COALESCE(suspended_at, ${input.at}), updated_at = ${input.at}
          WHERE organization_id = ${input.organizationId} AND id = ${input.id} AND removed_at IS NULL
          RETURNING user_id`
    const userId = rows[0]?.userId
    if (rows.length === 0) return false
    if (userId !== null && userId !== undefined) {
      yield* sql`UPDATE sessions SET revoked_at = ${input.at}
                     WHERE user_id = ${userId} AND active_organization_id = ${input.organizationId} AND revoked_at IS NULL`
    }
    yield* sql`DELETE FROM api_keys WHERE organization_id = ${input.organizationId} AND membership_id = ${input.id}`
    return true
  })

  /** Lifts the suspension of the active membership; false when there is no such active membership. */
  const restore = (input: typeof Scoped.Type & { readonly at: Date }) =>
    sql`UPDATE memberships SET suspended_at = NULL, updated_at = ${input.at}
          WHERE organization_id = ${input.organizationId} AND id = ${input.id} AND removed_at IS NULL
          RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))

  /** Whether the person's latest membership of the organization (removed or not) is suspended. */
  const isDeprovisioned = (organizationId: OrganizationId, userId: UserId) =>
    sql<{ suspended: boolean }>`SELECT suspended_at IS NOT NULL AS suspended FROM memberships
                                  WHERE organization_id = ${organizationId} AND user_id = ${userId}
                                  ORDER BY created_at DESC, id DESC LIMIT 1`.pipe(
      Effect.map((rows) => rows[0]?.suspended === true)
    )

  /**
   * Records that the organization proved the member's email to itself (its creator; its directory's provisioning): an
   * SSO sign-in through the organization links to the account without taking it back.
   */
  const markEmailVerified = (input: { readonly organizationId: OrganizationId; readonly id: MembershipId; readonly at: Date }) =>
    sql`UPDATE memberships SET email_verified_at = ${input.at}
          WHERE organization_id = ${input.organizationId} AND id = ${input.id} AND email_verified_at IS NULL`.pipe(Effect.asVoid)

  /**
   * Whether the organization proved the person's email to itself, in a membership that lasts or one that ended (the
   * proof holds while the address is the one proven: a change of email, or of who owns the account, clears it).
   */
  const emailProven = (input: { readonly organizationId: OrganizationId; readonly userId: UserId }) =>
    sql`SELECT 1 FROM memberships WHERE organization_id = ${input.organizationId} AND user_id = ${input.userId}
          AND email_verified_at IS NOT NULL`.pipe(Effect.map((rows) => rows.length > 0))

  /** The organizations the person was ever a member of (removed memberships too), by id. */
  const organizationsEverOf = (userId: UserId) =>
    Effect.map(
      sql<{ organizationId: OrganizationId }>`SELECT DISTINCT organization_id FROM memberships WHERE user_id = ${userId}
                                                ORDER BY organization_id`,
      (rows) => rows.map((row) => row.organizationId)
    )

  /**
   * Every organization's proof of the person's email is gone: their address changed (`Accounts.changeEmail`), or who
   * owns the account was re-established (what an organization proved was of whoever held it before).
   */
  const clearEmailProofs = (userId: UserId) =>
    sql`UPDATE memberships SET email_verified_at = NULL
          WHERE (organization_id, id) IN (SELECT organization_id, id FROM memberships WHERE user_id = ${userId} AND email_verified_at IS NOT NULL)`.pipe(
      Effect.asVoid
    )

  /** Every membership of the person in the organization, removed ones too, oldest first. */
  const allOf = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, userId: UserId }),
    Result: MembershipRow,
    execute: ({ organizationId, userId }) =>
      sql`SELECT * FROM memberships WHERE organization_id = ${organizationId} AND user_id = ${userId} ORDER BY created_at, id`
  })

  /**
   * What deciding whether the person may leave the organization reads (under its membership lock): its active
   * owners, and its active members other than the person (placeholders of bootstrapped workspaces aside).
   */
  const headcount = (input: { readonly organizationId: OrganizationId; readonly userId: UserId }) =>
    sql<{ owners: number; others: number }>`SELECT
            count(*) FILTER (WHERE role = 'owner')::int AS owners,
            count(*) FILTER (WHERE user_id IS NOT NULL AND user_id <> ${input.userId})::int AS others
          FROM memberships WHERE organization_id = ${input.organizationId} AND removed_at IS NULL`.pipe(
      Effect.map((rows) => rows[0] ?? { owners: 0, others: 0 })
    )

  return {
    every,
    headcount,
    organizationsEverOf,
    clearEmailProofs,
    allOf,
    markEmailVerified,
    emailProven,
    suspend,
    restore,
    isDeprovisioned,
    insert,
    find,
    findActive,
    findForChange,
    list,
    missingActive,
    wasRemoved,
    oldestOrganizationOf,
    activeOrganizationsOf,
    listForUser,
    holdersOf,
    listRestorable,
    changeRole,
    remove,
    standing
  } as const
})

export class MembershipsRepository extends Context.Service<MembershipsRepository>()("@orgplane/server/identity/MembershipsRepository", { make: makeMembershipsRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}
