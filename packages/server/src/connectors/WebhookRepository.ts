/**
 * Storage the GitHub App's webhook reads and changes: deliveries claimed (not tenant rows), an installation's
 * accounts in every organization, and what its events change in one organization's accounts at a time. The
 * lookups by installation and repository return the organization of each row they find.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { ConnectorAccount, ConnectorAccountId, ConnectorInstance, ConnectorInstanceId, ConnectorTargetId, OrganizationId } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { DateColumn, execute, findAll, findOne, withColumns } from "../platform/Statements.js"
import { Target, targetColumnsOf } from "./ConnectorsRepository.js"

const AccountsOf = Schema.Struct({ organizationId: OrganizationId, accountIds: Schema.Array(ConnectorAccountId) })
const Scoped = <I extends Schema.Top>(id: I) => Schema.Struct({ organizationId: OrganizationId, id })
const Id = <I extends Schema.Top>(id: I) => Schema.Struct({ id })

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const targetColumns = targetColumnsOf(sql)

  /** The app-installation accounts of an installation, in every organization but deleted ones (the webhook's first lookup). */
  const accountsOfInstallation = findAll({
    Request: Schema.String,
    Result: Schema.Struct({ organizationId: OrganizationId, id: ConnectorAccountId, status: ConnectorAccount.fields.status }),
    execute: (installationId) =>
      sql`/* instance-wide: the accounts of a GitHub App installation, in every organization (webhook deliveries) */
            SELECT a.organization_id, a.id, a.status FROM connector_accounts a
            WHERE a.remote_id = ${installationId} AND a.kind = 'app_installation'
              AND NOT EXISTS (SELECT 1 FROM organizations o WHERE o.id = a.organization_id AND o.deleted_at IS NOT NULL)`
  })

  const setAccountStatusRow = execute({
    Request: Schema.Struct({ ...Scoped(ConnectorAccountId).fields, status: ConnectorAccount.fields.status, at: DateColumn }),
    execute: ({ at, id, organizationId, status }) =>
      sql`UPDATE connector_accounts SET status = ${status}, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND id = ${id}`
  })
  const setAccountStatus = (organizationId: OrganizationId, id: ConnectorAccountId, status: ConnectorAccount["status"], at: Date) =>
    setAccountStatusRow({ organizationId, id, status, at })

  /**
   * The targets a webhook for `repository` concerns: on instances of the given accounts (one organization's
   * accounts of the delivering installation), with the instance and account states the webhook checks.
   */
  const targetsOfRepositoryRows = findAll({
    Request: Schema.Struct({ ...AccountsOf.fields, repository: Schema.String }),
    Result: withColumns(Target, { instanceStatus: ConnectorInstance.fields.status, accountStatus: ConnectorAccount.fields.status }),
    execute: ({ accountIds, organizationId, repository }) =>
      sql`SELECT ${targetColumns}, i.status AS instance_status, a.status AS account_status
            FROM connector_targets t
            JOIN connector_instances i ON i.organization_id = t.organization_id AND i.id = t.connector_instance_id
            JOIN connector_accounts a ON a.organization_id = i.organization_id AND a.id = i.connector_account_id
            WHERE t.organization_id = ${organizationId} AND lower(t.remote_id) = lower(${repository})
              AND i.connector_account_id IN ${sql.in(accountIds)}
            ORDER BY t.created_at, t.id`
  })
  const targetsOfRepository = (organizationId: OrganizationId, accountIds: ReadonlyArray<ConnectorAccountId>, repository: string) =>
    targetsOfRepositoryRows({ organizationId, accountIds, repository })

  // The webhook's changes, one organization's accounts of the delivering installation at a time.

  /**
   * Records a webhook delivery as handled; false when it already was. Not a tenant row: the delivery is claimed
   * before the organizations it concerns are known. A concurrent claim of the same id waits for this one's
   * transaction, then finds the row (or takes it, when this one rolled back).
   */
  const claimDeliveryRow = findOne({
    Request: Schema.Struct({ deliveryId: Schema.String, event: Schema.String, at: DateColumn }),
    Result: Schema.Struct({ deliveryId: Schema.String }),
    execute: ({ at, deliveryId, event }) =>
      sql`INSERT INTO codehost_deliveries (delivery_id, event, received_at)
            VALUES (${deliveryId}, ${event}, ${at}) ON CONFLICT (delivery_id) DO NOTHING RETURNING delivery_id`
  })
  const claimDelivery = (deliveryId: string, event: string, at: Date) =>
    Effect.map(claimDeliveryRow({ deliveryId, event, at }), Option.isSome)

  const ids = <A extends { readonly id: ConnectorInstanceId }>(rows: ReadonlyArray<A>) => rows.map((row) => row.id)

  const disableInstancesOfAccountsRows = findAll({
    Request: Schema.Struct({ ...AccountsOf.fields, at: DateColumn }),
    Result: Id(ConnectorInstanceId),
    execute: ({ accountIds, at, organizationId }) =>
      sql`UPDATE connector_instances SET status = 'disabled', updated_at = ${at}
            WHERE organization_id = ${organizationId} AND connector_account_id IN ${sql.in(accountIds)} AND status = 'active'
            RETURNING id`
  })
  /** Disables the active instances of these accounts; their ids. */
  const disableInstancesOfAccounts = (organizationId: OrganizationId, accountIds: ReadonlyArray<ConnectorAccountId>, at: Date) =>
    Effect.map(disableInstancesOfAccountsRows({ organizationId, accountIds, at }), ids)

  const disableInstancesOfRepositoriesRows = findAll({
    Request: Schema.Struct({ ...AccountsOf.fields, repositories: Schema.Array(Schema.String), at: DateColumn }),
    Result: Id(ConnectorInstanceId),
    execute: ({ accountIds, at, organizationId, repositories }) => {
      const names = sql.in(repositories.map((name) => name.toLowerCase()))
      return sql`UPDATE connector_instances i SET status = 'disabled', updated_at = ${at}
          WHERE i.organization_id = ${organizationId} AND i.connector_account_id IN ${sql.in(accountIds)} AND i.status = 'active'
            AND (lower(i.remote_id) IN ${names} OR EXISTS (
              SELECT 1 FROM connector_targets t
              WHERE t.organization_id = i.organization_id AND t.connector_instance_id = i.id AND lower(t.remote_id) IN ${names}))
          RETURNING i.id`
    }
  })
  /**
   * Disables the active instances of these accounts that follow one of `repositories` (full names, any case),
   * by their own repository or by one of their targets'; their ids.
   */
  const disableInstancesOfRepositories = (
    organizationId: OrganizationId,
    accountIds: ReadonlyArray<ConnectorAccountId>,
    repositories: ReadonlyArray<string>,
    at: Date
  ) => Effect.map(disableInstancesOfRepositoriesRows({ organizationId, accountIds, repositories, at }), ids)

  const Rename = Schema.Struct({ ...AccountsOf.fields, from: Schema.String, to: Schema.String, at: DateColumn })
  const renameInstances = findAll({
    Request: Rename,
    Result: Id(ConnectorInstanceId),
    execute: ({ accountIds, at, from, organizationId, to }) =>
      sql`UPDATE connector_instances SET remote_id = ${to}, updated_at = ${at}
            WHERE organization_id = ${organizationId} AND connector_account_id IN ${sql.in(accountIds)}
              AND lower(remote_id) = lower(${from})
            RETURNING id`
  })
  const renameTargets = findAll({
    Request: Rename,
    Result: Id(ConnectorTargetId),
    execute: ({ accountIds, at, from, organizationId, to }) =>
      sql`UPDATE connector_targets t SET remote_id = ${to}, updated_at = ${at}
            FROM connector_instances i
            WHERE t.organization_id = ${organizationId} AND i.organization_id = t.organization_id AND i.id = t.connector_instance_id
              AND i.connector_account_id IN ${sql.in(accountIds)} AND lower(t.remote_id) = lower(${from})
              AND NOT EXISTS (
                SELECT 1 FROM connector_targets other
                WHERE other.organization_id = t.organization_id AND other.connector_instance_id = t.connector_instance_id
                  AND other.id <> t.id AND lower(other.remote_id) = lower(${to}) AND other.external_target_ref = t.external_target_ref)
            RETURNING t.id`
  })
  /**
   * Renames a repository in the instances and targets of these accounts (matched in any case); how many of each
   * changed. A target that would collide with one the instance already has under the new name keeps the old name.
   */
  const renameRepository = Effect.fn("WebhookRepository.renameRepository")(function*(
    organizationId: OrganizationId,
    accountIds: ReadonlyArray<ConnectorAccountId>,
    from: string,
    to: string,
    at: Date
  ) {
    const request = { organizationId, accountIds, from, to, at }
    const instances = yield* renameInstances(request)
    const targets = yield* renameTargets(request)
    return { instances: instances.length, targets: targets.length }
  })

  return {
    claimDelivery,
    accountsOfInstallation,
    setAccountStatus,
    targetsOfRepository,
    disableInstancesOfAccounts,
    disableInstancesOfRepositories,
    renameRepository
  } as const
})

export class WebhookRepository extends Context.Service<WebhookRepository>()("@orgplane/server/connectors/WebhookRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
