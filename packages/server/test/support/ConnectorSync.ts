/**
 * For the connector services' tests that decide when each step of a sync runs: a `Sync` that records events with
 * the real repository and notes which it was asked to start (SyncWorkflow's would start their workflows), and
 * `syncOnce`, SyncWorkflow's plan, materialize and delete steps run in a row without the durable engine, on the real
 * Materializer, ComponentFileStore and GitHub client (a step can then be run again with the same event, as the
 * engine does after a crash). The durable sync itself is tested with SyncWorkflow's layer (ConnectorsServices.test.ts).
 */
import { MAX_SOURCE_BYTES, type ConnectorInstance, type ConnectorSyncEventId, type ConnectorTarget, type OrganizationId } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CodeHostAccess } from "../../src/connectors/CodeHostAccess.js"
import { readComponentFiles } from "../../src/connectors/ComponentFileStore.js"
import { DiscoveryRepository } from "../../src/connectors/DiscoveryRepository.js"
import { MappingsRepository } from "../../src/connectors/MappingsRepository.js"
import { add, batchSize, contentOf, emptyResult, Materializer, plan, tooLarge } from "../../src/connectors/Materializer.js"
import { indexOf } from "../../src/connectors/RepositoryTree.js"
import { SourceBindingsRepository } from "../../src/connectors/SourceBindingsRepository.js"
import { type EventRef, Sync } from "../../src/connectors/Sync.js"
import { SyncEventsRepository } from "../../src/connectors/SyncEventsRepository.js"
import { GitHub } from "../../src/integrations/codehost/GitHub.js"
import { orUnavailable, transaction } from "../../src/platform/Sql.js"

/** The events each `start` was asked to start, in order. */
export const started: Array<EventRef> = []

const notHere = (name: string) => Effect.die(new Error(`Sync.${name}: SyncWorkflow.layer's, not the stand-in's`))

/** `Sync` with `record`, `start` and `enqueue` as SyncWorkflow.ts has them, but for the start of a workflow. */
export const layer = Layer.effect(
  Sync,
  Effect.gen(function*() {
    const events = yield* SyncEventsRepository
    const start = (refs: ReadonlyArray<EventRef>) => Effect.sync(() => void started.push(...refs))
    return Sync.of({
      record: (input) => events.record(input),
      start,
      enqueue: (input) =>
        Effect.tap(transaction(events.record(input)), (recorded) => start([{ organizationId: input.organizationId, id: recorded.event.id }])),
      syncNow: () => notHere("syncNow"),
      resync: () => notHere("resync"),
      listEvents: () => notHere("listEvents"),
      getEvent: () => notHere("getEvent")
    })
  })
).pipe(Layer.provide(SyncEventsRepository.layer))

/**
 * SyncWorkflow's plan, materialize and delete steps for one event at `revision`: the tree (the discovery's stored
 * one, else GitHub's), the plan against the target's mappings and bindings (`full` for a resync), each batch's
 * blobs and carried files read, then written; the skipped files settled. Answers the summed batch results.
 */
export const syncOnce = Effect.fn("ConnectorSync.syncOnce")(function*(input: {
  readonly organizationId: OrganizationId
  readonly instance: ConnectorInstance
  readonly target: ConnectorTarget
  readonly revision: string
  readonly eventId: ConnectorSyncEventId
  readonly full?: boolean
}) {
  const { eventId, instance, organizationId, revision, target } = input
  const github = yield* GitHub
  const materializer = yield* Materializer
  const mappings = yield* MappingsRepository
  const bindings = yield* SourceBindingsRepository
  const discoveries = yield* DiscoveryRepository
  const credential = yield* orUnavailable((yield* CodeHostAccess).credentialOf(organizationId, instance))
  const stored = yield* discoveries.entries(organizationId, target.id, revision)
  const entries = stored.length > 0
    ? stored
    : (yield* github.tree(credential, target.remoteId, revision)).entries.map((entry) => ({ ...entry, size: entry.size ?? 0 }))
  const planned = plan(entries, yield* mappings.ofTarget(organizationId, target.id), yield* bindings.bindingsOf(organizationId, target.id), input.full ?? false)
  const context = { organizationId, eventId, targetId: target.id, repository: target.remoteId, instance, revision }
  const index = indexOf(entries)
  const types = new Map((yield* mappings.ofTarget(organizationId, target.id)).map((mapping) => [mapping.id, mapping.objectType]))
  let summary = { ...emptyResult, unchanged: planned.unchanged }
  for (let start = 0; start < planned.upserts.length; start += batchSize) {
    const files = planned.upserts.slice(start, start + batchSize)
    const read = yield* Effect.forEach(files, (file) =>
      tooLarge(file)
        ? Effect.succeed({ file, content: { _tag: "Skip" as const, reason: `larger than ${MAX_SOURCE_BYTES} bytes` } })
        : Effect.map(github.blobBytes(credential, target.remoteId, file.blobSha), (bytes) => ({ file, content: contentOf(bytes) })))
    const withFiles = yield* Effect.forEach(read, (item) => {
      const objectType = types.get(item.file.mappingId)
      if (item.content._tag !== "Text" || objectType === undefined) return Effect.succeed(item)
      return Effect.map(
        readComponentFiles({ organizationId, credential, repository: target.remoteId, index, objectType, entryPath: item.file.path, text: item.content.text }),
        (carried) => ({ ...item, files: carried })
      )
    })
    summary = add(summary, yield* materializer.materialize(context, withFiles))
  }
  for (let start = 0; start < planned.deletions.length; start += batchSize) {
    summary = add(summary, yield* materializer.remove(context, planned.deletions.slice(start, start + batchSize)))
  }
  yield* transaction(materializer.settle(organizationId, target.id, eventId))
  return summary
})
