/**
 * What a sync does to the catalog: the plan (which mapped files to create or update, which are unchanged, which
 * materialized objects lost their file), and the writes of one batch, each batch one transaction keyed by the
 * source binding so that running it twice (an activity re-run after a crash) writes nothing twice.
 */
import {
  ConfigObjectId,
  type ConnectorInstance,
  type ConnectorMapping,
  ConnectorMappingId,
  type ConnectorSyncEventId,
  type ConnectorTargetId,
  MAX_SOURCE_BYTES,
  type ObjectType,
  type OrganizationId,
  type ParserMode,
  SkippedFile
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import { ComponentFilesRepository } from "../catalog/ComponentFilesRepository.js"
import { ConfigObjectsRepository } from "../catalog/ConfigObjectsRepository.js"
import { ContentsRepository } from "../catalog/ContentsRepository.js"
import { fileOf, parserModes } from "../catalog/Parsing.js"
import { makeId } from "../platform/Ids.js"
import { transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { readComponent } from "./ClaudeContent.js"
import { filesChanged } from "./ComponentFileSelection.js"
import { type FilesOfComponent, fingerprintOf, sameList } from "./ComponentFileStore.js"
import { ConnectorsRepository } from "./ConnectorsRepository.js"
import { filesFor } from "./ImportPlans.js"
import { MappingsRepository } from "./MappingsRepository.js"
import { type Entry, indexOf } from "./RepositoryTree.js"
import { SkippedFilesRepository } from "./SkippedFilesRepository.js"
import { type Binding, SourceBindingsRepository } from "./SourceBindingsRepository.js"

/** Files per materialize activity (and per transaction). */
export const batchSize = 50

/** Warnings a summary keeps (the schema's limit). */
export const maxWarnings = 100

/** Schema version of the versions a sync writes. */
const schemaVersion = "1"

/** A mapped file to create or update. */
export const PlannedFile = Schema.Struct({
  mappingId: ConnectorMappingId,
  path: Schema.String,
  blobSha: Schema.String,
  size: Schema.Number
})
export type PlannedFile = typeof PlannedFile.Type

/** A materialized object whose file is gone (or no longer mapped). */
export const PlannedDeletion = Schema.Struct({ mappingId: ConnectorMappingId, path: Schema.String, configObjectId: ConfigObjectId })
export type PlannedDeletion = typeof PlannedDeletion.Type

export const Plan = Schema.Struct({
  upserts: Schema.Array(PlannedFile),
  deletions: Schema.Array(PlannedDeletion),
  unchanged: Schema.Number
})
export type Plan = typeof Plan.Type

/** What one batch did. */
export const BatchResult = Schema.Struct({
  created: Schema.Number,
  updated: Schema.Number,
  deleted: Schema.Number,
  unchanged: Schema.Number,
  skipped: Schema.Number,
  warnings: Schema.Array(Schema.String),
  // Journaled results of syncs that ran before skipped files were listed have none.
  skippedFiles: Schema.Array(SkippedFile).pipe(Schema.withDecodingDefault(Effect.succeed([])))
})
export type BatchResult = typeof BatchResult.Type

export const emptyResult: BatchResult = { created: 0, updated: 0, deleted: 0, unchanged: 0, skipped: 0, warnings: [], skippedFiles: [] }

export const add = (a: BatchResult, b: BatchResult): BatchResult => ({
  created: a.created + b.created,
  updated: a.updated + b.updated,
  deleted: a.deleted + b.deleted,
  unchanged: a.unchanged + b.unchanged,
  skipped: a.skipped + b.skipped,
  warnings: [...a.warnings, ...b.warnings].slice(0, maxWarnings),
  skippedFiles: [...a.skippedFiles, ...b.skippedFiles].slice(0, maxWarnings)
})

/**
 * The plan of a sync: every file a `path` mapping takes (Discovery's `filesFor`: the selector, narrowed by object
 * type) is to be written when it has no binding, when its blob differs from the binding's, or always in a full
 * sync (`resync`); bindings whose file the mapping no longer takes lose their object.
 */
export const plan = (
  entries: ReadonlyArray<Entry>,
  mappings: ReadonlyArray<ConnectorMapping>,
  bindings: ReadonlyArray<Binding>,
  full: boolean
): Plan => {
  const sizes = new Map(entries.map((entry) => [entry.path, entry.size]))
  const index = indexOf(entries)
  const bound = new Map(bindings.map((binding) => [`${binding.connectorMappingId}\n${binding.path}`, binding]))
  const upserts: Array<PlannedFile> = []
  const kept = new Set<string>()
  let unchanged = 0
  for (const mapping of mappings) {
    if (mapping.mappingKind !== "path") continue
    for (const file of filesFor(mapping.objectType, mapping.selector, entries)) {
      const key = `${mapping.id}\n${file.path}`
      kept.add(key)
      const binding = bound.get(key)
      // An entry as it was still changes when a file it carries did (a skill's script, a hook's script).
      if (
        !full && binding !== undefined && binding.blobSha === file.sha &&
        !filesChanged(index, mapping.objectType, file.path, fingerprintOf(binding.filesJson))
      ) unchanged++
      else upserts.push({ mappingId: mapping.id, path: file.path, blobSha: file.sha, size: sizes.get(file.path) ?? 0 })
    }
  }
  const deletions = bindings
    .filter((binding) => !kept.has(`${binding.connectorMappingId}\n${binding.path}`))
    .map((binding) => ({ mappingId: binding.connectorMappingId, path: binding.path, configObjectId: binding.configObjectId }))
  return { upserts, deletions, unchanged }
}

/** The parser of a file: the mapping's `parserMode` setting, else its extension's, when the object type takes it. */
export const parserModeOf = (objectType: ObjectType, path: string, configured: unknown): ParserMode => {
  const modes: ReadonlyArray<ParserMode> = parserModes[objectType]
  if (typeof configured === "string" && modes.includes(configured as ParserMode)) return configured as ParserMode
  const extension = path.includes(".") ? path.slice(path.lastIndexOf(".") + 1).toLowerCase() : ""
  const byExtension: ParserMode = extension === "json"
    ? "json"
    : extension === "yaml" || extension === "yml"
    ? "yaml"
    : extension === "md" || extension === "markdown"
    ? "markdown"
    : "text"
  return modes.includes(byExtension) ? byExtension : modes[0]!
}

/** A planned file's content as read, or why it cannot be materialized. */
export type Content = { readonly _tag: "Text"; readonly text: string } | { readonly _tag: "Skip"; readonly reason: string }

const decoder = new TextDecoder("utf-8", { fatal: true })

/** Bytes as text, refusing what is not UTF-8 text or too large. */
export const contentOf = (bytes: Uint8Array): Content => {
  if (bytes.byteLength > MAX_SOURCE_BYTES) return { _tag: "Skip", reason: `larger than ${MAX_SOURCE_BYTES} bytes` }
  try {
    return { _tag: "Text", text: decoder.decode(bytes) }
  } catch {
    return { _tag: "Skip", reason: "not UTF-8 text" }
  }
}

/** Whether a file is skipped before reading it (its tree entry gives its size). */
export const tooLarge = (file: PlannedFile) => file.size > MAX_SOURCE_BYTES

/** Who and what a batch writes for. */
export interface SyncContext {
  readonly organizationId: OrganizationId
  readonly eventId: ConnectorSyncEventId
  readonly targetId: ConnectorTargetId
  /** The repository's `owner/name`. */
  readonly repository: string
  readonly instance: ConnectorInstance
  readonly revision: string
}

const make = Effect.gen(function*() {
  const objects = yield* ConfigObjectsRepository
  const memberships = yield* ContentsRepository
  const repository = yield* ConnectorsRepository
  const mappings = yield* MappingsRepository
  const bindings = yield* SourceBindingsRepository
  const skippedFiles = yield* SkippedFilesRepository

  /** Records a file this sync could not import, for its plugin to show until a sync imports it or it is gone. */
  const skip = (context: SyncContext, file: PlannedFile, reason: string, at: Date) =>
    skippedFiles.record({
      organizationId: context.organizationId,
      connectorTargetId: context.targetId,
      connectorMappingId: file.mappingId,
      path: file.path,
      reason,
      connectorSyncEventId: context.eventId,
      createdAt: at
    })

  const componentFiles = yield* ComponentFilesRepository

  const upsertBinding = (
    context: SyncContext,
    file: PlannedFile,
    configObjectId: ConfigObjectId,
    at: Date,
    files: FilesOfComponent | undefined
  ) =>
    bindings.upsert({
      configObjectId,
      organizationId: context.organizationId,
      connectorInstanceId: context.instance.id,
      connectorTargetId: context.targetId,
      connectorMappingId: file.mappingId,
      path: file.path,
      blobSha: file.blobSha,
      sourceRevisionRef: context.revision,
      filesJson: files === undefined ? null : JSON.stringify(files.fingerprint),
      createdAt: at,
      updatedAt: at
    })

  /**
   * Writes one batch of read files in one transaction. A file whose object's latest version is this event's was
   * written by an earlier run of the same batch: it is counted again, not written again.
   */
  const materialize = Effect.fn("Materializer.materialize")((
    context: SyncContext,
    files: ReadonlyArray<{ readonly file: PlannedFile; readonly content: Content; readonly files?: FilesOfComponent | undefined }>
  ) =>
    transaction(Effect.gen(function*() {
      const { organizationId } = context
      yield* repository.lockTarget({ organizationId, id: context.targetId })
      const mapped = yield* mappings.byIds({ organizationId, ids: [...new Set(files.map(({ file }) => file.mappingId))] })
      const byId = new Map(mapped.map((mapping) => [mapping.id, mapping]))
      const at = yield* now
      const createdBy = context.instance.createdByOrgMembershipId
      let result = emptyResult
      const count = (change: Partial<BatchResult>) => {
        result = add(result, { ...emptyResult, ...change })
      }
      for (const { content, file, files: carried } of files) {
        const mapping = byId.get(file.mappingId)
        // The mapping was deleted after the plan: its files are no longer synced.
        if (mapping === undefined) continue
        if (content._tag === "Skip") {
          yield* skip(context, file, content.reason, at)
          count({ skipped: 1, warnings: [`${file.path}: ${content.reason}`], skippedFiles: [{ path: file.path, reason: content.reason, connectorMappingId: file.mappingId }] })
          continue
        }
        const parserMode = parserModeOf(mapping.objectType, file.path, mapping.mappingConfigJson?.parserMode)
        const read = readComponent(mapping.objectType, file.path, content.text, parserMode, at)
        if (Result.isFailure(read)) {
          yield* skip(context, file, read.failure, at)
          count({ skipped: 1, warnings: [`${file.path}: ${read.failure}`], skippedFiles: [{ path: file.path, reason: read.failure, connectorMappingId: file.mappingId }] })
          continue
        }
        const { derived, metadata, notes, parsed } = read.success
        if (notes.length > 0) count({ warnings: notes })
        const binding = yield* bindings.bindingOf(organizationId, file.mappingId, file.path)
        // What the component carries is reported whether or not it changed: an omitted file stays omitted.
        if (carried !== undefined && carried.warnings.length > 0) count({ warnings: carried.warnings })
        const version = {
          organizationId,
          schemaVersion,
          ...parsed,
          metadata,
          createdVia: "connector" as const,
          createdByMembershipId: createdBy,
          sourceRevisionRef: context.revision,
          connectorSyncEventId: context.eventId,
          isDeletedVersion: false,
          createdAt: at
        }
        if (Option.isNone(binding)) {
          const id = yield* makeId("cob")
          yield* objects.insert({
            id,
            organizationId,
            objectType: mapping.objectType,
            sourceMode: "connector",
            ...derived,
            ...fileOf(file.path),
            createdByMembershipId: createdBy,
            connectorInstanceId: context.instance.id,
            createdAt: at,
            updatedAt: at
          })
          const versionId = yield* makeId("cov")
          yield* objects.insertVersion({ ...version, id: versionId, configObjectId: id, number: 1 })
          if (carried !== undefined) yield* componentFiles.insertList(organizationId, versionId, carried.rows)
          yield* upsertBinding(context, file, id, at, carried)
          if (mapping.pluginId !== null && mapping.autoAddToPlugin) {
            yield* memberships.addConfigObjects({
              organizationId,
              pairs: [{ pluginId: mapping.pluginId, configObjectId: id }],
              source: "connector",
              createdBy,
              at,
              connectorMappingId: file.mappingId
            })
          }
          count({ created: 1 })
          continue
        }
        const id = binding.value.configObjectId
        const state = yield* bindings.stateOf(organizationId, id)
        if (Option.isNone(state)) return yield* Effect.die(new Error(`config object ${id} of a binding has no version`))
        if (state.value.connectorSyncEventId === context.eventId) {
          // Written by an earlier run of this batch.
          count(state.value.number === 1 ? { created: 1 } : { updated: 1 })
          continue
        }
        const sameFiles = carried === undefined || sameList(yield* componentFiles.latestListOf(organizationId, id), carried.rows)
        if (state.value.status !== "deleted" && state.value.rawSourceText === parsed.rawSourceText && sameFiles) {
          yield* upsertBinding(context, file, id, at, carried)
          count({ unchanged: 1 })
          continue
        }
        const versionId = yield* makeId("cov")
        yield* objects.insertVersion({ ...version, id: versionId, configObjectId: id, number: state.value.number + 1 })
        if (carried !== undefined) yield* componentFiles.insertList(organizationId, versionId, carried.rows)
        yield* objects.updateDerived(organizationId, id, derived, at)
        // A file back (or a resync) restores an object deleted by hand or by an earlier sync.
        if (state.value.status === "deleted") yield* objects.setStatus(organizationId, id, "active", at)
        yield* upsertBinding(context, file, id, at, carried)
        count({ updated: 1 })
      }
      return result
    })))

  /** Soft-deletes the objects of one batch of vanished files (a deletion version each) and drops their bindings. */
  const remove = Effect.fn("Materializer.remove")((context: SyncContext, deletions: ReadonlyArray<PlannedDeletion>) =>
    transaction(Effect.gen(function*() {
      const { organizationId } = context
      yield* repository.lockTarget({ organizationId, id: context.targetId })
      const at = yield* now
      let deleted = 0
      for (const deletion of deletions) {
        const binding = yield* bindings.bindingOf(organizationId, deletion.mappingId, deletion.path)
        if (Option.isSome(binding) && binding.value.configObjectId === deletion.configObjectId) {
          const state = yield* bindings.stateOf(organizationId, deletion.configObjectId)
          if (Option.isSome(state) && state.value.status !== "deleted") {
            yield* objects.insertVersion({
              id: yield* makeId("cov"),
              organizationId,
              configObjectId: deletion.configObjectId,
              number: state.value.number + 1,
              schemaVersion: state.value.schemaVersion,
              parserMode: state.value.parserMode,
              normalizedPayloadJson: null,
              rawSourceText: null,
              metadata: null,
              createdVia: "connector",
              createdByMembershipId: context.instance.createdByOrgMembershipId,
              sourceRevisionRef: context.revision,
              connectorSyncEventId: context.eventId,
              isDeletedVersion: true,
              createdAt: at
            })
            yield* objects.setStatus(organizationId, deletion.configObjectId, "deleted", at)
          }
          yield* bindings.remove(organizationId, deletion.configObjectId)
        }
        // Counted on a re-run too: the binding is gone because this batch removed it.
        deleted++
      }
      return { ...emptyResult, deleted }
    })))

  /** At the end of a sync: what earlier syncs skipped and this one did not is imported, or gone. */
  const settle = Effect.fn("Materializer.settle")((organizationId: OrganizationId, targetId: ConnectorTargetId, eventId: ConnectorSyncEventId) =>
    skippedFiles.settle({ organizationId, targetId, eventId }))

  return { materialize, remove, settle } as const
})

export class Materializer extends Context.Service<Materializer>()("@orgplane/server/connectors/Materializer", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      ComponentFilesRepository.layer,
      ConfigObjectsRepository.layer,
      ContentsRepository.layer,
      ConnectorsRepository.layer,
      MappingsRepository.layer,
      SourceBindingsRepository.layer,
      SkippedFilesRepository.layer
    ])
  )
}
