/**
 * SCIM Users of a connection (RFC 7644 §3): each is a member of the organization. Creating one makes the person's
 * account, or provisions the account that has the address only as identity's Ownership allows: one whose email is
 * proven, or, when nobody proved it and the organization verified the address's domain, one it takes back (every
 * other way into it ends); an unproven account of another domain is refused. `active` suspends and restores the
 * membership; deleting removes it (soft) and keeps it marked as deprovisioned. Each write is one transaction with its
 * `scim_events` row.
 */
import {
  Conflict,
  type MembershipId,
  ScimBadRequest,
  ScimConflict,
  ScimNotFound,
  ScimPreconditionFailed,
  ScimServiceUnavailable,
  type ScimUser,
  ServiceUnavailable
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { Accounts } from "../identity/Accounts.js"
import { Memberships } from "../identity/Memberships.js"
import { Ownership } from "../identity/Ownership.js"
import { UsersRepository as AccountsRepository } from "../identity/UsersRepository.js"
import { describe } from "../platform/AuditRecorder.js"
import { catchUniqueViolation, orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { EnterpriseUserSchemaId, MaxResults, UserResourceType, UserSchemaId } from "./Attributes.js"
import { DirectoryEvents, type ScimRequest } from "./DirectoryEvents.js"
import { DirectoryMembers } from "./DirectoryMembers.js"
import * as Filter from "./Filter.js"
import { GroupsRepository } from "./GroupsRepository.js"
import { applyPatch, type PatchError, readResource } from "./Patch.js"
import { withOnePrimary } from "./Primary.js"
import { type ProjectionQuery, projectResource } from "./Projection.js"
import { TeamSync } from "./TeamSync.js"
import { type ScimScope, type ScimUserRow, type ScimUserValues, UsersRepository } from "./UsersRepository.js"

/** A directory's request: its connection and the token it used. */
export interface ScimCaller extends ScimScope {
  readonly tokenId: string | null
}

export interface ListParameters extends ProjectionQuery {
  readonly filter?: string | undefined
  readonly startIndex?: string | number | undefined
  readonly count?: string | number | undefined
}

const badRequest = (error: PatchError | Filter.InvalidFilter) =>
  error._tag === "InvalidFilter"
    ? new ScimBadRequest({ scimType: "invalidFilter", detail: error.detail })
    : new ScimBadRequest({ scimType: error.scimType, detail: error.detail })

const userNotFound = (id: string) => new ScimNotFound({ detail: `User ${id} not found.` })
const uniqueness = (detail: string) => new ScimConflict({ scimType: "uniqueness", detail })

/**
 * SCIM's integers: a number or its decimal text (at most 9 digits, as documented); out of range counts as the nearest
 * bound (RFC 7644 §3.4.2.4).
 */
const integer = (name: string, value: string | number | undefined, fallback: number, minimum: number, maximum: number) => {
  if (value === undefined || value === "") return Result.succeed(fallback)
  const number = typeof value === "number" ? value : /^-?\d{1,9}$/.test(value) ? Number(value) : Number.NaN
  if (!Number.isInteger(number)) {
    return Result.fail(new ScimBadRequest({ scimType: "invalidValue", detail: `${name} must be an integer.` }))
  }
  return Result.succeed(Math.min(Math.max(number, minimum), maximum))
}

/** `If-Match`: `*` or a list of ETags (weak or strong); the User's version must be among them. */
const matches = (ifMatch: string | undefined, version: number) =>
  ifMatch === undefined || ifMatch.trim() === "*" ||
  ifMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "").replace(/^"|"$/g, "") === String(version))

/**
 * The columns of a canonical resource, and what `resource` keeps (everything else). `active` is the membership's
 * admission (the column); the resource keeps it only while the directory assigns it (`assigned`), so a User whose
 * `active` was removed reads without it (RFC 7644 §3.5.2.2: unassigned) while its membership stays as it was.
 */
const valuesOf = (canonical: Record<string, unknown>, active: boolean, assigned: boolean): ScimUserValues => {
  const { userName, externalId, active: _active, ...rest } = canonical
  const resource = assigned ? { ...rest, active } : rest
  return {
    userName: userName as string,
    externalId: typeof externalId === "string" ? externalId : null,
    active,
    displayName: typeof resource.displayName === "string" ? resource.displayName : null,
    emails: Array.isArray(resource.emails) ? resource.emails : [],
    resource
  }
}

/** The `active` a directory assigned to the User (undefined: unassigned). */
const assignedActive = (resource: Record<string, unknown>): boolean | undefined =>
  typeof resource.active === "boolean" ? resource.active : undefined

/**
 * What a row stores, with one primary email at most: a row written before `primary` was checked may have several, and
 * reads (and is next written) with the first one primary, the one its account was found by.
 */
const storedResource = (row: ScimUserRow) => withOnePrimary(UserResourceType, row.resource)

/** The canonical resource a row stores (what PATCH applies to). */
const canonicalOf = (row: ScimUserRow): Record<string, unknown> => ({
  ...(row.externalId === null ? {} : { externalId: row.externalId }),
  userName: row.userName,
  ...storedResource(row)
})

export const userLocation = (base: string, id: string) => `${base}/Users/${id}`

/** The User as SCIM answers it (before projection). */
export const toScimUser = (row: ScimUserRow, base: string): Record<string, unknown> => {
  const { [EnterpriseUserSchemaId]: enterprise, ...core } = storedResource(row)
  return {
    schemas: enterprise === undefined ? [UserSchemaId] : [UserSchemaId, EnterpriseUserSchemaId],
    id: row.membershipId,
    ...(row.externalId === null ? {} : { externalId: row.externalId }),
    userName: row.userName,
    ...core,
    ...(enterprise === undefined ? {} : { [EnterpriseUserSchemaId]: enterprise }),
    meta: {
      resourceType: "User",
      created: row.createdAt.toISOString(),
      lastModified: row.updatedAt.toISOString(),
      location: userLocation(base, row.membershipId),
      version: `W/"${row.version}"`
    }
  }
}

/** The email the person's account is found or made by: the primary email, else the first, else an email userName. */
const emailOf = (canonical: Record<string, unknown>): string | undefined => {
  const emails = (Array.isArray(canonical.emails) ? canonical.emails : []) as ReadonlyArray<Record<string, unknown>>
  const chosen = emails.find((email) => email.primary === true && typeof email.value === "string") ??
    emails.find((email) => typeof email.value === "string")
  const email = (chosen?.value as string | undefined) ?? (canonical.userName as string)
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim()) && email.length <= 254 ? email.trim() : undefined
}

const nameOf = (canonical: Record<string, unknown>, email: string) => {
  const name = canonical.name as Record<string, string> | undefined
  const full = (canonical.displayName as string | undefined) ?? name?.formatted ??
    ([name?.givenName, name?.familyName].filter((part) => part !== undefined).join(" ") || email)
  return full.slice(0, 200)
}

const make = Effect.gen(function*() {
  const repository = yield* UsersRepository
  const memberships = yield* Memberships
  const accounts = yield* Accounts
  const people = yield* AccountsRepository
  const events = yield* DirectoryEvents
  const directory = yield* DirectoryMembers
  const groups = yield* GroupsRepository
  const sync = yield* TeamSync
  const ownership = yield* Ownership

  const unavailable = <A, E, R>(effect: Effect.Effect<A, E | ServiceUnavailable, R>) =>
    Effect.catchIf(
      effect,
      (error): error is ServiceUnavailable => error instanceof ServiceUnavailable,
      (error) => Effect.fail(new ScimServiceUnavailable({ detail: error.message }))
    )

  /** A write: one transaction with its event; a refusal is recorded after the rollback, as the design asks. */
  const write = <A, E extends { readonly _tag: string }, R>(
    caller: ScimCaller,
    request: ScimRequest,
    resourceId: (a: A) => string | null,
    status: number,
    body: Effect.Effect<A, E, R>
  ) =>
    unavailable(transaction(Effect.tap(body, (a) => events.record(caller, request, { status, resourceId: resourceId(a) })))).pipe(
      Effect.tapError((error) => events.recordFailure(caller, request, error))
    )

  const lockedUser = (caller: ScimCaller, id: string, ifMatch: string | undefined) =>
    Effect.gen(function*() {
      const row = yield* repository.find(caller, id as MembershipId, { lock: true })
      if (Option.isNone(row)) return yield* userNotFound(id)
      if (!matches(ifMatch, row.value.version)) {
        return yield* new ScimPreconditionFailed({ detail: `If-Match does not match the User's version W/"${row.value.version}".` })
      }
      return row.value
    })

  const checkUnique = (caller: ScimCaller, values: ScimUserValues, except?: MembershipId) =>
    Effect.flatMap(repository.clash(caller, values, except), (clash) =>
      Option.isNone(clash)
        ? Effect.void
        : Effect.fail(uniqueness(
          clash.value.userName.toLowerCase() === values.userName.toLowerCase()
            ? `A User of this connection has the userName "${values.userName}".`
            : `A User of this connection has the externalId "${values.externalId}".`
        )))

  /** Suspends or restores the membership when `active` changes. */
  const setActive = (caller: ScimCaller, id: MembershipId, active: boolean) =>
    active ? directory.restore(caller.organizationId, id) : directory.suspend(caller.organizationId, id)

  /** The directory's teams (and the role rules) follow a member it suspended, restored or deleted. */
  const teamsFollow = (caller: ScimCaller, id: MembershipId) =>
    Effect.flatMap(groups.connection(caller), Option.match({
      onNone: () => Effect.void,
      onSome: (settings) => Effect.asVoid(sync.memberChanged({ ...caller, ...settings }, id))
    }))

  const store = (caller: ScimCaller, id: MembershipId, values: ScimUserValues, previous: ScimUserRow) =>
    Effect.gen(function*() {
      yield* checkUnique(caller, values, id)
      const updated = yield* repository.update(caller, id, { ...values, at: yield* now })
      if (values.active !== previous.active) {
        yield* setActive(caller, id, values.active)
        yield* teamsFollow(caller, id)
      }
      return updated
    }).pipe(catchUniqueViolation(() => uniqueness("Another User of this connection has this userName or externalId.")))

  const create = Effect.fn("Users.create")(function*(caller: ScimCaller, request: ScimRequest, body: unknown, base: string) {
    const canonical = readResource(UserResourceType, body)
    if (Result.isFailure(canonical)) return yield* Effect.fail(badRequest(canonical.failure))
    const assigned = assignedActive(canonical.success)
    const values = valuesOf(canonical.success, assigned ?? true, assigned !== undefined)
    const email = emailOf(canonical.success)
    if (email === undefined) {
      return yield* new ScimBadRequest({
        scimType: "invalidValue",
        detail: "A User needs an email: in emails, or as its userName."
      })
    }
    const row = yield* write(caller, request, (row: ScimUserRow) => row.membershipId, 201, Effect.gen(function*() {
      const connection = yield* repository.connection(caller)
      if (Option.isNone(connection)) return yield* new ScimNotFound({ detail: "No such SCIM connection." })
      yield* memberships.lock(caller.organizationId)
      yield* checkUnique(caller, values)
      const at = yield* now
      const person = yield* personOf(caller, email, nameOf(canonical.success, email), at)
      const userId = person.userId
      const existing = yield* memberships.findActive(caller.organizationId, { userId })
      let membershipId: MembershipId
      if (Option.isSome(existing)) {
        membershipId = existing.value.id
        if (Option.isSome(yield* repository.linkedConnection(caller.organizationId, membershipId))) {
          return yield* uniqueness(`${email} is already a User of a SCIM connection of this organization.`)
        }
        yield* repository.dropDeleted(caller.organizationId, membershipId)
      } else {
        membershipId = (yield* memberships.join({
          organizationId: caller.organizationId,
          userId,
          role: connection.value.defaultRole
        })).id
      }
      // The organization made the account for this address, or vouched for it: proven to the organization.
      if (person.vouched) yield* memberships.markEmailVerified({ organizationId: caller.organizationId, id: membershipId, at })
      yield* setActive(caller, membershipId, values.active)
      // The event names whom the directory provisioned: the member, and the person.
      yield* describe({ targets: [membershipId, userId] })
      return yield* repository.insert(caller, { ...values, membershipId, userId, at })
    }).pipe(catchUniqueViolation(() => uniqueness("Another User of this connection has this userName or externalId."))))
    return toScimUser(row, base) as ScimUser
  })

  /**
   * The account the directory's User is for: a new one without a password of its own (as SSO's JIT makes them), or the
   * account with the address as Ownership decides: linked when proven, taken back when the organization vouches for the
   * address, else refused (409: whoever made that account never proved the address, and the directory proved nothing
   * of it either). `vouched`: the organization made the account for the address or vouched for it.
   */
  const personOf = (caller: ScimCaller, email: string, name: string, at: Date) =>
    Effect.gen(function*() {
      const found = yield* people.findByEmail(email)
      if (Option.isNone(found)) {
        return { userId: (yield* accounts.createUser({ email, name, passwordHash: null }, at)).id, vouched: true }
      }
      const userId = found.value.id
      const claim = yield* ownership.claim(userId, caller.organizationId, email)
      if (claim === "refuse") {
        return yield* uniqueness(
          `An account with ${email} exists whose owner has not proven the address, which is of no domain this organization verified: the person proves it first (a mailed verification link), or the organization verifies the domain.`
        )
      }
      if (claim === "take_back") yield* ownership.reestablish(userId, { by: "directory", organizationId: caller.organizationId }, at)
      return { userId, vouched: claim === "take_back" }
    }).pipe(
      // Another request made the account first (a sign-up, another connection): the directory retries.
      Effect.catchIf(
        (error): error is Conflict => error instanceof Conflict,
        () => Effect.fail(new ScimServiceUnavailable({ detail: `An account for ${email} was just created: retry.` }))
      )
    )

  const list = Effect.fn("Users.list")(function*(caller: ScimCaller, parameters: ListParameters, base: string) {
    const startIndex = yield* Effect.fromResult(integer("startIndex", parameters.startIndex, 1, 1, Number.MAX_SAFE_INTEGER))
    const count = yield* Effect.fromResult(integer("count", parameters.count, 100, 0, MaxResults))
    const condition = Filter.condition(repository.sql, repository.mapping, parameters.filter)
    if (Result.isFailure(condition)) return yield* Effect.fail(badRequest(condition.failure))
    const page = yield* unavailable(orUnavailable(repository.list(caller, condition.success, startIndex - 1, count)))
    return {
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: page.total,
      startIndex,
      itemsPerPage: page.rows.length,
      Resources: page.rows.map((row) => projectResource(UserResourceType, toScimUser(row, base), parameters) as ScimUser)
    }
  })

  const get = Effect.fn("Users.get")(function*(caller: ScimCaller, id: string, query: ProjectionQuery, base: string) {
    const row = yield* unavailable(orUnavailable(repository.find(caller, id as MembershipId)))
    if (Option.isNone(row)) return yield* userNotFound(id)
    return projectResource(UserResourceType, toScimUser(row.value, base), query) as ScimUser
  })

  const replace = Effect.fn("Users.replace")(function*(caller: ScimCaller, request: ScimRequest, id: string, body: unknown, ifMatch: string | undefined, base: string) {
    const canonical = readResource(UserResourceType, body)
    if (Result.isFailure(canonical)) return yield* Effect.fail(badRequest(canonical.failure))
    const row = yield* write(caller, request, () => id, 200, Effect.gen(function*() {
      const previous = yield* lockedUser(caller, id, ifMatch)
      // A PUT without `active` keeps it: a full replace must not suspend or restore by omission.
      const assigned = assignedActive(canonical.success) ?? assignedActive(previous.resource)
      return yield* store(caller, previous.membershipId, valuesOf(canonical.success, assigned ?? previous.active, assigned !== undefined), previous)
    }))
    return toScimUser(row, base) as ScimUser
  })

  const patch = Effect.fn("Users.patch")(function*(
    caller: ScimCaller,
    request: ScimRequest,
    id: string,
    operations: ReadonlyArray<unknown>,
    ifMatch: string | undefined,
    base: string
  ) {
    const row = yield* write(caller, request, () => id, 200, Effect.gen(function*() {
      const previous = yield* lockedUser(caller, id, ifMatch)
      const patched = applyPatch(UserResourceType, canonicalOf(previous), operations)
      if (Result.isFailure(patched)) return yield* Effect.fail(badRequest(patched.failure))
      // Removing `active` unassigns it; the membership stays as it was (nothing is suspended or restored by omission).
      const assigned = assignedActive(patched.success)
      return yield* store(caller, previous.membershipId, valuesOf(patched.success, assigned ?? previous.active, assigned !== undefined), previous)
    }))
    return toScimUser(row, base) as ScimUser
  })

  const remove = Effect.fn("Users.remove")((caller: ScimCaller, request: ScimRequest, id: string, ifMatch: string | undefined) =>
    write(caller, request, () => id, 204, Effect.gen(function*() {
      const previous = yield* lockedUser(caller, id, ifMatch)
      yield* directory.remove(caller.organizationId, previous.membershipId)
      yield* repository.markDeleted(caller, previous.membershipId, yield* now)
      yield* teamsFollow(caller, previous.membershipId)
    })))

  return { create, list, get, replace, patch, remove } as const
})

export class Users extends Context.Service<Users>()("@orgplane/server/scim/Users", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      UsersRepository.layer,
      Memberships.layer,
      Accounts.layer,
      AccountsRepository.layer,
      DirectoryEvents.layer,
      DirectoryMembers.layer,
      GroupsRepository.layer,
      TeamSync.layer,
      Ownership.layer
    ])
  )
}
