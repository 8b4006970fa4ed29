/**
 * Workers: registered and read by every member; changed, deleted, given a new token and upgraded by their creator,
 * owners and admins. The runtime side (instances here; heartbeats in Activity.ts) acts as the worker its token
 * belongs to.
 */
import {
  Conflict,
  Forbidden,
  NotFound,
  type OrganizationId,
  type RegisterInstanceRequest,
  type RegisterWorkerRequest as RegisterWorkerRequestSchema,
  type UpdateWorkerRequest,
  type UserId,
  Worker,
  WorkerId,
  type WorkerCaller,
  type WorkerListQuery
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { checkUserMember, Outbound } from "../platform/Outbound.js"
import { bind, SecretColumns } from "../platform/SecretColumns.js"
import { makeId } from "../platform/Ids.js"
import { describe, describeChange } from "../platform/AuditRecorder.js"
import { actingMembershipId, authorize, can, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ActivityConfig, bounds } from "./ActivityConfig.js"
import { Runtime } from "./Runtime.js"
import { WorkersRepository } from "./WorkersRepository.js"

/** Worker tokens: `opw_` and 32 random bytes. Only their SHA-256 is stored. */
export const WORKER_TOKEN_PREFIX = "opw"

export const workerNotFound = () => new NotFound({ error: "worker_not_found", message: "Worker not found." })

const unavailable = (message: string) => new Conflict({ error: "worker_runtime_unavailable", message })

const isWorkerId = Schema.is(WorkerId)

/** The person behind a principal (the system has none: it reads nothing as its own). */
const userOf = (principal: Principal): UserId | null => principal._tag === "Member" ? principal.user.id : null

/** A user id no row has, for the system's `isMine` (always false). */
const NOBODY = "usr_00000000000000000000000000" as UserId

const make = Effect.gen(function*() {
  const workers = yield* WorkersRepository
  const crypto = yield* Crypto
  const runtime = yield* Runtime
  const activity = yield* ActivityConfig
  const outbound = yield* Outbound
  const config = yield* ServerConfig

  /** Who reads, now: `isMine` and the connectivity bounds. */
  const readerOf = (principal: Principal) =>
    Effect.map(now, (at) => ({ userId: userOf(principal) ?? NOBODY, ...bounds(activity, at) }))

  /** The worker id `raw` names, or 404: the spec's ids are plain strings, and one of another shape names no worker. */
  const parseId = (raw: string) => isWorkerId(raw) ? Effect.succeed(raw) : Effect.fail(workerNotFound())

  const read = (principal: Principal, id: WorkerId) =>
    Effect.gen(function*() {
      const organizationId = principal.organization.id
      const worker = yield* workers.find({ organizationId, id, ...yield* readerOf(principal) })
      if (Option.isNone(worker)) return yield* workerNotFound()
      const instance = yield* workers.latestInstance({ organizationId, id })
      return { worker: worker.value, instance: Option.getOrNull(instance) }
    })

  /**
   * The worker locked for a change, when the principal may change it: its creator, or an owner or admin (403
   * `insufficient_access` for another member's worker, 404 for none).
   */
  const lockManaged = (principal: Principal, id: WorkerId) =>
    Effect.gen(function*() {
      const locked = yield* workers.lock({ organizationId: principal.organization.id, id })
      if (locked === undefined) return yield* workerNotFound()
      yield* mayManage(principal, locked.createdByUserId)
    })

  const mayManage = (principal: Principal, createdByUserId: string | null) =>
    can(principal, "workers.manageAny") || (createdByUserId !== null && createdByUserId === userOf(principal))
      ? Effect.void
      : Effect.fail(
        new Forbidden({
          reason: "insufficient_access",
          message: "Only the worker's creator, owners and admins may change, delete, rotate the token of or upgrade it."
        })
      )

  /** A fresh token for the worker: the plain token (to show once) after storing its hash. */
  const issueToken = (organizationId: OrganizationId, workerId: WorkerId, at: Date) =>
    Effect.gen(function*() {
      const token = yield* crypto.newToken(WORKER_TOKEN_PREFIX)
      yield* workers.insertToken({ id: yield* makeId("wkt"), organizationId, workerId, tokenHash: crypto.hashToken(token), createdAt: at })
      return token
    })

  const register = Effect.fn("Workers.register")(function*(principal: Principal, input: typeof RegisterWorkerRequestSchema.Type) {
    yield* authorize(principal, "workers.register")
    return yield* transaction(
      Effect.gen(function*() {
        const organizationId = principal.organization.id
        const id = yield* makeId("wrk")
        const at = yield* now
        yield* workers.insert({
          id,
          organizationId,
          createdByMembershipId: actingMembershipId(principal),
          createdByUserId: userOf(principal),
          name: input.name,
          description: input.description === undefined || input.description === "" ? null : input.description,
          destination: input.destination,
          status: "provisioning",
          imageVersion: null,
          workspacePath: input.workspacePath ?? null,
          sandboxBackend: input.sandboxBackend ?? null,
          createdAt: at,
          updatedAt: at
        })
        const token = yield* issueToken(organizationId, id, at)
        // Just written in this transaction: a missing row would be a bug.
        const { worker } = yield* Effect.catchTag(read(principal, id), "NotFound", Effect.die)
        return { worker, token }
      })
    )
  })

  const list = Effect.fn("Workers.list")(function*(principal: Principal, query: WorkerListQuery) {
    yield* authorize(principal, "workers.read")
    return yield* orUnavailable(
      Effect.flatMap(readerOf(principal), (reader) => workers.list(principal.organization.id, reader, query))
    )
  })

  const get = Effect.fn("Workers.get")(function*(principal: Principal, rawId: string) {
    yield* authorize(principal, "workers.read")
    return yield* Effect.flatMap(parseId(rawId), (id) => orUnavailable(read(principal, id)))
  })

  /** A change to one worker the principal may manage, in a transaction holding the worker's lock. */
  const change = <A, E, R>(
    principal: Principal,
    rawId: string,
    apply: (worker: { readonly organizationId: OrganizationId; readonly id: WorkerId; readonly at: Date }) => Effect.Effect<A, E, R>
  ) =>
    Effect.andThen(
      authorize(principal, "workers.manage"),
      Effect.flatMap(parseId(rawId), (id) =>
        transaction(
          Effect.gen(function*() {
            yield* lockManaged(principal, id)
            return yield* apply({ organizationId: principal.organization.id, id, at: yield* now })
          })
        ))
    )

  const update = Effect.fn("Workers.update")((principal: Principal, rawId: string, input: UpdateWorkerRequest) =>
    change(principal, rawId, (worker) =>
      Effect.gen(function*() {
        const before = yield* read(principal, worker.id)
        yield* workers.update({
          ...worker,
          name: input.name,
          description: input.description === "" ? null : input.description,
          workspacePath: input.workspacePath,
          sandboxBackend: input.sandboxBackend
        })
        const after = yield* read(principal, worker.id)
        yield* describeChange(Worker, before.worker, after.worker)
        return after
      })))

  const remove = Effect.fn("Workers.remove")((principal: Principal, rawId: string) =>
    change(principal, rawId, (worker) => Effect.andThen(workers.revokeTokens(worker), workers.softDelete(worker))))

  const rotateToken = Effect.fn("Workers.rotateToken")((principal: Principal, rawId: string) =>
    change(principal, rawId, (worker) =>
      Effect.gen(function*() {
        yield* workers.revokeTokens(worker)
        const token = yield* issueToken(worker.organizationId, worker.id, worker.at)
        const { worker: updated } = yield* read(principal, worker.id)
        return { worker: updated, token }
      })))

  /**
   * Forwards outside any transaction (a transaction may run again; a runtime call must not): first the checks
   * and the latest instance's URL and credential, then the call.
   */
  const upgradeRuntime = Effect.fn("Workers.upgradeRuntime")(function*(principal: Principal, rawId: string, body: unknown) {
    yield* authorize(principal, "workers.manage")
    const id = yield* parseId(rawId)
    const organizationId = principal.organization.id
    const target = yield* orUnavailable(
      Effect.gen(function*() {
        const worker = yield* workers.find({ organizationId, id, ...yield* readerOf(principal) })
        if (Option.isNone(worker)) return yield* workerNotFound()
        yield* mayManage(principal, worker.value.createdByUserId)
        return yield* workers.runtimeTarget({ organizationId, id })
      })
    )
    if (Option.isNone(target)) {
      return yield* unavailable("The worker has no instance yet: start its runtime with the worker's token, and retry once it has registered its instance.")
    }
    const { instanceId, runtimeCredentialCiphertext, url } = target.value
    if (url === null) {
      return yield* unavailable("The worker's instance has no URL yet: let its runtime register its instance with a url, then retry.")
    }
    if (runtimeCredentialCiphertext === null) {
      return yield* unavailable("The worker's instance registered no runtime credential: let its runtime register its instance with a credential, then retry.")
    }
    // Unreadable (logged once, naming the key problem): a new registration by the runtime stores a fresh one.
    const credential = yield* crypto.decrypt(runtimeCredentialCiphertext, bind(SecretColumns.workerRuntimeCredential, organizationId, instanceId)).pipe(
      Effect.mapError(() =>
        unavailable("The runtime's stored credential cannot be decrypted with this server's encryption keys (the server's log says why): let its runtime register its instance again, then retry.")
      )
    )
    return yield* runtime.upgrade(url, Redacted.make(credential), body)
  })

  // The runtime's side ------------------------------------------------------------------------------------------

  const registerInstance = Effect.fn("Workers.registerInstance")(function*(caller: WorkerCaller, input: typeof RegisterInstanceRequest.Type) {
    // The outbound guard's rules for a user-supplied destination, as LLM providers, audit streams and SAML
    // metadata get them when stored: a URL every upgrade would refuse is a 400 now, not a 201 and a 502 later.
    // Each call checks it again (and pins the address it checked): DNS may answer otherwise by then.
    if (input.url !== undefined) yield* checkUserMember(outbound, config.outboundAllowPrivate, ["url"], input.url)
    // Encrypted before the transaction (a retried transaction must not need it again), bound to the new row.
    const id = yield* makeId("wki")
    const ciphertext = input.credential === undefined
      ? null
      : yield* Effect.orDie(crypto.encrypt(input.credential, bind(SecretColumns.workerRuntimeCredential, caller.organizationId, id)))
    return yield* transaction(
      Effect.gen(function*() {
        const at = yield* now
        yield* workers.insertInstance({
          id,
          organizationId: caller.organizationId,
          workerId: caller.workerId,
          provider: input.provider,
          region: input.region ?? null,
          url: input.url ?? null,
          status: input.status,
          runtimeCredentialCiphertext: ciphertext,
          createdAt: at,
          updatedAt: at
        })
        const instance = yield* workers.latestInstance({ organizationId: caller.organizationId, id: caller.workerId })
        // The answer's instance carries no id (the spec's shape): the event names the one made here.
        yield* describe({ targets: [id] })
        return { instance: Option.getOrThrow(instance) }
      })
    )
  })

  return { register, list, get, update, remove, rotateToken, upgradeRuntime, registerInstance } as const
})

export class Workers extends Context.Service<Workers>()("@orgplane/server/workers/Workers", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
