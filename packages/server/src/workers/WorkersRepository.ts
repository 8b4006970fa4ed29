/** Storage of workers, the instances their runtimes report, and their tokens (only the tokens' hashes are kept). */
import { Model, SqlClient } from "@effect/sql"
import {
  HEARTBEAT_STALE_MILLIS,
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
import { Effect, Schema } from "effect"
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

/** Who reads: `isMine` compares with the user, and `online` without a recent heartbeat reads as `offline`. */
const Reader = { userId: UserId, at: DateColumn }

/** The latest instance with its stored credential (encrypted), for the forwarding client only. */
export const RuntimeTarget = Schema.Struct({
  /** The instance's id: its credential is bound to it. */
  instanceId: Schema.String,
  url: Schema.NullOr(Schema.String),
  runtimeCredentialCiphertext: Schema.NullOr(Schema.String)
})

export class WorkersRepository extends Effect.Service<WorkersRepository>()("@orgplane/server/workers/WorkersRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const select = (userId: string, at: Date) => {
      const staleBefore = new Date(at.getTime() - HEARTBEAT_STALE_MILLIS)
      return sql`
        SELECT w.id, w.organization_id AS org_id, w.created_by_user_id,
               (w.created_by_user_id IS NOT NULL AND w.created_by_user_id = ${userId}) AS is_mine,
               w.name, w.description, w.destination,
               CASE WHEN w.status = 'online' AND (w.last_heartbeat_at IS NULL OR w.last_heartbeat_at < ${staleBefore})
                    THEN 'offline' ELSE w.status END AS status,
               w.image_version, w.workspace_path, w.sandbox_backend, w.last_heartbeat_at, w.last_active_at,
               w.created_at, w.updated_at
        FROM workers w`
    }

    const find = findOne({
      Request: Schema.Struct({ ...Scoped.fields, ...Reader }),
      Result: classRow(Worker),
      execute: ({ at, id, organizationId, userId }) =>
        sql`${select(userId, at)} WHERE w.organization_id = ${organizationId} AND w.id = ${id} AND w.deleted_at IS NULL`
    })

    const listRows = findAll({
      Request: Schema.Struct({ organizationId: OrganizationId, ...Reader, mine: Schema.Boolean, page: Keyset.PageRequest }),
      Result: trustedClassRow(Worker),
      execute: ({ at, mine, organizationId, page, userId }) =>
        sql`${select(userId, at)} WHERE ${
          sql.and([
            sql`w.organization_id = ${organizationId}`,
            sql`w.deleted_at IS NULL`,
            mine ? sql`w.created_by_user_id = ${userId}` : sql`true`,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
    })

    const list = (organizationId: OrganizationId, reader: { readonly userId: UserId; readonly at: Date }, query: WorkerListQuery) =>
      Keyset.page(byCreation, query, (page) => listRows({ organizationId, ...reader, mine: query.mine === "true", page }))

    /** Locks a worker that is not deleted; its creator (user), or undefined when there is no such worker. */
    const lock = ({ id, organizationId }: Scoped) =>
      sql<{ createdByUserId: string | null }>`
        SELECT created_by_user_id FROM workers
        WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL FOR UPDATE`.pipe(
        Effect.map((rows) => rows[0])
      )

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

    const heartbeat = execute({
      Request: Schema.Struct({
        ...Scoped.fields,
        at: DateColumn,
        status: Schema.String,
        imageVersion: Schema.NullOr(Schema.String),
        active: Schema.Boolean
      }),
      // `updatedAt` moves when what the worker reports changes, not with every beat.
      execute: ({ active, at, id, imageVersion, organizationId, status }) =>
        sql`UPDATE workers SET
              updated_at = CASE WHEN status IS DISTINCT FROM ${status}
                                  OR (${imageVersion}::text IS NOT NULL AND image_version IS DISTINCT FROM ${imageVersion}::text)
                                THEN ${at}::timestamptz ELSE updated_at END,
              status = ${status},
              image_version = COALESCE(${imageVersion}::text, image_version),
              last_heartbeat_at = ${at},
              last_active_at = CASE WHEN ${active} THEN ${at}::timestamptz ELSE last_active_at END
            WHERE organization_id = ${organizationId} AND id = ${id} AND deleted_at IS NULL`
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

    /** Authentication in one statement: the unrevoked token with this hash, of a worker that is not deleted. */
    const resolveToken = findOne({
      Request: Schema.Struct({ tokenHash: Schema.String }),
      Result: Schema.Struct({ tokenId: WorkerTokenId, organizationId: OrganizationId, workerId: WorkerId }),
      execute: ({ tokenHash }) =>
        sql`SELECT t.id AS token_id, t.organization_id, t.worker_id
            FROM worker_tokens t
            JOIN workers w ON w.organization_id = t.organization_id AND w.id = t.worker_id AND w.deleted_at IS NULL
            WHERE t.token_hash = ${tokenHash} AND t.revoked_at IS NULL`
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
      heartbeat,
      insertInstance,
      latestInstance,
      runtimeTarget,
      insertToken,
      revokeTokens,
      resolveToken,
      touchToken
    } as const
  })
}) {}
