/**
 * `orgplane connectors discover | tree | apply | sync | resync | syncs`: what a connector instance's repository holds
 * (plugin candidates and the tree discovery scans), importing candidates as plugins with mappings, and the syncs that
 * materialize the mapped files, queued now or followed to the end with `--wait`.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import { ApplyDiscoveryRequest, ApplyDiscoveryResponse, ConnectorInstanceId, type ConnectorSyncEvent, ConnectorSyncEventDetail, ConnectorSyncEventId, ConnectorSyncEventPage, ConnectorTargetId, type DiscoveredPlugin, DiscoveryResponse, type DiscoveryResult, DiscoveryTreeQuery, exampleId, type FollowedPlugin, ResyncResponse, SyncNowResponse, SyncStatus, TreeCursor, TreeEntryPage } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Commands from "../Commands.js"
import { CommandFailed, UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Paging from "../Paging.js"
import * as Progress from "../Progress.js"
import { plural } from "./catalog.js"

const instanceId = Inputs.argument("instanceId", { schema: ConnectorInstanceId, description: "The connector instance (cin_…)." })
const targetId = Inputs.argument("targetId", { schema: ConnectorTargetId, description: "The target (ctg_…)." })
const eventId = Inputs.argument("eventId", { schema: ConnectorSyncEventId, description: "The sync (cse_…)." })

/** `--target ctg_…`: which of the instance's branches; the API's default is its first target. */
const target = (description: string) =>
  Inputs.optional(Inputs.text("target", { placeholder: "<targetId>", description, schema: ConnectorTargetId }))

// ---------------------------------------------------------------------------------------------------------------
// Discovery

/** "acme/plugins@main", once known: read only for the spinner, so a failure here just keeps the generic label. */
const scanning = (client: OrgplaneApiClient, instance: ConnectorInstanceId, target: Option.Option<ConnectorTargetId>) =>
  Effect.gen(function*() {
    const branch = Option.isSome(target)
      ? (yield* client.connectorTargets.get({ params: { connectorTargetId: target.value } })).item
      : (yield* client.connectorInstances.listTargets({ params: { connectorInstanceId: instance }, query: { limit: 1 } })).items[0]
    const repository = branch?.remoteId ?? (yield* client.connectorInstances.get({ params: { connectorInstanceId: instance } })).item.remoteId
    return `scanning ${repository}${branch === undefined ? "" : `@${branch.externalTargetRef}`}…`
  }).pipe(Effect.option)

/** The discovery of the instance's (or `--target`'s) branch head, with a spinner on a terminal while it runs. */
const discovery = (client: OrgplaneApiClient, instance: ConnectorInstanceId, target: Option.Option<ConnectorTargetId>) =>
  Progress.spinner(
    "scanning the repository…",
    () => client.connectorInstances.discover({ params: { connectorInstanceId: instance }, query: Inputs.ifSome("connectorTargetId", target) }),
    { describe: scanning(client, instance, target) }
  )

const yesNo = (value: boolean) => value ? "yes" : "no"

const entries = (count: number) => `${count} ${count === 1 ? "entry" : "entries"}`

const treeLine = ({ treeSummary: tree }: DiscoveryResult) =>
  `${entries(tree.scannedEntryCount)} scanned${
    tree.truncated ? `; the listing was cut short, completed by reading ${plural(tree.walkedSubtrees, "folder")} one by one` : ""
  }`

const candidateRows = (candidates: ReadonlyArray<DiscoveredPlugin>) =>
  Output.table(
    ["key", "name", "kinds", "supported", "default", "warnings", "skipped"],
    candidates.map((candidate) => [
      candidate.key,
      candidate.displayName,
      candidate.componentKinds.length === 0 ? "-" : candidate.componentKinds.join(","),
      yesNo(candidate.supported),
      yesNo(candidate.selectedByDefault),
      String(candidate.warnings.length),
      String(candidate.skippedFiles.length)
    ])
  )

/** The discovery as people read it: where and what was scanned, then the candidates and what to fix. */
const describeDiscovery = (item: DiscoveryResult) => {
  const marketplace = item.marketplace
  const header = Output.fields([
    ["repository", item.repositoryFullName],
    ["branch", `${item.connectorTarget.externalTargetRef} (${item.connectorTarget.id})`],
    ["revision", item.sourceRevisionRef],
    ["classification", item.classification],
    ...(marketplace === null
      ? []
      : [["marketplace", `${marketplace.name ?? "(unnamed)"}: ${entries(marketplace.entryCount)} in ${marketplace.manifestPath}`] as const]),
    ["tree", treeLine(item)],
    ["auto-import", yesNo(item.autoImportNewPlugins)]
  ])
  // The discovery's warnings repeat its candidates' ones: each is said once, with its candidate's key when it has one.
  const ofCandidates = item.discoveredPlugins.flatMap((candidate) => candidate.warnings.map((warning) => [candidate.key, warning] as const))
  const warnings = [
    ...item.warnings.filter((warning) => !ofCandidates.some(([, text]) => text === warning)).map((warning) => `warning: ${warning}`),
    ...ofCandidates.map(([key, warning]) => `warning: ${key}: ${warning}`)
  ]
  // What each candidate's import will not take, file by file, as far as discovery knows (the sync may skip more).
  const skipped = item.discoveredPlugins.flatMap((candidate) =>
    candidate.skippedFiles.map((file) => `skipped: ${candidate.key}: ${file.path}: ${file.reason}`)
  )
  const candidates = item.discoveredPlugins.length === 0 ? "No plugin candidates." : candidateRows(item.discoveredPlugins)
  const notes = [...skipped, ...warnings]
  return [header, "", candidates, ...(notes.length === 0 ? [] : ["", ...notes])].join("\n")
}

export const discover = Commands.leaf("discover", {
  summary: "Scan the head of an instance's branch for plugin candidates (needs viewer access); changes nothing.",
  details: [
    "Reads the whole tree and the manifests it finds, and lists the candidates with how the repository is laid out. The result is kept per commit, so asking again before the branch moves is quick.",
    "Import candidates with 'connectors apply <instanceId> --select <key>' (or --all-supported)."
  ],
  inputs: { instanceId, target: target("The target (branch) to scan; default: the instance's first.") },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const result = yield* discovery(client, input.instanceId, input.target)
        yield* Output.emit(input.global, DiscoveryResponse, result, ({ item }) => describeDiscovery(item))
        const supported = result.item.discoveredPlugins.filter((candidate) => candidate.supported)
        if (!input.global.json && supported.length > 0) {
          yield* Output.note(`Import: orgplane connectors apply ${input.instanceId} --select <key> (or --all-supported)`)
        }
      }))
})

export const tree = Commands.list("tree", {
  summary: "List the files and folders of an instance's branch head, in path order (needs viewer access).",
  details: ["The same tree discovery scans. A cursor is valid for its commit only: once the branch moves, start again."],
  noun: "entries",
  inputs: {
    instanceId,
    prefix: Inputs.optional(Inputs.text("prefix", {
      placeholder: "<path>",
      description: "Only entries whose path starts with this text, for example 'skills/'.",
      schema: DiscoveryTreeQuery.fields.prefix.schema
    })),
    target: target("The target (branch) whose tree to list; default: the instance's first.")
  },
  paging: Paging.inputsFor(DiscoveryTreeQuery.fields.limit.schema, TreeCursor),
  call: (client, { instanceId, prefix, target }, page) =>
    client.connectorInstances.discoveryTree({
      params: { connectorInstanceId: instanceId },
      query: { ...Inputs.ifSome("prefix", prefix), ...Inputs.ifSome("connectorTargetId", target), ...page }
    }),
  output: TreeEntryPage,
  columns: [
    ["kind", (entry) => entry.kind],
    ["size", (entry) => entry.kind === "tree" ? "-" : String(entry.size)],
    ["sha", (entry) => entry.sha.slice(0, 12)],
    ["path", (entry) => entry.path]
  ]
})

export const apply = Commands.endpoint("apply", {
  examples: [
    ["Import every supported candidate discovery found.", ["connectors", "apply", exampleId("cin"), "--all-supported"]],
  ],
  summary: "Import discovered candidates as plugins with mappings, then queue the sync that fills them (needs editor access).",
  details: [
    "Each selected candidate becomes a plugin (the one this instance created earlier for the same key is reused), a marketplace lists them for a marketplace repository, and each component folder or file becomes a mapping. Applying the same selection again creates nothing new.",
    "Give the candidates' keys (from 'connectors discover') with --select, or --all-supported for every supported candidate of the current discovery."
  ],
  inputs: {
    instanceId,
    select: Inputs.repeatedText("select", {
      placeholder: "<key>",
      description: "A candidate's key, for example 'manifest:root'; repeat for more.",
      schema: ApplyDiscoveryRequest.fields.keys
    }),
    allSupported: Inputs.boolean("all-supported", { description: "Every supported candidate (discovers first)." }),
    target: target("The target (branch) discovered; default: the instance's first.")
  },
  call: (client, { allSupported, instanceId, select, target }) =>
    Effect.gen(function*() {
      if (allSupported === (select.length > 0)) {
        return yield* new UsageError({ message: "give --select <key> (repeatable) or --all-supported, not both" })
      }
      const keys = select.length > 0
        ? select
        : (yield* discovery(client, instanceId, target)).item.discoveredPlugins.filter((candidate) => candidate.supported).map((candidate) => candidate.key)
      if (keys.length === 0) {
        return yield* new CommandFailed({ error: "nothing_to_apply", message: "discovery found no supported plugin candidate to import" })
      }
      return yield* client.connectorInstances.applyDiscovery({
        params: { connectorInstanceId: instanceId },
        payload: { keys, ...Inputs.ifSome("connectorTargetId", target) }
      })
    }),
  output: ApplyDiscoveryResponse,
  human: ({ item }) => {
    const created = item.plugins.filter((plugin) => plugin.created).length
    return [
      `Imported ${plural(item.plugins.length, "plugin")} at ${item.sourceRevisionRef}: ${created} created, ${item.plugins.length - created} reused.`,
      Output.table(
        ["key", "plugin", "created", "mappings"],
        item.plugins.map((plugin) => [plugin.key, plugin.pluginId, yesNo(plugin.created), String(plugin.mappingIds.length)])
      ),
      ...(item.marketplaceId === null ? [] : [`Marketplace: ${item.marketplaceId}.`]),
      `Queued sync ${item.syncEvent.id} (${item.syncEvent.status}); follow it with 'orgplane connectors syncs get ${item.syncEvent.id}'.`
    ].join("\n")
  }
})

// ---------------------------------------------------------------------------------------------------------------
// Syncs

const finished = (event: ConnectorSyncEvent) => event.status !== "queued" && event.status !== "running"

const summaryOf = (event: ConnectorSyncEvent) =>
  event.summary === null
    ? "-"
    : `${event.summary.outcome === "partial" ? "partial: " : ""}${event.summary.created} created, ${event.summary.updated} updated, ${event.summary.deleted} deleted, ${event.summary.unchanged} unchanged, ${event.summary.skipped} skipped`

const eventColumns: ReadonlyArray<readonly [string, (event: ConnectorSyncEvent) => string]> = [
  ["id", (event) => event.id],
  ["target", (event) => event.connectorTargetId],
  ["type", (event) => event.eventType],
  ["status", (event) => event.status],
  ["revision", (event) => event.sourceRevisionRef?.slice(0, 12) ?? "-"],
  ["created", (event) => Output.date(event.createdAt)],
  ["summary", summaryOf]
]

const eventTable = (events: ReadonlyArray<ConnectorSyncEvent>) =>
  Output.table(eventColumns.map(([header]) => header), events.map((event) => eventColumns.map(([, cell]) => cell(event))))

const eventFields = (event: ConnectorSyncEvent) =>
  Output.fields([
    ["id", event.id],
    ["instance", event.connectorInstanceId],
    ["target", event.connectorTargetId],
    ["type", event.eventType],
    ["status", event.status],
    ["revision", event.sourceRevisionRef ?? "-"],
    ["delivery", event.externalEventRef ?? "-"],
    ["attempts", String(event.attempts)],
    ["error", event.lastError ?? "-"],
    ["summary", summaryOf(event)],
    ...(event.summary?.followedPlugins ?? []).map((plugin) => ["plugin", followedText(plugin)] as const),
    ...(event.summary?.skippedFiles ?? []).map((file) => ["skipped", `${file.path}: ${file.reason}`] as const),
    ...(event.summary?.warnings ?? []).filter((warning) => !(event.summary?.skippedFiles ?? []).some((file) => warning === `${file.path}: ${file.reason}`))
      .map((warning) => ["warning", warning] as const),
    ["created", Output.date(event.createdAt)],
    ["started", Output.date(event.startedAt)],
    ["completed", Output.date(event.completedAt)]
  ])

/** How a plugin followed its repository, in a line. */
const followedText = (plugin: FollowedPlugin) => {
  switch (plugin.change) {
    case "updated":
      return `${plugin.name} (${plugin.pluginId}) updated from the repository`
    case "renamed":
      return `${plugin.previousName ?? "?"} renamed ${plugin.name} (${plugin.pluginId})`
    case "moved":
      return `${plugin.name} (${plugin.pluginId}) moved: now ${plugin.key}`
    case "left":
      return `${plugin.name} (${plugin.pluginId}) left the repository: archived, out of the marketplace`
    case "returned":
      return `${plugin.name} (${plugin.pluginId}) is listed again: active`
  }
}

/** What a finished sync says beyond its counts: the plugins that followed the repository, its warnings. */
const outcomeLines = (event: ConnectorSyncEvent) => [
  ...(event.summary?.followedPlugins ?? []).map((plugin) => `plugin: ${followedText(plugin)}`),
  ...(event.summary?.warnings ?? []).map((warning) => `warning: ${warning}`)
]

/** Polls each unfinished event (every 0.5 s, slowing to 2 s) until all completed, failed or were ignored. */
const awaitAll = (client: OrgplaneApiClient, events: ReadonlyArray<ConnectorSyncEvent>) =>
  Progress.spinner(`waiting for ${plural(events.length, "sync")}…`, (label) =>
    Effect.gen(function*() {
      let current = events
      for (let round = 0; !current.every(finished); round++) {
        const pending = current.filter((event) => !finished(event))
        yield* label(`waiting for ${pending.map((event) => `${event.id} (${event.status})`).join(", ")}…`)
        yield* Effect.sleep(Duration.millis(Math.min(2000, 500 * 2 ** Math.floor(round / 4))))
        current = yield* Effect.forEach(current, (event) =>
          finished(event)
            ? Effect.succeed(event)
            : Effect.map(client.connectorSyncEvents.get({ params: { connectorSyncEventId: event.id } }), ({ item }) => item))
      }
      return current
    }))

/**
 * With `--wait`, a failed sync fails the command (exit 1) after the result is printed; so does a partial one (some
 * files skipped) unless `--allow-partial` accepts it.
 */
const failedOf = (events: ReadonlyArray<ConnectorSyncEvent>, allowPartial: boolean) => {
  const failed = events.filter((event) => event.status === "failed")
  if (failed.length > 0) {
    return Effect.fail(
      new CommandFailed({
        error: "sync_failed",
        message: failed.map((event) => `sync ${event.id} of ${event.connectorTargetId} failed: ${event.lastError ?? "no reason given"}`).join("; ")
      })
    )
  }
  const partial = events.filter((event) => event.summary?.outcome === "partial")
  return partial.length === 0 || allowPartial
    ? Effect.void
    : Effect.fail(
      new CommandFailed({
        error: "sync_partial",
        message: `${
          partial.map((event) =>
            (event.summary?.skipped ?? 0) > 0
              ? `sync ${event.id} of ${event.connectorTargetId} skipped ${plural(event.summary?.skipped ?? 0, "file")}`
              : `sync ${event.id} of ${event.connectorTargetId} completed with ${plural(event.summary?.warnings.length ?? 0, "warning")}`
          ).join("; ")
        } (see 'orgplane connectors syncs get <eventId>'; --allow-partial accepts a partial sync)`
      })
    )
}

const wait = Inputs.boolean("wait", {
  description: "Wait until the sync completed or failed (exit 1 when it failed or skipped files), showing progress on a terminal."
})

const allowPartial = Inputs.boolean("allow-partial", {
  description: "With --wait, exit 0 when the sync completed but skipped files it could not import (they are listed)."
})

/** On stderr, for syncs still queued or running: how to follow them. */
const followHint = (options: { readonly json: boolean }, events: ReadonlyArray<ConnectorSyncEvent>) => {
  const pending = events.filter((event) => !finished(event))
  if (options.json || pending.length === 0) return Effect.void
  const [only] = pending
  return Output.note(
    only !== undefined && pending.length === 1
      ? `Follow it with 'orgplane connectors syncs get ${only.id}', or pass --wait.`
      : `Follow them with 'orgplane connectors syncs get <eventId>', or pass --wait.`
  )
}

export const sync = Commands.leaf("sync", {
  summary: "Sync an instance now: queue a sync of each target's branch head (needs editor access).",
  details: [
    "A target whose head is already queued, running or synced answers that sync instead: nothing runs twice. The sync runs on the server; --wait follows it to the end."
  ],
  inputs: { instanceId, wait, allowPartial },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const queued = yield* client.connectorInstances.sync({ params: { connectorInstanceId: input.instanceId } })
        const result = input.wait ? { ...queued, items: yield* awaitAll(client, queued.items) } : queued
        yield* Output.emit(input.global, SyncNowResponse, result, ({ items }) =>
          items.length === 0
            ? "No targets to sync."
            : [eventTable(items), ...(input.wait ? items.flatMap(outcomeLines) : [])].join("\n"))
        if (input.wait) return yield* failedOf(result.items, input.allowPartial)
        yield* followHint(input.global, result.items)
      }))
})

export const resync = Commands.leaf("resync", {
  summary: "Queue a full sync of a target: every mapped file is read and compared again (needs editor access).",
  details: ["Restores config objects edited or deleted by hand. Always a new sync; --wait follows it to the end."],
  inputs: { targetId, wait, allowPartial },
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const queued = yield* client.connectorTargets.resync({ params: { connectorTargetId: input.targetId } })
        const result = input.wait ? { ...queued, item: (yield* awaitAll(client, [queued.item]))[0] ?? queued.item } : queued
        yield* Output.emit(input.global, ResyncResponse, result, ({ item }) =>
          input.wait ? eventFields(item) : `Queued resync ${item.id} of target ${item.connectorTargetId}.`)
        if (input.wait) return yield* failedOf([result.item], input.allowPartial)
        yield* followHint(input.global, [result.item])
      }))
})

export const syncsList = Commands.list("list", {
  summary: "List an instance's syncs, newest first (needs viewer access).",
  noun: "syncs",
  inputs: {
    instanceId,
    target: target("Only syncs of this target."),
    status: Inputs.optional(Inputs.choice("status", SyncStatus.literals, { description: "Only syncs in this status." }))
  },
  call: (client, { instanceId, status, target }, page) =>
    client.connectorInstances.listSyncEvents({
      params: { connectorInstanceId: instanceId },
      query: { ...Inputs.ifSome("connectorTargetId", target), ...Inputs.ifSome("status", status), ...page }
    }),
  output: ConnectorSyncEventPage,
  columns: eventColumns
})

export const syncsGet = Commands.endpoint("get", {
  summary: "Show a sync: its status, attempts, last error and what it changed (needs viewer access on its instance).",
  inputs: { eventId },
  call: (client, { eventId }) => client.connectorSyncEvents.get({ params: { connectorSyncEventId: eventId } }),
  output: ConnectorSyncEventDetail,
  human: ({ item }) => eventFields(item)
})

export const syncs = Commands.group("syncs", "The sync history of connector instances.", [syncsList, syncsGet])
