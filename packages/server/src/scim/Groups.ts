/**
 * The SCIM Groups operations of one connection (RFC 7644 §3): create, read, list, replace, patch, delete; each
 * write one transaction holding the group's rows, the team it maps onto (TeamSync) and the roles the connection's
 * rules give. Another connection's or organization's group is a 404 like a missing one.
 *
 * `GroupResource` is a type (not an interface), so it is a `Record<string, unknown>` for the projection without a
 * cast.
 */
import {
  type MembershipId,
  ScimBadRequest,
  ScimConflict,
  ScimGroupId,
  ScimNotFound,
  ScimPreconditionFailed,
  ScimServiceUnavailable,
  ServiceUnavailable,
  type TeamId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { makeId } from "../platform/Ids.js"
import { catchUniqueViolation, orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { GroupResourceType, MaxResults } from "./Attributes.js"
import { DirectoryEvents, type ScimRequest } from "./DirectoryEvents.js"
import { condition, groupMapping } from "./Filter.js"
import { type GroupChange, groupChange, groupInput, GroupSchemaUrn, namedMembers } from "./GroupPatch.js"
import { type Connection, type GroupMember, GroupsRepository, ScimGroupRow } from "./GroupsRepository.js"
import { projectResource, type ProjectionQuery } from "./Projection.js"
import { type SyncConnection, TeamSync } from "./TeamSync.js"
import type { ScimCaller } from "./Users.js"

/** A refusal in SCIM's terms: the status and `scimType` of the error body (RFC 7644 §3.12). */
export class GroupFailure extends Data.TaggedError("GroupFailure")<{
  readonly status: 400 | 404 | 409 | 412
  readonly scimType?: "uniqueness" | "invalidValue" | "invalidPath" | "mutability" | "invalidSyntax" | "noTarget" | "invalidFilter"
  readonly detail: string
}> {}

const isGroupId = Schema.is(ScimGroupId)

export const groupNotFound = (id: string) =>
  new GroupFailure({ status: 404, detail: `Group ${JSON.stringify(id.slice(0, 100))} not found.` })

/** A GroupFailure as the SCIM error of its status. */
export const scimError = (failure: GroupFailure) => {
  const body = { detail: failure.detail, ...(failure.scimType === undefined ? {} : { scimType: failure.scimType }) }
  switch (failure.status) {
    case 400:
      return new ScimBadRequest(body)
    case 404:
      return new ScimNotFound(body)
    case 409:
      return new ScimConflict(body)
    case 412:
      return new ScimPreconditionFailed(body)
  }
}

/** SCIM's integers in a query: a number or its decimal text (RFC 7644 §3.4.2.4); None when it is neither. */
const integer = (value: string | number | undefined): Option.Option<number | undefined> => {
  if (value === undefined || value === "") return Option.some(undefined)
  const number = typeof value === "number" ? value : /^-?\d{1,9}$/.test(value) ? Number(value) : Number.NaN
  return Number.isInteger(number) ? Option.some(number) : Option.none()
}

/** A group as the protocol answers it (before projection). */
export type GroupResource = {
  readonly schemas: ReadonlyArray<string>
  readonly id: ScimGroupId
  readonly externalId?: string
  readonly displayName: string
  readonly members?: ReadonlyArray<
    { readonly value: MembershipId; readonly display: string; readonly $ref: string; readonly type: "User" }
  >
  readonly meta: {
    readonly resourceType: "Group"
    readonly created: string
    readonly lastModified: string
    readonly location: string
    readonly version: string
  }
}

/** The weak ETag of a version, as `meta.version` and the `ETag` header carry it. */
export const etagOf = (version: number) => `W/"${version}"`

/** Whether an `If-Match` header admits the group's version (absent or `*`: always; else one of its tags). */
export const ifMatches = (header: string | undefined, version: number) =>
  header === undefined || header.trim() === "*" ||
  header.split(",").some((tag) => tag.trim().replace(/^W\//, "") === `"${version}"`)

/** The members of a write, with what identifies a member in a request: `{ value }`. */
export interface GroupInput {
  readonly displayName: string
  readonly externalId?: string | null | undefined
  readonly members?: ReadonlyArray<{ readonly value: string }> | undefined
}

/** Where the connection's resources live: `<base>/scim/v2/<connectionId>`. */
export interface Place {
  readonly baseUrl: string
}

export const resourceOf = (
  place: Place,
  row: ScimGroupRow,
  members: ReadonlyArray<GroupMember> | null
): GroupResource => ({
  schemas: [GroupSchemaUrn],
  id: row.id,
  ...(row.externalId === null ? {} : { externalId: row.externalId }),
  displayName: row.displayName,
  ...(members === null
    ? {}
    : { members: members.map((member) => ({ ...member, $ref: `${place.baseUrl}/Users/${member.value}`, type: "User" as const })) }),
  meta: {
    resourceType: "Group",
    created: row.createdAt.toISOString(),
    lastModified: row.updatedAt.toISOString(),
    location: `${place.baseUrl}/Groups/${row.id}`,
    version: etagOf(row.version)
  }
})

/** A list's query (RFC 7644 §3.4.2): filter, 1-based `startIndex`, `count`, and the projection. */
export interface ListQuery extends ProjectionQuery {
  readonly filter?: string | undefined
  readonly startIndex?: string | number | undefined
  readonly count?: string | number | undefined
}

export const ListResponseUrn = "urn:ietf:params:scim:api:messages:2.0:ListResponse"

/** The page size when the query names none (RFC 7644 leaves it to the server); at most `MaxResults`. */
export const DefaultCount = 100

/** Whether the projection keeps `members` (Entra lists with `excludedAttributes=members`: they are not read then). */
const wantsMembers = (query: ProjectionQuery) =>
  "members" in projectResource(GroupResourceType, { members: [] }, query)

const unique = (ids: ReadonlyArray<string>) => [...new Set(ids)]

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const groups = yield* GroupsRepository
  const sync = yield* TeamSync
  const mapping = groupMapping(sql, "g", GroupResourceType)

  const scopeOf = (connection: SyncConnection): Connection => ({
    organizationId: connection.organizationId,
    connectionId: connection.connectionId
  })

  /** Fails unless every id is a SCIM User of the connection (nothing written yet: the transaction rolls back). */
  const requireUsers = (connection: SyncConnection, ids: ReadonlyArray<string>) =>
    Effect.flatMap(groups.notUsers(scopeOf(connection), ids), (missing) =>
      missing.length === 0
        ? Effect.void
        : Effect.fail(
          new GroupFailure({
            status: 400,
            scimType: "invalidValue",
            detail: `members: ${JSON.stringify(missing[0].slice(0, 100))} is not a User of this SCIM connection` +
              (missing.length > 1 ? ` (and ${missing.length - 1} more).` : ".")
          })
        ))

  const conflict = (input: { readonly displayName: string; readonly externalId?: string | null | undefined }) => () =>
    new GroupFailure({
      status: 409,
      scimType: "uniqueness",
      detail: `The connection already has a group with displayName ${JSON.stringify(input.displayName.slice(0, 100))}` +
        (input.externalId ? ` or externalId ${JSON.stringify(input.externalId.slice(0, 100))}.` : ".")
    })

  /** One page of the connection's groups matching the filter, projected; `totalResults` counts every match. */
  const list = (place: Place, connection: SyncConnection, query: ListQuery) =>
    Effect.gen(function*() {
      // The page before the filter, as the Users list reads them.
      const [start, size] = [integer(query.startIndex), integer(query.count)]
      if (Option.isNone(start) || Option.isNone(size)) {
        return yield* new GroupFailure({ status: 400, scimType: "invalidValue", detail: "startIndex and count must be integers." })
      }
      const where = condition(sql, mapping, query.filter)
      if (Result.isFailure(where)) {
        return yield* new GroupFailure({ status: 400, scimType: "invalidFilter", detail: where.failure.detail })
      }
      const startIndex = Math.max(1, start.value ?? 1)
      const count = Math.min(MaxResults, Math.max(0, size.value ?? DefaultCount))
      const scope = { ...scopeOf(connection), where: where.success }
      const rows = count === 0
        ? []
        : yield* groups.page({ ...scope, offset: startIndex - 1, limit: count, withMembers: wantsMembers(query) })
      const totalResults = rows.length > 0 ? rows[0].total : (yield* groups.count(scope)).total
      const resources = rows.map(({ members, row }) => projectResource(GroupResourceType, resourceOf(place, row, members), query))
      return { schemas: [ListResponseUrn], totalResults, startIndex, itemsPerPage: resources.length, Resources: resources }
    })

  /** GET by id, projected. */
  const get = (place: Place, connection: SyncConnection, id: ScimGroupId, query: ProjectionQuery) =>
    Effect.map(
      read(place, connection, id, wantsMembers(query)),
      (resource) => projectResource(GroupResourceType, resource, query)
    )

  const read = (place: Place, connection: SyncConnection, id: ScimGroupId, withMembers = true) =>
    Effect.gen(function*() {
      const row = yield* groups.find({ ...scopeOf(connection), id })
      if (Option.isNone(row)) return yield* groupNotFound(id)
      const members = withMembers ? yield* groups.members({ ...scopeOf(connection), id }) : null
      return resourceOf(place, row.value, members)
    })

  /** The group, locked, or 404; `If-Match` checked against its version (412). */
  const lockFor = (connection: SyncConnection, id: ScimGroupId, ifMatch: string | undefined) =>
    Effect.gen(function*() {
      const row = yield* groups.lock({ ...scopeOf(connection), id })
      if (Option.isNone(row)) return yield* groupNotFound(id)
      if (!ifMatches(ifMatch, row.value.version)) {
        return yield* new GroupFailure({
          status: 412,
          detail: `The group's version is ${etagOf(row.value.version)}; If-Match did not match it.`
        })
      }
      return row.value
    })

  /**
   * Writes the change: name and externalId (409 on a clash), members (every named id a User of the connection),
   * then the team and the roles follow. Answers the group's row as stored.
   */
  const applyChange = (connection: SyncConnection, before: ScimGroupRow, change: GroupChange) =>
    Effect.gen(function*() {
      const scoped = { ...scopeOf(connection), id: before.id }
      const at = yield* now
      const named = unique(namedMembers(change))
      yield* requireUsers(connection, named)
      const displayName = change.displayName ?? before.displayName
      const externalId = change.externalId === undefined ? before.externalId : change.externalId
      yield* groups.update({ ...scoped, displayName, externalId, teamId: before.teamId, at }).pipe(
        catchUniqueViolation(conflict({ displayName, externalId }))
      )
      // Only the role rules need to know who joined or left (a read of the members before and after).
      const rules = connection.roleRules.length > 0
      const membersNow = rules ? Effect.map(groups.members(scoped), (members) => new Set<string>(members.map((member) => member.value))) : Effect.succeed(new Set<string>())
      const previousMembers = yield* membersNow
      const { exactly } = change.members
      if (exactly !== null) yield* groups.replaceMembers({ ...scoped, memberIds: unique(exactly) as Array<MembershipId>, at })
      else {
        yield* groups.removeMembers({ ...scoped, memberIds: unique(change.members.remove) as Array<MembershipId> })
        yield* groups.addMembers({ ...scoped, memberIds: named as Array<MembershipId>, at })
      }
      const row = new ScimGroupRow({ ...before, displayName, externalId, version: before.version + 1, updatedAt: at })
      const teamId: TeamId | null = yield* sync.groupChanged(connection, row, before)
      if (teamId !== before.teamId) yield* groups.setTeam({ ...scoped, teamId })
      const after = new ScimGroupRow({ ...row, teamId })
      const nowMembers = yield* membersNow
      const changed = [
        ...[...nowMembers].filter((id) => !previousMembers.has(id)),
        ...[...previousMembers].filter((id) => !nowMembers.has(id))
      ] as Array<MembershipId>
      yield* sync.applyRoleRules(connection, changed)
      return after
    })

  const create = (place: Place, connection: SyncConnection, input: GroupInput) =>
    Effect.gen(function*() {
      const memberIds = unique((input.members ?? []).map((member) => member.value))
      yield* requireUsers(connection, memberIds)
      const id = yield* makeId("scg")
      const at = yield* now
      const scoped = { ...scopeOf(connection), id }
      const externalId = input.externalId ?? null
      yield* groups.insert({
        id,
        ...scopeOf(connection),
        displayName: input.displayName,
        externalId,
        teamId: null,
        version: 1,
        createdAt: at,
        updatedAt: at
      }).pipe(catchUniqueViolation(conflict(input)))
      yield* groups.addMembers({ ...scoped, memberIds: memberIds as Array<MembershipId>, at })
      const row = yield* groups.find(scoped).pipe(Effect.flatMap(Option.match({
        onNone: () => Effect.die("the group just inserted is missing"),
        onSome: Effect.succeed
      })))
      const teamId = yield* sync.groupChanged(connection, row, null)
      if (teamId !== null) yield* groups.setTeam({ ...scoped, teamId })
      yield* sync.applyRoleRules(connection, memberIds as Array<MembershipId>)
      return yield* read(place, connection, id)
    })

  /** PUT: the group becomes what the request says, members included (absent members: none). */
  const replace = (place: Place, connection: SyncConnection, id: ScimGroupId, input: GroupInput, ifMatch?: string) =>
    Effect.gen(function*() {
      const before = yield* lockFor(connection, id, ifMatch)
      yield* applyChange(connection, before, {
        displayName: input.displayName,
        externalId: input.externalId ?? null,
        members: { exactly: (input.members ?? []).map((member) => member.value), add: [], remove: [] }
      })
      return yield* read(place, connection, id)
    })

  /** PATCH: the operations as one change (GroupPatch); answers the group (members left out when it is large). */
  const patch = (
    place: Place,
    connection: SyncConnection,
    id: ScimGroupId,
    operations: ReadonlyArray<unknown>,
    ifMatch?: string
  ) =>
    Effect.gen(function*() {
      const change = groupChange(operations)
      if (Result.isFailure(change)) return yield* new GroupFailure({ status: 400, ...change.failure })
      const before = yield* lockFor(connection, id, ifMatch)
      yield* applyChange(connection, before, change.success)
      return yield* read(place, connection, id)
    })

  /**
   * DELETE: the group and its members' records go; a team the directory created stays as an ordinary team (its
   * link to the directory ends, its members stay), a linked team is released the same way.
   */
  const remove = (connection: SyncConnection, id: ScimGroupId, ifMatch?: string) =>
    Effect.gen(function*() {
      const before = yield* lockFor(connection, id, ifMatch)
      const members = (yield* groups.members({ ...scopeOf(connection), id })).map((member) => member.value)
      yield* groups.remove({ ...scopeOf(connection), id })
      yield* sync.groupDeleted(connection, before)
      yield* sync.applyRoleRules(connection, members)
    })

  const events = yield* DirectoryEvents

  /** The connection's settings; a token outlives no connection, so a missing one is a 404 like its groups. */
  const connectionOf = Effect.fn("Groups.connectionOf")((caller: ScimCaller) =>
    Effect.flatMap(groups.connection(caller), Option.match({
      onNone: () => Effect.fail(new GroupFailure({ status: 404, detail: "No such SCIM connection." })),
      onSome: (settings): Effect.Effect<SyncConnection> =>
        Effect.succeed({ organizationId: caller.organizationId, connectionId: caller.connectionId, ...settings })
    })))

  /** What is left of a failure as the SCIM answer: GroupFailure by its status, 503 with its own body. */
  const answer = <A, R>(effect: Effect.Effect<A, GroupFailure | ServiceUnavailable, R>) =>
    Effect.mapError(effect, (error) =>
      error instanceof ServiceUnavailable ? new ScimServiceUnavailable({ detail: error.message }) : scimError(error))

  /** A write: one transaction with its event; a refusal is recorded after the rollback. */
  const write = <A, R>(
    caller: ScimCaller,
    request: ScimRequest,
    status: number,
    resourceId: (a: A) => string | null,
    body: (connection: SyncConnection) => Effect.Effect<A, GroupFailure | SqlError, R>
  ) =>
    answer(transaction(Effect.gen(function*() {
      const result = yield* body(yield* connectionOf(caller))
      yield* events.record(caller, { ...request, resourceType: "Group" }, { status, resourceId: resourceId(result) })
      return result
    }))).pipe(Effect.tapError((error) => events.recordFailure(caller, { ...request, resourceType: "Group" }, error)))

  const read_ = <A, R>(caller: ScimCaller, body: (connection: SyncConnection) => Effect.Effect<A, GroupFailure | SqlError, R>) =>
    answer(orUnavailable(Effect.flatMap(connectionOf(caller), body)))

  /** The body of a POST or PUT as a Group (400 `invalidValue` when it is not one). */
  const inputOf = (body: Readonly<Record<string, unknown>>) =>
    Result.match(groupInput(body), {
      onFailure: (failure) => Effect.fail(new GroupFailure({ status: 400, ...failure })),
      onSuccess: (input): Effect.Effect<GroupInput> =>
        Effect.succeed({ displayName: input.displayName, externalId: input.externalId, members: input.members.map((value) => ({ value })) })
    })

  /** A path id that is not a group id is a 404 like a missing group (never a 400 that tells ids apart). */
  const withGroupId = <A, R>(id: string, use: (id: ScimGroupId) => Effect.Effect<A, GroupFailure | SqlError, R>) =>
    isGroupId(id) ? use(id) : Effect.fail(groupNotFound(id))

  return {
    list: Effect.fn("Groups.list")((caller: ScimCaller, place: Place, query: ListQuery) => read_(caller, (connection) => list(place, connection, query))),
    get: Effect.fn("Groups.get")((caller: ScimCaller, place: Place, id: string, query: ProjectionQuery) =>
      read_(caller, (connection) => withGroupId(id, (groupId) => get(place, connection, groupId, query)))),
    create: Effect.fn("Groups.create")((caller: ScimCaller, request: ScimRequest, place: Place, body: Readonly<Record<string, unknown>>) =>
      write(caller, request, 201, (group: GroupResource) => group.id, (connection) => Effect.flatMap(inputOf(body), (input) => create(place, connection, input)))),
    replace: Effect.fn("Groups.replace")((caller: ScimCaller, request: ScimRequest, place: Place, id: string, body: Readonly<Record<string, unknown>>, ifMatch: string | undefined) =>
      write(caller, request, 200, (group: GroupResource) => group.id, (connection) =>
        Effect.flatMap(inputOf(body), (input) => withGroupId(id, (groupId) => replace(place, connection, groupId, input, ifMatch))))),
    patch: Effect.fn("Groups.patch")((caller: ScimCaller, request: ScimRequest, place: Place, id: string, operations: ReadonlyArray<unknown>, ifMatch: string | undefined) =>
      write(caller, request, 200, (group: GroupResource) => group.id, (connection) =>
        withGroupId(id, (groupId) => patch(place, connection, groupId, operations, ifMatch)))),
    remove: Effect.fn("Groups.remove")((caller: ScimCaller, request: ScimRequest, id: string, ifMatch: string | undefined) =>
      write(caller, request, 204, () => id, (connection) => withGroupId(id, (groupId) => remove(connection, groupId, ifMatch)))),
    /** For reconcile and the Users operations: the connection's settings. */
    connectionOf
  } as const
})

export class Groups extends Context.Service<Groups>()("@orgplane/server/scim/Groups", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      GroupsRepository.layer,
      TeamSync.layer,
      DirectoryEvents.layer
    ])
  )
}

export type GroupsError = GroupFailure | SqlError
