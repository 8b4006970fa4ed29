/**
 * Discovery of an instance's repository: the branch head, then the cached result and tree of that commit (or a scan
 * that fills the cache), a page of that tree, and the apply that turns selected candidates into plugins, a
 * marketplace and mappings before queuing a sync. GitHub is only ever called outside transactions.
 */
import {
  type ApplyDiscoveryRequest,
  type ConnectorInstance,
  type ConnectorInstanceId,
  type ConnectorMappingId,
  type ConnectorSyncEventId,
  type ConnectorTarget,
  type ConnectorTargetId,
  type DiscoveredPlugin,
  DiscoveryResult,
  type FollowedPlugin,
  type FollowedPluginChange,
  type DiscoveryTreeQuery,
  InvalidRequest,
  type MarketplaceId,
  type MembershipId,
  type OrganizationId,
  type PluginId
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { SqlError } from "effect/sql/SqlError"
import { Access, type Kind, MarketplaceKind, PluginKind } from "../access/Access.js"
import { MarketplacesRepository } from "../catalog/MarketplacesRepository.js"
import { ContentsRepository } from "../catalog/ContentsRepository.js"
import { PluginsRepository, storedMetadata } from "../catalog/PluginsRepository.js"
import { type Credential, GitHub, type GitHubError } from "../integrations/codehost/GitHub.js"
import { Memberships } from "../identity/Memberships.js"
import { type IdGenerator, makeId } from "../platform/Ids.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { CodeHostAccess, toApiError } from "./CodeHostAccess.js"
import { Connectors, targetNotFound } from "./Connectors.js"
import { ConnectorsRepository } from "./ConnectorsRepository.js"
import { discover } from "./Discovery.js"
import { importPlans } from "./ImportPlans.js"
import { sourceMetadataOf } from "./PluginMetadata.js"
import { checkout, withinPlugins } from "./SymbolicLinks.js"
import type { Entry } from "./RepositoryTree.js"
import { DiscoveryRepository, type OwnPlugin, type StoredDiscovery } from "./DiscoveryRepository.js"
import { MARKETPLACE_PATH } from "./ClaudeMarketplace.js"
import { MappingsRepository } from "./MappingsRepository.js"
import { instanceDisabled, Sync, targetRequired } from "./Sync.js"

/** Catalog names and descriptions are at most this long; a repository's may be longer. */
const clip = (text: string, max: number) => ([...text].length > max ? [...text].slice(0, max).join("").trim() : text)

/** A `marketplace.json` that no longer reads, met by a sync: the sync fails with this message. */
export class MarketplaceUnreadable extends Schema.TaggedError<MarketplaceUnreadable>()("MarketplaceUnreadable", {
  message: Schema.String
}) {}

/** What a sync's following of the repository changed, and what it could not follow. */
export interface Followed {
  readonly changes: ReadonlyArray<FollowedPlugin>
  readonly warnings: ReadonlyArray<string>
}

/** JSON text with every object's members in one order, so that equal values give equal texts. */
const canonical = (value: unknown) =>
  JSON.stringify(value, (_key, member: unknown) =>
    member !== null && typeof member === "object" && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member)

/** JSON values equal whatever the order of their members. */
const sameJson = (a: unknown, b: unknown) => canonical(a) === canonical(b)

/** `instanceConfigJson.autoImportNewPlugins`, true unless it is `false`. */
const autoImportNewPlugins = (instance: ConnectorInstance) =>
  (instance.instanceConfigJson as { readonly autoImportNewPlugins?: unknown }).autoImportNewPlugins !== false

const make = Effect.gen(function*() {
  const connectors = yield* Connectors
  const repository = yield* ConnectorsRepository
  const discoveries = yield* DiscoveryRepository
  const mappings = yield* MappingsRepository
  const plugins = yield* PluginsRepository
  const marketplaces = yield* MarketplacesRepository
  const memberships = yield* ContentsRepository
  const members = yield* Memberships
  const access = yield* Access
  const codeHost = yield* CodeHostAccess
  const gitHub = yield* GitHub

  /**
   * The instance (when the caller has `role` on it) and the target to discover: the given one, which must be the
   * instance's (404 `connector_target_not_found` otherwise), or its first (409 `connector_target_required`).
   */
  const instanceAndTarget = (
    principal: Principal,
    id: ConnectorInstanceId,
    targetId: ConnectorTargetId | undefined,
    role: "viewer" | "editor"
  ) =>
    Effect.gen(function*() {
      const organizationId = principal.organization.id
      const instance = yield* connectors.instanceWith(principal, id, role)
      if (targetId !== undefined) {
        const target = yield* repository.findTarget(organizationId, targetId)
        if (Option.isNone(target) || target.value.connectorInstanceId !== id) return yield* targetNotFound()
        return { instance, target: target.value }
      }
      const [target] = yield* repository.targetsOf(organizationId, id)
      if (target === undefined) return yield* targetRequired()
      return { instance, target }
    })

  /**
   * The discovery of the target at a commit: from the cache, else scanned (the tree named by `treeRef`, the commit
   * or its tree, then the manifests `discover` asks for) and stored with the tree. GitHub's failures are mapped
   * with `onGitHub`.
   */
  const atRevision = <E>(
    organizationId: OrganizationId,
    credential: Credential,
    target: ConnectorTarget,
    revision: string,
    treeRef: string,
    onGitHub: (error: GitHubError) => E
  ) =>
    Effect.gen(function*() {
      const fullName = target.remoteId
      const cached = yield* orUnavailable(discoveries.find(organizationId, target.id, revision))
      if (Option.isSome(cached)) return cached.value

      const tree = yield* Effect.mapError(gitHub.tree(credential, fullName, treeRef), onGitHub)
      // As a checkout has it: symbolic links followed (SymbolicLinks.ts).
      const checkedOut = yield* checkout(tree.entries, (sha) => Effect.mapError(gitHub.blob(credential, fullName, sha), onGitHub))
      const discoverIn = (entries: ReadonlyArray<Entry>) => {
        const blobs = new Map(entries.filter((entry) => entry.type === "blob").map((entry) => [entry.path, entry.sha]))
        return discover({
          entries,
          readText: (path) => {
            const sha = blobs.get(path)
            return Effect.mapError(
              sha !== undefined ? gitHub.blob(credential, fullName, sha) : gitHub.contents(credential, fullName, path, revision),
              onGitHub
            )
          }
        })
      }
      // A link that leads out of its plugin's folder is refused once the folders are known: discovered again without
      // what it brought in (only when a link does).
      const first = yield* discoverIn(checkedOut.entries)
      const kept = withinPlugins(checkedOut, first.candidates.filter((candidate) => candidate.supported).map((candidate) => candidate.rootPath))
      const outcome = kept === checkedOut ? first : yield* discoverIn(kept.entries)
      const entries: ReadonlyArray<Entry> = kept.entries
      const result: StoredDiscovery = {
        classification: outcome.classification,
        discoveredPlugins: outcome.candidates,
        marketplace: outcome.marketplace,
        steps: outcome.steps,
        treeSummary: {
          scannedEntryCount: entries.length,
          strategy: "git-tree-recursive",
          truncated: tree.truncated,
          walkedSubtrees: tree.walkedSubtrees
        },
        warnings: [...kept.warnings, ...outcome.warnings]
      }
      yield* transaction(discoveries.store({ organizationId, targetId: target.id, revision, result, entries, at: yield* now }))
      return result
    })

  /** The discovery of the target at its branch head. Answers the commit and the stored result. */
  const atHead = (principal: Principal, instance: ConnectorInstance, target: ConnectorTarget) =>
    Effect.gen(function*() {
      const organizationId = principal.organization.id
      const credential = yield* orUnavailable(codeHost.credentialOf(organizationId, instance))
      const head = yield* Effect.mapError(gitHub.head(credential, target.remoteId, target.externalTargetRef), toApiError)
      const result = yield* atRevision(organizationId, credential, target, head.sha, head.treeSha, toApiError)
      return { revision: head.sha, result }
    })

  const discoverInstance = Effect.fn("DiscoveryService.discover")(function*(principal: Principal, id: ConnectorInstanceId, targetId: ConnectorTargetId | undefined) {
    yield* authorize(principal, "connectors.read")
    // The instance and target are read for each request: the cache holds only what the commit decides.
    const { instance, target } = yield* orUnavailable(instanceAndTarget(principal, id, targetId, "viewer"))
    const { revision, result } = yield* atHead(principal, instance, target)
    return {
      ok: true as const,
      item: new DiscoveryResult({
        autoImportNewPlugins: autoImportNewPlugins(instance),
        classification: result.classification,
        connectorInstance: instance,
        connectorTarget: target,
        discoveredPlugins: result.discoveredPlugins,
        marketplace: result.marketplace,
        repositoryFullName: target.remoteId,
        sourceRevisionRef: revision,
        steps: result.steps,
        treeSummary: result.treeSummary,
        warnings: result.warnings
      }, { disableChecks: true })
    }
  })

  const tree = Effect.fn("DiscoveryService.tree")(function*(principal: Principal, id: ConnectorInstanceId, query: DiscoveryTreeQuery) {
    yield* authorize(principal, "connectors.read")
    const { instance, target } = yield* orUnavailable(instanceAndTarget(principal, id, query.connectorTargetId, "viewer"))
    const { revision } = yield* atHead(principal, instance, target)
    return yield* orUnavailable(discoveries.page(principal.organization.id, target.id, revision, query))
  })

  /** Every key a supported candidate, or 400 naming each other key by its index. */
  const selected = (result: StoredDiscovery, keys: ReadonlyArray<string>) => {
    const candidates = new Map(result.discoveredPlugins.map((candidate) => [candidate.key, candidate]))
    const chosen: Array<DiscoveredPlugin> = []
    const details: Array<{ message: string; path: ReadonlyArray<string | number> }> = []
    keys.forEach((key, i) => {
      const candidate = candidates.get(key)
      if (candidate === undefined) details.push({ path: ["keys", i], message: "is not a candidate of the discovery at the branch head" })
      else if (!candidate.supported) details.push({ path: ["keys", i], message: "is a candidate orgplane cannot import (see its warnings)" })
      else if (!chosen.includes(candidate)) chosen.push(candidate)
    })
    return details.length > 0 ? Effect.fail(new InvalidRequest({ details })) : Effect.succeed(chosen)
  }

  /**
   * The mappings of a candidate's files, for `pluginId`: those the target has are kept (one whose plugin was deleted
   * feeds this one), the others made. Answers every mapping's id and how many were made.
   */
  const mapCandidate = (input: {
    readonly organizationId: OrganizationId
    readonly instance: ConnectorInstance
    readonly targetId: ConnectorTargetId
    readonly pluginId: PluginId
    readonly candidate: DiscoveredPlugin
    readonly entries: ReadonlyArray<Entry>
    readonly at: Date
  }) =>
    Effect.gen(function*() {
      const { at, candidate, entries, instance, organizationId, pluginId, targetId } = input
      const mappingIds: Array<ConnectorMappingId> = []
      let made = 0
      for (const plan of importPlans(candidate, entries)) {
        const mapping = yield* discoveries.findMapping(organizationId, targetId, plan.selector, plan.objectType)
        if (Option.isSome(mapping)) {
          if (mapping.value.pluginDeleted) yield* discoveries.repointMapping(organizationId, mapping.value.id, pluginId, at)
          mappingIds.push(mapping.value.id)
          continue
        }
        const mappingId = yield* makeId("cmp")
        yield* mappings.insert({
          id: mappingId,
          organizationId,
          connectorInstanceId: instance.id,
          connectorTargetId: targetId,
          mappingKind: "path",
          selector: plan.selector,
          objectType: plan.objectType,
          pluginId,
          autoAddToPlugin: true,
          config: null,
          at
        })
        mappingIds.push(mappingId)
        made++
      }
      return { mappingIds, made }
    })

  /**
   * Writes what applying `chosen` makes: a plugin per candidate (the instance's live one for the key, if any),
   * mappings of the candidate's files, the marketplace of a marketplace repository listing them; then records the
   * `decided` keys (see migration 0007). Run it in a transaction holding the instance's lock, the instance checked.
   * `createdBy` is recorded as the creator, and `grant` gives the creator access to what is made.
   */
  const applyCandidates = (input: {
    readonly organizationId: OrganizationId
    readonly instance: ConnectorInstance
    readonly targetId: ConnectorTargetId
    readonly revision: string
    readonly result: StoredDiscovery
    readonly chosen: ReadonlyArray<DiscoveredPlugin>
    readonly createdBy: MembershipId | null
    readonly grant: <Id extends string>(kind: Kind<Id>, resource: Id, at: Date) => Effect.Effect<void, SqlError, IdGenerator>
    readonly decided: ReadonlyArray<string>
    readonly syncEventId: ConnectorSyncEventId | null
  }) =>
    Effect.gen(function*() {
      const { chosen, createdBy, grant, instance, organizationId, result, revision, targetId } = input
      const entries = yield* discoveries.entries(organizationId, targetId, revision)
      const at = yield* now
      const applied: Array<{ key: string; pluginId: PluginId; created: boolean; mappingIds: Array<ConnectorMappingId> }> = []
      for (const candidate of chosen) {
        const existing = yield* discoveries.pluginOfCandidate(organizationId, instance.id, candidate.key)
        let pluginId: PluginId
        if (Option.isSome(existing)) pluginId = existing.value
        else {
          pluginId = yield* makeId("plg")
          // Names are unique within the instance's plugins, as within a Claude Code marketplace (migration 0045):
          // another repository's or a person's plugin may hold the same. Two candidates of one repository may share
          // a name: the later one is told apart by its folder.
          const name = clip(candidate.displayName, 255)
          const ownName = yield* discoveries.pluginNameHeldBy(organizationId, name, instance.id)
          yield* plugins.insert({
            id: pluginId,
            organizationId,
            name: ownName ? clip(`${candidate.displayName} (${candidate.rootPath || "root"})`, 255) : name,
            description: clip(candidate.description ?? "", 4000),
            createdByMembershipId: createdBy,
            at,
            candidate: { connectorInstanceId: instance.id, key: candidate.key }
          })
          yield* grant(PluginKind, pluginId, at)
        }
        // Applied again, a plugin takes the repository's metadata as it is now.
        yield* plugins.setSourceMetadata(organizationId, pluginId, sourceMetadataOf(candidate.metadata))
        yield* discoveries.setCandidateName(organizationId, pluginId, candidate.displayName)
        const { mappingIds } = yield* mapCandidate({ organizationId, instance, targetId, pluginId, candidate, entries, at })
        applied.push({ key: candidate.key, pluginId, created: Option.isNone(existing), mappingIds })
      }

      let marketplaceId: MarketplaceId | null = null
      if (result.classification === "claude_marketplace_repo") {
        const existing = yield* discoveries.marketplaceOfInstance(organizationId, instance.id)
        if (Option.isSome(existing)) marketplaceId = existing.value
        else {
          marketplaceId = yield* makeId("mkt")
          // Marketplace names are unique in the organization, as a Claude Code user registers one marketplace per
          // name: a second repository with the same marketplace name (a fork) is told apart by its repository.
          const wanted = clip(result.marketplace?.name?.trim() || instance.name, 255)
          const name = (yield* discoveries.marketplaceNameHeld(organizationId, wanted))
            ? clip(`${wanted} (${instance.remoteId})`, 255)
            : wanted
          yield* marketplaces.insert({
            id: marketplaceId,
            organizationId,
            name,
            description: clip(result.marketplace?.description ?? "", 4000),
            logoUrl: null,
            createdByMembershipId: createdBy,
            at
          })
          yield* discoveries.markMarketplaceOfInstance(organizationId, marketplaceId, instance.id)
          yield* grant(MarketplaceKind, marketplaceId, at)
        }
        for (const plugin of applied) {
          yield* memberships.addPlugin({
            organizationId,
            marketplaceId,
            pluginId: plugin.pluginId,
            source: "connector",
            createdBy,
            at
          })
        }
        yield* marketplaces.touch(organizationId, marketplaceId, at)
      }
      yield* discoveries.recordKeys(organizationId, instance.id, input.decided, input.syncEventId, at)
      return { applied, marketplaceId }
    })

  const apply = Effect.fn("DiscoveryService.apply")(function*(principal: Principal, id: ConnectorInstanceId, input: ApplyDiscoveryRequest) {
    yield* authorize(principal, "connectors.read")
    const organizationId = principal.organization.id
    const found = yield* orUnavailable(instanceAndTarget(principal, id, input.connectorTargetId, "editor"))
    if (found.instance.status !== "active") return yield* instanceDisabled()
    const { revision, result } = yield* atHead(principal, found.instance, found.target)
    const chosen = yield* selected(result, input.keys)
    const targetId = found.target.id

    const written = yield* transaction(
      Effect.gen(function*() {
        // Under the instance's lock: a concurrent apply, change or removal waits, and the state is checked again.
        const instance = yield* connectors.instanceWith(principal, id, "editor", true)
        if (instance.status !== "active") return yield* instanceDisabled()
        return yield* applyCandidates({
          organizationId,
          instance,
          targetId,
          revision,
          result,
          chosen,
          createdBy: actingMembershipId(principal),
          grant: (kind, resource, at) => access.grantCreator(principal, kind, resource, at),
          // Every candidate the person could pick is decided: a later sync does not import the ones left out.
          decided: result.discoveredPlugins.filter((candidate) => candidate.supported).map((candidate) => candidate.key),
          syncEventId: null
        })
      })
    )

    // After the commit: the workflow it starts must see the mappings.
    const sync = yield* Sync
    const { event } = yield* sync.enqueue({
      organizationId,
      connectorInstanceId: id,
      connectorTargetId: targetId,
      eventType: "apply",
      revision
    })
    return {
      ok: true as const,
      item: { sourceRevisionRef: revision, plugins: written.applied, marketplaceId: written.marketplaceId, syncEvent: event }
    }
  })

  /**
   * Following the repository, for a sync of `revision` (no access check: the system acts), when a discovery was
   * applied to the instance: each plugin it made takes what the discovery at that commit says of its candidate, as a
   * Claude Code user who adds the marketplace gets it (docs/connectors.md, "Following a marketplace"):
   * - its key still listed and importable: the repository's name (a rename), description, metadata, and mappings of
   *   component kinds it did not have; a plugin that had left comes back active, in the marketplace again;
   * - its key still listed but not importable now (an invalid `plugin.json`): kept as it was, with a warning;
   * - its key gone and a new candidate of the same name (a moved folder): the plugin takes the new key and the new
   *   folder's mappings; the old folder's stay, so that the plan deletes what they imported (a deleted version each:
   *   history);
   * - its key gone otherwise (the entry removed): archived and out of the instance's marketplace, so nothing of it is
   *   served; its mappings stay, so its components keep their history (deleted with the folder, or kept as the
   *   folder has them) and a plugin listed again comes back whole.
   * A marketplace repository whose `marketplace.json` no longer reads fails with `MarketplaceUnreadable`, nothing
   * written: the catalog keeps the last good commit's plugins.
   */
  const follow = Effect.fn("DiscoveryService.follow")(function*(input: {
    readonly organizationId: OrganizationId
    readonly instanceId: ConnectorInstanceId
    readonly targetId: ConnectorTargetId
    readonly revision: string
  }) {
    const { instanceId, organizationId, revision, targetId } = input
    const nothing: Followed = { changes: [], warnings: [] }
    const [instance, target] = yield* orUnavailable(Effect.all([
      repository.findInstance(organizationId, instanceId),
      repository.findTarget(organizationId, targetId)
    ]))
    if (Option.isNone(instance) || Option.isNone(target) || instance.value.status !== "active") return nothing
    if (!(yield* orUnavailable(discoveries.applied(organizationId, instanceId)))) return nothing
    const credential = yield* orUnavailable(codeHost.credentialOf(organizationId, instance.value))
    const result = yield* atRevision(organizationId, credential, target.value, revision, revision, (error) => error)

    return yield* transaction(Effect.gen(function*() {
      yield* discoveries.lockInstance(organizationId, instanceId)
      const locked = yield* repository.findInstance(organizationId, instanceId)
      if (Option.isNone(locked) || locked.value.status !== "active") return nothing
      const marketplaceId = yield* discoveries.marketplaceOfInstance(organizationId, instanceId)
      if (Option.isSome(marketplaceId) && result.classification !== "claude_marketplace_repo") {
        const why = result.warnings.find((warning) => warning.includes(MARKETPLACE_PATH)) ??
          `\`${MARKETPLACE_PATH}\` is not a marketplace at this commit.`
        return yield* new MarketplaceUnreadable({
          message: `The marketplace could not be read at ${revision.slice(0, 12)}: ${why} Its plugins stay as the last good sync left them.`
        })
      }
      const entries = yield* discoveries.entries(organizationId, targetId, revision)
      const at = yield* now
      const own = yield* discoveries.pluginsOfInstance(organizationId, instanceId)
      const candidates = new Map(result.discoveredPlugins.map((candidate) => [candidate.key, candidate]))
      const changes: Array<FollowedPlugin> = []
      const warnings: Array<string> = []

      /** The plugin takes what the repository says of `candidate`; `change` is how it came to it, if not by a change. */
      const refresh = (plugin: OwnPlugin, candidate: DiscoveredPlugin, came: "moved" | undefined) =>
        Effect.gen(function*() {
          let change: FollowedPluginChange | undefined = came
          let name = plugin.name
          let previousName: string | null = null
          const repositoryName = clip(candidate.displayName, 255)
          if (plugin.candidateName !== null && plugin.candidateName !== candidate.displayName && repositoryName !== plugin.name) {
            if (yield* discoveries.nameHeldByOther(organizationId, instanceId, repositoryName, plugin.id)) {
              warnings.push(`Plugin "${plugin.name}" is named "${repositoryName}" in the repository now, a name another plugin of this repository holds: it keeps its name.`)
            } else {
              yield* plugins.update(organizationId, plugin.id, { name: repositoryName }, at)
              previousName = plugin.name
              name = repositoryName
              change ??= "renamed"
            }
          }
          if (plugin.candidateName !== candidate.displayName) yield* discoveries.setCandidateName(organizationId, plugin.id, candidate.displayName)
          let updated = false
          const description = clip(candidate.description ?? "", 4000)
          if (description !== plugin.description) {
            yield* plugins.update(organizationId, plugin.id, { description }, at)
            updated = true
          }
          const metadata = sourceMetadataOf(candidate.metadata)
          if (!sameJson(metadata, plugin.sourceMetadata === null ? null : storedMetadata(JSON.parse(plugin.sourceMetadata)))) {
            yield* plugins.setSourceMetadata(organizationId, plugin.id, metadata)
            updated = true
          }
          const { made } = yield* mapCandidate({ organizationId, instance: locked.value, targetId, pluginId: plugin.id, candidate, entries, at })
          if (made > 0) updated = true
          if (plugin.left) {
            yield* discoveries.setLeft(organizationId, plugin.id, null)
            if (plugin.status === "archived") yield* plugins.setStatus(organizationId, plugin.id, name, "active", at)
            if (Option.isSome(marketplaceId)) {
              yield* memberships.addPlugin({ organizationId, marketplaceId: marketplaceId.value, pluginId: plugin.id, source: "connector", createdBy: null, at })
            }
            change ??= "returned"
          }
          if (updated) change ??= "updated"
          if (change !== undefined || updated) yield* plugins.touch(organizationId, plugin.id, at)
          if (change !== undefined) changes.push({ pluginId: plugin.id, change, name, previousName, key: candidate.key })
        })

      // Plugins whose candidate is still listed.
      const gone: Array<OwnPlugin> = []
      for (const plugin of own) {
        const candidate = candidates.get(plugin.key)
        if (candidate === undefined) gone.push(plugin)
        else if (candidate.supported) yield* refresh(plugin, candidate, undefined)
        else if (!plugin.left) {
          warnings.push(`Plugin "${plugin.name}" is kept as the last good sync left it: ${candidate.warnings.join(" ") || "the repository's plugin cannot be imported at this commit."}`)
        }
      }
      // A moved folder: a new candidate with the name of a plugin whose candidate is gone.
      const owned = new Set(own.map((plugin) => plugin.key))
      const left: Array<OwnPlugin> = []
      for (const plugin of gone) {
        const wanted = (plugin.candidateName ?? plugin.name).toLowerCase()
        const moved = result.discoveredPlugins.find((candidate) =>
          candidate.supported && !owned.has(candidate.key) && candidate.displayName.toLowerCase() === wanted
        )
        if (moved === undefined) {
          left.push(plugin)
          continue
        }
        owned.add(moved.key)
        yield* discoveries.markPluginOfCandidate(organizationId, plugin.id, instanceId, moved.key)
        yield* discoveries.recordKeys(organizationId, instanceId, [moved.key], null, at)
        yield* refresh(plugin, moved, "moved")
      }
      // Plugins no longer listed: archived, out of the marketplace.
      for (const plugin of left) {
        if (plugin.left) continue
        yield* discoveries.setLeft(organizationId, plugin.id, at)
        if (plugin.status === "active") yield* plugins.setStatus(organizationId, plugin.id, plugin.name, "archived", at)
        if (Option.isSome(marketplaceId)) yield* memberships.removePlugin({ organizationId, marketplaceId: marketplaceId.value, pluginId: plugin.id, at })
        yield* plugins.touch(organizationId, plugin.id, at)
        changes.push({ pluginId: plugin.id, change: "left", name: plugin.name, previousName: null, key: plugin.key })
      }
      if (changes.length > 0 && Option.isSome(marketplaceId)) yield* marketplaces.touch(organizationId, marketplaceId.value, at)
      return { changes, warnings }
    }))
  })

  /**
   * Auto-import, for a sync of `revision` (no access check: the system acts, as the instance's creator): when the
   * instance has `autoImportNewPlugins` and a discovery was applied to it (it has a live plugin made for a
   * candidate), applies the supported, selected-by-default candidates of the discovery at that commit whose keys
   * the instance has not decided on yet (see migration 0007). Answers the keys this sync event imported, so that
   * running it again (a step re-run) answers the same keys and writes nothing more. The caller syncs the target
   * afterwards, which materializes the new mappings.
   */
  const importNew = Effect.fn("DiscoveryService.importNew")(function*(input: {
    readonly organizationId: OrganizationId
    readonly instanceId: ConnectorInstanceId
    readonly targetId: ConnectorTargetId
    readonly revision: string
    readonly syncEventId: ConnectorSyncEventId
  }) {
    const { instanceId, organizationId, revision, syncEventId, targetId } = input
    const imported = orUnavailable(discoveries.importedBy(organizationId, instanceId, syncEventId))
    const wanted = (instance: ConnectorInstance) =>
      Effect.map(
        discoveries.applied(organizationId, instanceId),
        (applied) => applied && instance.status === "active" && autoImportNewPlugins(instance)
      )
    const found = yield* orUnavailable(Effect.all([
      repository.findInstance(organizationId, instanceId),
      repository.findTarget(organizationId, targetId)
    ]))
    const [instance, target] = found
    if (Option.isNone(instance) || Option.isNone(target)) return yield* imported
    if (!(yield* orUnavailable(wanted(instance.value)))) return yield* imported

    const credential = yield* orUnavailable(codeHost.credentialOf(organizationId, instance.value))
    const result = yield* atRevision(organizationId, credential, target.value, revision, revision, (error) => error)
    const fresh = (known: ReadonlySet<string>) =>
      result.discoveredPlugins.filter((candidate) => candidate.supported && candidate.selectedByDefault && !known.has(candidate.key))
    if (fresh(yield* orUnavailable(discoveries.knownKeys(organizationId, instanceId))).length === 0) return yield* imported

    yield* transaction(Effect.gen(function*() {
      // Under the instance's lock, like apply: what was checked above is checked again.
      yield* discoveries.lockInstance(organizationId, instanceId)
      const locked = yield* repository.findInstance(organizationId, instanceId)
      if (Option.isNone(locked) || !(yield* wanted(locked.value))) return
      const chosen = fresh(yield* discoveries.knownKeys(organizationId, instanceId))
      if (chosen.length === 0) return
      // The creator is recorded as such; access is granted to them only while they are a member.
      const creator = locked.value.createdByOrgMembershipId
      const active = creator !== null && (yield* members.missingActive(organizationId, [creator])).length === 0
      yield* applyCandidates({
        organizationId,
        instance: locked.value,
        targetId,
        revision,
        result,
        chosen,
        createdBy: creator,
        grant: (kind, resource, at) => active ? access.grantManager(organizationId, kind, resource, creator, at) : Effect.void,
        decided: chosen.map((candidate) => candidate.key),
        syncEventId
      })
    }))
    return yield* imported
  })

  return { discover: discoverInstance, tree, apply, follow, importNew } as const
})

export class DiscoveryService extends Context.Service<DiscoveryService>()("@orgplane/server/connectors/DiscoveryService", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      Connectors.layer,
      ConnectorsRepository.layer,
      DiscoveryRepository.layer,
      MappingsRepository.layer,
      PluginsRepository.layer,
      MarketplacesRepository.layer,
      ContentsRepository.layer,
      Memberships.layer,
      Access.layer,
      CodeHostAccess.layer
    ])
  )
}
