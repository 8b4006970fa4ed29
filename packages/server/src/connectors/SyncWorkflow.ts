/**
 * The `Sync` service and the body of `SyncWorkflow` (see Sync.ts): an event is recorded, then its workflow runs in
 * the durable engine, once per event id, surviving restarts and moving to another server process when its runner
 * goes away (the workflows start after the commit, and the recovery starts those left queued: SyncRecovery.ts).
 */
import {
  Conflict,
  type ConnectorInstance,
  type ConnectorInstanceId,
  type ConnectorSyncEvent,
  type ConnectorSyncEventId,
  type ConnectorSyncEventListQuery,
  type ConnectorTargetId,
  FollowedPlugin,
  MAX_SOURCE_BYTES,
  NotFound,
  type OrganizationId,
  ServiceUnavailable,
  StoredCredentialUnreadable,
  SyncEventType
} from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import * as Activity from "effect/workflow/Activity"
import { Access, ConnectorInstanceKind, requireRanked } from "../access/Access.js"
import { ComponentFilesRepository } from "../catalog/ComponentFilesRepository.js"
import { GitHub, type GitHubError } from "../integrations/codehost/GitHub.js"
import { AuditRecorder } from "../platform/AuditRecorder.js"
import * as Durable from "../platform/Durable.js"
import type { IdGenerator } from "../platform/Ids.js"
import { authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { CodeHostAccess, nothingQueued, toApiError } from "./CodeHostAccess.js"
import { readComponentFiles } from "./ComponentFileStore.js"
import { targetNotFound } from "./Connectors.js"
import { ConnectorsRepository } from "./ConnectorsRepository.js"
import { DiscoveryRepository } from "./DiscoveryRepository.js"
import { DiscoveryService, MarketplaceUnreadable } from "./DiscoveryService.js"
import { MappingsRepository } from "./MappingsRepository.js"
import { indexOf } from "./RepositoryTree.js"
import {
  add,
  BatchResult,
  batchSize,
  contentOf,
  emptyResult,
  Materializer,
  maxWarnings,
  Plan,
  plan,
  type SyncContext,
  tooLarge
} from "./Materializer.js"
import { SourceBindingsRepository } from "./SourceBindingsRepository.js"
import { checkout } from "./SymbolicLinks.js"
import { type EnqueueInput, instanceDisabled, Sync, SyncWorkflow, targetRequired } from "./Sync.js"
import * as SyncRecovery from "./SyncRecovery.js"
import { SyncEventsRepository } from "./SyncEventsRepository.js"

export const syncEventNotFound = () =>
  new NotFound({ error: "connector_sync_event_not_found", message: "Connector sync event not found." })
// Defined with the contract, so that discovery (which the workflow uses) need not import this module.
export { instanceDisabled, targetRequired } from "./Sync.js"

const make = Effect.gen(function*() {
  const events = yield* SyncEventsRepository
  const repository = yield* ConnectorsRepository
  const access = yield* Access
  const codehost = yield* CodeHostAccess
  const github = yield* GitHub

  const record = (input: EnqueueInput) => events.record(input)
  const start = SyncRecovery.start

  /** Records the event in a transaction of its own and, once it is committed, starts its workflow. */
  const enqueue = Effect.fn("Sync.enqueue")((input: EnqueueInput) =>
    Effect.tap(transaction(events.record(input)), (recorded) =>
      // A pending event found is started again too: the engine runs one execution per event id, so this only
      // matters when the process that recorded it stopped before starting its workflow.
      start([{ organizationId: input.organizationId, id: recorded.event.id }])))

  const syncNow = Effect.fn("Sync.syncNow")((principal: Principal, instanceId: ConnectorInstanceId) =>
    Effect.gen(function*() {
      yield* authorize(principal, "connectors.read")
      const organizationId = principal.organization.id
      const { instance, targets } = yield* orUnavailable(Effect.gen(function*() {
        const instance = yield* repository.findInstanceRanked({
          organizationId,
          id: instanceId,
          rank: access.rank(principal, ConnectorInstanceKind, "i"),
          lock: false
        }).pipe(Effect.flatMap(requireRanked(ConnectorInstanceKind, "editor")))
        return { instance, targets: yield* repository.targetsOf(organizationId, instanceId) }
      }))
      if (instance.status !== "active") return yield* instanceDisabled()
      if (targets.length === 0) return yield* targetRequired()
      const credential = yield* orUnavailable(codehost.credentialOf(organizationId, instance))
      // Every followed branch's head first, then the queuing: a code host that does not answer queues nothing.
      const heads = yield* Effect.forEach(targets, (target) =>
        github.head(credential, target.remoteId, target.externalTargetRef).pipe(
          Effect.mapError((error) => nothingQueued(toApiError(error), target.externalTargetRef)),
          Effect.map((head) => ({ target, head }))
        ))
      const items: Array<ConnectorSyncEvent> = []
      for (const { head, target } of heads) {
        const synced = yield* orUnavailable(events.syncedAt(organizationId, target.id, head.sha))
        if (Option.isSome(synced)) {
          items.push(synced.value)
          continue
        }
        const { event } = yield* enqueue({
          organizationId,
          connectorInstanceId: instanceId,
          connectorTargetId: target.id,
          eventType: "sync_now",
          revision: head.sha
        })
        items.push(event)
      }
      return { ok: true as const, items }
    }))

  const resync = Effect.fn("Sync.resync")((principal: Principal, targetId: ConnectorTargetId) =>
    Effect.gen(function*() {
      yield* authorize(principal, "connectors.read")
      const organizationId = principal.organization.id
      const { instance, target } = yield* orUnavailable(Effect.gen(function*() {
        const target = yield* repository.findTargetRanked({
          organizationId,
          id: targetId,
          rank: access.rank(principal, ConnectorInstanceKind, "i"),
          lock: false
        }).pipe(Effect.flatMap(requireRanked(ConnectorInstanceKind, "editor", targetNotFound)))
        const instance = yield* repository.findInstance(organizationId, target.connectorInstanceId)
        if (Option.isNone(instance)) return yield* targetNotFound()
        return { instance: instance.value, target }
      }))
      if (instance.status !== "active") return yield* instanceDisabled()
      const { event } = yield* enqueue({
        organizationId,
        connectorInstanceId: instance.id,
        connectorTargetId: target.id,
        eventType: "resync",
        revision: null
      })
      return { ok: true as const, item: event }
    }))

  const listEvents = Effect.fn("Sync.listEvents")((principal: Principal, instanceId: ConnectorInstanceId, query: ConnectorSyncEventListQuery) =>
    Effect.andThen(
      authorize(principal, "connectors.read"),
      orUnavailable(Effect.andThen(
        access.require(principal, ConnectorInstanceKind, instanceId, "viewer"),
        events.list(principal.organization.id, instanceId, query)
      ))
    ))

  const getEvent = Effect.fn("Sync.getEvent")((principal: Principal, eventId: ConnectorSyncEventId) =>
    Effect.andThen(
      authorize(principal, "connectors.read"),
      orUnavailable(Effect.gen(function*() {
        const event = yield* events.find(principal.organization.id, eventId)
        if (Option.isNone(event)) return yield* syncEventNotFound()
        yield* access.require(principal, ConnectorInstanceKind, event.value.connectorInstanceId, "viewer")
        return { item: event.value }
      }))
    ))

  return Sync.of({ enqueue, record, start, syncNow, resync, listEvents, getEvent })
})

/**
 * Why a step failed. `transient` (a rate limit, a 5xx, a network failure, the database briefly unavailable): the
 * step is tried again, up to `retryPolicy.times`; anything else fails the sync at once with `message`.
 */
export class SyncFailure extends Schema.TaggedError<SyncFailure>()("SyncFailure", {
  message: Schema.String,
  transient: Schema.Boolean
}) {}

/** Retries of a step that failed transiently: about 0.5, 1, 2, 4, 8, 16 s (±20%), then the sync fails. */
export const retryPolicy = { base: "500 millis", times: 6 } as const

const retried = Durable.retry<SyncFailure>({ ...retryPolicy, while: (failure) => failure.transient })

const fromGitHub = (error: GitHubError) =>
  new SyncFailure({ message: error.message, transient: error._tag === "CodeHostError" && error.transient })

/** The database's unavailability is worth waiting for; what `transaction` left as a defect (a bug) is not. */
const fromStorage = <A, E, R>(effect: Effect.Effect<A, E | ServiceUnavailable, R>) =>
  Effect.catchIf(effect, (error): error is ServiceUnavailable => error instanceof ServiceUnavailable, (error) =>
    Effect.fail(new SyncFailure({ message: error.message, transient: true })))

/** What the steps use. */
type SyncRequirements =
  | SyncEventsRepository
  | ComponentFilesRepository
  | ConnectorsRepository
  | CodeHostAccess
  | GitHub
  | Materializer
  | MappingsRepository
  | SourceBindingsRepository
  | DiscoveryService
  | DiscoveryRepository
  | SqlClient.SqlClient
  | IdGenerator
  | AuditRecorder

/** What the follow step answers (DiscoveryService.follow). */
const Followed = Schema.Struct({ changes: Schema.Array(FollowedPlugin), warnings: Schema.Array(Schema.String) })

const Started = Schema.Struct({
  run: Schema.Boolean,
  /** Another sync of the target was running: this one did not start (absent in results recorded before 0.3.0). */
  busy: Schema.optionalKey(Schema.Boolean),
  eventType: SyncEventType,
  revision: Schema.NullOr(Schema.String)
})

/** How long a sync waits between checks for another sync of its target to end, and how many checks. */
const busyPause = Duration.seconds(1)
const busyWaits = 900

const work = Effect.gen(function*() {
  const events = yield* SyncEventsRepository
  const repository = yield* ConnectorsRepository
  const codehost = yield* CodeHostAccess
  const github = yield* GitHub
  const materializer = yield* Materializer
  const mappings = yield* MappingsRepository
  const discovery = yield* DiscoveryService
  const discoveries = yield* DiscoveryRepository
  const bindings = yield* SourceBindingsRepository
  const recorder = yield* AuditRecorder
  return { events, repository, codehost, github, materializer, mappings, discovery, discoveries, bindings, recorder }
})

/** The event's instance and target as they are now, or why the sync has nothing to do. */
const load = (organizationId: OrganizationId, eventId: ConnectorSyncEventId) =>
  Effect.gen(function*() {
    const { events, repository } = yield* work
    const found = yield* events.findForWork(organizationId, eventId)
    if (Option.isNone(found)) return { _tag: "Missing" as const }
    const { event, organizationDeleted } = found.value
    // A deleted organization's syncs stop (docs/lifecycle.md): nothing more is fetched or written for it.
    if (organizationDeleted) return { _tag: "Deleted" as const, event }
    const instance = yield* repository.findInstance(organizationId, event.connectorInstanceId)
    const target = yield* repository.findTarget(organizationId, event.connectorTargetId)
    if (Option.isNone(instance) || Option.isNone(target)) return { _tag: "Gone" as const, event }
    return { _tag: "Found" as const, event, instance: instance.value, target: target.value }
  })

/** Counts a transient failure on the event before the step is tried again. */
const counted = (organizationId: OrganizationId, eventId: ConnectorSyncEventId) =>
<A, R>(effect: Effect.Effect<A, SyncFailure, R>) =>
  Effect.tapError(effect, (failure) =>
    failure.transient
      ? Effect.flatMap(work, ({ events }) => transaction(events.attempt(organizationId, eventId, failure.message))).pipe(Effect.ignore)
      : Effect.void)

/** The workflow's body: one execution per event (see the module comment of Sync.ts). */
const execute = ({ organizationId, syncEventId }: typeof SyncWorkflow.payloadSchema.Type) => {
  const step = <S extends Schema.Constraint>(name: string, success: S, effect: Effect.Effect<S["Type"], SyncFailure, SyncRequirements>) =>
    Activity.make({ name: `ConnectorSync/${name}`, success, error: SyncFailure, execute: counted(organizationId, syncEventId)(effect) }).pipe(retried)

  /** The instance and target, which `start` found; a later step that finds them gone fails the sync. */
  const loaded = Effect.flatMap(fromStorage(orUnavailable(load(organizationId, syncEventId))), (found) =>
    found._tag === "Found"
      ? Effect.succeed(found)
      : Effect.fail(
        new SyncFailure({
          message: found._tag === "Deleted" ? "The organization was deleted during the sync." : "The connector instance or target was removed during the sync.",
          transient: false
        })
      ))

  const credentialOf = (instance: ConnectorInstance) =>
    Effect.flatMap(work, ({ codehost }) =>
      fromStorage(orUnavailable(codehost.credentialOf(organizationId, instance))).pipe(
        // A disconnected account, or a token that does not decrypt (logged once where it was read): retrying won't help.
        Effect.catchIf(
          (error): error is Conflict | StoredCredentialUnreadable => error instanceof Conflict || error instanceof StoredCredentialUnreadable,
          (error) => Effect.fail(new SyncFailure({ message: error.message, transient: false }))
        )
      ))

  /** The tree at the revision: the one a discovery of the commit stored, else GitHub's. */
  const entriesAt = (instance: ConnectorInstance, targetId: ConnectorTargetId, remoteId: string, revision: string) =>
    Effect.gen(function*() {
      const { discoveries, github } = yield* work
      const stored = yield* fromStorage(orUnavailable(discoveries.entriesWithModes(organizationId, targetId, revision)))
      if (stored.length > 0) return stored
      const credential = yield* credentialOf(instance)
      const tree = yield* github.tree(credential, remoteId, revision).pipe(Effect.mapError(fromGitHub))
      // As a checkout has it, as discovery stores it (SymbolicLinks.ts).
      const checkedOut = yield* checkout(tree.entries, (sha) => Effect.mapError(github.blob(credential, remoteId, sha), fromGitHub))
      return checkedOut.entries
    })

  /**
   * The start step, once: running, unless there is nothing to do, or `busy` while another sync of the target runs
   * (checked and marked under the target's lock, so two never both start). Each try is an activity of its own name.
   */
  const startOnce = (attempt: number) =>
    Activity.make({
      name: attempt === 0 ? "ConnectorSync/start" : `ConnectorSync/start/${attempt}`,
      success: Started,
      error: SyncFailure,
      execute: Effect.gen(function*() {
        const { events, repository } = yield* work
        const found = yield* fromStorage(orUnavailable(load(organizationId, syncEventId)))
        if (found._tag === "Missing") return yield* new SyncFailure({ message: "The sync event is not recorded (yet).", transient: true })
        const idle = { run: false, eventType: found.event.eventType, revision: found.event.sourceRevisionRef }
        if (found.event.status !== "queued" && found.event.status !== "running") return idle
        if (found._tag === "Gone") {
          yield* fromStorage(transaction(events.ignore(organizationId, syncEventId, "The connector instance or target was removed.")))
          return idle
        }
        if (found._tag === "Deleted") {
          yield* fromStorage(transaction(events.ignore(organizationId, syncEventId, "The organization was deleted.")))
          return idle
        }
        if (found.instance.status !== "active") {
          yield* fromStorage(transaction(events.ignore(organizationId, syncEventId, "The connector instance is disabled.")))
          return idle
        }
        const busy = yield* fromStorage(transaction(Effect.gen(function*() {
          yield* repository.lockTarget({ organizationId, id: found.target.id })
          if (Option.isSome(yield* events.runningBeside(organizationId, found.target.id, syncEventId))) return true
          yield* events.start(organizationId, syncEventId)
          return false
        })))
        return { ...idle, run: !busy, busy }
      })
    }).pipe(retried)

  const body = Effect.gen(function*() {
    // 1. start: running, unless there is nothing to do. An event not visible yet (its recording transaction has
    //    not committed) is waited for like a transient failure. While another sync of the target runs, this one
    //    waits (a second, then checks again; at most `busyWaits` times): two syncs of a target never interleave
    //    their writes, so an older commit's batch cannot land after a newer one's.
    let started = yield* startOnce(0)
    for (let attempt = 1; started.busy === true && attempt <= busyWaits; attempt++) {
      yield* Effect.sleep(busyPause)
      started = yield* startOnce(attempt)
    }
    if (started.busy === true) {
      return yield* new SyncFailure({
        message: `Another sync of this target ran for the ${Duration.format(Duration.times(busyPause, busyWaits))} this one waited; sync again once it ends.`,
        transient: false
      })
    }
    if (!started.run) return

    // 2. head: the branch head, when the event did not name a commit.
    const revision = started.revision ?? (yield* step(
      "head",
      Schema.String,
      Effect.gen(function*() {
        const { events, github } = yield* work
        const { instance, target } = yield* loaded
        const head = yield* github.head(yield* credentialOf(instance), target.remoteId, target.externalTargetRef).pipe(Effect.mapError(fromGitHub))
        yield* fromStorage(transaction(events.setRevision(organizationId, syncEventId, head.sha)))
        return head.sha
      })
    ))

    // 3. follow: the instance's plugins take what the repository says of them at this commit (renames, moves,
    //    removals, metadata, new component kinds: DiscoveryService.follow), so that the plan takes their mappings. A
    //    marketplace that no longer reads fails the sync here, before anything is written.
    const followed = started.eventType === "apply" ? { changes: [], warnings: [] } : yield* step(
      "follow",
      Followed,
      Effect.gen(function*() {
        const { discovery } = yield* work
        const { instance, target } = yield* loaded
        return yield* discovery.follow({ organizationId, instanceId: instance.id, targetId: target.id, revision }).pipe(
          Effect.mapError((error) =>
            error instanceof MarketplaceUnreadable || error instanceof Conflict || error instanceof StoredCredentialUnreadable
              ? new SyncFailure({ message: error.message, transient: false })
              : error instanceof ServiceUnavailable
              ? new SyncFailure({ message: error.message, transient: true })
              : fromGitHub(error)
          )
        )
      })
    )

    // 4. import: plugins that appeared since discovery was applied (`autoImportNewPlugins`), so that the plan takes
    //    their mappings. Its failure is the summary's warning, not the sync's: the existing mappings still sync.
    const imported = started.eventType === "apply" ? { keys: [], warning: null } : yield* step(
      "import",
      Schema.Array(Schema.String),
      Effect.gen(function*() {
        const { discovery } = yield* work
        const { instance, target } = yield* loaded
        return yield* discovery.importNew({
          organizationId,
          instanceId: instance.id,
          targetId: target.id,
          revision,
          syncEventId
        }).pipe(
          Effect.mapError((error) =>
            error instanceof ServiceUnavailable || error instanceof Conflict || error instanceof StoredCredentialUnreadable
              ? new SyncFailure({ message: error.message, transient: error instanceof ServiceUnavailable })
              : fromGitHub(error)
          )
        )
      })
    ).pipe(
      Effect.map((keys) => ({ keys, warning: null })),
      Effect.catch((failure) =>
        Effect.succeed({ keys: [], warning: `New plugins were not imported: ${failure.message}` }))
    )

    // 5. plan: the tree at the revision against the target's mappings and bindings. The tree a discovery of the
    //    commit stored (the import's, most often) is read from the database instead of GitHub.
    const planned = yield* step(
      "plan",
      Plan,
      Effect.gen(function*() {
        const { bindings: sources, mappings } = yield* work
        const { instance, target } = yield* loaded
        const entries = yield* entriesAt(instance, target.id, target.remoteId, revision)
        const [mapped, bindings] = yield* fromStorage(orUnavailable(Effect.all([
          mappings.ofTarget(organizationId, target.id),
          sources.bindingsOf(organizationId, target.id)
        ])))
        return plan(entries, mapped, bindings, started.eventType === "resync")
      })
    )

    // 6. materialize, a batch per activity; then the objects whose files are gone.
    const context = Effect.map(loaded, ({ instance, target }): SyncContext => ({
      organizationId,
      eventId: syncEventId,
      targetId: target.id,
      repository: target.remoteId,
      instance,
      revision
    }))
    let summary = { ...emptyResult, unchanged: planned.unchanged }
    for (let start = 0, batch = 0; start < planned.upserts.length; start += batchSize, batch++) {
      const files = planned.upserts.slice(start, start + batchSize)
      const result = yield* step(
        `materialize/${batch}`,
        BatchResult,
        Effect.gen(function*() {
          const { github, materializer } = yield* work
          const sync = yield* context
          const credential = yield* credentialOf(sync.instance)
          const read = yield* Effect.forEach(files, (file) =>
            tooLarge(file)
              ? Effect.succeed({ file, content: { _tag: "Skip" as const, reason: `larger than ${MAX_SOURCE_BYTES} bytes` } })
              : github.blobBytes(credential, sync.repository, file.blobSha).pipe(
                Effect.mapError(fromGitHub),
                Effect.map((bytes) => ({ file, content: contentOf(bytes) }))
              ), { concurrency: 4 })
          // The files each component carries, one component at a time (ComponentFileStore.ts).
          const { mappings } = yield* work
          const types = new Map(
            (yield* fromStorage(orUnavailable(mappings.byIds({ organizationId, ids: [...new Set(files.map((file) => file.mappingId))] }))))
              .map((mapping) => [mapping.id, mapping.objectType])
          )
          const index = indexOf(yield* entriesAt(sync.instance, sync.targetId, sync.repository, sync.revision))
          const withFiles = yield* Effect.forEach(read, (item) => {
            const objectType = types.get(item.file.mappingId)
            if (item.content._tag !== "Text" || objectType === undefined) return Effect.succeed(item)
            return fromStorage(readComponentFiles({
              organizationId,
              credential,
              repository: sync.repository,
              index,
              objectType,
              entryPath: item.file.path,
              text: item.content.text
            }).pipe(
              Effect.mapError((error) => error instanceof ServiceUnavailable ? error : fromGitHub(error))
            )).pipe(Effect.map((carried) => ({ ...item, files: carried })))
          })
          return yield* fromStorage(materializer.materialize(sync, withFiles))
        })
      )
      summary = add(summary, result)
    }
    for (let start = 0, batch = 0; start < planned.deletions.length; start += batchSize, batch++) {
      const deletions = planned.deletions.slice(start, start + batchSize)
      const result = yield* step(
        `delete/${batch}`,
        BatchResult,
        Effect.flatMap(Effect.all([work, context]), ([{ materializer }, sync]) => fromStorage(materializer.remove(sync, deletions)))
      )
      summary = add(summary, result)
    }

    // 7. finish.
    const done = {
      ...summary,
      outcome: summary.skipped > 0 || imported.warning !== null || followed.warnings.length > 0 ? "partial" as const : "complete" as const,
      warnings: [...followed.warnings, ...(imported.warning === null ? [] : [imported.warning]), ...summary.warnings].slice(0, maxWarnings),
      importedPluginKeys: imported.keys,
      followedPlugins: followed.changes
    }
    yield* step(
      "finish",
      Schema.Void,
      Effect.gen(function*() {
        const { events, materializer, recorder } = yield* work
        const { instance, target } = yield* loaded
        yield* fromStorage(transaction(Effect.all([
          materializer.settle(organizationId, target.id, syncEventId),
          events.complete(organizationId, syncEventId, done),
          events.recordOnInstance(organizationId, instance.id, { status: "completed", revision }),
          // The durable engine acted for the organization: the log says so, in the transaction of the outcome.
          recorder.recordSystem({
            organizationId,
            job: "connector-sync",
            action: "connector_sync.complete",
            targets: [instance.id, target.id, syncEventId],
            reason: `${done.outcome}: ${done.created} created, ${done.updated} updated, ${done.deleted} deleted, ${done.skipped} skipped`
          })
        ], { discard: true })))
      })
    )
  })

  const fail = (reason: string) =>
    Activity.make({
      name: "ConnectorSync/fail",
      error: SyncFailure,
      execute: Effect.gen(function*() {
        const { events, recorder } = yield* work
        const found = yield* fromStorage(orUnavailable(load(organizationId, syncEventId)))
        if (found._tag === "Missing") return
        yield* fromStorage(transaction(Effect.all([
          events.fail(organizationId, syncEventId, reason),
          found._tag === "Found" ? events.recordOnInstance(organizationId, found.instance.id, { status: "failed" }) : Effect.void,
          recorder.recordSystem({
            organizationId,
            job: "connector-sync",
            action: "connector_sync.complete",
            // The sync itself, whatever is left of its instance.
            targets: found._tag === "Found" ? [found.instance.id, syncEventId] : [syncEventId],
            reason: `failed: ${reason}`.slice(0, 500)
          })
        ], { discard: true })))
      })
    }).pipe(retried, Effect.orDie)

  return body.pipe(
    Effect.catch((failure) => fail(failure.message)),
    // A bug: the event says so rather than staying `running` for ever. Interruption (the runner stopping) is not
    // a failure: the workflow resumes elsewhere.
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.andThen(Effect.logError("connector sync failed", cause), fail("The sync failed because of an internal error."))),
    Effect.annotateLogs({ connectorSyncEventId: syncEventId })
  )
}

/** `Sync`, with the workflow's handler registered in the engine, then the recovery. */
export const layer = SyncRecovery.layer.pipe(
  Layer.provideMerge(Layer.merge(Layer.effect(Sync, make), SyncWorkflow.toLayer(execute))),
  Layer.provide([
    SyncEventsRepository.layer,
    CodeHostAccess.layer,
    ConnectorsRepository.layer,
    MappingsRepository.layer,
    SourceBindingsRepository.layer,
    Materializer.layer,
    ComponentFilesRepository.layer,
    DiscoveryService.layer,
    DiscoveryRepository.layer,
    Access.layer
  ])
)
