/**
 * packages/testkit's tenancy check (Tenancy.ts) for the Effect 4 server: every SQL statement a test server runs is
 * recorded (a statement transformer, `Statement.CurrentTransformer`, under the server's layers: HttpServer.ts gives
 * it), and checked with testkit's rule (TenancyRule.ts's `unscopedTables`, Postgres's own parser, plain TypeScript),
 * the rule itself unchanged; its list of non-tenant tables gets the one table of Effect 4's cluster whose name Effect
 * 3's has not (`EffectFourTables`).
 *
 * `tenancySetup.ts` checks every test file's statements after its tests, as testkit's does.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Statement from "effect/sql/Statement"
import { unscopedTables } from "../../../../packages/testkit/src/TenancyRule.js"

/** Tables of Effect 4's own that are not tenant-scoped, and why (testkit's `NonTenantTables` names Effect 3's). */
export const EffectFourTables: Readonly<Record<string, string>> = {
  orgplane_cluster_runner_migrations: "effect/cluster 4's runner storage's own schema history (Effect 3's cluster kept one, orgplane_cluster_migrations)"
}

/** Every distinct statement run by test servers in this process (one test file), oldest first. */
const recorded = new Set<string>()

export const statements = (): ReadonlyArray<string> => [...recorded]

/** Records every statement run under it. */
export const recorder: Layer.Layer<never> = Layer.succeed(Statement.CurrentTransformer, (statement) =>
  Effect.sync(() => {
    recorded.add(statement.compile()[0].replace(/\s+/g, " ").trim())
    return statement
  }))

/** The recorded statements that touch a tenant table without confining it to an organization, with those tables. */
export const violations = async (): Promise<ReadonlyArray<{ readonly sql: string; readonly tables: ReadonlyArray<string> }>> => {
  const found: Array<{ sql: string; tables: ReadonlyArray<string> }> = []
  for (const sql of statements()) {
    const tables = (await unscopedTables(sql)).filter((table) => !(table in EffectFourTables))
    if (tables.length > 0) found.push({ sql, tables })
  }
  return found
}
