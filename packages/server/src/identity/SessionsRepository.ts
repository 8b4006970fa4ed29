/** Storage of sessions (not tenant-scoped: a session belongs to a person): only the token's hash is kept. */
import { Model, SqlClient } from "@effect/sql"
import { OrganizationId, SessionId, SsoConnectionId, UserId } from "@orgplane/schema"
import { Effect, Schema } from "effect"
import { DateColumn, execute, findOne, trusted } from "../platform/Statements.js"
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
  authenticatedOrganizationId: Schema.NullOr(OrganizationId)
}) {}

const ResolvedSession = Schema.Struct({ sessionId: SessionId, ...CallerColumns.fields, ...SessionAssurance.fields })

export class SessionsRepository extends Effect.Service<SessionsRepository>()("@orgplane/server/identity/SessionsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertRow = execute({ Request: SessionRow.insert, execute: (row) => sql`INSERT INTO sessions ${sql.insert(row)}` })
    const insert = (
      row: Omit<typeof SessionRow.insert.Type, "revokedAt" | "ssoConnectionId" | "authenticatedOrganizationId"> & {
        readonly sso?: { readonly connectionId: SsoConnectionId; readonly organizationId: OrganizationId } | undefined
      }
    ) => {
      const { sso, ...columns } = row
      return insertRow({
        ...columns,
        revokedAt: null,
        ssoConnectionId: sso?.connectionId ?? null,
        authenticatedOrganizationId: sso?.organizationId ?? null
      })
    }

    /**
     * Authentication in one statement: the live session with this token hash, its person, and the membership the
     * request acts in with its organization: the session's active organization while the person belongs to it,
     * else their oldest membership (a suspended membership counts as none); and what SSO enforcement reads of the session and that organization's policy.
     */
    const resolve = findOne({
      Request: Schema.Struct({ tokenHash: Schema.String, at: DateColumn }),
      // Read on every authenticated request: taken as the statement's columns type it, without checking each id and
      // date again (`trusted`, as for long lists); `ResolvedSession` says what they are.
      Result: trusted<typeof ResolvedSession.Type>(),
      execute: ({ at, tokenHash }) =>
        sql`SELECT s.id AS session_id, ${callerColumns(sql)}, ${assuranceColumns(sql, sql`m.organization_id`)}
            FROM sessions s
            JOIN users u ON u.id = s.user_id
            LEFT JOIN LATERAL (
              SELECT * FROM memberships
              WHERE user_id = s.user_id AND removed_at IS NULL AND suspended_at IS NULL
              ORDER BY (organization_id IS NOT DISTINCT FROM s.active_organization_id) DESC, id
              LIMIT 1
            ) m ON true
            LEFT JOIN organizations o ON o.id = m.organization_id
            LEFT JOIN sso_policies p ON p.organization_id = m.organization_id
            WHERE s.token_hash = ${tokenHash} AND s.revoked_at IS NULL AND s.expires_at > ${at}`
    })

    const revoke = execute({
      Request: Schema.Struct({ id: SessionId, at: DateColumn }),
      execute: ({ at, id }) => sql`UPDATE sessions SET revoked_at = ${at} WHERE id = ${id} AND revoked_at IS NULL`
    })

    const setActiveOrganization = execute({
      Request: Schema.Struct({ id: SessionId, organizationId: OrganizationId }),
      execute: ({ id, organizationId }) => sql`UPDATE sessions SET active_organization_id = ${organizationId} WHERE id = ${id}`
    })

    /** Revokes every live session of the user except `keep`. */
    const revokeOthers = execute({
      Request: Schema.Struct({ userId: UserId, keep: SessionId, at: DateColumn }),
      execute: ({ at, keep, userId }) =>
        sql`UPDATE sessions SET revoked_at = ${at} WHERE user_id = ${userId} AND id <> ${keep} AND revoked_at IS NULL`
    })

    /** Signs the person out everywhere. */
    const revokeAll = (input: { readonly userId: UserId; readonly at: Date }) =>
      sql`UPDATE sessions SET revoked_at = ${input.at} WHERE user_id = ${input.userId} AND revoked_at IS NULL`.pipe(Effect.asVoid)

    return { insert, resolve, revoke, revokeOthers, revokeAll, setActiveOrganization } as const
  })
}) {}
