/**
 * The connectors area's repositories on a fresh migrated database (the embedded one, or Postgres with DATABASE_URL):
 * accounts, instances, targets, mappings, sync events, source bindings, skipped files, the discovery cache, the
 * webhook's lookups and changes, and an instance's removal; another organization's rows never found (tenancy).
 */
import { expect, layer } from "@effect/vitest"
import {
  ConfigObjectId,
  ConnectorAccountId,
  ConnectorInstanceId,
  ConnectorMappingId,
  ConnectorSyncEventId,
  ConnectorTargetId,
  MarketplaceId,
  type OrganizationId,
  PluginId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { accountDisconnected, CodeHostAccess, notConfigured, toApiError } from "../src/connectors/CodeHostAccess.js"
import { ConnectorsRepository } from "../src/connectors/ConnectorsRepository.js"
import { byteOrder, DiscoveryRepository, prefixEnd, type StoredDiscovery } from "../src/connectors/DiscoveryRepository.js"
import { MappingsRepository } from "../src/connectors/MappingsRepository.js"
import { RemovalRepository } from "../src/connectors/RemovalRepository.js"
import type { Entry } from "../src/connectors/RepositoryTree.js"
import { SkippedFilesRepository } from "../src/connectors/SkippedFilesRepository.js"
import { SourceBindingsRepository } from "../src/connectors/SourceBindingsRepository.js"
import { SyncEventsRepository } from "../src/connectors/SyncEventsRepository.js"
import { WebhookRepository } from "../src/connectors/WebhookRepository.js"
import { CodeHostError, CodeHostNotConfigured } from "../src/integrations/codehost/GitHub.js"
import { Crypto, make as makeCrypto, parseKeys } from "../src/platform/Crypto.js"
import { IdGenerator } from "../src/platform/Ids.js"
import { bind, SecretColumns } from "../src/platform/SecretColumns.js"
import * as Db from "./support/IdentityDatabase.js"
import * as TestDatabase from "./support/TestDatabase.js"

const later = (ms: number) => new Date(Db.at.getTime() + ms)
/** The query of the next page. */
const after = (cursor: string | null) => (cursor === null ? {} : { cursor })
const accountId = () => Schema.decodeUnknownSync(ConnectorAccountId)(Db.newId("cac"))
const instanceId = () => Schema.decodeUnknownSync(ConnectorInstanceId)(Db.newId("cin"))
const targetId = () => Schema.decodeUnknownSync(ConnectorTargetId)(Db.newId("ctg"))
const mappingId = () => Schema.decodeUnknownSync(ConnectorMappingId)(Db.newId("cmp"))
const pluginId = () => Schema.decodeUnknownSync(PluginId)(Db.newId("plg"))
const marketplaceId = () => Schema.decodeUnknownSync(MarketplaceId)(Db.newId("mkt"))
const objectId = () => Schema.decodeUnknownSync(ConfigObjectId)(Db.newId("cob"))

/** An organization with an installation account, an instance on `acme/tools` and its `main` target. */
const connected = Effect.fn("ConnectorsRepositories.connected")(function*(options: { readonly installation?: string } = {}) {
  const repository = yield* ConnectorsRepository.make
  const organizationId = yield* Db.insertOrganization()
  const account = accountId()
  yield* repository.insertAccount({
    id: account,
    organizationId,
    kind: "app_installation",
    remoteId: options.installation ?? "inst-1",
    externalAccountRef: "acme",
    displayName: "Acme",
    tokenCiphertext: null,
    createdByMembershipId: null,
    at: Db.at
  })
  const instance = instanceId()
  yield* repository.insertInstance({
    id: instance,
    organizationId,
    connectorAccountId: account,
    remoteId: "acme/tools",
    name: "Tools",
    config: { auto_import: true },
    createdByMembershipId: null,
    at: Db.at
  })
  const target = targetId()
  yield* repository.insertTarget({
    id: target,
    organizationId,
    connectorInstanceId: instance,
    remoteId: "acme/tools",
    externalTargetRef: "main",
    config: { branch: "main" },
    at: Db.at
  })
  return { organizationId, account, instance, target }
})

const insertPlugin = Effect.fn("ConnectorsRepositories.insertPlugin")(function*(organizationId: OrganizationId, name: string) {
  const sql = yield* SqlClient.SqlClient
  const id = pluginId()
  yield* sql`INSERT INTO plugins (id, organization_id, name, description, status, created_at, updated_at)
    VALUES (${id}, ${organizationId}, ${name}, '', 'active', ${Db.at}, ${Db.at})`
  return id
})

/** A config object the instance materialized, with one version. */
const insertObject = Effect.fn("ConnectorsRepositories.insertObject")(function*(organizationId: OrganizationId, instance: ConnectorInstanceId) {
  const sql = yield* SqlClient.SqlClient
  const id = objectId()
  yield* sql`INSERT INTO config_objects (id, organization_id, object_type, source_mode, status, title, description, search_text, connector_instance_id, created_at, updated_at)
    VALUES (${id}, ${organizationId}, 'skill', 'connector', 'active', 'S', '', 'S', ${instance}, ${Db.at}, ${Db.at})`
  yield* sql`INSERT INTO config_object_versions (id, organization_id, config_object_id, number, schema_version, parser_mode, raw_source_text, created_via, is_deleted_version, created_at)
    VALUES (${Db.newId("cov")}, ${organizationId}, ${id}, 1, '1', 'markdown', '# S', 'connector', false, ${Db.at})`
  return id
})

const testLayer = Layer.merge(Db.layer, IdGenerator.layer)

layer(testLayer, { timeout: 120_000, excludeTestServices: true })(`connectors repositories on ${TestDatabase.kind}`, (it) => {
  it.effect("ConnectorsRepository: accounts, instances and targets written, read, ranked, listed, updated; tenancy", () =>
    Effect.gen(function*() {
      const repository = yield* ConnectorsRepository.make
      const sql = yield* SqlClient.SqlClient
      const { account, instance, organizationId, target } = yield* connected()
      const other = yield* Db.insertOrganization()

      const found = Option.getOrThrow(yield* repository.findAccount(organizationId, account))
      expect(found.account).toMatchObject({ id: account, kind: "app_installation", remoteId: "inst-1", displayName: "Acme", status: "active" })
      expect(found.tokenCiphertext).toBeNull()
      expect(yield* repository.findAccount(other, account)).toEqual(Option.none())
      const token = accountId()
      yield* repository.insertAccount({
        id: token,
        organizationId,
        kind: "token",
        remoteId: null,
        externalAccountRef: null,
        displayName: "Token",
        tokenCiphertext: "cipher",
        createdByMembershipId: null,
        at: later(1)
      })
      expect(Option.getOrThrow(yield* repository.findAccount(organizationId, token, true)).tokenCiphertext).toBe("cipher")
      const first = yield* repository.listAccounts(organizationId, { limit: 1 })
      expect(first.items.map((a) => a.id)).toEqual([token])
      expect(first.nextCursor).not.toBeNull()
      const second = yield* repository.listAccounts(organizationId, { limit: 1, ...after(first.nextCursor) })
      expect(second.items.map((a) => a.id)).toEqual([account])

      expect(Option.getOrThrow(yield* repository.findInstance(organizationId, instance))).toMatchObject({
        id: instance,
        connectorAccountId: account,
        remoteId: "acme/tools",
        instanceConfigJson: { auto_import: true },
        lastSyncStatus: null
      })
      expect(yield* repository.findInstance(other, instance)).toEqual(Option.none())
      const ranked = Option.getOrThrow(yield* repository.findInstanceRanked({ organizationId, id: instance, rank: sql`3`, lock: true }))
      expect(ranked.accessRank).toBe(3)
      expect(ranked.row.id).toBe(instance)
      expect((yield* repository.listInstances(organizationId, { q: "TOOL" }, sql`true`)).items.map((i) => i.id)).toEqual([instance])
      expect((yield* repository.listInstances(organizationId, { q: "nothing" }, sql`true`)).items).toEqual([])
      expect((yield* repository.listInstances(organizationId, {}, sql`false`)).items).toEqual([])
      expect(yield* repository.instanceIdsOfAccount(organizationId, account)).toEqual([instance])
      yield* repository.updateInstance(organizationId, instance, { name: "Renamed", instanceConfigJson: { auto_import: false } }, later(5))
      expect(Option.getOrThrow(yield* repository.findInstance(organizationId, instance))).toMatchObject({
        name: "Renamed",
        remoteId: "acme/tools",
        instanceConfigJson: { auto_import: false },
        updatedAt: later(5)
      })

      expect(Option.getOrThrow(yield* repository.findTarget(organizationId, target))).toMatchObject({
        id: target,
        connectorInstanceId: instance,
        externalTargetRef: "main",
        targetConfigJson: { branch: "main" }
      })
      expect(yield* repository.findTarget(other, target)).toEqual(Option.none())
      const rankedTarget = Option.getOrThrow(yield* repository.findTargetRanked({ organizationId, id: target, rank: sql`1`, lock: false }))
      expect(rankedTarget).toMatchObject({ accessRank: 1, row: { id: target } })
      yield* repository.lockTarget({ organizationId, id: target })
      const second2 = targetId()
      yield* repository.insertTarget({
        id: second2,
        organizationId,
        connectorInstanceId: instance,
        remoteId: "acme/tools",
        externalTargetRef: "dev",
        config: {},
        at: later(2)
      })
      expect((yield* repository.targetsOf(organizationId, instance)).map((t) => t.id)).toEqual([target, second2])
      const page = yield* repository.listTargets(organizationId, instance, { limit: 1 })
      expect(page.items.map((t) => t.id)).toEqual([target])
      expect((yield* repository.listTargets(organizationId, instance, { limit: 1, ...after(page.nextCursor) })).items.map((t) => t.id))
        .toEqual([second2])
      yield* repository.updateTarget(organizationId, second2, { externalTargetRef: "develop" }, later(3))
      expect(Option.getOrThrow(yield* repository.findTarget(organizationId, second2))).toMatchObject({ externalTargetRef: "develop", updatedAt: later(3) })

      yield* repository.deleteAccount(other, token)
      expect(Option.isSome(yield* repository.findAccount(organizationId, token))).toBe(true)
      yield* repository.deleteAccount(organizationId, token)
      expect(yield* repository.findAccount(organizationId, token)).toEqual(Option.none())
    }))

  it.effect("MappingsRepository: insert, the unique selector, find, ranked, update, list, remove", () =>
    Effect.gen(function*() {
      const repository = yield* MappingsRepository.make
      const sql = yield* SqlClient.SqlClient
      const { instance, organizationId, target } = yield* connected()
      const other = yield* Db.insertOrganization()
      const plugin = yield* insertPlugin(organizationId, "Tools")
      const skills = mappingId()
      const fields = { mappingKind: "path" as const, objectType: "skill" as const, pluginId: plugin, autoAddToPlugin: true, config: null }
      yield* repository.insert({ ...fields, id: skills, organizationId, connectorInstanceId: instance, connectorTargetId: target, selector: "skills/**", at: Db.at })
      const duplicate = yield* Effect.flip(
        repository.insert({ ...fields, id: mappingId(), organizationId, connectorInstanceId: instance, connectorTargetId: target, selector: "skills/**", at: Db.at })
      )
      expect(duplicate).toMatchObject({ error: "connector_mapping_exists" })
      const commands = mappingId()
      yield* repository.insert({
        ...fields,
        id: commands,
        organizationId,
        connectorInstanceId: instance,
        connectorTargetId: target,
        selector: "commands/**",
        objectType: "command",
        config: { note: "x" },
        at: later(1)
      })
      expect(Option.getOrThrow(yield* repository.find(organizationId, commands))).toMatchObject({
        id: commands,
        selector: "commands/**",
        objectType: "command",
        pluginId: plugin,
        mappingConfigJson: { note: "x" }
      })
      expect(yield* repository.find(other, commands)).toEqual(Option.none())
      expect(Option.getOrThrow(yield* repository.findRanked({ organizationId, id: skills, rank: sql`2`, lock: true }))).toMatchObject({
        accessRank: 2,
        row: { id: skills, mappingConfigJson: null }
      })
      expect(Option.getOrThrow(yield* repository.findBySelector(organizationId, target, "skills/**", "skill")).id).toBe(skills)
      expect(yield* repository.findBySelector(organizationId, target, "skills/**", "agent")).toEqual(Option.none())
      const moved = yield* Effect.flip(repository.update(organizationId, commands, { selector: "skills/**", objectType: "skill" }, later(2)))
      expect(moved).toMatchObject({ error: "connector_mapping_exists" })
      yield* repository.update(organizationId, commands, { selector: "cmds/**", config: null }, later(3))
      expect(Option.getOrThrow(yield* repository.find(organizationId, commands))).toMatchObject({ selector: "cmds/**", mappingConfigJson: null, updatedAt: later(3) })
      const listed = yield* repository.list(organizationId, target, { limit: 1 })
      expect(listed.items.map((m) => m.id)).toEqual([commands])
      expect((yield* repository.list(organizationId, target, { limit: 1, ...after(listed.nextCursor) })).items.map((m) => m.id)).toEqual([skills])
      expect((yield* repository.list(organizationId, target, { q: "CMDS" })).items.map((m) => m.id)).toEqual([commands])
      expect((yield* repository.list(organizationId, target, { objectType: "skill" })).items.map((m) => m.id)).toEqual([skills])
      expect((yield* repository.ofTarget(organizationId, target)).map((m) => m.id).sort()).toEqual([commands, skills].sort())
      expect((yield* repository.byIds({ organizationId, ids: [skills, commands] })).map((m) => m.id).sort()).toEqual([commands, skills].sort())
      yield* repository.remove(organizationId, commands)
      expect(yield* repository.find(organizationId, commands)).toEqual(Option.none())
    }))

  it.effect("SyncEventsRepository: record with its dedupe key, start, finish, list", () =>
    Effect.gen(function*() {
      const repository = yield* SyncEventsRepository.make
      const { instance, organizationId, target } = yield* connected()
      const input = {
        organizationId,
        connectorInstanceId: instance,
        connectorTargetId: target,
        eventType: "sync_now" as const,
        revision: "abc"
      }
      const recorded = yield* repository.record(input)
      expect(recorded.created).toBe(true)
      expect(recorded.event).toMatchObject({ connectorTargetId: target, status: "queued", sourceRevisionRef: "abc" })
      const again = yield* repository.record(input)
      expect(again).toMatchObject({ created: false, event: { id: recorded.event.id } })
      yield* repository.start(organizationId, recorded.event.id)
      const listed = yield* repository.list(organizationId, instance, {})
      expect(listed.items.map((e) => [e.id, e.status])).toEqual([[recorded.event.id, "running"]])
      yield* repository.fail(organizationId, recorded.event.id, "rate limited")
      expect((yield* repository.list(organizationId, instance, { status: "failed" })).items.map((e) => e.id)).toEqual([recorded.event.id])
      // Finished, its key is free again: the same commit records a new event.
      expect((yield* repository.record(input)).created).toBe(true)
      const other = yield* Db.insertOrganization()
      expect((yield* repository.list(other, instance, {})).items).toEqual([])
    }))

  it.effect("SourceBindingsRepository and SkippedFilesRepository: bindings, object state, skipped files settled", () =>
    Effect.gen(function*() {
      const bindings = yield* SourceBindingsRepository.make
      const skipped = yield* SkippedFilesRepository.make
      const mappings = yield* MappingsRepository.make
      const sql = yield* SqlClient.SqlClient
      const { instance, organizationId, target } = yield* connected()
      const mapping = mappingId()
      yield* mappings.insert({
        id: mapping,
        organizationId,
        connectorInstanceId: instance,
        connectorTargetId: target,
        mappingKind: "path",
        selector: "skills/**",
        objectType: "skill",
        pluginId: null,
        autoAddToPlugin: false,
        config: null,
        at: Db.at
      })
      const object = yield* insertObject(organizationId, instance)
      const row = {
        configObjectId: object,
        organizationId,
        connectorInstanceId: instance,
        connectorTargetId: target,
        connectorMappingId: mapping,
        path: "skills/a/SKILL.md",
        blobSha: "one",
        sourceRevisionRef: "abc",
        filesJson: null,
        createdAt: Db.at,
        updatedAt: Db.at
      }
      yield* bindings.upsert(row)
      yield* bindings.upsert({ ...row, blobSha: "two", filesJson: "[]", updatedAt: later(1) })
      const expected = { configObjectId: object, connectorMappingId: mapping, path: "skills/a/SKILL.md", blobSha: "two", filesJson: "[]" }
      expect(yield* bindings.bindingsOf(organizationId, target)).toEqual([expected])
      expect(Option.getOrThrow(yield* bindings.bindingOf(organizationId, mapping, "skills/a/SKILL.md"))).toEqual(expected)
      expect(yield* bindings.bindingOf(organizationId, mapping, "skills/b/SKILL.md")).toEqual(Option.none())
      expect(Option.getOrThrow(yield* bindings.stateOf(organizationId, object))).toEqual({
        status: "active",
        objectType: "skill",
        number: 1,
        rawSourceText: "# S",
        connectorSyncEventId: null,
        schemaVersion: "1",
        parserMode: "markdown"
      })
      const other = yield* Db.insertOrganization()
      expect(yield* bindings.bindingsOf(other, target)).toEqual([])
      expect(yield* bindings.stateOf(other, object)).toEqual(Option.none())
      yield* bindings.remove(organizationId, object)
      expect(yield* bindings.bindingsOf(organizationId, target)).toEqual([])

      const events = yield* SyncEventsRepository.make
      const input = { organizationId, connectorInstanceId: instance, connectorTargetId: target, eventType: "sync_now" as const, revision: "r" }
      const first = (yield* events.record(input)).event.id
      yield* events.fail(organizationId, first, "x")
      const second = (yield* events.record(input)).event.id
      const file = { organizationId, connectorTargetId: target, connectorMappingId: mapping, reason: "too large", createdAt: Db.at }
      yield* skipped.record({ ...file, path: "a.md", connectorSyncEventId: first })
      yield* skipped.record({ ...file, path: "b.md", connectorSyncEventId: first })
      yield* skipped.record({ ...file, path: "b.md", reason: "not UTF-8", connectorSyncEventId: second })
      const skippedRows = () =>
        sql<{ readonly path: string; readonly reason: string }>`SELECT path, reason FROM connector_skipped_files
          WHERE organization_id = ${organizationId} ORDER BY path`
      expect(yield* skippedRows()).toEqual([{ path: "a.md", reason: "too large" }, { path: "b.md", reason: "not UTF-8" }])
      yield* skipped.settle({ organizationId: other, targetId: target, eventId: second })
      expect((yield* skippedRows()).length).toBe(2)
      yield* skipped.settle({ organizationId, targetId: target, eventId: second })
      expect(yield* skippedRows()).toEqual([{ path: "b.md", reason: "not UTF-8" }])
    }))

  it.effect("DiscoveryRepository: a stored discovery and its tree, pages by prefix, kept revisions, candidate keys", () =>
    Effect.gen(function*() {
      const repository = yield* DiscoveryRepository.make
      const { instance, organizationId, target } = yield* connected()
      const result: StoredDiscovery = {
        classification: "unsupported",
        discoveredPlugins: [],
        marketplace: null,
        steps: [{ id: "read_repository_structure", label: "Read repository structure", status: "completed" }],
        treeSummary: { scannedEntryCount: 4, strategy: "git-tree-recursive", truncated: false, walkedSubtrees: 0 },
        warnings: ["none"]
      }
      const entries: Array<Entry> = [
        { path: "b/x.md", type: "blob", sha: "1", size: 10 },
        { path: "a", type: "tree", sha: "2", size: 0 },
        { path: "a/é.md", type: "blob", sha: "3", size: 3_000_000_000 },
        { path: "a/z.md", type: "blob", sha: "4", size: 1 }
      ]
      yield* repository.store({ organizationId, targetId: target, revision: "r1", result, entries, at: Db.at })
      // A second store of the same commit keeps the first.
      yield* repository.store({ organizationId, targetId: target, revision: "r1", result: { ...result, warnings: [] }, entries: [], at: Db.at })
      expect(Option.getOrThrow(yield* repository.find(organizationId, target, "r1"))).toEqual(result)
      expect(yield* repository.find(organizationId, target, "r0")).toEqual(Option.none())
      const sorted = [...entries].sort((a, b) => byteOrder(a.path, b.path))
      expect((yield* repository.entries(organizationId, target, "r1")).map((e) => e.path)).toEqual(sorted.map((e) => e.path))
      expect((yield* repository.entries(organizationId, target, "r1"))[2]).toEqual({ path: "a/é.md", type: "blob", sha: "3", size: 3_000_000_000 })
      const first = yield* repository.page(organizationId, target, "r1", { limit: 1, prefix: "a/" })
      expect(first.items.map((e) => e.path)).toEqual(["a/z.md"])
      const next = yield* repository.page(organizationId, target, "r1", { limit: 1, prefix: "a/", ...after(first.nextCursor) })
      expect(next.items.map((e) => e.path)).toEqual(["a/é.md"])
      expect(next.nextCursor).toBeNull()
      expect(prefixEnd("a/")).toBe("a0")
      const other = yield* Db.insertOrganization()
      expect(yield* repository.find(other, target, "r1")).toEqual(Option.none())
      expect(yield* repository.entries(other, target, "r1")).toEqual([])
      for (const [i, revision] of ["r2", "r3", "r4"].entries()) {
        yield* repository.store({ organizationId, targetId: target, revision, result, entries, at: later(i + 1) })
      }
      expect(yield* repository.find(organizationId, target, "r1")).toEqual(Option.none())
      expect(Option.isSome(yield* repository.find(organizationId, target, "r2"))).toBe(true)

      yield* repository.lockInstance(organizationId, instance)
      expect(yield* repository.applied(organizationId, instance)).toBe(false)
      const plugin = yield* insertPlugin(organizationId, "From discovery")
      expect(yield* repository.pluginOfCandidate(organizationId, instance, "manifest:root")).toEqual(Option.none())
      yield* repository.markPluginOfCandidate(organizationId, plugin, instance, "manifest:root")
      expect(yield* repository.pluginOfCandidate(organizationId, instance, "manifest:root")).toEqual(Option.some(plugin))
      expect(yield* repository.applied(organizationId, instance)).toBe(true)
      expect(yield* repository.pluginNameHeldBy(organizationId, "FROM DISCOVERY", instance)).toBe(true)
      expect(yield* repository.pluginNameHeldBy(other, "From discovery", instance)).toBe(false)
      expect(yield* repository.marketplaceOfInstance(organizationId, instance)).toEqual(Option.none())
      const sql = yield* SqlClient.SqlClient
      const marketplace = marketplaceId()
      yield* sql`INSERT INTO marketplaces (id, organization_id, name, description, status, created_at, updated_at)
        VALUES (${marketplace}, ${organizationId}, 'M', '', 'active', ${Db.at}, ${Db.at})`
      yield* repository.markMarketplaceOfInstance(organizationId, marketplace, instance)
      expect(yield* repository.marketplaceOfInstance(organizationId, instance)).toEqual(Option.some(marketplace))

      const event = Schema.decodeUnknownSync(ConnectorSyncEventId)(Db.newId("cse"))
      yield* sql`INSERT INTO connector_sync_events (id, organization_id, connector_instance_id, connector_target_id, event_type, status, attempts, summary_json, created_at)
        VALUES (${event}, ${organizationId}, ${instance}, ${target}, 'apply', 'running', 0, 'null', ${Db.at})`
      yield* repository.recordKeys(organizationId, instance, ["b", "a"], event, Db.at)
      yield* repository.recordKeys(organizationId, instance, ["a", "c"], null, Db.at)
      yield* repository.recordKeys(organizationId, instance, [], null, Db.at)
      expect([...(yield* repository.knownKeys(organizationId, instance))].sort()).toEqual(["a", "b", "c"])
      expect(yield* repository.importedBy(organizationId, instance, event)).toEqual(["a", "b"])
      expect(yield* repository.knownKeys(other, instance)).toEqual(new Set())
    }))

  it.effect("WebhookRepository: deliveries claimed once, installation lookups, disabling and renaming by repository", () =>
    Effect.gen(function*() {
      const repository = yield* WebhookRepository.make
      const connectors = yield* ConnectorsRepository.make
      const delivery = Db.newId("dlv")
      expect(yield* repository.claimDelivery(delivery, "push", Db.at)).toBe(true)
      expect(yield* repository.claimDelivery(delivery, "push", Db.at)).toBe(false)

      const installation = Db.newId("inst")
      const one = yield* connected({ installation })
      const two = yield* connected({ installation })
      const found = yield* repository.accountsOfInstallation(installation)
      expect(found.map((a) => [a.organizationId, a.id]).sort()).toEqual([[one.organizationId, one.account], [two.organizationId, two.account]].sort())
      const targets = yield* repository.targetsOfRepository(one.organizationId, [one.account], "ACME/Tools")
      expect(targets.map((t) => [t.row.id, t.instanceStatus, t.accountStatus])).toEqual([[one.target, "active", "active"]])
      expect(yield* repository.targetsOfRepository(one.organizationId, [two.account], "acme/tools")).toEqual([])

      yield* repository.setAccountStatus(one.organizationId, one.account, "disconnected", later(1))
      expect(Option.getOrThrow(yield* connectors.findAccount(one.organizationId, one.account)).account.status).toBe("disconnected")
      expect(yield* repository.renameRepository(one.organizationId, [one.account], "Acme/Tools", "acme/kit", later(2))).toEqual({ instances: 1, targets: 1 })
      expect(Option.getOrThrow(yield* connectors.findTarget(one.organizationId, one.target)).remoteId).toBe("acme/kit")
      expect(Option.getOrThrow(yield* connectors.findTarget(two.organizationId, two.target)).remoteId).toBe("acme/tools")
      expect(yield* repository.disableInstancesOfRepositories(one.organizationId, [one.account], ["ACME/KIT"], later(3))).toEqual([one.instance])
      expect(yield* repository.disableInstancesOfRepositories(one.organizationId, [one.account], ["acme/kit"], later(3))).toEqual([])
      expect(yield* repository.disableInstancesOfAccounts(two.organizationId, [two.account], later(4))).toEqual([two.instance])
      expect(Option.getOrThrow(yield* connectors.findInstance(two.organizationId, two.instance)).status).toBe("disabled")
    }))

  it.effect("RemovalRepository: an instance's rows go, a plugin holding another's objects stays, untied", () =>
    Effect.gen(function*() {
      const removal = yield* RemovalRepository.make
      const connectors = yield* ConnectorsRepository.make
      const mappings = yield* MappingsRepository.make
      const discovery = yield* DiscoveryRepository.make
      const sql = yield* SqlClient.SqlClient
      const { instance, organizationId, target } = yield* connected()
      const made = yield* insertPlugin(organizationId, "Made by the apply")
      const people = yield* insertPlugin(organizationId, "Made by people")
      yield* discovery.markPluginOfCandidate(organizationId, made, instance, "manifest:root")
      for (const [selector, plugin] of [["skills/**", made], ["agents/**", people]] as const) {
        yield* mappings.insert({
          id: mappingId(),
          organizationId,
          connectorInstanceId: instance,
          connectorTargetId: target,
          mappingKind: "path",
          selector,
          objectType: "skill",
          pluginId: plugin,
          autoAddToPlugin: true,
          config: null,
          at: Db.at
        })
      }
      yield* insertObject(organizationId, instance)
      yield* insertObject(organizationId, instance)
      const other = yield* Db.insertOrganization()
      expect(yield* removal.remove(other, instance)).toEqual({
        deletedConfigObjectCount: 0,
        deletedConnectorMappingCount: 0,
        deletedPluginCount: 0,
        deletedMarketplaceCount: 0
      })
      expect(yield* removal.remove(organizationId, instance)).toEqual({
        deletedConfigObjectCount: 2,
        deletedConnectorMappingCount: 2,
        deletedPluginCount: 1,
        deletedMarketplaceCount: 0
      })
      expect(yield* connectors.findInstance(organizationId, instance)).toEqual(Option.none())
      expect(yield* connectors.findTarget(organizationId, target)).toEqual(Option.none())
      const plugins = yield* sql<{ readonly id: string; readonly status: string }>`SELECT id, status FROM plugins WHERE organization_id = ${organizationId} ORDER BY name`
      expect(plugins.find((p) => p.id === people)).toMatchObject({ status: "active" })
      expect(plugins.find((p) => p.id === made)?.status ?? "gone").not.toBe("active")
    }))

  it.effect("CodeHostAccess: an installation's id, a token decrypted at its place, a disconnected account refused", () =>
    Effect.gen(function*() {
      const crypto = yield* makeCrypto({ passwordCost: 10, keys: parseKeys(`k1:${NodeCrypto.randomBytes(32).toString("base64")}`) })
      const access = yield* CodeHostAccess.make.pipe(Effect.provide(ConnectorsRepository.layer), Effect.provideService(Crypto, crypto))
      const connectors = yield* ConnectorsRepository.make
      const installed = yield* connected({ installation: "4242" })
      const instance = Option.getOrThrow(yield* connectors.findInstance(installed.organizationId, installed.instance))
      expect(yield* access.credentialOf(installed.organizationId, instance)).toEqual({ _tag: "Installation", installationId: 4242 })
      const other = yield* Db.insertOrganization()
      expect(yield* Effect.flip(access.credentialOf(other, instance))).toEqual(accountDisconnected())

      const token = accountId()
      const ciphertext = yield* crypto.encrypt("ghp_secret", bind(SecretColumns.connectorToken, installed.organizationId, token))
      yield* connectors.insertAccount({
        id: token,
        organizationId: installed.organizationId,
        kind: "token",
        remoteId: null,
        externalAccountRef: null,
        displayName: "Token",
        tokenCiphertext: ciphertext,
        createdByMembershipId: null,
        at: Db.at
      })
      const credential = yield* access.credentialOf(installed.organizationId, { ...instance, connectorAccountId: token })
      expect(credential._tag === "Token" ? Redacted.value(credential.token) : credential).toBe("ghp_secret")
      // The same ciphertext read at another account's place does not decrypt.
      const moved = accountId()
      yield* connectors.insertAccount({
        id: moved,
        organizationId: installed.organizationId,
        kind: "token",
        remoteId: null,
        externalAccountRef: null,
        displayName: "Moved",
        tokenCiphertext: ciphertext,
        createdByMembershipId: null,
        at: Db.at
      })
      expect(yield* Effect.flip(access.credentialOf(installed.organizationId, { ...instance, connectorAccountId: moved }))).toMatchObject({
        error: "stored_credential_unreadable"
      })

      const webhook = yield* WebhookRepository.make
      yield* webhook.setAccountStatus(installed.organizationId, installed.account, "disconnected", later(1))
      expect(yield* Effect.flip(access.credentialOf(installed.organizationId, instance))).toEqual(accountDisconnected())

      expect(toApiError(new CodeHostNotConfigured({ message: "no app" }))).toEqual(notConfigured("no app"))
      expect(toApiError(new CodeHostError({ status: 404, transient: false, message: "Not Found", retryAfterSeconds: null }))).toMatchObject({
        message: "Not Found"
      })
    }))
})
