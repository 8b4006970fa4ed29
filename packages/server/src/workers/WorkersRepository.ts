/**
 * Storage of workers, the instances their runtimes report, and their tokens (only the tokens' hashes are kept).
 */
import {
  MembershipId,
  OrganizationId,
  UserId,
  Worker,
  WorkerId,
  WorkerInstance,
  WorkerInstanceId,
  type WorkerListQuery,
  WorkerTokenId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, execute, findAll, findOne, trustedClassRow } from "../platform/Statements.js"

export class WorkerRow extends Model.Class<WorkerRow>("WorkerRow")({
  id: Model.GeneratedByApp(WorkerId),
  organizationId: OrganizationId,
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdByUserId: Schema.NullOr(UserId),
  name: Worker.fields.name,
  description: Worker.fields.description,
  destination: Worker.fields.destination,
  status: Worker.fields.status,
  imageVersion: Worker.fields.imageVersion,
  workspacePath: Worker.fields.workspacePath,
  sandboxBackend: Worker.fields.sandboxBackend,
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

export class WorkerInstanceRow extends Model.Class<WorkerInstanceRow>("WorkerInstanceRow")({
  id: Model.GeneratedByApp(WorkerInstanceId),
  organizationId: OrganizationId,
  workerId: WorkerId,
  provider: WorkerInstance.fields.provider,
  region: WorkerInstance.fields.region,
  url: WorkerInstance.fields.url,
  status: WorkerInstance.fields.status,
  runtimeCredentialCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

export class WorkerTokenRow extends Model.Class<WorkerTokenRow>("WorkerTokenRow")({
  id: Model.GeneratedByApp(WorkerTokenId),
  organizationId: OrganizationId,
  workerId: WorkerId,
  tokenHash: Model.Sensitive(Schema.String),
  createdAt: DateColumn
}) {}

/** Oldest first. */
const byCreation = Keyset.make<Worker>("workers", "asc", [
  { column: "w.created_at", value: (worker) => worker.createdAt.toISOString(), compare: (value, sql) => sql`${value}::timestamptz` },
  { column: "w.id", value: (worker) => worker.id }
])

const Scoped = Schema.Struct({ organizationId: OrganizationId, id: WorkerId })
type Scoped = typeof Scoped.Type

/**
 * Who reads and when: `isMine` compares with the user; `connectivity` is `online` when last seen after
 * `staleBefore`, `offline` when never seen or at or before `offlineBefore` (an `online` status then reads as
 * `offline`), `stale` between (ActivityConfig.bounds).
 */
const Reader = { userId: Schema.String, staleBefore: DateColumn, offlineBefore: DateColumn }
export interface Reader {
  readonly userId: string
  readonly staleBefore: Date
  readonly offlineBefore: Date
}

/** The latest instance with its stored credential (encrypted), for the forwarding client only. */
export const RuntimeTarget = Schema.Struct({
  /** The instance's id: its credential is bound to it. */
  instanceId: Schema.String,
  url: Schema.NullOr(Schema.String),
  runtimeCredentialCiphertext: Schema.NullOr(Schema.String)
})

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const select = ({ offlineBefore, staleBefore, userId }: Reader) => {
    const offline = sql`(w.last_seen_at IS NULL OR w.last_seen_at <= ${offlineBefore})`
    return sql`
        SELECT w.id, w.organization_id AS org_id, w.created_by_user_id,
               (w.created_by_user_id IS NOT NULL AND w.created_by_user_id = ${userId}) AS is_mine,
               w.name, w.description, w.destination,
               CASE WHEN w.status = 'online' AND ${offline} THEN 'offline' ELSE w.status END AS status,
               w.image_version, w.workspace_path, w.sandbox_backend, w.last_heartbeat_at, w.last_active_at,
               w.created_at, w.updated_at,
               CASE WHEN ${offline} THEN 'offline' WHEN w.last_seen_at <= ${staleBefore} THEN 'stale' ELSE 'online' END AS connectivity,
               w.last_seen_at, w.open_sessions
        FROM workers w`
  }

  const find = findOne({
    Request: Schema.Struct({ ...Scoped.fields, ...Reader }),
    Result: classRow(Worker),
    execute: ({ id, organizationId, ...reader }) =>
      sql`${select(reader)} WHERE w.organization_id = ${organizationId} AND w.id = ${id} AND w.deleted_at IS NULL`
  })

  const listRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, ...Reader, mine: Schema.Boolean, page: Keyset.PageRequest }),
    Result: trustedClassRow(Worker),
    execute: ({ mine, organizationId, page, ...reader }) =>
      sql`${select(reader)} WHERE ${
          sql.and([
            sql`w.organization_id = ${organizationId}`,
            sql`w.deleted_at IS NULL`,
            mine ? sql`w.created_by_user_id = ${reader.userId}` : sql`true`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })

  const list = Effect.fn("WorkersRepository.list")((organizationId: OrganizationId, reader: Reader, query: WorkerListQuery) =>
    Keyset.page(byCreation, query, (page) => listRows({ organizationId, ...reader, mine: query.mine === "true", page })))

  /** Locks a worker that is not deleted; its creator (user), or undefined when there is no such worker. */
  const lock = Effect.fn("WorkersRepository.lock")(function*({ id, organizationId }: Scoped) {
    const rows = yield* sql<{ createdByUserId: string | null }>`
        SELECT created_by_user_id FROM workers
        WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL FOR UPDATE`
    return rows[0]
  })

  const insert = execute({ Request: WorkerRow.insert, execute: (row) => sql`INSERT INTO workers ${sql.insert(row)}` })

  const update = execute({
    Request: Schema.Struct({
      ...Scoped.fields,
      at: DateColumn,
      name: Schema.optional(Schema.String),
      description: Schema.optional(Schema.NullOr(Schema.String)),
      workspacePath: Schema.optional(Schema.NullOr(Schema.String)),
      sandboxBackend: Schema.optional(Schema.NullOr(Schema.String))
    }),
    execute: ({ at, id, organizationId, ...changes }) => {
      const columns: Record<string, unknown> = { updatedAt: at }
      for (const [key, value] of Object.entries(changes)) if (value !== undefined) columns[key] = value
      return sql`UPDATE workers SET ${sql.update(columns)} WHERE organization_id = ${organizationId} AND id = ${id}`
    }
  })

  const softDelete = execute({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    execute: ({ at, id, organizationId }) =>
      sql`UPDATE workers SET deleted_at = ${at}, updated_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  /** The creator of a worker that is not deleted (none: no such worker). */
  const creatorOf = findOne({
    Request: Scoped,
    Result: Schema.Struct({ createdByUserId: Schema.NullOr(UserId) }),
    execute: ({ id, organizationId }) =>
      sql`SELECT created_by_user_id FROM workers WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL`
  })

  /** Locks a worker that is not deleted for a heartbeat: its recorded state, or undefined when there is none. */
  const lockForHeartbeat = Effect.fn("WorkersRepository.lockForHeartbeat")(function*({ id, organizationId }: Scoped) {
    const rows = yield* sql<{ activityState: "online" | "offline" }>`
        SELECT activity_state FROM workers
        WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL FOR UPDATE`
    return rows[0]
  })

  /**
   * Applies a heartbeat only when its `sentAt` is newer than the stored one: the guard is in the statement, so
   * concurrent heartbeats leave the newest `sentAt` whatever order they commit in, and `last_active_at` only moves
   * forward. The worker's resulting times when applied; none for a late heartbeat (nothing changed).
   */
  const heartbeat = findOne({
    Request: Schema.Struct({
      ...Scoped.fields,
      receivedAt: DateColumn,
      sentAt: DateColumn,
      status: Schema.String,
      imageVersion: Schema.NullOr(Schema.String),
      activeAt: Schema.NullOr(DateColumn),
      openSessions: Schema.NullOr(Schema.Int)
    }),
    Result: Schema.Struct({ lastHeartbeatAt: DateColumn, lastActiveAt: Schema.NullOr(DateColumn), openSessions: Schema.NullOr(Schema.Int) }),
    // `updatedAt` moves when what the worker reports changes, not with every beat.
    execute: ({ activeAt, id, imageVersion, openSessions, organizationId, receivedAt, sentAt, status }) =>
      sql`UPDATE workers SET
              updated_at = CASE WHEN status IS DISTINCT FROM ${status}
                                  OR (${imageVersion}::text IS NOT NULL AND image_version IS DISTINCT FROM ${imageVersion}::text)
                                THEN ${receivedAt}::timestamptz ELSE updated_at END,
              status = ${status},
              image_version = COALESCE(${imageVersion}::text, image_version),
              last_heartbeat_at = ${sentAt},
              last_seen_at = GREATEST(last_seen_at, ${receivedAt}::timestamptz),
              last_active_at = GREATEST(last_active_at, ${activeAt}::timestamptz),
              open_sessions = COALESCE(${openSessions}::integer, open_sessions),
              activity_state = 'online'
            WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL
              AND (last_heartbeat_at IS NULL OR last_heartbeat_at < ${sentAt}::timestamptz)
            RETURNING last_heartbeat_at, last_active_at, open_sessions`
  })

  /** The worker's times as they stand (for the answer to a late heartbeat). */
  const heartbeatState = findOne({
    Request: Scoped,
    Result: Schema.Struct({
      lastHeartbeatAt: DateColumn,
      lastActiveAt: Schema.NullOr(DateColumn),
      openSessions: Schema.NullOr(Schema.Int),
      lastSeenAt: Schema.NullOr(DateColumn)
    }),
    execute: ({ id, organizationId }) =>
      sql`SELECT last_heartbeat_at, last_active_at, open_sessions, last_seen_at FROM workers
            WHERE organization_id = ${organizationId} AND id = ${id} AND last_heartbeat_at IS NOT NULL`
  })

  // Instances ---------------------------------------------------------------------------------------------------

  const insertInstance = execute({
    Request: WorkerInstanceRow.insert,
    execute: (row) => sql`INSERT INTO worker_instances ${sql.insert(row)}`
  })

  const latest = (organizationId: string, workerId: string) =>
    sql`FROM worker_instances WHERE organization_id = ${organizationId} AND worker_id = ${workerId}
          ORDER BY created_at DESC, id DESC LIMIT 1`

  const latestInstance = findOne({
    Request: Scoped,
    Result: classRow(WorkerInstance),
    execute: ({ id, organizationId }) =>
      sql`SELECT provider, region, url, status, created_at, updated_at ${latest(organizationId, id)}`
  })

  const runtimeTarget = findOne({
    Request: Scoped,
    Result: RuntimeTarget,
    execute: ({ id, organizationId }) => sql`SELECT id AS instance_id, url, runtime_credential_ciphertext ${latest(organizationId, id)}`
  })

  // Tokens ------------------------------------------------------------------------------------------------------

  const insertToken = execute({
    Request: WorkerTokenRow.insert,
    execute: (row) => sql`INSERT INTO worker_tokens ${sql.insert(row)}`
  })

  const revokeTokens = execute({
    Request: Schema.Struct({ ...Scoped.fields, at: DateColumn }),
    execute: ({ at, id, organizationId }) =>
      sql`UPDATE worker_tokens SET revoked_at = ${at}
            WHERE organization_id = ${organizationId} AND worker_id = ${id} AND revoked_at IS NULL`
  })

  /** Authentication in one statement: the unrevoked token with this hash, of a worker that is not deleted, of an organization that is not. */
  const resolveToken = findOne({
    Request: Schema.Struct({ tokenHash: Schema.String }),
    Result: Schema.Struct({ tokenId: WorkerTokenId, organizationId: OrganizationId, workerId: WorkerId }),
    execute: ({ tokenHash }) =>
      sql`SELECT t.id AS token_id, t.organization_id, t.worker_id
            FROM worker_tokens t
            JOIN workers w ON w.organization_id = t.organization_id AND w.id = t.worker_id AND w.deleted_at IS NULL
            JOIN organizations o ON o.id = t.organization_id AND o.deleted_at IS NULL
            WHERE t.token_hash = ${tokenHash} AND t.revoked_at IS NULL`
  })

  /**
   * Whether a worker token still works, for its write's check at commit (platform/Authority.ts): the worker not
   * deleted and the token not revoked, each row locked FOR SHARE against those changes (UPDATEs), the worker first
   * as deleting and rotating take them.
   */
  const tokenStanding = findOne({
    Request: Schema.Struct({ organizationId: OrganizationId, workerId: WorkerId, tokenId: WorkerTokenId }),
    Result: Schema.Struct({ worker: Schema.Boolean, token: Schema.Boolean }),
    execute: ({ organizationId, tokenId, workerId }) =>
      sql`SELECT EXISTS (SELECT 1 FROM workers w
                           WHERE w.organization_id = ${organizationId} AND w.id = ${workerId} AND w.deleted_at IS NULL
                           FOR SHARE) AS worker,
                   EXISTS (SELECT 1 FROM worker_tokens t
                           WHERE t.organization_id = ${organizationId} AND t.id = ${tokenId} AND t.worker_id = ${workerId}
                             AND t.revoked_at IS NULL
                           FOR SHARE) AS token`
  })

  const touchToken = execute({
    Request: Schema.Struct({ organizationId: OrganizationId, id: WorkerTokenId, at: DateColumn }),
    execute: ({ at, id, organizationId }) =>
      sql`UPDATE worker_tokens SET last_used_at = ${at} WHERE organization_id = ${organizationId} AND id = ${id}`
  })

  return {
    find,
    list,
    lock,
    insert,
    update,
    softDelete,
    creatorOf,
    lockForHeartbeat,
    tokenStanding,
    heartbeat,
    heartbeatState,
    insertInstance,
    latestInstance,
    runtimeTarget,
    insertToken,
    revokeTokens,
    resolveToken,
    touchToken
  } as const
})

export class WorkersRepository extends Context.Service<WorkersRepository>()("@orgplane/server/workers/WorkersRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
