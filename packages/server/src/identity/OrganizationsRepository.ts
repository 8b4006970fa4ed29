/**
 * Storage of organizations (the tenant root: an organization's id is the `organization_id` of every tenant row).
 * Which one operates the instance is OperatorRepository's.
 */
import { Model, SqlClient } from "@effect/sql"
import { Organization, OrganizationId, type UserId } from "@orgplane/schema"
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

      /** A new organization (never the instance's operator by being first: see identity/Operator.ts). */
      const insert = (row: typeof OrganizationRow.insert.Type) => Effect.as(insertRow(row), toOrganization(row))

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

      /**
       * Serializes every change to the organization's memberships (see `Memberships.lock`): the row lock on the
       * organization, held until the transaction ends. False when there is no such organization.
       */
      const lock = (organizationId: OrganizationId) =>
        sql`SELECT id FROM organizations WHERE id = ${organizationId} FOR UPDATE`.pipe(Effect.map((rows) => rows.length > 0))

      /** The organizations the person is an active owner of. */
      const countOwnedBy = (userId: UserId) =>
        sql<{ count: number }>`SELECT count(*)::int AS count FROM memberships
            WHERE user_id = ${userId} AND role = 'owner' AND removed_at IS NULL`.pipe(Effect.map((rows) => rows[0]?.count ?? 0))

      return { insert, find, update, lock, countOwnedBy } as const
    })
  }
) {}
