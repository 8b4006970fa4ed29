/**
 * Data written by 0.1.0 stays readable: this server opens an instance the 0.1.0 packages wrote,
 * `test/fixtures/data-0.1.0/` (its `manifest.json` says what was written and the credentials to read it with): the
 * embedded data folder with its key file on PGlite runs, the Postgres database with its encryption keys on Postgres
 * runs. It was written once by 0.1.0's own server through its HTTP API and is never re-recorded (the script that wrote
 * it needs 0.1.0's code: `git show 10da2a8^:next/server/scripts/effect3-data.ts`). Everything signs in (passwords,
 * the sessions and the API key 0.1.0 issued), decrypts (the LLM provider's key and headers a member connects with;
 * the audit stream's signing secret, which signs its next delivery), lists (members, teams, the catalog with its
 * versions, the audit events) as it was written.
 *
 * The sessions 0.1.0 issued are checked on a server whose clock starts when the data was written (they are as fresh
 * as they were then, whatever day the test runs); the rest on a second server, on today's clock, with new sessions.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FakeAuditReceiver from "../support/AuditReceiver.js"
import { calls, ok } from "../../../../packages/testkit/src/ApiCalls.js"
import { clockAt } from "../support/Clocks.js"
import * as TestServer from "../support/HttpServer.js"
import { freshPostgres, postgresUrl } from "../support/TestDatabase.js"

const fixtures = fileURLToPath(new URL("../fixtures/data-0.1.0/", import.meta.url))

interface Written {
  readonly organizationId: string
  readonly people: ReadonlyArray<{ readonly email: string; readonly password: string; readonly token: string; readonly userId: string }>
  readonly apiKey: { readonly id: string; readonly secret: string }
  readonly teams: ReadonlyArray<string>
  readonly members: ReadonlyArray<string>
  readonly plugin: string
  readonly marketplace: string
  readonly configObjects: { readonly skill: string; readonly context: string }
  readonly llmProvider: { readonly id: string; readonly apiKey: string; readonly header: string }
  readonly auditStream: { readonly id: string; readonly secret: string }
  readonly auditEvents: ReadonlyArray<string>
}

const manifest: { readonly writtenAt: string; readonly embedded: Written; readonly postgres: Written } = JSON.parse(
  Fs.readFileSync(Path.join(fixtures, "manifest.json"), "utf8")
)

/**
 * A fresh database on the test Postgres (TestDatabase's, dropped when `scope` closes) holding the 0.1.0 dump, and
 * its URL. The dump goes through `pg`: its many statements in one query need the simple query protocol.
 */
const restoredDatabase = async (base: string, scope: Scope.Closeable) => {
  const url = await Effect.runPromise(Scope.provide(freshPostgres(base), scope))
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  // pg_dump's psql meta-commands (`\restrict`) are psql's, not SQL.
  const dump = Fs.readFileSync(Path.join(fixtures, "postgres.sql"), "utf8").split("\n").filter((line) => !line.startsWith("\\")).join("\n")
  await client.query(dump)
  await client.end()
  return url
}

/** The 0.1.0 data folder and its key file, unpacked into a new folder; answers the data folder. */
const unpackedFolder = () => {
  const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-data010-"))
  execFileSync("tar", ["xJf", Path.join(fixtures, "embedded.tar.xz"), "-C", folder])
  return { dataDir: Path.join(folder, "data"), remove: () => Fs.rmSync(folder, { recursive: true, force: true }) }
}

const written = postgresUrl === undefined ? manifest.embedded : manifest.postgres
let server: TestServer.RunningServer | undefined
let receiver: FakeAuditReceiver.FakeAuditReceiver
/** The server settings that open the 0.1.0 instance (its data folder, or its database with its keys). */
let instance: TestServer.Options = {}
let cleanUp: () => Promise<void> | void = () => {}

beforeAll(async () => {
  receiver = await FakeAuditReceiver.start()
  const streaming = {
    outboundAllowPrivate: true,
    auditStreamPollInterval: "250 millis",
    auditStreamSettle: "1 second",
    auditStreamBackoffBase: "500 millis",
    auditStreamBackoffCap: "5 seconds",
    auditStreamTimeout: "3 seconds"
  } as const
  if (postgresUrl === undefined) {
    const folder = unpackedFolder()
    cleanUp = folder.remove
    // The data folder's own database and the key file beside it: no test database, no keys given.
    instance = { ...streaming, database: undefined, encryptionKeys: undefined, dataDir: folder.dataDir }
  } else {
    const scope = Effect.runSync(Scope.make())
    cleanUp = () => Effect.runPromise(Scope.close(scope, Exit.void))
    const databaseUrl = await restoredDatabase(postgresUrl, scope)
    const keys = Fs.readFileSync(Path.join(fixtures, "postgres-keys.txt"), "utf8").trim()
    instance = { ...streaming, database: undefined, databaseUrl, encryptionKeys: keys }
  }
}, 180_000)

afterAll(async () => {
  await server?.close()
  await receiver?.close()
  await cleanUp()
})

const url = () => {
  if (server === undefined) throw new Error("no server is running")
  return server.url
}
const { audit, auditStreams, configObjects, llmProviders, marketplaces, members, plugins, teams, users } = calls(url)

/** A new session of the `index`th person 0.1.0 wrote. */
const signIn = async (index: number) => {
  const person = written.people[index]
  if (person === undefined) throw new Error(`no person ${index}`)
  return ok(await users.signIn({ payload: { email: person.email, password: person.password } }), 200).session.token
}

describe(`0.1.0's data (${postgresUrl === undefined ? "embedded data folder" : "Postgres"})`, () => {
  it("takes the sessions and the API key 0.1.0 issued, on a clock running from when it wrote them", async () => {
    // The sessions' expiry is 0.1.0's (30 days): this server's clock starts when the data was written.
    const startedAt = Date.now()
    const writtenAt = Date.parse(manifest.writtenAt)
    server = await TestServer.start({ ...instance, clock: clockAt(() => writtenAt + (Date.now() - startedAt)) })
    try {
      for (const person of written.people) {
        expect(ok(await users.me({ token: person.token }), 200).user.id).toBe(person.userId)
      }
      const byKey = ok(await teams.list({ apiKey: written.apiKey.secret }), 200)
      expect(byKey.items.map((team) => team.id).sort()).toEqual([...written.teams].sort())
    } finally {
      await server.close()
      server = undefined
    }
  }, 120_000)

  it("signs everyone in with their passwords, on today's clock", async () => {
    server = await TestServer.start(instance)
    for (const person of written.people) {
      const signedIn = ok(await users.signIn({ payload: { email: person.email, password: person.password } }), 200)
      expect(signedIn.user.id).toBe(person.userId)
      expect(ok(await users.me({ token: signedIn.session.token }), 200).user.id).toBe(person.userId)
    }
    const wrong = await users.signIn({ payload: { email: written.people[0]!.email, password: "not the password" } })
    expect(wrong.status).toBe(401)
  }, 120_000)

  it("lists the members, teams and catalog as written, the config object's versions with them", async () => {
    const token = await signIn(0)
    const memberPage = ok(await members.list({ token }), 200)
    expect(memberPage.items.map((member) => member.id)).toEqual(written.members)
    const teamPage = ok(await teams.list({ token }), 200)
    expect(teamPage.items.map((team) => team.id)).toEqual(written.teams)
    expect(ok(await plugins.get({ token, path: { pluginId: written.plugin } }), 200).item.name).toBe("Review kit")
    expect(ok(await marketplaces.get({ token, path: { marketplaceId: written.marketplace } }), 200).item.name).toBe("Internal")
    const versions = ok(await configObjects.listVersions({ token, path: { configObjectId: written.configObjects.context } }), 200)
    expect(versions.items.map((version) => version.number)).toEqual([2, 1])
    const skill = ok(await configObjects.get({ token, path: { configObjectId: written.configObjects.skill } }), 200)
    expect(skill.item.title).toBe("deploy-to-staging")
  })

  it("lists every audit event 0.1.0 recorded", async () => {
    const events = ok(await audit.listEvents({ token: await signIn(0), query: { limit: "100" } }), 200)
    const ids = events.items.map((event) => event.id)
    for (const id of written.auditEvents) expect(ids).toContain(id)
  })

  it("decrypts the LLM provider's key and headers for the person who connects", async () => {
    const connected = ok(await llmProviders.connect({ token: await signIn(0), path: { llmProviderId: written.llmProvider.id } }), 200)
    expect(connected.apiKey).toBe(written.llmProvider.apiKey)
    expect(connected.headers).toMatchObject({ "OpenAI-Organization": written.llmProvider.header })
  })

  it("signs the audit stream's next delivery with the secret 0.1.0 made", async () => {
    const token = await signIn(0)
    receiver.setSecrets(written.auditStream.secret)
    ok(await auditStreams.update({ token, path: { streamId: written.auditStream.id }, payload: { url: `${receiver.url}/ingest` } }), 200)
    ok(await teams.create({ token, payload: { name: "After the move" } }), 201)
    const deadline = Date.now() + 60_000
    // A verified delivery of an event recorded now (the new team's), which 0.1.0 never sent.
    const delivered = () =>
      receiver.deliveries.some((delivery) =>
        delivery.verified && delivery.events.some((event) => event.action === "team.create" && !written.auditEvents.includes(event.id))
      )
    while (!delivered() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250))
    expect(delivered()).toBe(true)
  }, 90_000)
})
