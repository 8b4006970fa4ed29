/**
 * SCIM filters (RFC 7644 §3.4.2.2): the text is parsed by `scim2-parse-filter` and the tree is turned into an SQL
 * condition through a resource's mapping of attribute paths to columns. Attribute types and case sensitivity come
 * from the advertised schema (Attributes.ts); values are always bound parameters.
 */
import type * as Statement from "effect/sql/Statement"
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import { type Filter as Ast, parse as parseText } from "scim2-parse-filter"
import { type Attribute, MaxFilterLength, type ResolvedPath, resolvePath, type ResourceTypeDefinition } from "./Attributes.js"

export type { Ast }

/** A filter that cannot be read or names something the server does not filter on: SCIM 400 `invalidFilter`. */
export class InvalidFilter extends Data.TaggedError("InvalidFilter")<{ readonly detail: string }> {}

// A filter longer than MaxFilterLength is refused before parsing: directories send short ones.
const MaxDepth = 64

/**
 * scim2-parse-filter 0.2.10 turns `\"` into `"` but leaves the other JSON escapes of a string value as written
 * (`"a\\b"` stays two backslashes, `\u0041` six characters): decode them as the RFC's JSON strings.
 */
const decodeString = (value: string) => {
  try {
    return JSON.parse(`"${value.replace(/"/g, "\\\"")}"`) as string
  } catch {
    throw new Error(`${JSON.stringify(value)} is not a valid JSON string`)
  }
}

const decodeStrings = (filter: Ast): Ast => {
  switch (filter.op) {
    case "and":
    case "or":
      return { ...filter, filters: filter.filters.map(decodeStrings) }
    case "not":
      return { ...filter, filter: decodeStrings(filter.filter) }
    case "[]":
      return { ...filter, valFilter: decodeStrings(filter.valFilter) }
    case "pr":
      return filter
    default:
      return typeof filter.compValue === "string" ? { ...filter, compValue: decodeString(filter.compValue) } : filter
  }
}

export const parse = (text: string): Result.Result<Ast, InvalidFilter> => {
  if (text.length > MaxFilterLength) {
    return Result.fail(new InvalidFilter({ detail: `The filter is longer than ${MaxFilterLength} characters.` }))
  }
  if (text.trim() === "") return Result.fail(new InvalidFilter({ detail: "The filter is empty." }))
  // The parser recurses once per parenthesis: bound the nesting before it sees the text.
  let depth = 0
  for (const character of text) {
    if (character === "(" || character === "[") depth++
    if (depth > MaxDepth) {
      return Result.fail(new InvalidFilter({ detail: `The filter nests deeper than ${MaxDepth} levels.` }))
    }
    if (character === ")" || character === "]") depth--
  }
  try {
    return Result.succeed(decodeStrings(parseText(text)))
  } catch (error) {
    return Result.fail(
      new InvalidFilter({ detail: `The filter is not valid: ${error instanceof Error ? error.message : String(error)}` })
    )
  }
}

/**
 * Where a multi-valued attribute's elements are: `exists(condition)` wraps a condition on one element in an EXISTS
 * over them, `element(subAttribute)` is the SQL expression of an element's sub-attribute inside it.
 */
export interface Elements {
  readonly exists: (condition: Statement.Fragment) => Statement.Fragment
  readonly element: (subAttribute: string) => Statement.Fragment | undefined
}

/**
 * How a resource's filterable attributes map onto SQL. `column(path)` answers the SQL expression of a single-valued
 * attribute (a lowercased path: `username`, `name.givenname`, `urn:…:user:department`, `meta.lastmodified`),
 * `elements(attribute)` the elements of a multi-valued one; undefined means not filterable (`invalidFilter`).
 */
export interface FilterMapping {
  readonly resourceType: ResourceTypeDefinition
  readonly column: (path: ResolvedPath) => Statement.Fragment | undefined
  readonly elements: (attribute: Attribute) => Elements | undefined
}

type Value = boolean | null | number | string

const escapeLike = (value: string) => value.replace(/[\\%_]/g, (character) => `\\${character}`)

const fail = (detail: string) => Result.fail(new InvalidFilter({ detail }))

/** One comparison on an SQL expression of the given attribute's type. */
const compare = (
  sql: Statement.Constructor,
  expression: Statement.Fragment,
  attribute: Attribute,
  op: string,
  value: Value,
  path: string
): Result.Result<Statement.Fragment, InvalidFilter> => {
  if (op === "pr") return Result.succeed(sql`${expression} IS NOT NULL`)
  if (value === null) {
    if (op === "eq") return Result.succeed(sql`${expression} IS NULL`)
    if (op === "ne") return Result.succeed(sql`${expression} IS NOT NULL`)
    return fail(`"${op}" cannot compare ${path} with null.`)
  }
  switch (attribute.type) {
    case "boolean": {
      if (typeof value !== "boolean") return fail(`${path} is a boolean: compare it with true or false.`)
      if (op === "eq") return Result.succeed(sql`${expression} = ${value}`)
      if (op === "ne") return Result.succeed(sql`${expression} IS DISTINCT FROM ${value}`)
      return fail(`"${op}" does not apply to the boolean ${path}.`)
    }
    case "dateTime": {
      const at = typeof value === "string" ? new Date(value) : undefined
      if (at === undefined || Number.isNaN(at.getTime())) return fail(`${path} is a dateTime: compare it with a date string.`)
      const operator = { eq: "=", ne: "<>", gt: ">", ge: ">=", lt: "<", le: "<=" }[op]
      if (operator === undefined) return fail(`"${op}" does not apply to the dateTime ${path}.`)
      return Result.succeed(sql`${expression} ${sql.literal(operator)} ${at}`)
    }
    case "string":
    case "reference": {
      if (typeof value !== "string") return fail(`${path} is a string: compare it with a quoted string.`)
      const [left, right] = attribute.caseExact ? [expression, value] : [sql`lower(${expression})`, value.toLowerCase()]
      switch (op) {
        case "eq":
          return Result.succeed(sql`${left} = ${right}`)
        case "ne":
          return Result.succeed(sql`${left} IS DISTINCT FROM ${right}`)
        case "co":
          return Result.succeed(sql`${left} LIKE ${`%${escapeLike(right)}%`}`)
        case "sw":
          return Result.succeed(sql`${left} LIKE ${`${escapeLike(right)}%`}`)
        case "ew":
          return Result.succeed(sql`${left} LIKE ${`%${escapeLike(right)}`}`)
        case "gt":
          return Result.succeed(sql`${left} > ${right}`)
        case "ge":
          return Result.succeed(sql`${left} >= ${right}`)
        case "lt":
          return Result.succeed(sql`${left} < ${right}`)
        case "le":
          return Result.succeed(sql`${left} <= ${right}`)
      }
      return fail(`Unknown operator "${op}".`)
    }
    default:
      return fail(`${path} cannot be compared.`)
  }
}

interface Scope {
  /** Inside a value path `emails[...]`: sub-attribute names are relative to its attribute. */
  readonly within: { readonly attribute: Attribute; readonly elements: Elements } | undefined
}

const attributeExpression = (
  sql: Statement.Constructor,
  mapping: FilterMapping,
  scope: Scope,
  path: string,
  op: string,
  value: Value
): Result.Result<Statement.Fragment, InvalidFilter> => {
  if (scope.within !== undefined) {
    const { attribute, elements } = scope.within
    const sub = attribute.subAttributes?.find((candidate) => candidate.name.toLowerCase() === path.toLowerCase())
    const expression = sub === undefined ? undefined : elements.element(sub.name)
    if (sub === undefined || expression === undefined) {
      return fail(`"${attribute.name}.${path}" is not an attribute the server filters on.`)
    }
    return compare(sql, expression, sub, op, value, `${attribute.name}.${path}`)
  }
  const resolved = resolvePath(mapping.resourceType, path)
  if (resolved === undefined) return fail(`"${path}" is not an attribute the server filters on.`)
  if (resolved.attribute.multiValued && resolved.attribute.type === "complex") {
    // `emails eq "x"` and `emails.value eq "x"` both compare the elements' value (RFC 7644 §3.4.2.2).
    const elements = mapping.elements(resolved.attribute)
    const sub = resolved.subAttribute ?? resolved.attribute.subAttributes?.find(({ name }) => name === "value")
    if (elements === undefined || sub === undefined) return fail(`"${path}" is not an attribute the server filters on.`)
    if (op === "pr" && resolved.subAttribute === undefined) return Result.succeed(elements.exists(sql`true`))
    const expression = elements.element(sub.name)
    if (expression === undefined) return fail(`"${path}" is not an attribute the server filters on.`)
    return Result.map(compare(sql, expression, sub, op, value, path), elements.exists)
  }
  const expression = mapping.column(resolved)
  const attribute = resolved.subAttribute ?? resolved.attribute
  if (expression === undefined || attribute.type === "complex") {
    return fail(`"${path}" is not an attribute the server filters on.`)
  }
  return compare(sql, expression, attribute, op, value, path)
}

const translate = (
  sql: Statement.Constructor,
  mapping: FilterMapping,
  scope: Scope,
  filter: Ast
): Result.Result<Statement.Fragment, InvalidFilter> => {
  switch (filter.op) {
    case "and":
    case "or": {
      const parts = Result.all(filter.filters.map((part) => translate(sql, mapping, scope, part)))
      return Result.map(parts, (clauses) => (filter.op === "and" ? sql.and(clauses) : sql.or(clauses)))
    }
    case "not":
      return Result.map(translate(sql, mapping, scope, filter.filter), (inner) => sql`NOT COALESCE((${inner}), false)`)
    case "[]": {
      if (scope.within !== undefined) return fail("A value path cannot hold another value path.")
      const resolved = resolvePath(mapping.resourceType, filter.attrPath)
      const elements =
        resolved !== undefined && resolved.subAttribute === undefined && resolved.attribute.multiValued
          ? mapping.elements(resolved.attribute)
          : undefined
      if (resolved === undefined || elements === undefined) {
        return fail(`"${filter.attrPath}" is not a multi-valued attribute the server filters on.`)
      }
      const inner = translate(sql, mapping, { within: { attribute: resolved.attribute, elements } }, filter.valFilter)
      return Result.map(inner, elements.exists)
    }
    case "pr":
      return attributeExpression(sql, mapping, scope, filter.attrPath, "pr", null)
    case "eq":
    case "ne":
    case "co":
    case "sw":
    case "ew":
    case "gt":
    case "ge":
    case "lt":
    case "le":
      return attributeExpression(sql, mapping, scope, filter.attrPath, filter.op, filter.compValue)
  }
  return fail(`Unknown operator "${(filter as { op: string }).op}".`)
}

/** The SQL condition of a parsed filter over a resource's mapping. */
export const toSql = (
  sql: Statement.Constructor,
  mapping: FilterMapping,
  filter: Ast
): Result.Result<Statement.Fragment, InvalidFilter> => translate(sql, mapping, { within: undefined }, filter)

/** Parse and translate in one step; an absent filter is `true`. */
export const condition = (
  sql: Statement.Constructor,
  mapping: FilterMapping,
  text: string | undefined
): Result.Result<Statement.Fragment, InvalidFilter> =>
  text === undefined ? Result.succeed(sql`true`) : Result.flatMap(parse(text), (ast) => toSql(sql, mapping, ast))

const jsonText = (sql: Statement.Constructor, column: string, keys: ReadonlyArray<string>): Statement.Fragment => {
  const quoted = keys.map((key) => `'${key.replace(/'/g, "''")}'`)
  const last = quoted.pop()
  return sql.literal(`(${[column, ...quoted].join(" -> ")} ->> ${last})`)
}

/** Keys of an attribute inside the stored `resource` jsonb: extension attributes live under their URN. */
const resourceKeys = (path: ResolvedPath, coreSchema: string) => [
  ...(path.schema === coreSchema ? [] : [path.schema]),
  path.attribute.name,
  ...(path.subAttribute === undefined ? [] : [path.subAttribute.name])
]

/** `scim_users` (aliased): columns for what has one (index-backed `lower(user_name)`, `external_id`), else `resource`. */
export const userMapping = (sql: Statement.Constructor, alias: string, resourceType: ResourceTypeDefinition): FilterMapping => {
  const columns: Record<string, string> = {
    id: "membership_id",
    username: "user_name",
    externalid: "external_id",
    active: "active",
    displayname: "display_name",
    "meta.created": "created_at",
    "meta.lastmodified": "updated_at"
  }
  return {
    resourceType,
    column: (path) => {
      const key = [path.attribute.name, path.subAttribute?.name].filter((part) => part !== undefined).join(".")
      const column = path.schema === resourceType.schema.id ? columns[key.toLowerCase()] : undefined
      if (column !== undefined) return sql.literal(`${alias}.${column}`)
      if (path.attribute.name === "meta" || path.attribute.name === "schemas") return undefined
      return jsonText(sql, `${alias}.resource`, resourceKeys(path, resourceType.schema.id))
    },
    elements: (attribute) =>
      attribute.name === "emails"
        ? {
          exists: (condition) => sql`EXISTS (SELECT 1 FROM jsonb_array_elements(${sql.literal(`${alias}.emails`)}) AS email (item) WHERE ${condition})`,
          element: (sub) =>
            sub === "primary" ? sql.literal(`(email.item ->> 'primary')::boolean`) : jsonText(sql, "email.item", [sub])
        }
        : undefined
  }
}

/** `scim_groups` (aliased), members through `scim_group_members` of the same organization. */
export const groupMapping = (sql: Statement.Constructor, alias: string, resourceType: ResourceTypeDefinition): FilterMapping => {
  const columns: Record<string, string> = {
    id: "id",
    displayname: "display_name",
    externalid: "external_id",
    "meta.created": "created_at",
    "meta.lastmodified": "updated_at"
  }
  return {
    resourceType,
    column: (path) => {
      const key = [path.attribute.name, path.subAttribute?.name].filter((part) => part !== undefined).join(".")
      const column = columns[key.toLowerCase()]
      return column === undefined ? undefined : sql.literal(`${alias}.${column}`)
    },
    elements: (attribute) =>
      attribute.name === "members"
        ? {
          exists: (condition) =>
            sql`EXISTS (SELECT 1 FROM scim_group_members AS member WHERE ${
              sql.literal(`member.organization_id = ${alias}.organization_id AND member.group_id = ${alias}.id`)
            } AND ${condition})`,
          element: (sub) => (sub === "value" ? sql.literal("member.membership_id") : undefined)
        }
        : undefined
  }
}
