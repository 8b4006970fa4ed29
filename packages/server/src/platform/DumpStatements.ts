/**
 * What a restore (`orgplane db restore`, platform/DatabaseDump.ts) reads in a dump and lets run: the statements of
 * pg_dump's plain SQL, and the rule that each is one pg_dump writes for orgplane's own schema. The rule holds whatever
 * the dump's signature says, so that a file signed with a leaked key, or a restore run as a database superuser,
 * still makes nothing but orgplane's tables in schema `public` and the rows in them.
 *
 * Each statement is read by Postgres's own parser (`libpg-query`, the server's grammar compiled to WebAssembly) and
 * must be exactly one statement of these kinds: the settings pg_dump opens with (each name with the one value it
 * writes), the search path's reset and a sequence's `setval`, tables, sequences, indexes, constraints, defaults and
 * partitions of schema `public`, rows inserted as constants, and the trigger function and trigger of orgplane's
 * migrations, statement for statement. Within them, a table, index or sequence is of `public`; a type, operator,
 * collation or operator class is the system's (`pg_catalog`, or unqualified); a function called in a default, a
 * check or an index is one orgplane's schema calls (`expressionFunctions`); nothing else (no subquery, no other
 * node of the parse tree). So there is no role, no `COPY`, no `PROGRAM`, no `DO`, no other function, no extension,
 * no `ALTER SYSTEM`, no schema, and no object outside `public`. A statement pg_dump writes for a later migration's
 * new kind of object is refused until the rule names it (test/DumpStatements.test.ts dumps the real schema).
 */
import * as Effect from "effect/Effect"

/**
 * The statements of pg_dump's plain SQL, in order, without comments, psql's meta-commands (a line starting with a
 * backslash) or the terminating semicolons. Quoted strings (`'…'`, `E'…'`), quoted names (`"…"`), dollar-quoted
 * bodies (`$tag$…$tag$`) and comments are read as such, so a semicolon inside one does not end a statement. Where
 * this reading and Postgres's part ways, a piece holds more or less than one statement, which `refusal` refuses.
 */
export const statements = (text: string): ReadonlyArray<string> => {
  const found: Array<string> = []
  let start = 0
  let index = 0
  const isWord = (char: string | undefined) => char !== undefined && /[\p{L}\p{N}_]/u.test(char)
  /** The statement begun at `start`, up to `end`, without the comments before it. */
  const pending = (end: number) => text.slice(start, end).replace(/^(?:\s|--[^\n]*(?:\n|$))+/u, "").trim()
  const push = (end: number) => {
    const statement = pending(end)
    if (statement !== "") found.push(statement)
  }
  while (index < text.length) {
    const char = text[index]!
    const next = text[index + 1]
    if (char === "-" && next === "-") {
      const end = text.indexOf("\n", index)
      index = end < 0 ? text.length : end + 1
    } else if (char === "/" && next === "*") {
      let depth = 1
      index += 2
      while (index < text.length && depth > 0) {
        if (text.startsWith("/*", index)) (depth++, index += 2)
        else if (text.startsWith("*/", index)) (depth--, index += 2)
        else index++
      }
    } else if (char === "'") {
      const escapes = (text[index - 1] === "E" || text[index - 1] === "e") && !isWord(text[index - 2])
      index++
      while (index < text.length) {
        if (escapes && text[index] === "\\") index += 2
        else if (text[index] === "'" && text[index + 1] === "'") index += 2
        else if (text[index] === "'") break
        else index++
      }
      index++
    } else if (char === "\"") {
      index++
      while (index < text.length && !(text[index] === "\"" && text[index + 1] !== "\"")) index += text[index] === "\"" ? 2 : 1
      index++
    } else if (char === "$" && !isWord(text[index - 1])) {
      const tag = /^\$(?:[\p{L}_][\p{L}\p{N}_]*)?\$/u.exec(text.slice(index, index + 64))
      if (tag === null) index++
      else {
        const end = text.indexOf(tag[0], index + tag[0].length)
        index = end < 0 ? text.length : end + tag[0].length
      }
    } else if (char === "\\" && (index === 0 || text[index - 1] === "\n") && pending(index) === "") {
      // A psql meta-command (`\connect`, `\restrict`): a line of its own, not SQL.
      const end = text.indexOf("\n", index)
      index = end < 0 ? text.length : end + 1
      start = index
    } else if (char === ";") {
      push(index)
      index++
      start = index
    } else index++
  }
  push(text.length)
  return found
}

/** Postgres's parser: a statement's parse tree as libpg-query answers it (`{ stmts: [{ stmt }] }`); throws on bad SQL. */
export type Parse = (statement: string) => unknown

/** Postgres's parser, loaded (its WebAssembly) when a restore first needs it, not when the server starts. */
export const loadParser: Effect.Effect<Parse> = Effect.promise(async () => {
  const parser = await import("libpg-query")
  await parser.loadModule()
  return (statement: string): unknown => parser.parseSync(statement)
})

/** The settings pg_dump opens a dump with, each with the one value it writes. */
const settings: Readonly<Record<string, string>> = {
  statement_timeout: "0",
  lock_timeout: "0",
  idle_in_transaction_session_timeout: "0",
  transaction_timeout: "0",
  client_encoding: "UTF8",
  standard_conforming_strings: "on",
  check_function_bodies: "false",
  xmloption: "content",
  client_min_messages: "warning",
  row_security: "off",
  default_tablespace: "",
  default_table_access_method: "heap"
}

/** The functions orgplane's schema calls in its defaults, checks and indexes: the system's, which run no statement. */
export const expressionFunctions: ReadonlySet<string> = new Set([
  "now",
  "nextval",
  "lower",
  "char_length",
  "cardinality",
  "num_nonnulls",
  "to_tsvector"
])

/** The routines of orgplane's migrations (0043: a key's pending invitations end with it), as pg_dump writes them. */
const routines: ReadonlyArray<string> = [
  `CREATE FUNCTION public.cancel_api_key_invitations() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
  UPDATE invitations SET status = 'canceled', updated_at = now()
    WHERE organization_id = OLD.organization_id AND created_by_api_key_id = OLD.id AND status = 'pending';
  RETURN OLD;
END
$$`,
  "CREATE TRIGGER api_keys_cancel_invitations BEFORE DELETE ON public.api_keys FOR EACH ROW EXECUTE FUNCTION public.cancel_api_key_invitations()"
]

/** The parse tree's nodes that may stand in the statements below: names, types, constants and plain expressions. */
const nodes: ReadonlySet<string> = new Set([
  "A_ArrayExpr",
  "A_Const",
  "A_Expr",
  "AlterTableCmd",
  "BitString",
  "BoolExpr",
  "Boolean",
  "BooleanTest",
  "CaseExpr",
  "CaseWhen",
  "CoalesceExpr",
  "CollateClause",
  "ColumnDef",
  "ColumnRef",
  "Constraint",
  "DefElem",
  "Float",
  "FuncCall",
  "IndexElem",
  "Integer",
  "List",
  "MinMaxExpr",
  "NullTest",
  "PartitionBoundSpec",
  "PartitionCmd",
  "PartitionElem",
  "PartitionRangeDatum",
  "PartitionSpec",
  "RangeVar",
  "ResTarget",
  "RowExpr",
  "SQLValueFunction",
  "String",
  "TypeCast",
  "TypeName"
])

/** What `ALTER TABLE` and `ALTER INDEX` do in a dump: add constraints and defaults, attach partitions. */
const alterations: ReadonlySet<string> = new Set(["AT_AddConstraint", "AT_ColumnDefault", "AT_AttachPartition"])

/** What a sequence is made with. */
const sequenceOptions: ReadonlySet<string> = new Set(["as", "start", "increment", "minvalue", "maxvalue", "cache", "cycle"])

/** The index methods of Postgres itself. */
const indexMethods: ReadonlySet<string> = new Set(["btree", "gin", "gist", "hash", "brin", "spgist"])

type Tree = Readonly<Record<string, unknown>>

const isTree = (value: unknown): value is Tree => typeof value === "object" && value !== null && !Array.isArray(value)

const items = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const field = (tree: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((at, key) => (isTree(at) ? at[key] : undefined), tree)

/** The node's type and body (`{"RangeVar": {…}}`), if it is a node. */
const nodeOf = (value: unknown): readonly [string, Tree] | undefined => {
  if (!isTree(value)) return undefined
  const keys = Object.keys(value)
  const body = keys.length === 1 ? value[keys[0]!] : undefined
  return keys.length === 1 && isTree(body) ? [keys[0]!, body] : undefined
}

/** The strings of a qualified name (`[{String: {sval}}…]`), or undefined if one part is not a string. */
const nameOf = (value: unknown): ReadonlyArray<string> | undefined => {
  const parts = items(value).map((part) => field(part, "String", "sval"))
  return parts.every((part): part is string => typeof part === "string") ? parts : undefined
}

const written = (parts: ReadonlyArray<string>) => parts.join(".")

/** A constant's text as the statement wrote it (`0`, `'UTF8'`, `on`), or undefined for NULL and non-constants. */
const constantText = (value: unknown): string | undefined => {
  const constant = field(value, "A_Const")
  if (!isTree(constant) || constant.isnull === true) return undefined
  if ("sval" in constant) return String(field(constant, "sval", "sval") ?? "")
  if ("ival" in constant) return String(field(constant, "ival", "ival") ?? 0)
  if ("fval" in constant) return String(field(constant, "fval", "fval") ?? "0")
  if ("boolval" in constant) return String(field(constant, "boolval", "boolval") ?? false)
  if ("bsval" in constant) return String(field(constant, "bsval", "bsval") ?? "")
  return undefined
}

/** Why a system object's name (type, operator, collation, operator class) is not one: another schema's. */
const systemName = (value: unknown, what: string): string | undefined => {
  const parts = nameOf(value)
  if (parts === undefined) return `a ${what} named by an expression`
  return parts.length === 1 || (parts.length === 2 && parts[0] === "pg_catalog") ? undefined : `the ${what} ${written(parts)} of another schema than pg_catalog`
}

/** Why a called function is not one of `expressionFunctions`. */
const calledFunction = (call: Tree): string | undefined => {
  const parts = nameOf(call.funcname) ?? []
  const system = parts.length === 1 || (parts.length === 2 && parts[0] === "pg_catalog")
  return system && expressionFunctions.has(parts[parts.length - 1]!) ? undefined : `a call of ${written(parts)}()`
}

/**
 * Why the tree under a statement is not made of `nodes` naming only `public`'s tables and the system's types, or
 * undefined when it is. `skip` names fields checked by the statement's own rule.
 */
const walk = (value: unknown, skip: ReadonlySet<string> = new Set()): string | undefined => {
  if (Array.isArray(value)) {
    for (const item of value) {
      const found = walk(item)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (!isTree(value)) return undefined
  if (typeof value.relname === "string") {
    if (value.schemaname !== "public" || value.catalogname !== undefined) {
      return `${written([value.catalogname, value.schemaname, value.relname].filter((part): part is string => typeof part === "string"))}, outside schema public`
    }
  }
  for (const [key, child] of Object.entries(value)) {
    if (skip.has(key)) continue
    if (/^[A-Z]/u.test(key) && isTree(child)) {
      if (!nodes.has(key)) return `a ${key}`
      if (key === "FuncCall") {
        const found = calledFunction(child)
        if (found !== undefined) return found
      }
      if (key === "A_Expr") {
        const found = systemName(child.name, "operator")
        if (found !== undefined) return found
      }
    }
    const found = key === "typeName" || key === "TypeName"
      ? systemName(field(child, "names"), "type")
      : key === "opclass" || key === "collation" || key === "collname"
      ? items(child).length === 0 ? undefined : systemName(child, key === "opclass" ? "operator class" : "collation")
      : undefined
    if (found !== undefined) return found
    const inner = walk(child)
    if (inner !== undefined) return inner
  }
  return undefined
}

/** The tree without its source positions: two statements written apart compare equal when they say the same. */
const withoutLocations = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(withoutLocations)
    : isTree(value)
    ? Object.fromEntries(Object.entries(value).filter(([key]) => key !== "location").map(([key, child]) => [key, withoutLocations(child)]))
    : value

/** The one statement of a parse, or why there is not one. */
const single = (parse: Parse, statement: string): Tree | string => {
  let tree: unknown
  try {
    tree = parse(statement)
  } catch (error) {
    return `Postgres's parser does not read it (${error instanceof Error ? error.message : String(error)})`
  }
  const found = items(field(tree, "stmts"))
  const stmt = field(found[0], "stmt")
  return found.length === 1 && isTree(stmt) ? stmt : `it is ${found.length} statements, not one`
}

/** `pg_catalog.set_config('search_path', '', false)` or `pg_catalog.setval('public.<sequence>', <n>, <bool>)`, alone. */
const selectRefusal = (select: Tree): string | undefined => {
  const targets = items(select.targetList)
  const call = field(targets[0], "ResTarget", "val", "FuncCall")
  const plain = Object.keys(select).every((key) => key === "targetList" || key === "limitOption" || key === "op") &&
    select.op === "SETOP_NONE" && targets.length === 1 && isTree(call) &&
    Object.keys(call).every((key) => key === "funcname" || key === "args" || key === "funcformat" || key === "location")
  if (!plain || !isTree(call)) return "a query"
  const name = written(nameOf(call.funcname) ?? [])
  const args = items(call.args)
  const texts = args.map(constantText)
  if (texts.some((text) => text === undefined)) return `a call of ${name}() with other than constants`
  if (name === "pg_catalog.set_config" && texts.join("|") === "search_path||false") return undefined
  if (
    name === "pg_catalog.setval" && (args.length === 2 || args.length === 3) && /^public\.(?:[a-z_][a-z0-9_$]*|"(?:[^"]|"")+")$/u.test(texts[0] ?? "") &&
    /^-?\d+$/u.test(texts[1] ?? "") && (args.length === 2 || texts[2] === "true" || texts[2] === "false")
  ) return undefined
  return `a call of ${name}()`
}

/** A row's value as pg_dump writes it: a constant, a constant cast to a system type, or DEFAULT. */
const valueRefusal = (value: unknown): string | undefined => {
  const node = nodeOf(value)
  if (node?.[0] === "A_Const" || node?.[0] === "SetToDefault") return undefined
  if (node?.[0] === "TypeCast" && nodeOf(node[1].arg)?.[0] === "A_Const") return systemName(field(node[1].typeName, "names"), "type")
  return `a row value that is ${node === undefined ? "not a constant" : `a ${node[0]}`}`
}

const insertRefusal = (insert: Tree): string | undefined => {
  if (insert.withClause !== undefined || insert.onConflictClause !== undefined || insert.returningList !== undefined) {
    return "an INSERT with WITH, ON CONFLICT or RETURNING"
  }
  const select = field(insert.selectStmt, "SelectStmt")
  if (!isTree(select) || !Object.keys(select).every((key) => key === "valuesLists" || key === "limitOption" || key === "op")) {
    return "an INSERT of other than VALUES"
  }
  for (const row of items(select.valuesLists)) {
    for (const value of items(field(row, "List", "items"))) {
      const found = valueRefusal(value)
      if (found !== undefined) return found
    }
  }
  return walk(insert, new Set(["selectStmt"]))
}

/** Why the statement's own fields are not a dump's, before its tree is walked. */
const shapeRefusal = (kind: string, body: Tree): string | undefined => {
  switch (kind) {
    case "CreateStmt":
      return body.tablespacename !== undefined || (body.accessMethod !== undefined && body.accessMethod !== "heap")
        ? "a table with a tablespace or access method of its own"
        : undefined
    case "CreateSeqStmt":
      return items(body.options).every((option) => sequenceOptions.has(String(field(option, "DefElem", "defname"))))
        ? undefined
        : "a sequence option pg_dump does not write"
    case "AlterSeqStmt":
      return items(body.options).every((option) =>
          field(option, "DefElem", "defname") === "owned_by" && nameOf(field(option, "DefElem", "arg", "List", "items"))?.[0] === "public"
        )
        ? undefined
        : "a sequence altered otherwise than owned by a table of schema public"
    case "AlterTableStmt": {
      if (body.objtype !== "OBJECT_TABLE" && body.objtype !== "OBJECT_INDEX") return `an ALTER of ${String(body.objtype)}`
      const other = items(body.cmds).map((cmd) => String(field(cmd, "AlterTableCmd", "subtype"))).find((subtype) => !alterations.has(subtype))
      return other === undefined ? undefined : `an ALTER TABLE doing ${other}`
    }
    case "IndexStmt":
      return body.tableSpace !== undefined || !indexMethods.has(String(body.accessMethod))
        ? "an index with a tablespace or a method of its own"
        : undefined
    default:
      return `a ${kind}`
  }
}

/**
 * Why `statement` (one of `statements`' pieces) is not a statement pg_dump writes for orgplane's schema, in words
 * for the operator; undefined when it is. `parse` is Postgres's parser (`loadParser`).
 */
export const refusal = (statement: string, parse: Parse): string | undefined => {
  const stmt = single(parse, statement)
  if (typeof stmt === "string") return stmt
  const node = nodeOf(stmt)
  if (node === undefined) return "an empty statement"
  const [kind, body] = node
  switch (kind) {
    case "VariableSetStmt": {
      const name = typeof body.name === "string" ? body.name : ""
      const args = items(body.args)
      return body.kind === "VAR_SET_VALUE" && body.is_local !== true && name in settings && args.length === 1 &&
          constantText(args[0]) === settings[name]
        ? undefined
        : `a setting pg_dump does not write (${name || String(body.kind)})`
    }
    case "SelectStmt":
      return selectRefusal(body)
    case "InsertStmt":
      return insertRefusal(body)
    case "CreateFunctionStmt":
    case "CreateTrigStmt": {
      const own = routines.some((routine) => {
        const known = single(parse, routine)
        return typeof known !== "string" && JSON.stringify(withoutLocations(known)) === JSON.stringify(withoutLocations(stmt))
      })
      return own ? undefined : `a ${kind === "CreateFunctionStmt" ? "function" : "trigger"} that is not one of orgplane's migrations`
    }
    default:
      return shapeRefusal(kind, body) ?? walk(body)
  }
}
