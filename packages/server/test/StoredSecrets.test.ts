/**
 * Stored secrets through the public surface: a ciphertext copied to another organization's row does not decrypt
 * there (a declared 500 `stored_credential_unreadable`, logged once with the key problem); v1 ciphertexts are
 * rewritten bound to their rows at start-up, and so is a cursor key kept in clear; the rotation re-encrypts every
 * registered column with the newest key, in batches, and a second run finds nothing to do. MCP API-key connections stand for every encrypted column: a
 * change of URL makes the server decrypt the stored key for the live check.
 */
import { SqlClient } from "@effect/sql"
import { FakeMcp, Http, TestDatabase, TestServer } from "@orgplane/testkit"
import { Effect, Either, Layer, Logger, ManagedRuntime } from "effect"
import * as NodeCrypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeKeyring, parseKeys, sealV1 } from "../src/platform/Crypto.js"
import { bindInstance, SecretColumns } from "../src/platform/SecretColumns.js"
import * as StoredSecrets from "../src/platform/StoredSecrets.js"

const newKey = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`
const API_KEY = "sk-stored-secret-123"

let first: FakeMcp.FakeMcp
let second: FakeMcp.FakeMcp

beforeAll(async () => {
  first = await FakeMcp.start({ auth: { apiKey: API_KEY } })
  second = await FakeMcp.start({ auth: { apiKey: API_KEY } })
})
afterAll(async () => {
  await first?.close()
  await second?.close()
})

/** A test database the test keeps, with servers started and stopped on it. */
const sharedDatabase = async () => {
  const database = ManagedRuntime.make(TestDatabase.layer)
  const context = (await database.runtime()).context
  return {
    start: (options: TestServer.Options) =>
      TestServer.start({ outboundAllowPrivate: true, ...options, database: Layer.succeedContext(context) }),
    sql: <A, E>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, SqlClient.SqlClient>) =>
      database.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.provideService(use(sql), SqlClient.SqlClient, sql))),
    close: () => database.dispose()
  }
}

const createKeyed = async (url: string, token: string, name: string) =>
  Http.expectStatus<{ item: { id: string } }>(
    "creating a keyed connection",
    await Http.request(url, "POST", "/v1/mcp-connections", { token, body: { name, url: first.url, authType: "apikey", apiKey: API_KEY } }),
    201
  ).item.id

/** Moves the connection to the other fake: the server decrypts the stored key to check the new URL. */
const moveUrl = (url: string, token: string, id: string, to: string) =>
  Http.request(url, "PATCH", `/v1/mcp-connections/${id}`, { token, body: { url: to } })

const storedKey = (db: Awaited<ReturnType<typeof sharedDatabase>>, organizationId: string, id: string) =>
  db.sql((sql) =>
    Effect.map(
      sql<{ apiKeyCiphertext: string }>`SELECT api_key_ciphertext FROM mcp_connections WHERE organization_id = ${organizationId} AND id = ${id}`,
      (rows) => rows[0]!.apiKeyCiphertext
    )
  )

describe("stored secrets", { timeout: 120_000 }, () => {
  it("a credential copied onto another organization's row does not decrypt there: 500 stored_credential_unreadable, logged once", async () => {
    const db = await sharedDatabase()
    const lines: Array<{ level: string; message: string }> = []
    const logger = Logger.make(({ logLevel, message }) => {
      lines.push({ level: logLevel.label, message: Array.isArray(message) ? message.map(String).join(" ") : String(message) })
    })
    const server = await db.start({ logger })
    try {
      const a = await Http.staffed(server.url, "Org A")
      const b = await Http.staffed(server.url, "Org B")
      const ofA = await createKeyed(server.url, a.owner.token, "A's key")
      const ofB = await createKeyed(server.url, b.owner.token, "B's key")
      const copied = await storedKey(db, a.organizationId, ofA)
      await db.sql((sql) => sql`UPDATE mcp_connections SET api_key_ciphertext = ${copied} WHERE organization_id = ${b.organizationId} AND id = ${ofB}`)

      lines.length = 0
      const refused = await moveUrl(server.url, b.owner.token, ofB, second.url)
      expect(refused.status).toBe(500)
      const body = refused.body
      expect(body).toEqual({ error: "stored_credential_unreadable", message: expect.stringContaining("MCP connection's API key") })
      expect(JSON.stringify(body)).not.toContain(API_KEY)
      const problems = lines.filter((line) => line.level === "ERROR")
      expect(problems).toHaveLength(1)
      expect(problems[0]!.message).toContain("mcp_connections.api_key_ciphertext")
      expect(problems[0]!.message).toContain("moved from another row")
      expect(JSON.stringify(lines)).not.toContain(API_KEY)

      // In its own row the same ciphertext still works.
      expect((await moveUrl(server.url, a.owner.token, ofA, second.url)).status).toBe(200)
      // Setting the key again repairs B's connection.
      const rekeyed = await Http.request(server.url, "PATCH", `/v1/mcp-connections/${ofB}`, { token: b.owner.token, body: { apiKey: API_KEY } })
      expect(rekeyed.status).toBe(200)
      expect((await moveUrl(server.url, b.owner.token, ofB, second.url)).status).toBe(200)
    } finally {
      await server.close()
      await db.close()
    }
  })

  it("v1 ciphertexts are refused, and rewritten bound to their rows when a server starts", async () => {
    const keys = newKey("k1")
    const db = await sharedDatabase()
    let server = await db.start({ encryptionKeys: keys })
    try {
      const org = await Http.staffed(server.url)
      const id = await createKeyed(server.url, org.owner.token, "Legacy")
      const legacy = sealV1(parseKeys(keys)[0]!, API_KEY)
      await db.sql((sql) => sql`UPDATE mcp_connections SET api_key_ciphertext = ${legacy} WHERE organization_id = ${org.organizationId} AND id = ${id}`)
      expect((await moveUrl(server.url, org.owner.token, id, second.url)).status).toBe(500)
      await server.close()

      server = await db.start({ encryptionKeys: keys })
      const upgraded = await storedKey(db, org.organizationId, id)
      expect(upgraded.startsWith("v2:k1:")).toBe(true)
      expect((await moveUrl(server.url, org.owner.token, id, second.url)).status).toBe(200)
      // Nothing left to upgrade: a second pass rewrites nothing.
      const again = await db.sql(() => StoredSecrets.upgradeV1(makeKeyring(parseKeys(keys))))
      expect(again.rewritten).toBe(0)
    } finally {
      await server.close()
      await db.close()
    }
  })

  it("a cursor key kept in clear (before it was encrypted) is encrypted at start-up, its clear copy deleted; its cursors still work", async () => {
    const keys = newKey("k1")
    const keyring = makeKeyring(parseKeys(keys))
    const binding = bindInstance(SecretColumns.cursorKey, "cursor_key")
    const db = await sharedDatabase()
    let server = await db.start({ encryptionKeys: keys })
    try {
      const org = await Http.staffed(server.url)
      const first = Http.expectStatus<any>("a page", await Http.request(server.url, "GET", "/v1/members?limit=1", { token: org.owner.token }), 200)
      expect(first.nextCursor).not.toBeNull()
      await server.close()
      // The database as a server before the encryption left it: the key in clear in instance_settings.
      const clear = await db.sql((sql) =>
        Effect.gen(function*() {
          const [row] = yield* sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets WHERE name = 'cursor_key'`
          const value = Either.getOrThrow(keyring.open(row!.ciphertext, binding))
          yield* sql`DELETE FROM instance_secrets`
          yield* sql`INSERT INTO instance_settings (key, value) VALUES ('cursor_key', ${value})`
          return value
        })
      )

      server = await db.start({ encryptionKeys: keys })
      const stored = await db.sql((sql) =>
        Effect.all({
          clear: sql<{ readonly value: string }>`SELECT value FROM instance_settings WHERE key = 'cursor_key'`,
          encrypted: sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets WHERE name = 'cursor_key'`
        })
      )
      expect(stored.clear).toEqual([])
      expect(stored.encrypted[0]!.ciphertext).toMatch(/^v2:k1:/)
      expect(stored.encrypted[0]!.ciphertext).not.toContain(clear)
      expect(Either.getOrThrow(keyring.open(stored.encrypted[0]!.ciphertext, binding))).toBe(clear)
      // The same key: a cursor made before the upgrade reads the next page.
      const next = await Http.request(server.url, "GET", `/v1/members?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`, { token: org.owner.token })
      expect(next.status, next.text).toBe(200)
      expect(next.body.items[0].id).not.toBe(first.items[0].id)
    } finally {
      await server.close()
      await db.close()
    }
  })

  it("a v1 ciphertext whose key is not configured stays as it is, and the server still starts", async () => {
    const gone = newKey("gone")
    const db = await sharedDatabase()
    let server = await db.start({})
    try {
      const org = await Http.staffed(server.url)
      const id = await createKeyed(server.url, org.owner.token, "Orphan")
      const legacy = sealV1(parseKeys(gone)[0]!, API_KEY)
      await db.sql((sql) => sql`UPDATE mcp_connections SET api_key_ciphertext = ${legacy} WHERE organization_id = ${org.organizationId} AND id = ${id}`)
      await server.close()
      server = await db.start({})
      expect(await storedKey(db, org.organizationId, id)).toBe(legacy)
      expect((await moveUrl(server.url, org.owner.token, id, second.url)).status).toBe(500)
    } finally {
      await server.close()
      await db.close()
    }
  })

  it("rotation re-encrypts every secret with the newest key, in batches, leaves the unreadable, and is idempotent", async () => {
    const old = newKey("old")
    const fresh = newKey("new")
    const db = await sharedDatabase()
    let server = await db.start({ encryptionKeys: old })
    try {
      const org = await Http.staffed(server.url)
      const ids = [
        await createKeyed(server.url, org.owner.token, "One"),
        await createKeyed(server.url, org.owner.token, "Two"),
        await createKeyed(server.url, org.owner.token, "Three")
      ]
      const other = await Http.staffed(server.url, "Other")
      const moved = await createKeyed(server.url, other.owner.token, "Moved")
      const copied = await storedKey(db, org.organizationId, ids[0]!)
      await db.sql((sql) => sql`UPDATE mcp_connections SET api_key_ciphertext = ${copied} WHERE organization_id = ${other.organizationId} AND id = ${moved}`)
      await server.close()

      const keyring = makeKeyring(parseKeys(`${fresh},${old}`))
      const report = await db.sql(() => StoredSecrets.rotate(keyring, { batchSize: 2 }))
      const keyed = report.columns.find((column) => column.table === "mcp_connections" && column.column === "api_key_ciphertext")!
      expect(keyed).toMatchObject({ rewritten: 3, unreadable: 1, changedMeanwhile: 0 })
      // The instance's cursor key is rotated with them.
      expect(report.columns.find((column) => column.table === "instance_secrets")).toMatchObject({ rewritten: 1, unreadable: 0 })
      expect(report.rewritten).toBe(4)
      for (const id of ids) expect((await storedKey(db, org.organizationId, id)).startsWith("v2:new:")).toBe(true)
      expect(await storedKey(db, other.organizationId, moved)).toBe(copied)

      const again = await db.sql(() => StoredSecrets.rotate(keyring, { batchSize: 2 }))
      expect(again).toMatchObject({ rewritten: 0, unreadable: 1 })

      // The old key can go: the new one alone reads every rotated secret.
      server = await db.start({ encryptionKeys: fresh })
      for (const id of ids) expect((await moveUrl(server.url, org.owner.token, id, second.url)).status).toBe(200)
    } finally {
      await server.close()
      await db.close()
    }
  })
})
