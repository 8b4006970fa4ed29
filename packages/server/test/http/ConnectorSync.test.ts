/**
 * Sync of connector targets through HTTP, against FakeGitHub serving real git repositories: sync now, resync, the
 * event history, retries of transient failures, what a sync materializes, and the recovery of events left queued.
 */
import type { CreateConnectorMappingRequest } from "@orgplane/schema"
import * as SqlClient from "effect/sql/SqlClient"
import { calls, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Connectors from "../../../../packages/testkit/src/Connectors.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as ConnectorWorld from "../support/ConnectorWorld.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { describe, expect, it } from "vitest"
import { IdGenerator, makeId } from "../../src/platform/Ids.js"

const world = ConnectorWorld.forFile()
const { settled, sql, syncNow } = world
const { audit, configObjects, connectorInstances, connectorSyncEvents, connectorTargets, plugins } = calls(() => world.url)
const unique = () => Math.random().toString(36).slice(2, 10)

const skill = (name: string, body = "body") => `---\nname: ${name}\ndescription: The ${name} skill\n---\n${body}\n`

const mapping = async (token: string, targetId: string, body: Omit<typeof CreateConnectorMappingRequest.Encoded, "mappingKind">) =>
  ok(await connectorTargets.createMapping({ token, path: { connectorTargetId: targetId }, payload: { mappingKind: "path", ...body } }), 201).item

/** The instance's objects (deleted ones too), by relative path. */
const objectsOf = async (token: string, instanceId: string) => {
  const page = ok(await configObjects.list({ token, query: { connectorInstanceId: instanceId, includeDeleted: "true", limit: "100" } }), 200)
  return new Map(page.items.map((item) => [item.currentRelativePath, item]))
}
const versionsOf = async (token: string, objectId: string) =>
  ok(await configObjects.listVersions({ token, path: { configObjectId: objectId }, query: { limit: "100", includeDeleted: "true" } }), 200).items

/** Blob reads FakeGitHub served for these paths' current blobs. */
const blobReads = () => world.github.requests.filter((request) => request.path.includes("/git/blobs/")).length

describe("sync now", () => {
  it("materializes mapped files: versions carry the commit and the event; memberships only with autoAddToPlugin", async () => {
    const { repo, token, instance, target } = await world.follow({
      "skills/deploy/SKILL.md": skill("deploy"),
      "skills/review/SKILL.md": skill("review"),
      "commands/ship.md": "# Ship\nShips it.\n",
      "README.md": "not mapped\n"
    })
    const plugin = ok(await plugins.create({ token, payload: { name: `Tools ${unique()}` } }), 201).item
    const skills = await mapping(token, target.id, { selector: "skills/**", objectType: "skill", pluginId: plugin.id, autoAddToPlugin: true })
    await mapping(token, target.id, { selector: "commands/**", objectType: "command", pluginId: plugin.id })

    const [event] = await syncNow(token, instance.id)
    expect(event).toMatchObject({ connectorTargetId: target.id, eventType: "sync_now", sourceRevisionRef: await repo.head() })
    const done = await settled(token, event.id)
    expect(done).toMatchObject({
      status: "completed",
      attempts: 0,
      lastError: null,
      summary: { created: 3, updated: 0, deleted: 0, unchanged: 0, skipped: 0, warnings: [], importedPluginKeys: [], outcome: "complete", skippedFiles: [] }
    })

    const objects = await objectsOf(token, instance.id)
    expect([...objects.keys()].sort()).toEqual(["commands/ship.md", "skills/deploy/SKILL.md", "skills/review/SKILL.md"])
    const deploy = objects.get("skills/deploy/SKILL.md")!
    expect(deploy).toMatchObject({ objectType: "skill", sourceMode: "connector", title: "deploy", status: "active", connectorInstanceId: instance.id })
    const [version] = await versionsOf(token, deploy.id)
    expect(version).toMatchObject({ number: 1, connectorSyncEventId: event.id, sourceRevisionRef: event.sourceRevisionRef, createdVia: "connector" })

    const members = await sql((sql) => sql<{ configObjectId: string; connectorMappingId: string; membershipSource: string }>`
      SELECT config_object_id, connector_mapping_id, membership_source FROM plugin_config_objects
      WHERE organization_id = ${instance.organizationId} AND plugin_id = ${plugin.id}`)
    expect(members.map((member) => member.configObjectId).sort()).toEqual(
      [deploy.id, objects.get("skills/review/SKILL.md")!.id].sort()
    )
    expect(members.every((member) => member.connectorMappingId === skills.id && member.membershipSource === "connector")).toBe(true)

    const after = ok(await connectorInstances.get({ token, path: { connectorInstanceId: instance.id } }), 200).item
    expect(after).toMatchObject({ lastSyncStatus: "completed", lastSyncCursor: event.sourceRevisionRef })

    // The durable engine's work is in the audit log, by the system, with what it did.
    const [logged, ...more] = ok(await audit.listEvents({ token, query: { action: "connector_sync.complete", targetId: instance.id } }), 200).items
    expect(more).toEqual([])
    expect(logged).toMatchObject({
      category: "execution",
      outcome: "succeeded",
      actor: { type: "system", id: "system:connector-sync", membershipId: null },
      via: { credentialId: null, ip: null },
      targets: [
        { type: "connector_instance", id: instance.id },
        { type: "connector_target", id: target.id },
        { type: "connector_sync_event", id: event.id }
      ],
      reason: "complete: 3 created, 0 updated, 0 deleted, 0 skipped"
    })
  })

  it("a second commit adds, changes and deletes files; unchanged files are not read again", async () => {
    const { repo, token, instance, target } = await world.follow({
      "skills/a/SKILL.md": skill("a"),
      "skills/b/SKILL.md": skill("b"),
      "skills/c/SKILL.md": skill("c")
    })
    await mapping(token, target.id, { selector: "skills/**", objectType: "skill" })
    const [first] = await syncNow(token, instance.id)
    expect((await settled(token, first.id)).summary!.created).toBe(3)
    const before = await objectsOf(token, instance.id)

    await repo.commitFiles({ "skills/b/SKILL.md": skill("b", "changed"), "skills/c/SKILL.md": null, "skills/d/SKILL.md": skill("d") })
    const reads = blobReads()
    const [second] = await syncNow(token, instance.id)
    expect(second.id).not.toBe(first.id)
    const done = await settled(token, second.id)
    expect(done.summary).toEqual({ created: 1, updated: 1, deleted: 1, unchanged: 1, skipped: 0, warnings: [], importedPluginKeys: [], outcome: "complete", skippedFiles: [], followedPlugins: [] })
    // b and d only.
    expect(blobReads() - reads).toBe(2)

    const after = await objectsOf(token, instance.id)
    expect(after.get("skills/a/SKILL.md")!.id).toBe(before.get("skills/a/SKILL.md")!.id)
    expect((await versionsOf(token, before.get("skills/a/SKILL.md")!.id)).length).toBe(1)
    const b = await versionsOf(token, before.get("skills/b/SKILL.md")!.id)
    expect(b.map((version) => [version.number, version.connectorSyncEventId])).toEqual(
      expect.arrayContaining([[1, first.id], [2, second.id]])
    )
    expect(after.get("skills/c/SKILL.md")!.status).toBe("deleted")
    const c = await versionsOf(token, before.get("skills/c/SKILL.md")!.id)
    expect(c.find((version) => version.number === 2)).toMatchObject({ isDeletedVersion: true, connectorSyncEventId: second.id })
    expect(after.get("skills/d/SKILL.md")!.status).toBe("active")
  })

  it("at the same head answers the pending event, or once synced that event: one sync", async () => {
    const { token, instance, target } = await world.follow({ "skills/a/SKILL.md": skill("a") })
    await mapping(token, target.id, { selector: "skills/**", objectType: "skill" })
    const answers = await Promise.all([1, 2, 3].map(() => syncNow(token, instance.id)))
    const [[first]] = answers
    expect(answers.map(([event]) => event.id)).toEqual([first.id, first.id, first.id])
    await settled(token, first.id)
    const [third] = await syncNow(token, instance.id)
    expect(third.id).toBe(first.id)
    const list = ok(await connectorInstances.listSyncEvents({ token, path: { connectorInstanceId: instance.id } }), 200)
    expect(list.items).toHaveLength(1)
  })

  it("queues nothing when the head of a followed branch cannot be read, and says so (502)", async () => {
    const { token, instance } = await world.follow({ "a.md": "a\n" })
    ok(await connectorInstances.createTarget({ token, path: { connectorInstanceId: instance.id }, payload: { externalTargetRef: "gone" } }), 201)
    const refused = await connectorInstances.sync({ token, path: { connectorInstanceId: instance.id } })
    expect(refused.status).toBe(502)
    expect(refusal(refused, 502)).toMatchObject({
      error: "codehost_api_error",
      message: expect.stringMatching(
        /^Reading the head of branch 'gone' failed: .*\. Nothing was queued \(sync now reads every followed branch's head before it queues a sync\); send it again once the code host answers\.$/
      )
    })
    // Not even for `main`, whose head was read.
    const events = ok(await connectorInstances.listSyncEvents({ token, path: { connectorInstanceId: instance.id } }), 200)
    expect(events.items).toEqual([])
  })

  it("is refused for a disabled instance and an instance without targets", async () => {
    const { token, instance } = await world.follow({ "a.md": "a\n" })
    ok(await connectorInstances.disable({ token, path: { connectorInstanceId: instance.id } }), 200)
    const disabled = await connectorInstances.sync({ token, path: { connectorInstanceId: instance.id } })
    expect(disabled.status).toBe(409)
    expect(refusal(disabled, 409)).toMatchObject({ error: "connector_instance_disabled" })

    const other = await world.follow({ "a.md": "a\n" })
    const bare = ok(await connectorInstances.create({
      token: other.token,
      payload: { connectorAccountId: other.instance.connectorAccountId, name: `Bare ${unique()}`, remoteId: other.fullName }
    }), 201).item
    const none = await connectorInstances.sync({ token: other.token, path: { connectorInstanceId: bare.id } })
    expect(none.status).toBe(409)
    expect(refusal(none, 409)).toMatchObject({ error: "connector_target_required" })
  })
})

describe("resync", () => {
  it("reads every mapped file again and restores an object deleted by hand", async () => {
    const { token, instance, target } = await world.follow({ "skills/a/SKILL.md": skill("a"), "skills/b/SKILL.md": skill("b") })
    await mapping(token, target.id, { selector: "skills/**", objectType: "skill" })
    const [first] = await syncNow(token, instance.id)
    await settled(token, first.id)
    const a = (await objectsOf(token, instance.id)).get("skills/a/SKILL.md")!
    expect((await configObjects.delete({ token, path: { configObjectId: a.id } })).status).toBe(200)

    const reads = blobReads()
    const response = ok(await connectorTargets.resync({ token, path: { connectorTargetId: target.id } }), 202)
    expect(response.item).toMatchObject({ eventType: "resync", connectorTargetId: target.id, status: "queued" })
    const done = await settled(token, response.item.id)
    expect(done.summary).toEqual({ created: 0, updated: 1, deleted: 0, unchanged: 1, skipped: 0, warnings: [], importedPluginKeys: [], outcome: "complete", skippedFiles: [], followedPlugins: [] })
    expect(blobReads() - reads).toBe(2)
    expect((await objectsOf(token, instance.id)).get("skills/a/SKILL.md")!.status).toBe("active")
  })

  it("skips files it cannot read: a partial sync naming them, shown on their plugin until a sync imports them", async () => {
    const { repo, token, instance, target } = await world.follow({ "mcp/good.json": "{\"command\": \"x\"}", "mcp/bad.json": "{ not json" })
    const plugin = ok(await plugins.create({ token, payload: { name: `Servers ${unique()}` } }), 201).item
    const mapped = await mapping(token, target.id, { selector: "mcp/**", objectType: "mcp", pluginId: plugin.id, autoAddToPlugin: true })
    const [event] = await syncNow(token, instance.id)
    const done = await settled(token, event.id)
    expect(done.summary).toMatchObject({ outcome: "partial", created: 1, skipped: 1 })
    const skippedFiles = done.summary!.skippedFiles!
    expect(skippedFiles).toEqual([{ path: "mcp/bad.json", reason: expect.stringMatching(/^cannot be read as json \(is not valid JSON/), connectorMappingId: mapped.id }])
    expect(done.summary!.warnings).toEqual([`mcp/bad.json: ${skippedFiles[0].reason}`])
    const partial = ok(await plugins.get({ token, path: { pluginId: plugin.id } }), 200).item
    expect(partial).toMatchObject({ memberCount: 1, skippedFiles: [{ path: "mcp/bad.json", reason: skippedFiles[0].reason }] })

    await repo.commitFiles({ "mcp/bad.json": "{\"mcpServers\": {\"fixed\": {\"command\": \"y\"}}}" })
    const [fixed] = await syncNow(token, instance.id)
    expect((await settled(token, fixed.id)).summary).toMatchObject({ outcome: "complete", created: 1, skipped: 0, skippedFiles: [] })
    const whole = ok(await plugins.get({ token, path: { pluginId: plugin.id } }), 200).item
    expect(whole).toMatchObject({ memberCount: 2, skippedFiles: [] })
    expect(whole.extension.manifest.resources.map((resource) => resource.title).sort()).toEqual(["MCP: fixed", "MCP: good"])
  })
})

describe("failures", () => {
  it("transient GitHub failures are retried and counted; the sync completes", async () => {
    const { token, target } = await world.follow({ "skills/a/SKILL.md": skill("a") })
    await mapping(token, target.id, { selector: "skills/**", objectType: "skill" })
    // The workflow's first GitHub request (the head) meets a rate limit; the one retrying it, bad gateways twice.
    const fake = world.github
    const logged = fake.requests.length
    fake.failNext(1, 429, { retryAfter: 0 })
    const response = ok(await connectorTargets.resync({ token, path: { connectorTargetId: target.id } }), 202)
    while (!fake.requests.slice(logged).some((request) => request.status === 429)) await new Promise((resolve) => setTimeout(resolve, 5))
    fake.failNext(2, 502)
    const done = await settled(token, response.item.id)
    expect(done).toMatchObject({ status: "completed", attempts: 3, summary: { created: 1 } })
    expect(done.lastError).toContain("502")
  })

  it("a permanent failure fails the sync with the reason", async () => {
    const { fullName, token, instance, target } = await world.follow({ "skills/a/SKILL.md": skill("a") })
    await mapping(token, target.id, { selector: "skills/**", objectType: "skill" })
    world.github.removeRepository(fullName)
    const response = ok(await connectorTargets.resync({ token, path: { connectorTargetId: target.id } }), 202)
    const done = await settled(token, response.item.id)
    expect(done.status).toBe("failed")
    expect(done.attempts).toBe(0)
    expect(done.lastError).toMatch(/404|not found/i)
    expect(ok(await connectorInstances.get({ token, path: { connectorInstanceId: instance.id } }), 200).item.lastSyncStatus).toBe("failed")
    const [logged] = ok(await audit.listEvents({ token, query: { action: "connector_sync.complete", targetId: instance.id } }), 200).items
    expect(logged).toMatchObject({
      actor: { type: "system" },
      targets: [{ type: "connector_instance", id: instance.id }, { type: "connector_sync_event", id: response.item.id }]
    })
    expect(logged.reason).toBe(`failed: ${done.lastError}`.slice(0, 500))
  })
})

describe("sync events", () => {
  it("list newest first with filters and cursors; another organization's answer 404", async () => {
    const { token, instance, target } = await world.follow({ "a.md": "a\n" })
    const ids: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const response = ok(await connectorTargets.resync({ token, path: { connectorTargetId: target.id } }), 202)
      ids.push(response.item.id)
      await settled(token, response.item.id)
    }
    const path = { connectorInstanceId: instance.id }
    const page1 = ok(await connectorInstances.listSyncEvents({ token, path, query: { limit: "2" } }), 200)
    expect(page1.items.map((item) => item.id)).toEqual([ids[2], ids[1]])
    if (page1.nextCursor === null) throw new Error(`the first page of two has no cursor: ${JSON.stringify(page1)}`)
    const page2 = ok(await connectorInstances.listSyncEvents({ token, path, query: { limit: "2", cursor: page1.nextCursor } }), 200)
    expect(page2.items.map((item) => item.id)).toEqual([ids[0]])
    expect(page2.nextCursor).toBeNull()
    const failed = ok(await connectorInstances.listSyncEvents({ token, path, query: { status: "failed" } }), 200)
    expect(failed.items).toEqual([])

    // A viewer reads the history but cannot sync; an editor can.
    const member = await Http.join(world.url, token, "member", "Member")
    const event = { connectorSyncEventId: ids[0] }
    expect((await connectorSyncEvents.get({ token: member.token, path: event })).status).toBe(403)
    ok(await connectorInstances.connectorInstanceGrant({ token, path, payload: { orgMembershipId: member.membership.id, role: "viewer" } }), 201)
    expect(ok(await connectorSyncEvents.get({ token: member.token, path: event }), 200).item.id).toBe(ids[0])
    for (const refused of [
      await connectorInstances.sync({ token: member.token, path }),
      await connectorTargets.resync({ token: member.token, path: { connectorTargetId: target.id } })
    ]) {
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual({ reason: "insufficient_access", message: "Missing editor access for connector instance." })
    }

    const other = await Http.owner(world.url, "Other")
    expect((await connectorInstances.sync({ token: other.token, path })).status).toBe(404)
    expect((await connectorTargets.resync({ token: other.token, path: { connectorTargetId: target.id } })).status).toBe(404)
    expect((await connectorSyncEvents.get({ token: other.token, path: event })).body).toEqual({
      error: "connector_sync_event_not_found",
      message: "Connector sync event not found."
    })
    expect((await connectorInstances.listSyncEvents({ token: other.token, path })).status).toBe(404)
  })
})

describe("recovery", () => {
  it("a server starting finds an event left queued (its recorder stopped after the commit) and runs its sync; a fresh one is left to its recorder", async () => {
    // One database, two servers in turn: the first records, stops; the second starts on what it left.
    const database = ManagedRuntime.make(Layer.unwrap(TestDatabase.layer({ migrated: true })))
    const shared = Layer.succeedContext(await database.context())
    try {
      const first = await TestServer.start({ database: shared, ...world.codeHost })
      const { instance, owner, target, token } = await world.follow({ "skills/a/SKILL.md": skill("a") }, { url: first.url })
      ok(await calls(first.url).connectorTargets.createMapping({
        token,
        path: { connectorTargetId: target.id },
        payload: { mappingKind: "path", selector: "skills/**", objectType: "skill" }
      }), 201)
      await first.close()

      // Two events as a process leaves them that stopped after committing them, before starting their workflows:
      // one recorded two minutes ago, one just now (its recorder may still be about to start it).
      const [stale, fresh] = Effect.runSync(Effect.all([makeId("cse"), makeId("cse")]).pipe(Effect.provide(IdGenerator.layer)))
      const recorded = [{ id: stale, at: new Date(Date.now() - 2 * 60_000) }, { id: fresh, at: new Date() }]
      for (const { at, id } of recorded) {
        await database.runPromise(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) =>
          sql`INSERT INTO connector_sync_events (id, organization_id, connector_instance_id, connector_target_id, event_type,
                status, attempts, summary_json, created_at)
              VALUES (${id}, ${owner.organization.id}, ${instance.id}, ${target.id}, 'resync', 'queued', 0, 'null'::jsonb, ${at})`))
      }

      const second = await TestServer.start({ database: shared, ...world.codeHost })
      try {
        expect(await Connectors.settled(second.url, token, stale)).toMatchObject({
          status: "completed",
          summary: { created: 1, updated: 0, deleted: 0, skipped: 0 }
        })
        const left = ok(await calls(second.url).connectorSyncEvents.get({ token, path: { connectorSyncEventId: fresh } }), 200).item
        expect(left.status).toBe("queued")
      } finally {
        await second.close()
      }
    } finally {
      await database.dispose()
    }
  }, 60_000)
})
