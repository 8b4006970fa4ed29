/**
 * Storage of connector accounts, instances and targets. Every statement names the organization; the webhook's
 * lookups by installation and repository return the organization of each row they find.
 */
import { SqlClient, type Statement } from "@effect/sql"
import {
  ConnectorAccount,
  type ConnectorAccountId,
  type ConnectorAccountListQuery,
  ConnectorInstance,
  type ConnectorInstanceId,
  type ConnectorInstanceListQuery,
  ConnectorTarget,
  type ConnectorTargetId,
  type ConnectorTargetListQuery,
  type OrganizationId
} from "@orgplane/schema"
import { Effect, Option } from "effect"
import * as Keyset from "../platform/Keyset.js"
import { first } from "../platform/Sql.js"
import { likePattern } from "../staff/MembersRepository.js"

type Row = { readonly [column: string]: unknown }

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

export const toAccount = (row: Row) => new ConnectorAccount(row as any, true)
/**
 * JSON columns are read as text and parsed here: the SQL client's result-name transform would camel-case the
 * members of a parsed object (a config's `auto_import` would come back as `autoImport`).
 */
export const parseJson = (value: unknown): unknown => (typeof value === "string" ? JSON.parse(value) : value)

export const toInstance = (row: Row) =>
  new ConnectorInstance({ ...row, instanceConfigJson: parseJson(row.instanceConfigJson) } as any, true)
export const toTarget = (row: Row) => new ConnectorTarget({ ...row, targetConfigJson: parseJson(row.targetConfigJson) } as any, true)

/** An account row with what only the server sees: the encrypted token. */
export interface AccountRecord {
  readonly account: ConnectorAccount
  readonly tokenCiphertext: string | null
}

export class ConnectorsRepository extends Effect.Service<ConnectorsRepository>()("@orgplane/server/ConnectorsRepository", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const accountColumns = sql`a.id, a.organization_id, a.connector_type, a.kind, a.remote_id, a.external_account_ref,
      a.display_name, a.status, a.created_by_membership_id AS created_by_org_membership_id, a.created_at, a.updated_at`
    const instanceColumns = sql`i.id, i.organization_id, i.connector_account_id, i.connector_type, i.remote_id, i.name,
      i.status, i.instance_config_json::text AS instance_config_json, i.last_synced_at, i.last_sync_status, i.last_sync_cursor,
      i.created_by_membership_id AS created_by_org_membership_id, i.created_at, i.updated_at`
    const targetColumns = sql`t.id, t.connector_instance_id, t.connector_type, t.remote_id, t.target_kind,
      t.external_target_ref, t.target_config_json::text AS target_config_json, t.created_at, t.updated_at`

    // Accounts

    const insertAccount = (row: {
      readonly id: ConnectorAccountId
      readonly organizationId: OrganizationId
      readonly kind: "app_installation" | "token"
      readonly remoteId: string | null
      readonly externalAccountRef: string | null
      readonly displayName: string
      readonly tokenCiphertext: string | null
      readonly createdByMembershipId: string | null
      readonly at: Date
    }) =>
      sql`INSERT INTO connector_accounts ${
        sql.insert({
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
      }`

    const findAccount = (organizationId: OrganizationId, id: ConnectorAccountId, lock = false) =>
      sql<Row>`SELECT ${accountColumns}, a.token_ciphertext FROM connector_accounts a
               WHERE a.organization_id = ${organizationId} AND a.id = ${id} ${lock ? sql`FOR UPDATE` : sql``}`.pipe(
        Effect.map((rows) =>
          Option.map(first(rows), ({ tokenCiphertext, ...row }): AccountRecord => ({
            account: toAccount(row),
            tokenCiphertext: tokenCiphertext as string | null
          }))
        )
      )

    const listAccounts = (organizationId: OrganizationId, query: ConnectorAccountListQuery) =>
      Keyset.page(newestAccounts, query, (page) =>
        sql<Row>`SELECT ${accountColumns} FROM connector_accounts a
                 WHERE a.organization_id = ${organizationId} AND ${page.after}
                 ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toAccount))))

    const deleteAccount = (organizationId: OrganizationId, id: ConnectorAccountId) =>
      sql`DELETE FROM connector_accounts WHERE organization_id = ${organizationId} AND id = ${id}`

    /** The active app-installation accounts of an installation, in every organization (the webhook's first lookup). */
    const accountsOfInstallation = (installationId: string) =>
      sql<{ organizationId: OrganizationId; id: ConnectorAccountId; status: string }>`
        SELECT a.organization_id, a.id, a.status FROM connector_accounts a
        WHERE a.remote_id = ${installationId} AND a.kind = 'app_installation'`

    const setAccountStatus = (organizationId: OrganizationId, id: ConnectorAccountId, status: string, at: Date) =>
      sql`UPDATE connector_accounts SET status = ${status}, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND id = ${id}`

    // Instances

    const insertInstance = (row: {
      readonly id: ConnectorInstanceId
      readonly organizationId: OrganizationId
      readonly connectorAccountId: ConnectorAccountId
      readonly remoteId: string
      readonly name: string
      readonly config: object
      readonly createdByMembershipId: string | null
      readonly at: Date
    }) =>
      sql`INSERT INTO connector_instances ${
        sql.insert({
          id: row.id,
          organizationId: row.organizationId,
          connectorAccountId: row.connectorAccountId,
          connectorType: "codehost",
          remoteId: row.remoteId,
          name: row.name,
          status: "active",
          instanceConfigJson: JSON.stringify(row.config),
          createdByMembershipId: row.createdByMembershipId,
          createdAt: row.at,
          updatedAt: row.at
        })
      }`

    const findInstance = (organizationId: OrganizationId, id: ConnectorInstanceId) =>
      sql<Row>`SELECT ${instanceColumns} FROM connector_instances i
               WHERE i.organization_id = ${organizationId} AND i.id = ${id}`.pipe(Effect.map((rows) => Option.map(first(rows), toInstance)))

    const listInstances = (organizationId: OrganizationId, query: ConnectorInstanceListQuery, visible: Statement.Fragment) =>
      Keyset.page(newestInstances, query, (page) =>
        sql<Row>`SELECT ${instanceColumns} FROM connector_instances i WHERE ${
          sql.and([
            sql`i.organization_id = ${organizationId}`,
            query.connectorAccountId !== undefined ? sql`i.connector_account_id = ${query.connectorAccountId}` : sql`true`,
            query.q !== undefined
              ? sql`(i.name ILIKE ${likePattern(query.q)} OR i.remote_id ILIKE ${likePattern(query.q)})`
              : sql`true`,
            visible,
            page.after
          ])
        } ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toInstance))))

    const instanceIdsOfAccount = (organizationId: OrganizationId, accountId: ConnectorAccountId) =>
      sql<{ id: ConnectorInstanceId }>`SELECT id FROM connector_instances
        WHERE organization_id = ${organizationId} AND connector_account_id = ${accountId} ORDER BY id FOR UPDATE`.pipe(
        Effect.map((rows) => rows.map((row) => row.id))
      )

    const updateInstance = (
      organizationId: OrganizationId,
      id: ConnectorInstanceId,
      changes: {
        readonly remoteId?: string
        readonly name?: string
        readonly instanceConfigJson?: object
        readonly status?: string
        readonly lastSyncedAt?: Date
        readonly lastSyncStatus?: string
        readonly lastSyncCursor?: string
      },
      at: Date
    ) => {
      const set: Record<string, unknown> = { updatedAt: at }
      for (const [key, value] of Object.entries(changes)) {
        if (value !== undefined) set[key] = key === "instanceConfigJson" ? JSON.stringify(value) : value
      }
      return sql`UPDATE connector_instances SET ${sql.update(set)}
                 WHERE organization_id = ${organizationId} AND id = ${id}`
    }

    // Targets

    const insertTarget = (row: {
      readonly id: ConnectorTargetId
      readonly organizationId: OrganizationId
      readonly connectorInstanceId: ConnectorInstanceId
      readonly remoteId: string
      readonly externalTargetRef: string
      readonly config: object
      readonly at: Date
    }) =>
      sql`INSERT INTO connector_targets ${
        sql.insert({
          id: row.id,
          organizationId: row.organizationId,
          connectorInstanceId: row.connectorInstanceId,
          connectorType: "codehost",
          remoteId: row.remoteId,
          targetKind: "repository_branch",
          externalTargetRef: row.externalTargetRef,
          targetConfigJson: JSON.stringify(row.config),
          createdAt: row.at,
          updatedAt: row.at
        })
      }`

    /** A target with its instance's id, found by the target's id alone (the instance decides access). */
    const findTarget = (organizationId: OrganizationId, id: ConnectorTargetId) =>
      sql<Row>`SELECT ${targetColumns} FROM connector_targets t
               WHERE t.organization_id = ${organizationId} AND t.id = ${id}`.pipe(Effect.map((rows) => Option.map(first(rows), toTarget)))

    const listTargets = (organizationId: OrganizationId, instanceId: ConnectorInstanceId, query: ConnectorTargetListQuery) =>
      Keyset.page(oldestTargets, query, (page) =>
        sql<Row>`SELECT ${targetColumns} FROM connector_targets t
                 WHERE t.organization_id = ${organizationId} AND t.connector_instance_id = ${instanceId} AND ${page.after}
                 ORDER BY ${page.orderBy} LIMIT ${page.fetch}`.pipe(Effect.map((rows) => rows.map(toTarget))))

    /** Every target of an instance, oldest first (discovery reads the first; sync runs them all). */
    const targetsOf = (organizationId: OrganizationId, instanceId: ConnectorInstanceId) =>
      sql<Row>`SELECT ${targetColumns} FROM connector_targets t
               WHERE t.organization_id = ${organizationId} AND t.connector_instance_id = ${instanceId}
               ORDER BY t.created_at, t.id`.pipe(Effect.map((rows) => rows.map(toTarget)))

    const updateTarget = (
      organizationId: OrganizationId,
      id: ConnectorTargetId,
      changes: { readonly remoteId?: string; readonly externalTargetRef?: string; readonly targetConfigJson?: object },
      at: Date
    ) => {
      const set: Record<string, unknown> = { updatedAt: at }
      for (const [key, value] of Object.entries(changes)) {
        if (value !== undefined) set[key] = key === "targetConfigJson" ? JSON.stringify(value) : value
      }
      return sql`UPDATE connector_targets SET ${sql.update(set)} WHERE organization_id = ${organizationId} AND id = ${id}`
    }

    /**
     * The targets a webhook for `repository` concerns: on instances of the given accounts (one organization's
     * accounts of the delivering installation), with the instance and account states the webhook checks.
     */
    const targetsOfRepository = (organizationId: OrganizationId, accountIds: ReadonlyArray<ConnectorAccountId>, repository: string) =>
      sql<Row & { instanceStatus: string; accountStatus: string }>`
        SELECT ${targetColumns}, i.status AS instance_status, a.status AS account_status
        FROM connector_targets t
        JOIN connector_instances i ON i.organization_id = t.organization_id AND i.id = t.connector_instance_id
        JOIN connector_accounts a ON a.organization_id = i.organization_id AND a.id = i.connector_account_id
        WHERE t.organization_id = ${organizationId} AND lower(t.remote_id) = lower(${repository})
          AND i.connector_account_id IN ${sql.in(accountIds)}
        ORDER BY t.created_at, t.id`

    // The webhook's changes, one organization's accounts of the delivering installation at a time.

    /**
     * Records a webhook delivery as handled; false when it already was. Not a tenant row: the delivery is claimed
     * before the organizations it concerns are known. A concurrent claim of the same id waits for this one's
     * transaction, then finds the row (or takes it, when this one rolled back).
     */
    const claimDelivery = (deliveryId: string, event: string, at: Date) =>
      sql<{ deliveryId: string }>`INSERT INTO codehost_deliveries (delivery_id, event, received_at)
        VALUES (${deliveryId}, ${event}, ${at}) ON CONFLICT (delivery_id) DO NOTHING RETURNING delivery_id`.pipe(
        Effect.map((rows) => rows.length > 0)
      )

    /** Disables the active instances of these accounts; their ids. */
    const disableInstancesOfAccounts = (organizationId: OrganizationId, accountIds: ReadonlyArray<ConnectorAccountId>, at: Date) =>
      sql<{ id: ConnectorInstanceId }>`UPDATE connector_instances SET status = 'disabled', updated_at = ${at}
        WHERE organization_id = ${organizationId} AND connector_account_id IN ${sql.in(accountIds)} AND status = 'active'
        RETURNING id`.pipe(Effect.map((rows) => rows.map((row) => row.id)))

    /**
     * Disables the active instances of these accounts that follow one of `repositories` (full names, any case),
     * by their own repository or by one of their targets'; their ids.
     */
    const disableInstancesOfRepositories = (
      organizationId: OrganizationId,
      accountIds: ReadonlyArray<ConnectorAccountId>,
      repositories: ReadonlyArray<string>,
      at: Date
    ) => {
      const names = sql.in(repositories.map((name) => name.toLowerCase()))
      return sql<{ id: ConnectorInstanceId }>`UPDATE connector_instances i SET status = 'disabled', updated_at = ${at}
        WHERE i.organization_id = ${organizationId} AND i.connector_account_id IN ${sql.in(accountIds)} AND i.status = 'active'
          AND (lower(i.remote_id) IN ${names} OR EXISTS (
            SELECT 1 FROM connector_targets t
            WHERE t.organization_id = i.organization_id AND t.connector_instance_id = i.id AND lower(t.remote_id) IN ${names}))
        RETURNING i.id`.pipe(Effect.map((rows) => rows.map((row) => row.id)))
    }

    /**
     * Renames a repository in the instances and targets of these accounts (matched in any case); how many of each
     * changed. A target that would collide with one the instance already has under the new name keeps the old name.
     */
    const renameRepository = (
      organizationId: OrganizationId,
      accountIds: ReadonlyArray<ConnectorAccountId>,
      from: string,
      to: string,
      at: Date
    ) =>
      Effect.gen(function*() {
        const instances = yield* sql<{ id: ConnectorInstanceId }>`UPDATE connector_instances SET remote_id = ${to}, updated_at = ${at}
          WHERE organization_id = ${organizationId} AND connector_account_id IN ${sql.in(accountIds)}
            AND lower(remote_id) = lower(${from})
          RETURNING id`
        const targets = yield* sql<{ id: ConnectorTargetId }>`UPDATE connector_targets t SET remote_id = ${to}, updated_at = ${at}
          FROM connector_instances i
          WHERE t.organization_id = ${organizationId} AND i.organization_id = t.organization_id AND i.id = t.connector_instance_id
            AND i.connector_account_id IN ${sql.in(accountIds)} AND lower(t.remote_id) = lower(${from})
            AND NOT EXISTS (
              SELECT 1 FROM connector_targets other
              WHERE other.organization_id = t.organization_id AND other.connector_instance_id = t.connector_instance_id AND other.id <> t.id
                AND lower(other.remote_id) = lower(${to}) AND other.external_target_ref = t.external_target_ref)
          RETURNING t.id`
        return { instances: instances.length, targets: targets.length }
      })

    return {
      insertAccount,
      findAccount,
      listAccounts,
      deleteAccount,
      accountsOfInstallation,
      setAccountStatus,
      insertInstance,
      findInstance,
      listInstances,
      instanceIdsOfAccount,
      updateInstance,
      insertTarget,
      findTarget,
      listTargets,
      targetsOf,
      updateTarget,
      targetsOfRepository,
      claimDelivery,
      disableInstancesOfAccounts,
      disableInstancesOfRepositories,
      renameRepository
    } as const
  })
}) {}
