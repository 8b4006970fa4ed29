/**
 * Storage of connector accounts, instances and targets. Every statement names the organization.
 * A rank read beside a row is `withColumns(row, { accessRank: Schema.Int })`, what access/Access's `ranked` is.
 */
import * as Model from "effect/schema/Model"
import * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"
import {
  ConnectorAccount,
  ConnectorAccountId,
  type ConnectorAccountListQuery,
  ConnectorInstance,
  ConnectorInstanceId,
  type ConnectorInstanceListQuery,
  ConnectorTarget,
  ConnectorTargetId,
  type ConnectorTargetListQuery,
  JsonObject,
  MembershipId,
  OrganizationId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Keyset from "../platform/Keyset.js"
import { classRow, DateColumn, execute, findAll, findOne, Fragment, likePattern, trustedClassRow, withColumns } from "../platform/Statements.js"

/** A JSON column written from its object (Postgres casts the text to `jsonb`). */
const JsonColumn = Schema.fromJsonString(JsonObject)

export class ConnectorAccountRow extends Model.Class<ConnectorAccountRow>("ConnectorAccountRow")({
  id: Model.GeneratedByApp(ConnectorAccountId),
  organizationId: OrganizationId,
  connectorType: ConnectorAccount.fields.connectorType,
  kind: ConnectorAccount.fields.kind,
  remoteId: ConnectorAccount.fields.remoteId,
  externalAccountRef: ConnectorAccount.fields.externalAccountRef,
  displayName: ConnectorAccount.fields.displayName,
  status: ConnectorAccount.fields.status,
  /** A token account's token, encrypted (platform/Crypto). */
  tokenCiphertext: Model.Sensitive(Schema.NullOr(Schema.String)),
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

export class ConnectorInstanceRow extends Model.Class<ConnectorInstanceRow>("ConnectorInstanceRow")({
  id: Model.GeneratedByApp(ConnectorInstanceId),
  organizationId: OrganizationId,
  connectorAccountId: ConnectorAccountId,
  connectorType: ConnectorInstance.fields.connectorType,
  remoteId: ConnectorInstance.fields.remoteId,
  name: ConnectorInstance.fields.name,
  status: ConnectorInstance.fields.status,
  instanceConfigJson: JsonColumn,
  lastSyncedAt: Schema.NullOr(DateColumn),
  lastSyncStatus: ConnectorInstance.fields.lastSyncStatus,
  lastSyncCursor: ConnectorInstance.fields.lastSyncCursor,
  createdByMembershipId: Schema.NullOr(MembershipId),
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

export class ConnectorTargetRow extends Model.Class<ConnectorTargetRow>("ConnectorTargetRow")({
  id: Model.GeneratedByApp(ConnectorTargetId),
  organizationId: OrganizationId,
  connectorInstanceId: ConnectorInstanceId,
  connectorType: ConnectorTarget.fields.connectorType,
  remoteId: ConnectorTarget.fields.remoteId,
  targetKind: ConnectorTarget.fields.targetKind,
  externalTargetRef: ConnectorTarget.fields.externalTargetRef,
  targetConfigJson: JsonColumn,
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

const newestAccounts = Keyset.make<ConnectorAccount>("connector_accounts", "desc", [
  { column: "a.created_at", value: (account) => account.createdAt.toISOString() },
  { column: "a.id", value: (account) => account.id }
])
const newestInstances = Keyset.make<ConnectorInstance>("connector_instances", "desc", [
  { column: "i.created_at", value: (instance) => instance.createdAt.toISOString() },
  { column: "i.id", value: (instance) => instance.id }
])
const oldestTargets = Keyset.make<ConnectorTarget>("connector_targets", "asc", [
  { column: "t.created_at", value: (target) => target.createdAt.toISOString() },
  { column: "t.id", value: (target) => target.id }
])

/** The resources as read by `accountColumns`, `instanceColumns` and `targetColumnsOf` (JSON columns as text). */
const Account = classRow(ConnectorAccount)
const Instance = classRow(ConnectorInstance, { json: ["instanceConfigJson"] })
export const Target = classRow(ConnectorTarget, { json: ["targetConfigJson"] })

/** The columns of target row `t` that make a `ConnectorTarget` (read with `Target`). */
export const targetColumnsOf = (sql: SqlClient.SqlClient) =>
  sql`t.id, t.connector_instance_id, t.connector_type, t.remote_id, t.target_kind,
      t.external_target_ref, t.target_config_json::text AS target_config_json, t.created_at, t.updated_at`

/** An account row with what only the server sees: the encrypted token. */
export interface AccountRecord {
  readonly account: ConnectorAccount
  readonly tokenCiphertext: string | null
}

const Scoped = <I extends Schema.Top>(id: I) => Schema.Struct({ organizationId: OrganizationId, id })
/** One resource read with the caller's access rank (an `Access.rank` expression), locked when `lock`. */
const RankedRequest = <I extends Schema.Top>(id: I) =>
  Schema.Struct({ organizationId: OrganizationId, id, rank: Fragment, lock: Schema.Boolean })
const Id = <I extends Schema.Top>(id: I) => Schema.Struct({ id })

/** What an instance's update may change (absent: unchanged). */
const InstanceChanges = Schema.Struct({
  remoteId: Schema.optionalKey(ConnectorInstanceRow.fields.remoteId),
  name: Schema.optionalKey(ConnectorInstanceRow.fields.name),
  instanceConfigJson: Schema.optionalKey(JsonColumn),
  status: Schema.optionalKey(ConnectorInstanceRow.fields.status)
})
const TargetChanges = Schema.Struct({
  remoteId: Schema.optionalKey(ConnectorTargetRow.fields.remoteId),
  externalTargetRef: Schema.optionalKey(ConnectorTargetRow.fields.externalTargetRef),
  targetConfigJson: Schema.optionalKey(JsonColumn)
})

/** The SET list of an update: the given columns (encoded), and the time of the change. */
const setOf = (changes: object, at: Date): Record<string, unknown> => ({
  ...Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)),
  updatedAt: at
})

const makeConnectorsRepository = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const accountColumns = sql`a.id, a.organization_id, a.connector_type, a.kind, a.remote_id, a.external_account_ref,
      a.display_name, a.status, a.created_by_membership_id AS created_by_org_membership_id, a.created_at, a.updated_at`
  const instanceColumns = sql`i.id, i.organization_id, i.connector_account_id, i.connector_type, i.remote_id, i.name,
      i.status, i.instance_config_json::text AS instance_config_json, i.last_synced_at, i.last_sync_status, i.last_sync_cursor,
      i.created_by_membership_id AS created_by_org_membership_id, i.created_at, i.updated_at`
  const targetColumns = targetColumnsOf(sql)
  const lockClause = (lock: boolean, alias: string) => (lock ? sql`FOR UPDATE OF ${sql.literal(alias)}` : sql``)

  // Accounts

  const insertAccountRow = execute({
    Request: ConnectorAccountRow.insert,
    execute: (row) => sql`INSERT INTO connector_accounts ${sql.insert(row)}`
  })
  const insertAccount = (row: {
    readonly id: ConnectorAccountId
    readonly organizationId: OrganizationId
    readonly kind: ConnectorAccount["kind"]
    readonly remoteId: string | null
    readonly externalAccountRef: string | null
    readonly displayName: string
    readonly tokenCiphertext: string | null
    readonly createdByMembershipId: MembershipId | null
    readonly at: Date
  }) =>
    insertAccountRow({
      id: row.id,
      organizationId: row.organizationId,
      connectorType: "codehost",
      kind: row.kind,
      remoteId: row.remoteId,
      externalAccountRef: row.externalAccountRef,
      displayName: row.displayName,
      status: "active",
      tokenCiphertext: row.tokenCiphertext,
      createdByMembershipId: row.createdByMembershipId,
      createdAt: row.at,
      updatedAt: row.at
    })

  const findAccountRow = findOne({
    Request: Schema.Struct({ ...Scoped(ConnectorAccountId).fields, lock: Schema.Boolean }),
    Result: withColumns(Account, { tokenCiphertext: Schema.NullOr(Schema.String) }),
    execute: ({ id, lock, organizationId }) =>
      sql`SELECT ${accountColumns}, a.token_ciphertext FROM connector_accounts a
            WHERE a.organization_id = ${organizationId} AND a.id = ${id} ${lockClause(lock, "a")}`
  })
  const findAccount = (organizationId: OrganizationId, id: ConnectorAccountId, lock = false) =>
    Effect.map(
      findAccountRow({ organizationId, id, lock }),
      Option.map(({ row, tokenCiphertext }): AccountRecord => ({ account: row, tokenCiphertext }))
    )

  const listAccountRows = findAll({
    Request: Schema.Struct({ organizationId: OrganizationId, page: Keyset.PageRequest }),
    Result: trustedClassRow(ConnectorAccount),
    execute: ({ organizationId, page }) =>
      sql`SELECT ${accountColumns} FROM connector_accounts a
            WHERE a.organization_id = ${organizationId} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  const listAccounts = (organizationId: OrganizationId, query: ConnectorAccountListQuery) =>
    Keyset.page(newestAccounts, query, (page) => listAccountRows({ organizationId, page }))

  const deleteAccountRow = execute({
    Request: Scoped(ConnectorAccountId),
    execute: ({ id, organizationId }) => sql`DELETE FROM connector_accounts WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const deleteAccount = (organizationId: OrganizationId, id: ConnectorAccountId) => deleteAccountRow({ organizationId, id })

  // Instances

  const insertInstanceRow = execute({
    Request: ConnectorInstanceRow.insert,
    execute: (row) => sql`INSERT INTO connector_instances ${sql.insert(row)}`
  })
  const insertInstance = (row: {
    readonly id: ConnectorInstanceId
    readonly organizationId: OrganizationId
    readonly connectorAccountId: ConnectorAccountId
    readonly remoteId: string
    readonly name: string
    readonly config: JsonObject
    readonly createdByMembershipId: MembershipId | null
    readonly at: Date
  }) =>
    insertInstanceRow({
      id: row.id,
      organizationId: row.organizationId,
      connectorAccountId: row.connectorAccountId,
      connectorType: "codehost",
      remoteId: row.remoteId,
      name: row.name,
      status: "active",
      instanceConfigJson: row.config,
      lastSyncedAt: null,
      lastSyncStatus: null,
      lastSyncCursor: null,
      createdByMembershipId: row.createdByMembershipId,
      createdAt: row.at,
      updatedAt: row.at
    })

  const findInstanceRow = findOne({
    Request: Scoped(ConnectorInstanceId),
    Result: Instance,
    execute: ({ id, organizationId }) =>
      sql`SELECT ${instanceColumns} FROM connector_instances i WHERE i.organization_id = ${organizationId} AND i.id = ${id}`
  })
  const findInstance = (organizationId: OrganizationId, id: ConnectorInstanceId) => findInstanceRow({ organizationId, id })

  /** The instance with the caller's rank on it (`rank`: an `Access.rank` expression over alias `i`); locked with `lock`. */
  const findInstanceRanked = findOne({
    Request: RankedRequest(ConnectorInstanceId),
    Result: withColumns(Instance, { accessRank: Schema.Int }),
    execute: ({ id, lock, organizationId, rank }) =>
      sql`SELECT ${rank} AS access_rank, ${instanceColumns} FROM connector_instances i
            WHERE i.organization_id = ${organizationId} AND i.id = ${id} ${lockClause(lock, "i")}`
  })

  const listInstanceRows = findAll({
    Request: Schema.Struct({
      organizationId: OrganizationId,
      query: Schema.Struct({ connectorAccountId: Schema.optional(ConnectorAccountId), q: Schema.optional(Schema.String) }),
      visible: Fragment,
      page: Keyset.PageRequest
    }),
    Result: trustedClassRow(ConnectorInstance, { json: ["instanceConfigJson"] }),
    execute: ({ organizationId, page, query, visible }) =>
      sql`SELECT ${instanceColumns} FROM connector_instances i WHERE ${
          sql.and([
            sql`i.organization_id = ${organizationId}`,
            query.connectorAccountId !== undefined ? sql`i.connector_account_id = ${query.connectorAccountId}` : sql`true`,
            query.q !== undefined
              ? sql`(i.name ILIKE ${likePattern(query.q)} OR i.remote_id ILIKE ${likePattern(query.q)})`
              : sql`true`,
            visible,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  /** The instances the `visible` expression (over alias `i`) lets through, filtered, newest first. */
  const listInstances = (organizationId: OrganizationId, query: ConnectorInstanceListQuery, visible: Statement.Fragment) =>
    Keyset.page(newestInstances, query, (page) =>
      listInstanceRows({ organizationId, query: { connectorAccountId: query.connectorAccountId, q: query.q }, visible, page }))

  /** The ids of the account's instances, locked. */
  const instanceIdsOfAccountRows = findAll({
    Request: Scoped(ConnectorAccountId),
    Result: Id(ConnectorInstanceId),
    execute: ({ id, organizationId }) =>
      sql`SELECT id FROM connector_instances
            WHERE organization_id = ${organizationId} AND connector_account_id = ${id} ORDER BY id FOR UPDATE`
  })
  const instanceIdsOfAccount = (organizationId: OrganizationId, accountId: ConnectorAccountId) =>
    Effect.map(instanceIdsOfAccountRows({ organizationId, id: accountId }), (rows) => rows.map((row) => row.id))

  const updateInstanceRow = execute({
    Request: Schema.Struct({ ...Scoped(ConnectorInstanceId).fields, changes: InstanceChanges, at: DateColumn }),
    execute: ({ at, changes, id, organizationId }) =>
      sql`UPDATE connector_instances SET ${sql.update(setOf(changes, at))} WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const updateInstance = (organizationId: OrganizationId, id: ConnectorInstanceId, changes: typeof InstanceChanges.Type, at: Date) =>
    updateInstanceRow({ organizationId, id, changes, at })

  // Targets

  const insertTargetRow = execute({
    Request: ConnectorTargetRow.insert,
    execute: (row) => sql`INSERT INTO connector_targets ${sql.insert(row)}`
  })
  const insertTarget = (row: {
    readonly id: ConnectorTargetId
    readonly organizationId: OrganizationId
    readonly connectorInstanceId: ConnectorInstanceId
    readonly remoteId: string
    readonly externalTargetRef: string
    readonly config: JsonObject
    readonly at: Date
  }) =>
    insertTargetRow({
      id: row.id,
      organizationId: row.organizationId,
      connectorInstanceId: row.connectorInstanceId,
      connectorType: "codehost",
      remoteId: row.remoteId,
      targetKind: "repository_branch",
      externalTargetRef: row.externalTargetRef,
      targetConfigJson: row.config,
      createdAt: row.at,
      updatedAt: row.at
    })

  const findTargetRow = findOne({
    Request: Scoped(ConnectorTargetId),
    Result: Target,
    execute: ({ id, organizationId }) =>
      sql`SELECT ${targetColumns} FROM connector_targets t WHERE t.organization_id = ${organizationId} AND t.id = ${id}`
  })
  /** A target with its instance's id, found by the target's id alone (the instance decides access). */
  const findTarget = (organizationId: OrganizationId, id: ConnectorTargetId) => findTargetRow({ organizationId, id })

  /**
   * A target with the caller's rank on its instance (`rank`: an `Access.rank` expression over the instance's
   * alias `i`); with `lock`, the instance's row is locked.
   */
  const findTargetRanked = findOne({
    Request: RankedRequest(ConnectorTargetId),
    Result: withColumns(Target, { accessRank: Schema.Int }),
    execute: ({ id, lock, organizationId, rank }) =>
      sql`SELECT ${rank} AS access_rank, ${targetColumns} FROM connector_targets t
            JOIN connector_instances i ON i.organization_id = t.organization_id AND i.id = t.connector_instance_id
            WHERE t.organization_id = ${organizationId} AND t.id = ${id} ${lockClause(lock, "i")}`
  })

  /** Syncs of one target write one at a time: two events of a target never create the same object twice. */
  const lockTarget = execute({
    Request: Scoped(ConnectorTargetId),
    execute: ({ id, organizationId }) => sql`SELECT id FROM connector_targets WHERE organization_id = ${organizationId} AND id = ${id} FOR UPDATE`
  })

  const listTargetRows = findAll({
    Request: Schema.Struct({ ...Scoped(ConnectorInstanceId).fields, page: Keyset.PageRequest }),
    Result: trustedClassRow(ConnectorTarget, { json: ["targetConfigJson"] }),
    execute: ({ id, organizationId, page }) =>
      sql`SELECT ${targetColumns} FROM connector_targets t
            WHERE t.organization_id = ${organizationId} AND t.connector_instance_id = ${id} AND ${page.after}
            ORDER BY ${page.orderBy} LIMIT ${page.fetch}`
  })
  const listTargets = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, query: ConnectorTargetListQuery) =>
    Keyset.page(oldestTargets, query, (page) => listTargetRows({ organizationId, id: instanceId, page }))

  const targetsOfRows = findAll({
    Request: Scoped(ConnectorInstanceId),
    Result: Target,
    execute: ({ id, organizationId }) =>
      sql`SELECT ${targetColumns} FROM connector_targets t
            WHERE t.organization_id = ${organizationId} AND t.connector_instance_id = ${id}
            ORDER BY t.created_at, t.id`
  })
  /** Every target of an instance, oldest first (discovery reads the first; sync runs them all). */
  const targetsOf = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) => targetsOfRows({ organizationId, id: instanceId })

  const updateTargetRow = execute({
    Request: Schema.Struct({ ...Scoped(ConnectorTargetId).fields, changes: TargetChanges, at: DateColumn }),
    execute: ({ at, changes, id, organizationId }) =>
      sql`UPDATE connector_targets SET ${sql.update(setOf(changes, at))} WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const updateTarget = (organizationId: OrganizationId, id: ConnectorTargetId, changes: typeof TargetChanges.Type, at: Date) =>
    updateTargetRow({ organizationId, id, changes, at })

  /** Every connector instance's name, in one statement (the organization as a document names them). */
  const instanceNames = (organizationId: OrganizationId) =>
    sql<{ readonly id: ConnectorInstanceId; readonly name: string }>`SELECT id, name FROM connector_instances WHERE organization_id = ${organizationId}`

  return {
    instanceNames,
    insertAccount,
    findAccount,
    listAccounts,
    deleteAccount,
    insertInstance,
    findInstance,
    findInstanceRanked,
    listInstances,
    instanceIdsOfAccount,
    updateInstance,
    insertTarget,
    findTarget,
    findTargetRanked,
    lockTarget,
    listTargets,
    targetsOf,
    updateTarget
  } as const
})

export class ConnectorsRepository extends Context.Service<ConnectorsRepository>()("@orgplane/server/connectors/ConnectorsRepository", { make: makeConnectorsRepository }) {
  static readonly layer = Layer.effect(this, this.make)
}
