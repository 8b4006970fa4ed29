/**
 * SCIM connections as admins manage them (enterprise plan, `scim.manage`): create, read, change (a change of what the
 * directory does is applied at once by reconciling), delete; tokens shown once and hashed, several at a time so
 * rotation overlaps; the provisioning event log; reconcile on request.
 */
import {
  type CreateScimConnectionRequest,
  type CreateScimTokenRequest,
  InvalidRequest,
  NotFound,
  type PageQuery,
  ScimConnection,
  type ScimConnectionId,
  type ScimEventListQuery,
  type ScimTokenId,
  type UpdateScimConnectionRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { describeChange } from "../platform/AuditRecorder.js"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize, type Principal, requireEnterprise, requireRecentAuthentication } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ConnectionsRepository, type Scoped, toConnection } from "./ConnectionsRepository.js"
import { DirectoryEvents } from "./DirectoryEvents.js"
import { Reconcile } from "./Reconcile.js"

export const connectionNotFound = () => new NotFound({ error: "scim_connection_not_found", message: "SCIM connection not found." })
const tokenNotFound = () => new NotFound({ error: "scim_token_not_found", message: "SCIM token not found." })

/** Where a reconcile an admin asked for is recorded in the event log. */
const reconcileRequest = (id: ScimConnectionId) => ({
  method: "POST",
  path: `/v1/scim/connections/${id}/reconcile`,
  resourceType: null
})

const make = Effect.gen(function*() {
  const connections = yield* ConnectionsRepository
  const reconciler = yield* Reconcile
  const events = yield* DirectoryEvents
  const crypto = yield* Crypto
  const settings = yield* ServerConfig

  const allowed = (principal: Principal) => Effect.andThen(requireEnterprise(principal, "scim"), authorize(principal, "scim.manage"))
  /** `allowed`, for a change of what provisions people: also a recent sign-in (Principal.ts `requireRecentAuthentication`). */
  const allowedToChange = (principal: Principal) =>
    Effect.andThen(allowed(principal), requireRecentAuthentication(principal, settings.recentAuthentication))
  const scope = (principal: Principal, id: ScimConnectionId): Scoped => ({ organizationId: principal.organization.id, id })

  /** The connection as the API answers it (404 when the organization has none such). */
  const read = (scoped: Scoped, base: string) =>
    Effect.flatMap(now, (at) =>
      Effect.flatMap(connections.find({ ...scoped, at }), Option.match({
        onNone: () => Effect.fail(connectionNotFound()),
        onSome: (row) => Effect.succeed(toConnection(row, base))
      })))

  /** Fails with 404 unless the organization has the connection; locks it for the rest of the transaction. */
  const lock = (scoped: Scoped) => Effect.flatMap(connections.lock(scoped), (found) => (found ? Effect.void : Effect.fail(connectionNotFound())))

  /** Reconciles the locked connection with its stored settings and records it in its event log. */
  const reconcileLocked = (scoped: Scoped) =>
    Effect.gen(function*() {
      const report = yield* Effect.flatMap(reconciler.reconcile({ organizationId: scoped.organizationId, connectionId: scoped.id }), Option.match({
        onNone: () => Effect.fail(connectionNotFound()),
        onSome: Effect.succeed
      }))
      yield* events.record(
        { organizationId: scoped.organizationId, connectionId: scoped.id, tokenId: null },
        reconcileRequest(scoped.id),
        { status: 200, resourceId: null }
      )
      return report
    })

  const create = Effect.fn("ScimConnections.create")(function*(principal: Principal, input: typeof CreateScimConnectionRequest.Type, base: string) {
    yield* allowedToChange(principal)
    return yield* transaction(Effect.gen(function*() {
      const id = yield* makeId("scc")
      yield* connections.insert({
        id,
        organizationId: principal.organization.id,
        name: input.name,
        groupMappingMode: input.groupMappingMode ?? "metadata_only",
        defaultRole: input.defaultRole ?? "member",
        roleRules: input.roleRules ?? [],
        createdByMembershipId: actingMembershipId(principal),
        at: yield* now
      })
      // It was just written: not finding it is a bug, not the caller's 404.
      return { connection: yield* Effect.catchTag(read(scope(principal, id), base), "NotFound", Effect.die) }
    }))
  })

  const list = Effect.fn("ScimConnections.list")(function*(principal: Principal, query: PageQuery, base: string) {
    yield* allowed(principal)
    return yield* orUnavailable(Effect.flatMap(now, (at) =>
      Effect.map(connections.list(principal.organization.id, at, query), (page) => ({
        items: page.items.map((row) => toConnection(row, base)),
        nextCursor: page.nextCursor
      }))))
  })

  const get = Effect.fn("ScimConnections.get")(function*(principal: Principal, id: ScimConnectionId, base: string) {
    yield* allowed(principal)
    return yield* orUnavailable(Effect.map(read(scope(principal, id), base), (connection) => ({ connection })))
  })

  const update = Effect.fn("ScimConnections.update")(function*(principal: Principal, id: ScimConnectionId, input: typeof UpdateScimConnectionRequest.Type, base: string) {
    yield* allowedToChange(principal)
    return yield* transaction(Effect.gen(function*() {
      const scoped = scope(principal, id)
      yield* lock(scoped)
      const before = yield* read(scoped, base)
      yield* connections.update(scoped, input, yield* now)
      const settingsChanged = input.groupMappingMode !== undefined || input.defaultRole !== undefined || input.roleRules !== undefined
      const reconciled = settingsChanged ? yield* reconcileLocked(scoped) : null
      const connection = yield* read(scoped, base)
      yield* describeChange(ScimConnection, before, connection)
      return { connection, reconciled }
    }))
  })

  const remove = Effect.fn("ScimConnections.remove")(function*(principal: Principal, id: ScimConnectionId) {
    yield* allowedToChange(principal)
    return yield* transaction(Effect.flatMap(connections.remove(scope(principal, id)), (found) => (found ? Effect.void : Effect.fail(connectionNotFound()))))
  })

  const createToken = Effect.fn("ScimConnections.createToken")(function*(principal: Principal, id: ScimConnectionId, input: typeof CreateScimTokenRequest.Type, base: string) {
    yield* allowedToChange(principal)
    const at = yield* now
    if (input.expiresAt !== undefined && input.expiresAt.getTime() <= at.getTime()) {
      return yield* InvalidRequest.field(["expiresAt"], "must be in the future")
    }
    const token = yield* crypto.newToken("scim")
    const tokenId = yield* makeId("sct")
    const scoped = scope(principal, id)
    return yield* transaction(Effect.gen(function*() {
      yield* lock(scoped)
      yield* connections.insertToken({
        id: tokenId,
        organizationId: scoped.organizationId,
        connectionId: id,
        name: input.name,
        tokenHash: crypto.hashToken(token),
        createdByMembershipId: actingMembershipId(principal),
        createdAt: at,
        expiresAt: input.expiresAt ?? null
      })
      const scimToken = yield* connections.findToken({ ...scoped, tokenId, at })
      return { scimToken, token, baseUrl: `${base}/scim/v2/${id}` }
    }))
  })

  const listTokens = Effect.fn("ScimConnections.listTokens")(function*(principal: Principal, id: ScimConnectionId, query: PageQuery) {
    yield* allowed(principal)
    return yield* orUnavailable(Effect.gen(function*() {
      const scoped = scope(principal, id)
      const at = yield* now
      if (Option.isNone(yield* connections.find({ ...scoped, at }))) return yield* connectionNotFound()
      return yield* connections.listTokens(scoped, at, query)
    }))
  })

  const revokeToken = Effect.fn("ScimConnections.revokeToken")(function*(principal: Principal, id: ScimConnectionId, tokenId: ScimTokenId) {
    yield* allowedToChange(principal)
    return yield* transaction(Effect.gen(function*() {
      const scoped = scope(principal, id)
      yield* lock(scoped)
      if (!(yield* connections.revokeToken(scoped, tokenId, yield* now))) return yield* tokenNotFound()
    }))
  })

  const listEvents = Effect.fn("ScimConnections.listEvents")(function*(principal: Principal, id: ScimConnectionId, query: ScimEventListQuery) {
    yield* allowed(principal)
    return yield* orUnavailable(Effect.gen(function*() {
      const scoped = scope(principal, id)
      if (Option.isNone(yield* connections.find({ ...scoped, at: yield* now }))) return yield* connectionNotFound()
      return yield* connections.listEvents(scoped, query)
    }))
  })

  const reconcile = Effect.fn("ScimConnections.reconcile")(function*(principal: Principal, id: ScimConnectionId) {
    yield* allowed(principal)
    return yield* transaction(Effect.gen(function*() {
      const scoped = scope(principal, id)
      yield* lock(scoped)
      return yield* reconcileLocked(scoped)
    }))
  })

  return { create, list, get, update, remove, createToken, listTokens, revokeToken, listEvents, reconcile } as const
})

export class Connections extends Context.Service<Connections>()("@orgplane/server/scim/Connections", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      ConnectionsRepository.layer,
      Reconcile.layer,
      DirectoryEvents.layer
    ])
  )
}
