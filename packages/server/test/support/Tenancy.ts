/**
 * The tenancy check of the test servers: every SQL statement a test server runs is recorded (a statement
 * transformer, `Statement.CurrentTransformer`, under the server's layers: HttpServer.ts gives it), and checked with
 * testkit's rule (TenancyRule.ts's `unscopedTables`, Postgres's own parser, plain TypeScript), whose list of
 * non-tenant tables gets one more of effect/cluster's here (`ClusterTables`).
 *
 * `tenancySetup.ts` checks every test file's statements after its tests.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Statement from "effect/sql/Statement"
import { unscopedTables } from "../../../../packages/testkit/src/TenancyRule.js"

/** Tables effect/cluster makes that are not tenant-scoped and not in testkit's `NonTenantTables`, and why. */
export const ClusterTables: Readonly<Record<string, string>> = {
  orgplane_cluster_runner_migrations: "effect/cluster's runner storage's own schema history"
}

/** Every distinct statement run by test servers in this process since the last check, oldest first. */
const recorded = new Set<string>()

export const statements = (): ReadonlyArray<string> => [...recorded]

/** Records every statement run under it. */
export const recorder: Layer.Layer<never> = Layer.succeed(Statement.CurrentTransformer, (statement) =>
  Effect.sync(() => {
    recorded.add(statement.compile()[0].replace(/\s+/g, " ").trim())
    return statement
  }))

/**
 * The statements recorded since the last call that touch a tenant table without confining it to an organization,
 * with those tables; the statements are forgotten (test files share a worker's process: each file checks its own).
 */
export const violations = async (): Promise<ReadonlyArray<{ readonly sql: string; readonly tables: ReadonlyArray<string> }>> => {
  const found: Array<{ sql: string; tables: ReadonlyArray<string> }> = []
  const taken = statements()
  recorded.clear()
  for (const sql of taken) {
    const tables = (await unscopedTables(sql)).filter((table) => !(table in ClusterTables))
    if (tables.length > 0) found.push({ sql, tables })
  }
  return found
}
