/**
 * Sync across server processes on one Postgres database (Postgres only: the embedded database is one process's).
 * Two servers share a batch of syncs without materializing anything twice; a server killed in the middle of a sync
 * leaves it to another, which finishes it.
 */
import * as SqlClient from "effect/sql/SqlClient"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import * as Connectors from "../../../../packages/testkit/src/Connectors.js"
import * as FakeGitHub from "../../../../packages/testkit/src/FakeGitHub.js"
import * as GitRepo from "../../../../packages/testkit/src/GitRepo.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Database from "../../src/platform/Database.js"
import { testTuning } from "../durable/runner.js"
import * as FreshDatabase from "../support/TestDatabase.js"
import { v8Flags } from "../../../../packages/testkit/src/ShortLived.js"

const serverRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../..")
/** One key for every server of a test: a token one server encrypted, another decrypts. */
const keys = `test:${randomBytes(32).toString("base64")}`

let fake: FakeGitHub.FakeGitHub
const cleanup: Array<() => Promise<void>> = []
beforeAll(async () => {
  if (!FreshDatabase.onPostgres) return
  fake = await FakeGitHub.start()
  cleanup.push(() => fake.close())
}, 60_000)
afterAll(async () => {
  for (const step of cleanup.reverse()) await step()
}, 60_000)

const unique = () => Math.random().toString(36).slice(2, 10)

/** A fresh database on the test Postgres, dropped at the end, and a client on it for the checks. */
const freshDatabase = async () => {
  const base = Option.getOrThrow(Option.fromUndefinedOr(FreshDatabase.postgresUrl))
  const scope = Scope.makeUnsafe()
  const url = Redacted.make(await Effect.runPromise(Scope.provide(scope)(FreshDatabase.freshPostgres(base))))
  const client = await Effect.runPromise(Layer.buildWithScope(Database.layerUrl(url, { maxConnections: 2 }), scope))
  const sql = <A>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
    Effect.runPromise(Effect.orDie(Effect.flatMap(Effect.service(SqlClient.SqlClient), use).pipe(Effect.provide(client))))
  cleanup.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  return { url: Redacted.value(url), sql }
}

/** A server in this process on `url`. */
const serverOn = async (url: string) => {
  const server = await TestServer.start({
    database: Database.layerUrl(Redacted.make(url), { maxConnections: 4 }),
    codehostApiUrl: fake.url,
    encryptionKeys: keys,
    durable: { sharding: testTuning, cluster: { port: 0 } }
  })
  cleanup.push(() => server.close())
  return server
}

/** A server in a process of its own on `url` (test/durable/server.ts). */
const processOn = async (url: string) => {
  const child = spawn(process.execPath, [...v8Flags, "--conditions=@orgplane/source", "--import", "tsx", "test/durable/server.ts"], {
    cwd: serverRoot,
    env: { ...process.env, SYNC_SERVER_DATABASE: url, SYNC_SERVER_CODEHOST: fake.url, SYNC_SERVER_KEYS: keys },
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  cleanup.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await exited
  })
  const serverUrl = await new Promise<string>((resolve, reject) => {
    child.on("message", (message) => {
      const ready = typeof message === "object" && message !== null ? Reflect.get(message, "ready") : undefined
      if (typeof ready === "string") resolve(ready)
    })
    void exited.then(() => reject(new Error("server process exited before it was ready")))
  })
  return {
    url: serverUrl,
    kill: async () => {
      child.kill("SIGKILL")
      await exited
    }
  }
}

/** An organization with a token account, an instance per repository (a target on main, `skills/**` mapped). */
const setup = async (serverUrl: string, repositories: ReadonlyArray<string>) => {
  const { connectorAccounts, connectorTargets } = calls(serverUrl)
  const ghToken = `ghp_${unique()}${unique()}`
  fake.addToken(ghToken, repositories)
  const org = await Http.owner(serverUrl)
  const token = org.token
  const account = ok(await connectorAccounts.create({ token, payload: { kind: "token", token: ghToken } }), 201).item
  const instances = []
  for (const fullName of repositories) {
    const { instance, target } = await Connectors.connect(serverUrl, token, { account, remoteId: fullName })
    ok(await connectorTargets.createMapping({
      token,
      path: { connectorTargetId: target.id },
      payload: { mappingKind: "path", selector: "skills/**", objectType: "skill" }
    }), 201)
    instances.push({ instance, target })
  }
  return { organizationId: org.organization.id, token, instances }
}

const skills = (count: number) =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`skills/s${i}/SKILL.md`, `---\nname: s${i}\ndescription: Skill ${i}\n---\nbody ${i}\n`]))

const repository = async (files: GitRepo.Files) => {
  const repo = await GitRepo.withFiles(files)
  cleanup.push(() => repo.remove())
  const fullName = `acme/${unique()}`
  fake.addRepository(fullName, repo)
  return fullName
}

/** Polls until every event is completed (or one failed). */
const allSettled = async (serverUrl: string, token: string, eventIds: ReadonlyArray<string>) => {
  const { connectorSyncEvents } = calls(serverUrl)
  for (let i = 0; i < 1200; i++) {
    const events = await Promise.all(eventIds.map(async (id) => ok(await connectorSyncEvents.get({ token, path: { connectorSyncEventId: id } }), 200).item))
    if (events.every((event) => event.status !== "queued" && event.status !== "running")) return events
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("syncs did not settle")
}

/** Per instance: objects, versions and bindings (each object must have exactly one version and one binding). */
const counts = (sql: Awaited<ReturnType<typeof freshDatabase>>["sql"], organizationId: string) =>
  sql((sql) =>
    sql<{ connectorInstanceId: string; objects: number; versions: number; bindings: number }>`
      SELECT c.connector_instance_id,
             count(DISTINCT c.id)::int AS objects,
             (SELECT count(*)::int FROM config_object_versions v JOIN config_objects c2
                ON c2.organization_id = v.organization_id AND c2.id = v.config_object_id
              WHERE v.organization_id = ${organizationId} AND c2.connector_instance_id = c.connector_instance_id) AS versions,
             (SELECT count(*)::int FROM connector_source_bindings b
              WHERE b.organization_id = ${organizationId} AND b.connector_instance_id = c.connector_instance_id) AS bindings
      FROM config_objects c WHERE c.organization_id = ${organizationId}
      GROUP BY c.connector_instance_id`)

describe.skipIf(!FreshDatabase.onPostgres)("sync across server processes (Postgres)", () => {
  it("two servers on one database process a batch of syncs, each file materialized once", async () => {
    const database = await freshDatabase()
    const a = await serverOn(database.url)
    const b = await serverOn(database.url)
    const names = await Promise.all(Array.from({ length: 6 }, () => repository(skills(12))))
    const { instances, organizationId, token } = await setup(a.url, names)
    // Every instance synced from both servers at once, and resynced from both: 4 requests per instance.
    const responses = await Promise.all(instances.flatMap(({ instance, target }) =>
      [a, b].flatMap((server) => {
        const { connectorInstances, connectorTargets } = calls(server.url)
        return [
          connectorInstances.sync({ token, path: { connectorInstanceId: instance.id } }).then((answer) => ok(answer, 202).items[0].id),
          connectorTargets.resync({ token, path: { connectorTargetId: target.id } }).then((answer) => ok(answer, 202).item.id)
        ]
      })
    ))
    const events = await allSettled(a.url, token, [...new Set(responses)])
    expect(events.map((event) => event.status)).toEqual(events.map(() => "completed"))
    const rows = await counts(database.sql, organizationId)
    expect(rows).toHaveLength(6)
    for (const row of rows) expect(row).toMatchObject({ objects: 12, versions: 12, bindings: 12 })
  }, 120_000)

  it("a server killed in the middle of a sync: another finishes it, nothing written twice", async () => {
    const database = await freshDatabase()
    const doomed = await processOn(database.url)
    const name = await repository(skills(120))
    const { instances, organizationId, token } = await setup(doomed.url, [name])
    const { connectorTargets } = calls(doomed.url)
    const [{ target }] = instances
    const logged = fake.requests.length
    const event = ok(await connectorTargets.resync({ token, path: { connectorTargetId: target.id } }), 202).item
    // Once the first batch is written, GitHub stops answering four reads: the sync is stuck in a later batch.
    for (let i = 0; ; i++) {
      const [row] = await database.sql((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM config_objects WHERE organization_id = ${organizationId}`)
      if (row.n >= 50) break
      if (i > 2000) throw new Error("the first batch was not written")
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    fake.hangNext(4)
    for (let i = 0; !fake.requests.slice(logged).some((request) => request.status === null); i++) {
      if (i > 2000) throw new Error("no request hung")
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    const [before] = await database.sql((sql) => sql<{ status: string; n: number }>`
      SELECT e.status, (SELECT count(*)::int FROM config_objects c WHERE c.organization_id = e.organization_id) AS n
      FROM connector_sync_events e WHERE e.organization_id = ${organizationId} AND e.id = ${event.id}`)
    expect(before.status).toBe("running")
    expect(before.n).toBeLessThan(120)
    await doomed.kill()

    const survivor = await serverOn(database.url)
    const [done] = await allSettled(survivor.url, token, [event.id])
    expect(done).toMatchObject({ status: "completed", summary: { created: 120, updated: 0, deleted: 0, skipped: 0 } })
    const rows = await counts(database.sql, organizationId)
    expect(rows).toEqual([expect.objectContaining({ objects: 120, versions: 120, bindings: 120 })])
  }, 120_000)
})
