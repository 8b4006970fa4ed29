/**
 * Storage of sessions (not tenant-scoped: a session belongs to a person): only the token's hash is kept.
 */
import { MySession, OrganizationId, SessionId, SsoConnectionId, UserId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { DateColumn, execute, findAll, findOne, trusted } from "../platform/Statements.js"
import { CallerColumns, callerColumns } from "./MembershipsRepository.js"
import { assuranceColumns, SessionAssurance } from "./SsoEnforcement.js"

export class SessionRow extends Model.Class<SessionRow>("SessionRow")({
  id: Model.GeneratedByApp(SessionId),
  userId: UserId,
  tokenHash: Model.Sensitive(Schema.String),
  activeOrganizationId: Schema.NullOr(OrganizationId),
  createdAt: DateColumn,
  expiresAt: DateColumn,
  revokedAt: Schema.NullOr(DateColumn),
  /** The SSO connection that authenticated the session, and its organization; null for password sign-in. */
  ssoConnectionId: Schema.NullOr(SsoConnectionId),
  authenticatedOrganizationId: Schema.NullOr(OrganizationId),
  /** The last request it authenticated, to the minute; null until the first after sign-in. */
  lastUsedAt: Schema.NullOr(DateColumn),
  /** The client address and `User-Agent` it signed in with. */
  ipAddress: Schema.NullOr(Schema.String),
  userAgent: Schema.NullOr(Schema.String)
}) {}

const ResolvedSession = Schema.Struct({
  sessionId: SessionId,
  sessionCreatedAt: DateColumn,
  sessionLastUsedAt: Schema.NullOr(DateColumn),
  ...CallerColumns.fields,
  ...SessionAssurance.fields
})

/** A person's sessions, newest first. */
const newestFirst = Keyset.make<MySession>("my-sessions", "desc", [{ column: "id", value: (session) => session.id }])

/** Whether a session is live at `at`: not ended, not expired, used within the idle timeout (`idleSince`). */
const live = (sql: SqlClient.SqlClient, at: Date, idleSince: Date) =>
  sql`s.revoked_at IS NULL AND s.expires_at > ${at} AND COALESCE(s.last_used_at, s.created_at) > ${idleSince}`

const makeSessionsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const insertRow = execute({ Request: SessionRow.insert, execute: (row) => sql`INSERT INTO sessions ${sql.insert(row)}` })
  const insert = (
    row: Omit<typeof SessionRow.insert.Type, "revokedAt" | "ssoConnectionId" | "authenticatedOrganizationId" | "lastUsedAt"> & {
      readonly sso?: { readonly connectionId: SsoConnectionId; readonly organizationId: OrganizationId } | undefined
    }
  ) => {
    const { sso, ...columns } = row
    return insertRow({
      ...columns,
      revokedAt: null,
      lastUsedAt: null,
      ssoConnectionId: sso?.connectionId ?? null,
      authenticatedOrganizationId: sso?.organizationId ?? null
    })
  }

  // The caller's and SSO's columns, read on every authenticated request, built once (they name no value).
  const resolvedColumns = sql`${callerColumns(sql)}, ${assuranceColumns(sql, sql`m.organization_id`)}`

  /**
   * Authentication in one statement: the live session with this token hash, its person, and the membership the
   * request acts in with its organization: the session's active organization while the person belongs to it,
   * else their oldest membership (a suspended membership, or one of a deleted organization, counts as none); and what
   * SSO enforcement reads of the session and that organization's policy. A disabled (or deleted) account's session is
   * none: disabling ends its sessions too, this keeps one that raced it out.
   */
  const resolve = findOne({
    Request: Schema.Struct({ tokenHash: Schema.String, at: DateColumn, idleSince: DateColumn }),
    // Read on every authenticated request: taken as the statement's columns type it, without checking each id and
    // date again (`trusted`, as for long lists); `ResolvedSession` says what they are.
    Result: trusted<typeof ResolvedSession.Type>(),
    execute: ({ at, idleSince, tokenHash }) =>
      sql`SELECT s.id AS session_id, s.created_at AS session_created_at, s.last_used_at AS session_last_used_at,
              ${resolvedColumns}
            FROM sessions s
            JOIN users u ON u.id = s.user_id AND u.disabled_at IS NULL AND u.deleted_at IS NULL
            LEFT JOIN LATERAL (
              SELECT mm.* FROM memberships mm JOIN organizations mo ON mo.id = mm.organization_id AND mo.deleted_at IS NULL
              WHERE mm.user_id = s.user_id AND mm.removed_at IS NULL AND mm.suspended_at IS NULL
              ORDER BY (mm.organization_id IS NOT DISTINCT FROM s.active_organization_id) DESC, mm.id
              LIMIT 1
            ) m ON true
            LEFT JOIN organizations o ON o.id = m.organization_id
            LEFT JOIN sso_policies p ON p.organization_id = m.organization_id
            WHERE s.token_hash = ${tokenHash} AND ${live(sql, at, idleSince)}`
  })

  /**
   * What became of a token `resolve` found no live session for (the 401's reason): none with its hash, or the
   * session's end (revoked, or expired at `at` by its lifetime or idle timeout).
   */
  const fate = findOne({
    Request: Schema.Struct({ tokenHash: Schema.String, at: DateColumn, idleSince: DateColumn }),
    Result: Schema.Struct({ revoked: Schema.Boolean, expired: Schema.Boolean }),
    execute: ({ at, idleSince, tokenHash }) =>
      sql`SELECT s.revoked_at IS NOT NULL AS revoked,
                 (s.expires_at <= ${at} OR COALESCE(s.last_used_at, s.created_at) <= ${idleSince}) AS expired
            FROM sessions s WHERE s.token_hash = ${tokenHash}`
  })

  /** Records a session's use (at most once a minute: identity/Authentication.ts). */
  const touch = execute({
    Request: Schema.Struct({ id: SessionId, at: DateColumn }),
    execute: ({ at, id }) => sql`UPDATE sessions SET last_used_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`
  })

  const listRows = findAll({
    Request: Schema.Struct({ userId: UserId, at: DateColumn, idleSince: DateColumn, page: Keyset.PageRequest }),
    Result: SessionRow,
    execute: ({ at, idleSince, page, userId }) =>
      sql`SELECT s.* FROM sessions s WHERE s.user_id = ${userId} AND ${live(sql, at, idleSince)} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  /** A session as its person sees it; `current` is the one asking. */
  const toMySession = (row: SessionRow, current: SessionId) =>
    new MySession({
      id: row.id,
      method: row.ssoConnectionId === null ? "password" : "sso",
      ssoConnectionId: row.ssoConnectionId,
      current: row.id === current,
      createdAt: row.createdAt,
      lastUsedAt: row.lastUsedAt ?? row.createdAt,
      expiresAt: row.expiresAt,
      ipAddress: row.ipAddress,
      userAgent: row.userAgent
    }, { disableChecks: true })

  /** The person's live sessions, newest first; `current` marks the one asking. */
  const listLive = (
    input: { readonly userId: UserId; readonly current: SessionId; readonly at: Date; readonly idleSince: Date },
    query: Keyset.PageQuery
  ) =>
    Keyset.page(newestFirst, query, (page) =>
      Effect.map(listRows({ ...input, page }), (rows) => rows.map((row) => toMySession(row, input.current))))

  const allLiveRows = findAll({
    Request: Schema.Struct({ userId: UserId, at: DateColumn, idleSince: DateColumn }),
    Result: SessionRow,
    execute: ({ at, idleSince, userId }) =>
      sql`SELECT s.* FROM sessions s WHERE s.user_id = ${userId} AND ${live(sql, at, idleSince)} ORDER BY s.id DESC`
  })

  /** Every live session of the person, newest first, as `listLive` shows them (the account's export). */
  const allLive = (input: { readonly userId: UserId; readonly current: SessionId; readonly at: Date; readonly idleSince: Date }) =>
    Effect.map(allLiveRows(input), (rows) => rows.map((row) => toMySession(row, input.current)))

  /** Ends one of the person's live sessions: whether it was one. */
  const revokeLive = (input: { readonly userId: UserId; readonly id: SessionId; readonly at: Date; readonly idleSince: Date }) =>
    sql<{ id: SessionId }>`UPDATE sessions s SET revoked_at = ${input.at}
          WHERE s.id = ${input.id} AND s.user_id = ${input.userId} AND ${live(sql, input.at, input.idleSince)}
          RETURNING s.id`.pipe(Effect.map((rows) => rows.length > 0))

  const revoke = execute({
    Request: Schema.Struct({ id: SessionId, at: DateColumn }),
    execute: ({ at, id }) => sql`UPDATE sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`
  })

  const setActiveOrganization = execute({
    Request: Schema.Struct({ id: SessionId, organizationId: OrganizationId }),
    execute: ({ id, organizationId }) => sql`UPDATE sessions SET active_organization_id = ${organizationId} WHERE id = ${id}`
  })

  /** Revokes every live session of the user except `keep`: how many it ended (expired ones are not counted). */
  const revokeOthers = (input: { readonly userId: UserId; readonly keep: SessionId; readonly at: Date }) =>
    sql<{ live: boolean }>`UPDATE sessions SET revoked_at = ${input.at}
          WHERE user_id = ${input.userId} AND id <> ${input.keep} AND revoked_at IS NULL
          RETURNING expires_at > ${input.at} AS live`.pipe(Effect.map((rows) => rows.filter((row) => row.live).length))

  /** Signs the person out everywhere: how many live sessions it ended (expired ones are not counted). */
  const revokeAll = (input: { readonly userId: UserId; readonly at: Date }) =>
    sql<{ live: boolean }>`UPDATE sessions SET revoked_at = ${input.at} WHERE user_id = ${input.userId} AND revoked_at IS NULL
          RETURNING expires_at > ${input.at} AS live`.pipe(Effect.map((rows) => rows.filter((row) => row.live).length))

  /**
   * Ends every live session of the person that a password made (not an SSO sign-in): the password they were made with
   * stopped working. How many live ones it ended.
   */
  const revokePasswordSessions = (input: { readonly userId: UserId; readonly at: Date }) =>
    sql<{ live: boolean }>`UPDATE sessions SET revoked_at = ${input.at}
          WHERE user_id = ${input.userId} AND sso_connection_id IS NULL AND revoked_at IS NULL
          RETURNING expires_at > ${input.at} AS live`.pipe(Effect.map((rows) => rows.filter((row) => row.live).length))

  /** No session acts in the organization any more (deleted): each falls back to another of its person's organizations. */
  const leaveOrganization = (organizationId: OrganizationId) =>
    sql`UPDATE sessions SET active_organization_id = NULL WHERE active_organization_id = ${organizationId}`.pipe(Effect.asVoid)

  /**
   * What the sessions keep of a purged organization goes with it: none acts in it, and the sessions its SSO signed
   * in are deleted (the connection that vouched for them is gone). How many were deleted.
   */
  const forgetOrganization = (organizationId: OrganizationId) =>
    Effect.andThen(
      leaveOrganization(organizationId),
      sql<{ count: number }>`WITH gone AS (DELETE FROM sessions WHERE authenticated_organization_id = ${organizationId} RETURNING 1)
                               SELECT count(*)::int AS count FROM gone`.pipe(Effect.map((rows) => rows[0]?.count ?? 0))
    )

  return {
    insert,
    resolve,
    fate,
    touch,
    listLive,
    allLive,
    revokeLive,
    revoke,
    revokeOthers,
    revokeAll,
    revokePasswordSessions,
    setActiveOrganization,
    leaveOrganization,
    forgetOrganization
  } as const
})

export class SessionsRepository extends Context.Service<SessionsRepository>()("@orgplane/server/identity/SessionsRepository", { make: makeSessionsRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}
