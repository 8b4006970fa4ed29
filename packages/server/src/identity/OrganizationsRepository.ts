/**
 * Storage of organizations (the tenant root: an organization's id is the `organization_id` of every tenant row) and
 * of which organization operates the instance.
 */
import { Model, SqlClient } from "@effect/sql"
import { Organization, OrganizationId } from "@orgplane/schema"
import { Effect, Option, Schema } from "effect"
import { DateColumn, execute, findOne } from "../platform/Statements.js"

export class OrganizationRow extends Model.Class<OrganizationRow>("OrganizationRow")({
  id: Model.GeneratedByApp(OrganizationId),
  name: Organization.fields.name,
  plan: Organization.fields.plan,
  provisional: Organization.fields.provisional,
  createdAt: DateColumn,
  updatedAt: DateColumn
}) {}

/** The API's organization from a row (decoded, so valid: the class does not check it again). */
export const toOrganization = (row: Pick<OrganizationRow, "id" | "name" | "plan" | "provisional" | "createdAt">) =>
  new Organization({ id: row.id, name: row.name, plan: row.plan, provisional: row.provisional, createdAt: row.createdAt }, true)

export class OrganizationsRepository extends Effect.Service<OrganizationsRepository>()(
  "@orgplane/server/identity/OrganizationsRepository",
  {
    effect: Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const insertRow = execute({
        Request: OrganizationRow.insert,
        execute: (row) => sql`INSERT INTO organizations ${sql.insert(row)}`
      })

      /** A new organization; the first of the instance operates it, unless configuration names another. */
      const insert = (row: typeof OrganizationRow.insert.Type) =>
        Effect.gen(function*() {
          yield* insertRow(row)
          yield* sql`INSERT INTO instance_settings (key, value) VALUES ('operator_organization_id', ${row.id})
                     ON CONFLICT (key) DO NOTHING`
          return toOrganization(row)
        })

      const findRow = findOne({
        Request: OrganizationId,
        Result: OrganizationRow,
        execute: (organizationId) => sql`SELECT * FROM organizations WHERE id = ${organizationId}`
      })
      const find = (organizationId: OrganizationId) => Effect.map(findRow(organizationId), Option.map(toOrganization))

      const updateRow = findOne({
        Request: Schema.Struct({
          id: OrganizationId,
          name: Schema.optional(Organization.fields.name),
          plan: Schema.optional(Organization.fields.plan),
          provisional: Schema.optional(Schema.Boolean),
          updatedAt: DateColumn
        }),
        Result: OrganizationRow,
        execute: ({ id, ...changes }) => sql`UPDATE organizations SET ${sql.update(changes)} WHERE id = ${id} RETURNING *`
      })
      /** Changes the organization; none when it does not exist. */
      const update = (
        organizationId: OrganizationId,
        changes: { readonly name?: string; readonly plan?: Organization["plan"]; readonly provisional?: boolean },
        at: Date
      ) => Effect.map(updateRow({ id: organizationId, ...changes, updatedAt: at }), Option.map(toOrganization))

      const operatorOrganizationId = sql<{ value: OrganizationId }>`
        SELECT value FROM instance_settings WHERE key = 'operator_organization_id'`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]?.value))
      )

      /**
       * Serializes every change to the organization's memberships (see `Memberships.lock`): the row lock on the
       * organization, held until the transaction ends. False when there is no such organization.
       */
      const lock = (organizationId: OrganizationId) =>
        sql`SELECT id FROM organizations WHERE id = ${organizationId} FOR UPDATE`.pipe(Effect.map((rows) => rows.length > 0))

      return { insert, find, update, operatorOrganizationId, lock } as const
    })
  }
) {}
