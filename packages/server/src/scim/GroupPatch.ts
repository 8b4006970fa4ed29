/**
 * A Group's PatchOp (RFC 7644 §3.5.2) as Okta and Entra send it, read into one change of the group: its name,
 * externalId, and its members as set operations (add these, remove those, or exactly these), so a 10,000-member
 * PATCH is a few set-based statements rather than a rewrite of the members array per operation (which is what a
 * general PatchOp library such as `scim-patch` does: it applies operations to a whole resource in memory).
 *
 * Accepted: ops in any case (`Add`, `Replace`, `Remove`); paths in any case, with or without the core Group schema
 * URN; `members` (add: these; replace: exactly these; remove: with a value, these, without, all);
 * `members[value eq "…"]` (also `or`-joined) to remove; `displayName` and `externalId`; no-path `add`/`replace` with
 * an object value (its `id`, `schemas` and `meta` ignored, as Okta's rename sends its id); a member given as one
 * object instead of an array. Also the Group body of a POST or PUT (`groupInput`). Pure: no database.
 */
import * as Result from "effect/Result"
import { MaxOperations, MaxStringLength, MaxValues } from "./Attributes.js"

export const GroupSchemaUrn = "urn:ietf:params:scim:schemas:core:2.0:Group"
export const PatchOpUrn = "urn:ietf:params:scim:api:messages:2.0:PatchOp"

export type PatchScimType = "invalidPath" | "invalidValue" | "mutability" | "invalidSyntax" | "noTarget"

export interface PatchFailure {
  readonly scimType: PatchScimType
  readonly detail: string
}

export interface PatchOperation {
  readonly op: string
  readonly path?: string | undefined
  readonly value?: unknown
}

/** What a PatchOp does to a group, relative to its current state. */
export interface GroupChange {
  readonly displayName?: string
  readonly externalId?: string | null
  readonly members: MembersChange
}

/** `exactly`: the members after the change (a replace or a removal of all, then what followed); else add/remove. */
export interface MembersChange {
  readonly exactly: ReadonlyArray<string> | null
  readonly add: ReadonlyArray<string>
  readonly remove: ReadonlyArray<string>
}

const fail = (scimType: PatchScimType, detail: string): Result.Result<never, PatchFailure> => Result.fail({ scimType, detail })

/** At most this much of a client's text in a detail. */
const quote = (text: string) => JSON.stringify(text.length > 100 ? `${text.slice(0, 100)}…` : text)

const prefix = `${GroupSchemaUrn.toLowerCase()}:`
const attributeOf = (path: string) => {
  const lower = path.trim().toLowerCase()
  return lower.startsWith(prefix) ? lower.slice(prefix.length) : lower
}

const memberFilter = /^members\s*\[(.*)\]$/is
const valueEq = /^\s*value\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i

/** The ids a `members[value eq "a" or value eq "b"]` path names (None when the filter is anything else). */
const filteredIds = (filter: string): ReadonlyArray<string> | undefined => {
  const ids: Array<string> = []
  for (const part of filter.split(/\s+or\s+/i)) {
    const match = valueEq.exec(part)
    if (match === null) return undefined
    ids.push(JSON.parse(`"${match[1]}"`) as string)
  }
  return ids
}

/** The ids of a members value: `[{value}]` or one `{value}`; each value a non-empty string. */
export const memberIds = (value: unknown): Result.Result<ReadonlyArray<string>, PatchFailure> => {
  const items = Array.isArray(value) ? value : value !== null && typeof value === "object" ? [value] : undefined
  if (items === undefined) return fail("invalidValue", "members must be an array of objects with a value.")
  if (items.length > MaxValues) return fail("invalidValue", `members has more than ${MaxValues} values.`)
  const ids: Array<string> = []
  for (const item of items) {
    const id = item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.entries(item).find(([key]) => key.toLowerCase() === "value")?.[1]
      : undefined
    if (typeof id !== "string" || id.length === 0) return fail("invalidValue", "Each member must be an object with a string value (the SCIM User's id).")
    ids.push(id)
  }
  return Result.succeed(ids)
}

const text = (name: string, value: unknown, nullable: boolean): Result.Result<string | null, PatchFailure> => {
  if (nullable && value === null) return Result.succeed(null)
  if (typeof value !== "string" || value.trim().length === 0) return fail("invalidValue", `${name} must be a non-empty string.`)
  if (value.length > MaxStringLength) return fail("invalidValue", `${name} is longer than ${MaxStringLength} characters.`)
  return Result.succeed(value)
}

class Builder {
  displayName: string | undefined = undefined
  externalId: string | null | undefined = undefined
  exactly: Set<string> | null = null
  add = new Set<string>()
  remove = new Set<string>()

  addMembers(ids: ReadonlyArray<string>) {
    for (const id of ids) {
      if (this.exactly !== null) this.exactly.add(id)
      else {
        this.add.add(id)
        this.remove.delete(id)
      }
    }
  }
  removeMembers(ids: ReadonlyArray<string>) {
    for (const id of ids) {
      if (this.exactly !== null) this.exactly.delete(id)
      else {
        this.remove.add(id)
        this.add.delete(id)
      }
    }
  }
  replaceMembers(ids: ReadonlyArray<string>) {
    this.exactly = new Set(ids)
    this.add.clear()
    this.remove.clear()
  }
  result(): GroupChange {
    return {
      ...(this.displayName === undefined ? {} : { displayName: this.displayName }),
      ...(this.externalId === undefined ? {} : { externalId: this.externalId }),
      members: { exactly: this.exactly === null ? null : [...this.exactly], add: [...this.add], remove: [...this.remove] }
    }
  }
}

const setAttribute = (change: Builder, op: "add" | "replace", attribute: string, value: unknown): Result.Result<void, PatchFailure> => {
  switch (attribute) {
    case "displayname":
      return Result.map(text("displayName", value, false), (name) => void (change.displayName = name as string))
    case "externalid":
      return Result.map(text("externalId", value, true), (id) => void (change.externalId = id))
    case "members":
      return Result.map(memberIds(value), (ids) => op === "add" ? change.addMembers(ids) : change.replaceMembers(ids))
    case "id":
    case "meta":
      return fail("mutability", `${attribute} is read-only.`)
    default:
      return fail("invalidPath", `The Group has no attribute ${quote(attribute)}.`)
  }
}

const apply = (change: Builder, operation: PatchOperation): Result.Result<void, PatchFailure> => {
  const op = typeof operation.op === "string" ? operation.op.toLowerCase() : ""
  if (op !== "add" && op !== "replace" && op !== "remove") {
    return fail("invalidSyntax", `op must be add, replace or remove, not ${quote(String(operation.op))}.`)
  }
  const path = operation.path === undefined || operation.path.trim() === "" ? undefined : operation.path
  if (path === undefined) {
    if (op === "remove") return fail("noTarget", "A remove operation needs a path.")
    const value = operation.value
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return fail("invalidValue", "An operation without a path needs an object value.")
    }
    for (const [key, member] of Object.entries(value)) {
      const attribute = attributeOf(key)
      if (attribute === "id" || attribute === "schemas" || attribute === "meta") continue
      const done = setAttribute(change, op, attribute, member)
      if (Result.isFailure(done)) return done
    }
    return Result.succeed(undefined)
  }
  const attribute = attributeOf(path)
  const filtered = memberFilter.exec(attribute)
  if (filtered !== null) {
    const ids = filteredIds(path.trim().slice(path.trim().indexOf("[") + 1, -1))
    if (ids === undefined) return fail("invalidPath", `Only members[value eq "…"] filters are supported, not ${quote(path)}.`)
    if (op !== "remove") return fail("invalidPath", `A members[value eq "…"] path takes only remove.`)
    change.removeMembers(ids)
    return Result.succeed(undefined)
  }
  if (op === "remove") {
    switch (attribute) {
      case "members":
        if (operation.value === undefined || operation.value === null) {
          change.replaceMembers([])
          return Result.succeed(undefined)
        }
        return Result.map(memberIds(operation.value), (ids) => change.removeMembers(ids))
      case "externalid":
        change.externalId = null
        return Result.succeed(undefined)
      case "displayname":
        return fail("mutability", "displayName is required and cannot be removed.")
      case "id":
      case "meta":
        return fail("mutability", `${attribute} is read-only.`)
      default:
        return fail("invalidPath", `The Group has no attribute ${quote(path)}.`)
    }
  }
  return setAttribute(change, op, attribute, operation.value)
}

/** The change a PatchOp's operations make, in order; the first operation that does not fit fails the whole. */
export const groupChange = (operations: ReadonlyArray<unknown>): Result.Result<GroupChange, PatchFailure> => {
  if (operations.length === 0) return fail("invalidValue", "Operations must hold at least one operation.")
  if (operations.length > MaxOperations) return fail("invalidValue", `Operations may hold at most ${MaxOperations} operations.`)
  const change = new Builder()
  // An operation's members are read in any case (`Op`, `Path`, `Value` reach servers too).
  for (const operation of operations) {
    if (operation === null || typeof operation !== "object" || Array.isArray(operation)) {
      return fail("invalidSyntax", "Each operation must be an object with an op.")
    }
    const member = (name: string) => Object.entries(operation).find(([key]) => key.toLowerCase() === name)?.[1]
    const path = member("path")
    if (path !== undefined && path !== null && typeof path !== "string") return fail("invalidPath", "path must be a string.")
    if (typeof path === "string" && path.length > MaxStringLength) return fail("invalidPath", `path is longer than ${MaxStringLength} characters.`)
    const done = apply(change, { op: member("op") as string, path: path ?? undefined, value: member("value") })
    if (Result.isFailure(done)) return Result.fail(done.failure)
  }
  return Result.succeed(change.result())
}

/** Every member id a change names (they must all be SCIM Users of the connection, removals aside). */
export const namedMembers = (change: GroupChange): ReadonlyArray<string> =>
  change.members.exactly !== null ? change.members.exactly : change.members.add

/**
 * A Group as a POST or PUT body holds it: `displayName` (required), `externalId`, `members`; attribute names in any
 * case, with or without the schema URN; other attributes (`id`, `meta`, what the server does not advertise) ignored.
 */
export const groupInput = (
  body: Readonly<Record<string, unknown>>
): Result.Result<{ readonly displayName: string; readonly externalId: string | null; readonly members: ReadonlyArray<string> }, PatchFailure> => {
  let displayName: unknown = undefined
  let externalId: unknown = null
  let members: unknown = []
  for (const [key, value] of Object.entries(body)) {
    const attribute = attributeOf(key)
    if (attribute === "displayname") displayName = value
    else if (attribute === "externalid") externalId = value
    else if (attribute === "members") members = value ?? []
  }
  if (displayName === undefined) return fail("invalidValue", "displayName is required.")
  return Result.gen(function*() {
    const name = (yield* text("displayName", displayName, false)) as string
    const external = yield* text("externalId", externalId, true)
    const ids = yield* memberIds(members)
    return { displayName: name, externalId: external, members: ids }
  })
}
