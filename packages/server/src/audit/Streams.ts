/**
 * Audit streams as the API manages them: owners create, change, pause, delete and test streams and rotate their
 * secrets; owners and admins read them. The secret is made here, shown once (create, rotate) and stored encrypted;
 * delivery itself is audit/StreamDelivery.ts.
 */
import {
  type AuditStreamId,
  type AuditStreamListQuery,
  Conflict,
  type CreateAuditStreamRequest,
  MAX_AUDIT_STREAMS,
  NotFound,
  type UpdateAuditStreamRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { makeId } from "../platform/Ids.js"
import { checkUserMember, Outbound } from "../platform/Outbound.js"
import { actingMembershipId, authorize, type Principal, requireRecentAuthentication } from "../platform/Principal.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { lockLimit, orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { send } from "./StreamDelivery.js"
import { StreamsRepository, toStream } from "./StreamsRepository.js"
import { StreamWake } from "./StreamWake.js"

const streamNotFound = () => new NotFound({ error: "audit_stream_not_found", message: "Audit stream not found." })

const limitReached = () =>
  new Conflict({
    error: "audit_stream_limit_reached",
    message: `The organization has ${MAX_AUDIT_STREAMS} audit streams, the most it may have: delete one first.`
  })

/** The ping `POST /v1/audit/streams/{streamId}/test` sends. */
const PING = JSON.stringify({ events: [], test: true })

const make = Effect.gen(function*() {
  const streams = yield* StreamsRepository
  const crypto = yield* Crypto
  const wake = yield* StreamWake
  const { recentAuthentication } = yield* ServerConfig

  const secretFor = (organizationId: string, id: AuditStreamId) =>
    Effect.gen(function*() {
      const secret = yield* crypto.newToken("whsec")
      // Never without a key: a server without one does not start (platform/InstanceSecrets.ts).
      const ciphertext = yield* Effect.orDie(crypto.encrypt(secret, bind(SecretColumns.auditStreamSecret, organizationId, id)))
      return { secret, ciphertext }
    })

  /** A URL the outbound guard would refuse, as a 400 on `url` (nothing to check in private mode). */
  const checkUrl = (url: string) =>
    Effect.gen(function*() {
      const config = yield* ServerConfig
      yield* checkUserMember(yield* Outbound, config.outboundAllowPrivate, ["url"], url)
    })

  const found = <A>(value: Option.Option<A>) => Option.match(value, { onNone: () => Effect.fail(streamNotFound()), onSome: Effect.succeed })

  const create = Effect.fn("Streams.create")(function*(principal: Principal, input: CreateAuditStreamRequest) {
    yield* authorize(principal, "audit.manage")
    yield* requireRecentAuthentication(principal, recentAuthentication)
    yield* checkUrl(input.url)
    const organizationId = principal.organization.id
    const id = yield* makeId("ast")
    const { ciphertext, secret } = yield* secretFor(organizationId, id)
    const status = input.status ?? "active"
    return yield* transaction(Effect.gen(function*() {
      // Creations of one organization one at a time, so two cannot both see room under the limit.
      yield* lockLimit("audit_streams", organizationId)
      if ((yield* streams.count(organizationId)) >= MAX_AUDIT_STREAMS) return yield* limitReached()
      const at = yield* now
      yield* streams.insert({
        id,
        organizationId,
        url: input.url,
        description: input.description ?? null,
        status,
        secretCiphertext: ciphertext,
        createdByMembershipId: actingMembershipId(principal),
        createdAt: at,
        updatedAt: at,
        // Events from now on: this one's own creation event is the first.
        cursorOccurredAt: at,
        cursorEventId: "",
        pendingDeliveryId: null,
        pendingLastOccurredAt: null,
        pendingLastEventId: null,
        lastAttemptAt: null,
        lastSuccessAt: null,
        consecutiveFailures: 0,
        lastError: null,
        nextAttemptAt: status === "active" ? at : null,
        leaseUntil: null
      })
      // The row this transaction just wrote.
      return { stream: toStream(Option.getOrThrow(yield* streams.find({ organizationId, id }))), secret }
    })).pipe(Effect.tap(() => wake.wake))
  })

  const list = Effect.fn("Streams.list")(function*(principal: Principal, query: AuditStreamListQuery) {
    yield* authorize(principal, "audit.read")
    const page = yield* orUnavailable(streams.list(principal.organization.id, query))
    return { items: page.items.map(toStream), nextCursor: page.nextCursor }
  })

  const get = Effect.fn("Streams.get")(function*(principal: Principal, id: AuditStreamId) {
    yield* authorize(principal, "audit.read")
    const row = yield* found(yield* orUnavailable(streams.find({ organizationId: principal.organization.id, id })))
    return { stream: toStream(row) }
  })

  const update = Effect.fn("Streams.update")(function*(principal: Principal, id: AuditStreamId, input: UpdateAuditStreamRequest) {
    yield* authorize(principal, "audit.manage")
    yield* requireRecentAuthentication(principal, recentAuthentication)
    if (input.url !== undefined) yield* checkUrl(input.url)
    const organizationId = principal.organization.id
    return yield* transaction(Effect.gen(function*() {
      const at = yield* now
      if (!(yield* streams.update(organizationId, id, input, at))) return yield* streamNotFound()
      return { stream: toStream(yield* found(yield* streams.find({ organizationId, id }))) }
    })).pipe(Effect.tap(() => wake.wake))
  })

  const remove = Effect.fn("Streams.remove")(function*(principal: Principal, id: AuditStreamId) {
    yield* authorize(principal, "audit.manage")
    yield* requireRecentAuthentication(principal, recentAuthentication)
    const removed = yield* transaction(streams.remove(principal.organization.id, id))
    if (!removed) return yield* streamNotFound()
  })

  const rotateSecret = Effect.fn("Streams.rotateSecret")(function*(principal: Principal, id: AuditStreamId) {
    yield* authorize(principal, "audit.manage")
    yield* requireRecentAuthentication(principal, recentAuthentication)
    const organizationId = principal.organization.id
    const { ciphertext, secret } = yield* secretFor(organizationId, id)
    return yield* transaction(Effect.gen(function*() {
      const at = yield* now
      if (!(yield* streams.setSecret(organizationId, id, ciphertext, at))) return yield* streamNotFound()
      return { stream: toStream(yield* found(yield* streams.find({ organizationId, id }))), secret }
    }))
  })

  /** One signed ping, sent now; the stream's position and delivery status stay as they are. */
  const test = Effect.fn("Streams.test")(function*(principal: Principal, id: AuditStreamId) {
    yield* authorize(principal, "audit.manage")
    const organizationId = principal.organization.id
    const row = yield* found(yield* orUnavailable(streams.find({ organizationId, id })))
    const secret = yield* crypto.decrypt(row.secretCiphertext, bind(SecretColumns.auditStreamSecret, organizationId, id))
    const deliveryId = yield* makeId("asd")
    const result = yield* send(row.url, secret, deliveryId, PING)
    // Whoever tests a stream expects its deliveries to be looked at now, not at the loop's next idle look.
    yield* wake.wake
    return { ...result, deliveryId }
  })

  return { create, list, get, update, remove, rotateSecret, test } as const
})

export class Streams extends Context.Service<Streams>()("@orgplane/server/audit/Streams", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(StreamsRepository.layer))
}
