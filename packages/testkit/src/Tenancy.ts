/**
 * Tenancy, checked mechanically: every SQL statement run against a test database is recorded (a statement
 * transformer on the SqlClient), and each must satisfy the tenancy rule (TenancyRule.ts: every statement that reads or
 * writes a tenant table confines that table to an organization).
 */
import { Statement } from "@effect/sql"
import { Effect, type Layer } from "effect"
import { unscopedTables } from "./TenancyRule.js"

export { CrossOrganizationKeys, NonTenantTables, unscopedTables } from "./TenancyRule.js"

/** Every distinct statement run against test databases in this process, oldest first. */
const recorded = new Set<string>()

export const statements = (): ReadonlyArray<string> => [...recorded]

/** Records every statement of the SqlClients built under it. */
export const recorder: Layer.Layer<never> = Statement.setTransformer((statement) =>
  Effect.sync(() => {
    recorded.add(statement.compile()[0].replace(/\s+/g, " ").trim())
    return statement
  })
)

/** The recorded statements that touch a tenant table without confining it to an organization, with those tables. */
export const violations = async (): Promise<ReadonlyArray<{ readonly sql: string; readonly tables: ReadonlyArray<string> }>> => {
  const found: Array<{ sql: string; tables: ReadonlyArray<string> }> = []
  for (const sql of statements()) {
    const tables = await unscopedTables(sql)
    if (tables.length > 0) found.push({ sql, tables })
  }
  return found
}

/** Throws, listing every offending statement, when a recorded statement breaks the rule. */
export const assertScoped = async () => {
  const found = await violations()
  if (found.length > 0) {
    throw new Error(
      `Statements on tenant tables not confined by organization_id in a WHERE, ON or USING, or an INSERT's columns ` +
        `(list non-tenant tables in packages/testkit/src/TenancyRule.ts):\n` +
        found.map(({ sql, tables }) => `- [${tables.join(", ")}] ${sql}`).join("\n")
    )
  }
}
