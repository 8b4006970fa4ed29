/**
 * Tenancy, checked mechanically: every SQL statement run against a test database is recorded (a statement
 * transformer on the SqlClient), and every statement that reads or writes a tenant table must name
 * `organization_id`. A tenant table is any table not listed below: a new table is tenant-scoped unless someone
 * says otherwise here, by name, with the reason.
 */
import { Statement } from "@effect/sql"
import { Effect, type Layer } from "effect"

/** Tables that are not tenant-scoped, and why. */
export const NonTenantTables: Readonly<Record<string, string>> = {
  users: "a person may belong to several organizations",
  sessions: "a session belongs to a person; its active organization is a preference, resolved against memberships",
  organizations: "the tenant root: its id is every tenant row's organization_id",
  instance_settings: "facts about the instance (operator organization, cursor key)",
  rate_limits: "counters keyed by client address or account",
  orgplane_migrations: "the schema's own history",
  orgplane_cluster_messages: "@effect/cluster's durable messages (platform/Durable.ts): work of every organization, keyed by entity",
  orgplane_cluster_replies: "@effect/cluster's replies to those messages",
  orgplane_cluster_runners: "@effect/cluster's runner registry",
  orgplane_cluster_locks: "@effect/cluster's shard locks (without advisory locks)",
  orgplane_cluster_shards: "@effect/cluster's shard table (probed at start-up)",
  orgplane_cluster_migrations: "@effect/cluster's own schema history",
  codehost_deliveries: "GitHub webhook delivery ids, received before the organization is known (deduplication of redeliveries)"
}

/**
 * Statements that read across organizations on purpose, and say so where they are written: they begin with the
 * comment `/* instance-wide: <what> *\/` (the admin metrics, reserved to the instance's operator). Keep the list
 * short: `grep -rn "instance-wide:" packages/server/src` shows every one.
 */
const instanceWide = /^\s*\/\*\s*instance-wide:[^*]+\*\//

/** Statements that change the schema, not rows: migrations. */
const ddl = /^\s*(?:--[^\n]*\n\s*)*(?:CREATE|ALTER|DROP|COMMENT)\b/i

const keywords = new Set(["lateral", "select", "set"])

const tableReference = /\b(?:FROM|JOIN|INTO|UPDATE)\s+(?:ONLY\s+)?("?)([a-z_][a-z0-9_]*)\1(\s*\()?/gi

/** Names a statement gives its common table expressions (`WITH messages AS (...)`): not tables. */
const cteName = /(?:\bWITH\s+(?:RECURSIVE\s+)?|,\s*)([a-z_][a-z0-9_]*)\s+AS\s+(?:(?:NOT\s+)?MATERIALIZED\s+)?\(/gi

/** The tables a statement reads or writes (functions, subqueries, CTEs and catalogs left out). */
export const tablesOf = (sql: string): ReadonlyArray<string> => {
  const tables = new Set<string>()
  const ctes = new Set([...sql.matchAll(cteName)].map((match) => match[1].toLowerCase()))
  for (const match of sql.matchAll(tableReference)) {
    const name = match[2].toLowerCase()
    if (match[3] !== undefined) continue // a function call such as unnest(...)
    // Keywords after FROM/JOIN/UPDATE (`ON CONFLICT DO UPDATE SET`, `JOIN LATERAL`), catalogs, and tables a test
    // creates for itself (named `test_*`).
    if (ctes.has(name) || keywords.has(name) || name.startsWith("pg_") || name === "information_schema" || name.startsWith("test_")) continue
    tables.add(name)
  }
  return [...tables]
}

/** The tenant tables the statement touches without naming `organization_id`; empty when it is fine. */
export const unscopedTables = (sql: string): ReadonlyArray<string> => {
  if (ddl.test(sql) || instanceWide.test(sql) || /\borganization_id\b/i.test(sql)) return []
  return tablesOf(sql).filter((table) => !(table in NonTenantTables))
}

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

/** The recorded statements that touch a tenant table without naming `organization_id`, with those tables. */
export const violations = (): ReadonlyArray<{ readonly sql: string; readonly tables: ReadonlyArray<string> }> =>
  statements().flatMap((sql) => {
    const tables = unscopedTables(sql)
    return tables.length === 0 ? [] : [{ sql, tables }]
  })

/** Throws, listing every offending statement, when a recorded statement breaks the rule. */
export const assertScoped = () => {
  const found = violations()
  if (found.length > 0) {
    throw new Error(
      `Statements on tenant tables that do not name organization_id (list non-tenant tables in packages/testkit/src/Tenancy.ts):\n` +
        found.map(({ sql, tables }) => `- [${tables.join(", ")}] ${sql}`).join("\n")
    )
  }
}
