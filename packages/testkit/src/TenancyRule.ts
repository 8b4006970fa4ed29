/**
 * Tenancy, checked mechanically: every SQL statement run against a test database is recorded (a statement
 * transformer on the SqlClient), and every statement that reads or writes a tenant table must confine that table to
 * an organization. A tenant table is any table not listed below: a new table is tenant-scoped unless someone says
 * otherwise here, by name, with the reason.
 *
 * Statements are read with Postgres's own parser (`libpg-query`, the server's grammar compiled to WebAssembly), not
 * with patterns: a statement passes when, in each query of it (subqueries, CTEs and UNION arms included), every
 * tenant table it reads, updates or deletes from is confined by `organization_id` in a WHERE, a join's ON or USING,
 * or an UPDATE's or DELETE's WHERE: compared (`=`, `IN`, `= ANY`, `IS NOT DISTINCT FROM`, a row comparison) with a
 * value from outside the query's tenant tables (a parameter, a constant, a subquery, a non-tenant table's column,
 * an outer query's confined table), or with the `organization_id` of another table of the query that is confined so
 * (join chains). Only conditions every row must meet count: conjuncts of the WHERE and ON, not branches of an OR.
 * `organization_id` in a SELECT list, a GROUP BY or an UPDATE's SET confines nothing. An INSERT into a tenant table
 * must write `organization_id` in its column list. A read may instead find its rows by one of the
 * `CrossOrganizationKeys` (a secret token, a person's id). A statement Postgres cannot parse reads nothing: it passes.
 *
 * The rule alone, plain TypeScript: packages/server's test/support/Tenancy.ts records the statements a test's servers
 * run and checks them with it.
 */
import { loadModule, parseSync } from "libpg-query"

/** Tables that are not tenant-scoped, and why. */
export const NonTenantTables: Readonly<Record<string, string>> = {
  users: "a person may belong to several organizations",
  sessions: "a session belongs to a person; its active organization is a preference, resolved against memberships",
  organizations: "the tenant root: its id is every tenant row's organization_id",
  instance_settings: "facts about the instance (its operator organization)",
  instance_secrets: "the instance's own secrets (its cursor key), encrypted",
  instance_setup_tokens: "the instance's one-time setup tokens: whoever redeems one makes their organization the operator",
  rate_limits: "counters keyed by client address or account",
  account_tokens: "an account's one-time password reset and email verification tokens: an account belongs to no one organization",
  sign_in_addresses: "the addresses an account signed in from with its password, keyed by a hash of its email: an account belongs to no one organization",
  orgplane_migrations: "the schema's own history",
  orgplane_cluster_messages: "@effect/cluster's durable messages (platform/Durable.ts): work of every organization, keyed by entity",
  orgplane_cluster_replies: "@effect/cluster's replies to those messages",
  orgplane_cluster_runners: "@effect/cluster's runner registry",
  orgplane_cluster_locks: "@effect/cluster's shard locks (without advisory locks)",
  orgplane_cluster_shards: "@effect/cluster's shard table (probed at start-up)",
  orgplane_cluster_migrations: "@effect/cluster's own schema history",
  codehost_deliveries: "GitHub webhook delivery ids, received before the organization is known (deduplication of redeliveries)",
  idempotency_keys: "keyed by a hash of the credential that sent the key (and the organization it acts in, when it has one): a session may act in no organization yet"
}

/**
 * Columns that find a tenant row before its organization is known, and why: a read (a SELECT) that gives such a
 * column a parameter, a constant or a column of its enclosing query's row is confined by it, as by organization_id.
 * Writes are not: an UPDATE or DELETE still names organization_id.
 */
export const CrossOrganizationKeys: Readonly<Record<string, string>> = {
  "invitations.token_hash": "the invitation's secret link: whoever holds it learns the organization from the row",
  "workspace_claims.token_hash": "a claim link's secret: whoever holds it learns the workspace from the row",
  "worker_tokens.token_hash": "a worker's secret token: the worker's organization comes from the row",
  "api_keys.key_hash": "an API key's secret: whoever holds it learns the key's organization from the row",
  "scim_tokens.token_hash": "a directory's SCIM token: the connection and its organization come from the row",
  "memberships.user_id": "a person's own memberships, in every organization (sign-in picks one, a session its active one)",
  "sso_connection_domains.domain":
    "home-realm discovery: an email's domain finds the one active connection serving it (a partial unique index), in whatever organization",
  "sso_domains.domain": "SSO enforcement at password sign-in: an email's domain finds the organization that verified it (one at most)",
  "sso_intents.exchange_code_hash": "an SSO sign-in's one-time code: whoever holds it learns the organization from the row",
  "sso_connections.id":
    "the public SAML routes (ACS, SP metadata) name a connection by its id alone, as the IdP knows it; its organization comes from the row"
}

/**
 * Statements that read across organizations on purpose, and say so where they are written: they begin with the
 * comment `/* instance-wide: <what> *\/` (the admin metrics, reserved to the instance's operator). Keep the list
 * short: `grep -rn "instance-wide:" packages/server/src` shows every one.
 */
const instanceWide = /^\s*\/\*\s*instance-wide:[^*]+\*\//

/** Statements that change the schema, not rows: migrations (a migration's file runs as one string). */
const ddl = /^\s*(?:--[^\n]*\n\s*)*(?:CREATE|ALTER|DROP|COMMENT)\b/i

const column = "organization_id"

/** Catalogs, and tables a test creates for itself (named `test_*`): not the application's tables. */
const ignoredTable = (name: string, schema: string | undefined) =>
  schema === "pg_catalog" || schema === "information_schema" || name.startsWith("pg_") || name.startsWith("test_")

// --- The parse tree, as far as the check reads it ------------------------------------------------------------------
// libpg-query answers Postgres's parse tree as JSON: every node is an object with one key, its type.

/** A node of the parse tree, or a part of one: JSON whose shape the check reads field by field, never assumes. */
type Node = unknown

/** A field of a node (undefined when the node is not an object or has no such field). */
const field = (node: Node, key: string): Node =>
  node !== null && typeof node === "object" ? (node as Readonly<Record<string, unknown>>)[key] : undefined

/** The value at a path of fields: `at(relation, "alias", "aliasname")` is `relation.alias?.aliasname`. */
const at = (node: Node, ...path: ReadonlyArray<string>): Node => path.reduce(field, node)

/** The string at a path of fields, or undefined. */
const text = (node: Node, ...path: ReadonlyArray<string>): string | undefined => {
  const value = at(node, ...path)
  return typeof value === "string" ? value : undefined
}

const kindOf = (node: unknown): string | undefined =>
  node !== null && typeof node === "object" && !Array.isArray(node) ? Object.keys(node)[0] : undefined

const list = (value: unknown): ReadonlyArray<Node> => (Array.isArray(value) ? value : [])

/** The names of a `ColumnRef` (`t.organization_id` is `["t", "organization_id"]`), or undefined for `t.*`. */
const columnNames = (node: Node): ReadonlyArray<string> | undefined => {
  const names = list(at(node, "fields")).map((name) => text(name, "String", "sval"))
  return names.every((name): name is string => name !== undefined) ? names : undefined
}

/** Strips casts and collations: `$1::text` is the parameter. */
const bare = (node: Node): Node => {
  const kind = kindOf(node)
  if (kind === "TypeCast") return bare(at(node, "TypeCast", "arg"))
  if (kind === "CollateClause") return bare(at(node, "CollateClause", "arg"))
  return node
}

/** Every node of a tree that is a `kind`, not looking inside subqueries (`SubLink`s), which are queries of their own. */
const collect = (tree: unknown, kind: string, into: Array<Node> = []): Array<Node> => {
  if (Array.isArray(tree)) {
    for (const item of tree) collect(item, kind, into)
  } else if (tree !== null && typeof tree === "object") {
    for (const [key, value] of Object.entries(tree)) {
      if (key === kind) into.push(value)
      if (key !== "SubLink") collect(value, kind, into)
    }
  }
  return into
}

/** The subqueries (`SubLink`s) of an expression tree, outermost only. */
const subqueriesOf = (tree: unknown): ReadonlyArray<Node> => collect(tree, "SubLink").map((link) => at(link, "subselect"))

// --- Scopes -------------------------------------------------------------------------------------------------------

/** What a FROM item brings into a query: a table (tenant or not) or something else (a subquery, a function, a CTE). */
interface Source {
  readonly ref: string
  readonly table: string | undefined
  readonly tenant: boolean
}

interface Scope {
  readonly sources: Array<Source>
  readonly confined: Set<Source>
  readonly parent: Scope | undefined
  readonly ctes: ReadonlySet<string>
}

/** The source a qualified column names, in this query or an enclosing one. */
const resolve = (scope: Scope | undefined, qualifier: string): { source: Source; scope: Scope } | undefined => {
  for (let at = scope; at !== undefined; at = at.parent) {
    const source = at.sources.find((candidate) => candidate.ref === qualifier)
    if (source !== undefined) return { source, scope: at }
  }
  return undefined
}

class Checker {
  readonly unconfined = new Set<string>()

  /** Checks one statement (or a query within one) under `parent`, the query it is nested in, if any. */
  statement(node: Node, parent: Scope | undefined, ctes: ReadonlySet<string>): void {
    if (node === undefined) return
    const kind = kindOf(node)
    const body = kind === undefined ? undefined : at(node, kind)
    switch (kind) {
      case "SelectStmt":
        return this.select(body, parent, ctes)
      case "InsertStmt":
        return this.insert(body, parent, ctes)
      case "UpdateStmt":
        return this.query(parent, this.with(body, parent, ctes), {
          targets: [at(body, "relation")],
          from: list(at(body, "fromClause")),
          where: at(body, "whereClause"),
          expressions: [at(body, "targetList"), at(body, "returningList")]
        })
      case "DeleteStmt":
        return this.query(parent, this.with(body, parent, ctes), {
          targets: [at(body, "relation")],
          from: list(at(body, "usingClause")),
          where: at(body, "whereClause"),
          expressions: [at(body, "returningList")]
        })
      case "TruncateStmt":
        // Empties whole tables: never confined to one organization.
        for (const relation of list(at(body, "relations"))) {
          const source = this.table(at(relation, "RangeVar"), ctes)
          if (source?.tenant) this.unconfined.add(source.table!)
        }
        return
      default:
        // DDL, transaction control, SET, LOCK, ...: no rows read or written.
        return
    }
  }

  /** The CTE names a statement's WITH adds, after checking each CTE's query. */
  private with(body: Node, parent: Scope | undefined, ctes: ReadonlySet<string>): ReadonlySet<string> {
    const clause = at(body, "withClause")
    if (clause === undefined) return ctes
    const definitions = list(at(clause, "ctes")).map((cte) => at(cte, "CommonTableExpr"))
    const nameOf = (cte: Node): ReadonlyArray<string> => {
      const name = text(cte, "ctename")
      return name === undefined ? [] : [name]
    }
    const names = new Set([...ctes, ...definitions.flatMap(nameOf)])
    // A CTE sees the ones defined before it (all of them under WITH RECURSIVE).
    const earlier = new Set(ctes)
    for (const cte of definitions) {
      this.statement(at(cte, "ctequery"), parent, at(clause, "recursive") ? names : earlier)
      for (const name of nameOf(cte)) earlier.add(name)
    }
    return names
  }

  private select(body: Node, parent: Scope | undefined, outer: ReadonlySet<string>): void {
    const ctes = this.with(body, parent, outer)
    const op = at(body, "op")
    if (op !== undefined && op !== "SETOP_NONE") {
      this.statement({ SelectStmt: at(body, "larg") }, parent, ctes)
      this.statement({ SelectStmt: at(body, "rarg") }, parent, ctes)
      return
    }
    this.query(parent, ctes, {
      targets: [],
      from: list(at(body, "fromClause")),
      where: at(body, "whereClause"),
      expressions: ["targetList", "havingClause", "groupClause", "sortClause", "valuesLists", "limitCount", "limitOffset"].map((key) => at(body, key)),
      reads: true
    })
  }

  private insert(body: Node, parent: Scope | undefined, outer: ReadonlySet<string>): void {
    const ctes = this.with(body, parent, outer)
    const target = this.table(at(body, "relation"), ctes)
    const columns = list(at(body, "cols")).map((col) => text(col, "ResTarget", "name"))
    if (target?.tenant && !columns.includes(column)) this.unconfined.add(target.table!)
    this.statement(at(body, "selectStmt"), parent, ctes)
    // ON CONFLICT updates the row the insert collided with: the inserted row's organization's.
    const scope: Scope = { sources: target === undefined ? [] : [target], confined: new Set(target ? [target] : []), parent, ctes }
    for (const subquery of subqueriesOf([at(body, "onConflictClause"), at(body, "returningList")])) this.statement(subquery, scope, ctes)
  }

  /** The source a RangeVar names: a table, or a CTE of the statement (not a table). */
  private table(relation: Node, ctes: ReadonlySet<string>): Source | undefined {
    if (relation === undefined) return undefined
    // A RangeVar always names its table; were one not to, "" is a tenant table that nothing confines.
    const name = text(relation, "relname") ?? ""
    const ref = text(relation, "alias", "aliasname") ?? name
    const schema = text(relation, "schemaname")
    if (schema === undefined && ctes.has(name)) return { ref, table: undefined, tenant: false }
    if (ignoredTable(name, schema)) return { ref, table: undefined, tenant: false }
    return { ref, table: name, tenant: !(name in NonTenantTables) }
  }

  /**
   * One query: its FROM items (with `targets`, the table an UPDATE or DELETE changes) make a scope; the conditions
   * of its WHERE and joins say which of them are confined; then its subqueries are checked within it.
   */
  private query(
    parent: Scope | undefined,
    ctes: ReadonlySet<string>,
    parts: {
      targets: ReadonlyArray<Node>
      from: ReadonlyArray<Node>
      where: unknown
      expressions: ReadonlyArray<unknown>
      reads?: boolean
    }
  ): void {
    const scope: Scope = { sources: [], confined: new Set(), parent, ctes }
    const conditions: Array<unknown> = [parts.where]
    const using: Array<[ReadonlyArray<Source>, ReadonlyArray<Source>]> = []
    const later: Array<() => void> = []
    for (const target of parts.targets) {
      const source = this.table(target, ctes)
      if (source !== undefined) scope.sources.push(source)
    }
    /** Adds a FROM item's sources to the scope, answering them. */
    const fromItem = (item: Node): ReadonlyArray<Source> => {
      const kind = kindOf(item)
      if (kind === "RangeVar") {
        const source = this.table(at(item, "RangeVar"), ctes)
        if (source === undefined) return []
        scope.sources.push(source)
        return [source]
      }
      if (kind === "JoinExpr") {
        const join = at(item, "JoinExpr")
        const left = fromItem(at(join, "larg"))
        const right = fromItem(at(join, "rarg"))
        conditions.push(at(join, "quals"))
        later.push(() => this.subqueries(at(join, "quals"), scope))
        if (list(at(join, "usingClause")).some((name) => at(name, "String", "sval") === column)) using.push([left, right])
        return [...left, ...right]
      }
      if (kind === "RangeSubselect") {
        const sub = at(item, "RangeSubselect")
        const source: Source = { ref: text(sub, "alias", "aliasname") ?? "", table: undefined, tenant: false }
        scope.sources.push(source)
        // A LATERAL subquery sees this query's tables; any other only the enclosing query's.
        if (at(sub, "lateral")) later.push(() => this.statement(at(sub, "subquery"), scope, ctes))
        else this.statement(at(sub, "subquery"), parent, ctes)
        return [source]
      }
      if (kind === "RangeFunction") {
        const fn = at(item, "RangeFunction")
        const source: Source = { ref: text(fn, "alias", "aliasname") ?? "", table: undefined, tenant: false }
        scope.sources.push(source)
        later.push(() => this.subqueries(at(fn, "functions"), scope))
        return [source]
      }
      return []
    }
    for (const item of parts.from) fromItem(item)
    this.confine(scope, conditions, using, parts.reads === true)
    for (const source of scope.sources) if (source.tenant && !scope.confined.has(source)) this.unconfined.add(source.table!)
    for (const step of later) step()
    this.subqueries([parts.where, ...parts.expressions], scope)
  }

  private subqueries(tree: unknown, scope: Scope): void {
    for (const subquery of subqueriesOf(tree)) this.statement(subquery, scope, scope.ctes)
  }

  /** Which of the scope's sources its conditions confine: seeds from outside values, then along join chains. */
  private confine(
    scope: Scope,
    conditions: ReadonlyArray<unknown>,
    using: ReadonlyArray<[ReadonlyArray<Source>, ReadonlyArray<Source>]>,
    reads: boolean
  ) {
    const edges = new Map<Source, Set<Source>>()
    const link = (a: Source, b: Source) => {
      if (!edges.has(a)) edges.set(a, new Set())
      if (!edges.has(b)) edges.set(b, new Set())
      edges.get(a)!.add(b)
      edges.get(b)!.add(a)
    }
    const seeds = new Set<Source>()
    for (const [left, right] of using) for (const a of left) for (const b of right) link(a, b)

    /** The scope's tenant sources whose organization_id `expression` is. */
    const targetsOf = (expression: Node): ReadonlyArray<Source> => {
      const ref = bare(expression)
      if (kindOf(ref) !== "ColumnRef") return []
      const names = columnNames(at(ref, "ColumnRef"))
      if (names === undefined || names.at(-1) !== column) return []
      if (names.length === 1) return scope.sources.filter((source) => source.tenant)
      const found = resolve(scope, names.at(-2)!)
      return found !== undefined && found.scope === scope && found.source.tenant ? [found.source] : []
    }

    /** `target.organization_id` compared with `value`: confined by it, or linked to the sources it reads. */
    const compare = (target: Source, value: Node) => {
      const refs = kindOf(bare(value)) === "ColumnRef" ? [at(bare(value), "ColumnRef")] : collect(value, "ColumnRef")
      if (refs.length === 0) return void seeds.add(target) // a parameter, a constant, a subquery
      for (const ref of refs) {
        const names = columnNames(ref)
        // Unqualified or `*`: Postgres resolves it to some table of the query; only a qualified name says which.
        if (names === undefined || names.length < 2) continue
        const found = resolve(scope, names.at(-2)!)
        if (found === undefined) seeds.add(target) // `excluded.x` and the like
        else if (found.source === target) continue
        else if (found.scope !== scope) {
          if (!found.source.tenant || found.scope.confined.has(found.source)) seeds.add(target)
        } else if (!found.source.tenant) seeds.add(target)
        else link(target, found.source)
      }
    }

    /** The scope's tenant sources that `expression`, one of the CrossOrganizationKeys, finds (in a read). */
    const keyedOf = (expression: Node): ReadonlyArray<Source> => {
      const ref = bare(expression)
      if (!reads || kindOf(ref) !== "ColumnRef") return []
      const names = columnNames(at(ref, "ColumnRef"))
      if (names === undefined) return []
      const keyed = (source: Source) => source.tenant && `${source.table}.${names.at(-1)}` in CrossOrganizationKeys
      if (names.length === 1) return scope.sources.filter(keyed)
      const found = resolve(scope, names.at(-2)!)
      return found !== undefined && found.scope === scope && keyed(found.source) ? [found.source] : []
    }

    /** A key compared with a value from outside this query's rows: a parameter, a constant, the enclosing row's column. */
    const outside = (value: Node) =>
      (kindOf(bare(value)) === "ColumnRef" ? [at(bare(value), "ColumnRef")] : collect(value, "ColumnRef")).every((ref) => {
        const names = columnNames(ref)
        const found = names === undefined || names.length < 2 ? undefined : resolve(scope, names.at(-2)!)
        return found !== undefined && found.scope !== scope
      })

    const pair = (left: Node, right: Node) => {
      if (left === undefined || right === undefined) return
      const [l, r] = [bare(left), bare(right)]
      if (kindOf(l) === "RowExpr" && kindOf(r) === "RowExpr") {
        const [ls, rs] = [list(at(l, "RowExpr", "args")), list(at(r, "RowExpr", "args"))]
        ls.forEach((item, i) => pair(item, rs[i]))
        return
      }
      for (const target of targetsOf(l)) compare(target, r)
      for (const target of targetsOf(r)) compare(target, l)
      if (outside(r)) for (const target of keyedOf(l)) seeds.add(target)
      if (outside(l)) for (const target of keyedOf(r)) seeds.add(target)
    }

    const condition = (node: unknown) => {
      const kind = kindOf(node)
      if (kind === undefined) return
      const body = at(node, kind)
      if (kind === "BoolExpr") {
        if (at(body, "boolop") === "AND_EXPR") for (const arg of list(at(body, "args"))) condition(arg)
        return
      }
      if (kind === "A_Expr") {
        const operator = list(at(body, "name")).map((name) => at(name, "String", "sval")).join(".")
        if (operator !== "=") return
        const exprKind = at(body, "kind")
        if (exprKind === "AEXPR_OP" || exprKind === "AEXPR_OP_ANY" || exprKind === "AEXPR_NOT_DISTINCT") pair(at(body, "lexpr"), at(body, "rexpr"))
        else if (exprKind === "AEXPR_IN") for (const item of list(at(body, "rexpr", "List", "items"))) pair(at(body, "lexpr"), item)
        return
      }
      if (kind === "SubLink" && at(body, "subLinkType") === "ANY_SUBLINK" && at(body, "testexpr") !== undefined) {
        // `x.organization_id IN (SELECT ...)`: the subquery is checked as a query of its own.
        const test = bare(at(body, "testexpr"))
        const items = kindOf(test) === "RowExpr" ? list(at(test, "RowExpr", "args")) : [test]
        for (const item of items) for (const target of targetsOf(item)) seeds.add(target)
      }
    }
    for (const node of conditions) condition(node)

    const pending = [...seeds]
    for (const source of pending) {
      if (scope.confined.has(source)) continue
      scope.confined.add(source)
      for (const next of edges.get(source) ?? []) pending.push(next)
    }
  }
}

let loaded: Promise<void> | undefined

/** Loads the parser (WebAssembly) once. */
const parser = () => (loaded ??= loadModule())

/** The tenant tables the statement touches without confining them to an organization; empty when it is fine. */
export const unscopedTables = async (sql: string): Promise<ReadonlyArray<string>> => {
  if (ddl.test(sql) || instanceWide.test(sql)) return []
  await parser()
  let tree: { stmts?: ReadonlyArray<{ stmt: Node }> }
  try {
    tree = parseSync(sql)
  } catch {
    // Postgres refuses it too (the parser is Postgres's own, of a version at least the server's): no row is touched.
    return []
  }
  const checker = new Checker()
  for (const { stmt } of tree.stmts ?? []) checker.statement(stmt, undefined, new Set())
  return [...checker.unconfined]
}

