/**
 * Storage of an organization's SSO enforcement policy (`sso_policies`, one row per organization once set).
 */
import { OrganizationId, SsoPolicy } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { DateColumn, execute, findOne } from "../platform/Statements.js"

export const SsoPolicyRow = Schema.Struct({
  organizationId: OrganizationId,
  requireSso: SsoPolicy.fields.requireSso,
  ownersPasswordFallback: SsoPolicy.fields.ownersPasswordFallback,
  updatedAt: DateColumn
})
export type SsoPolicyRow = typeof SsoPolicyRow.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const find = findOne({
    Request: OrganizationId,
    Result: SsoPolicyRow,
    execute: (organizationId) => sql`SELECT * FROM sso_policies WHERE organization_id = ${organizationId}`
  })

  const upsert = execute({
    Request: SsoPolicyRow,
    execute: (row) =>
      sql`INSERT INTO sso_policies ${sql.insert(row)}
            ON CONFLICT (organization_id) DO UPDATE
            SET require_sso = EXCLUDED.require_sso, owners_password_fallback = EXCLUDED.owners_password_fallback, updated_at = EXCLUDED.updated_at`
  })

  /** Whether an active connection of the organization serves one of its verified domains (what enforcement needs). */
  const hasActiveConnection = Effect.fn("PolicyRepository.hasActiveConnection")(function*(organizationId: OrganizationId) {
    const rows = yield* sql<{ readonly served: boolean }>`SELECT EXISTS (
            SELECT 1 FROM sso_connection_domains cd
            JOIN sso_domains d ON d.organization_id = cd.organization_id AND d.domain = cd.domain
            WHERE cd.organization_id = ${organizationId} AND cd.active AND d.verified_at IS NOT NULL
          ) AS served`
    return rows[0]?.served === true
  })

  return { find, upsert, hasActiveConnection } as const
})

export class PolicyRepository extends Context.Service<PolicyRepository>()("@orgplane/server/sso/PolicyRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
