/**
 * The start-up check of the encryption keys (platform/InstanceSecrets.ts), through the server's start: a server
 * without keys (DATABASE_URL and no ORGPLANE_ENCRYPTION_KEYS), or with keys that do not open its database's secrets
 * (another key, or a key of the same id with other bytes), refuses to start, naming the variable and `orgplane keys`,
 * and changes nothing: the right keys start it afterwards. The real process's exit is tested in the CLI's
 * Binary.test.ts.
 */
import { SqlClient } from "@effect/sql"
import { TestDatabase, TestServer } from "@orgplane/testkit"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as NodeCrypto from "node:crypto"
import { describe, expect, it } from "vitest"

const newKey = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`

/** A test database kept across servers. */
const sharedDatabase = async () => {
  const database = ManagedRuntime.make(TestDatabase.layer)
  const context = (await database.runtime()).context
  return {
    start: (options: TestServer.Options) => TestServer.start({ ...options, database: Layer.succeedContext(context) }),
    sql: <A, E>(use: (sql: SqlClient.SqlClient) => Effect.Effect<A, E, SqlClient.SqlClient>) =>
      database.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.provideService(use(sql), SqlClient.SqlClient, sql))),
    close: () => database.dispose()
  }
}

/** Why a start failed: its message (an Effect failure thrown by the runtime carries the error's own). */
const refusal = async (starting: Promise<TestServer.RunningServer>) => {
  const outcome = await starting.then(
    async (server) => {
      await server.close()
      return undefined
    },
    (error: unknown) => String(error instanceof Error ? error.message : error)
  )
  expect(outcome, "the server started").toBeDefined()
  return outcome!
}

const cursorKeyRows = (db: Awaited<ReturnType<typeof sharedDatabase>>) =>
  db.sql((sql) => sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets`)

describe("a server's encryption keys", { timeout: 120_000 }, () => {
  it("without any (DATABASE_URL, no ORGPLANE_ENCRYPTION_KEYS): refused at start, naming the variable and `orgplane keys`", async () => {
    const db = await sharedDatabase()
    try {
      // The database is the test's; `databaseUrl` only says the server runs on Postgres, where no key is generated.
      const message = await refusal(db.start({ databaseUrl: "postgres://orgplane@127.0.0.1:1/unused", encryptionKeys: "" }))
      expect(message).toContain("ORGPLANE_ENCRYPTION_KEYS is not set")
      expect(message).toContain("`orgplane keys generate`")
      expect(await cursorKeyRows(db)).toEqual([])
    } finally {
      await db.close()
    }
  })

  it("that do not open the database's secrets: refused at start with what is wrong, nothing changed; the right ones start it", async () => {
    const right = newKey("a")
    const db = await sharedDatabase()
    try {
      const first = await db.start({ encryptionKeys: right })
      await first.close()
      const [stored] = await cursorKeyRows(db)
      expect(stored!.ciphertext).toMatch(/^v2:a:/)

      const other = await refusal(db.start({ encryptionKeys: newKey("b") }))
      expect(other).toContain(`The database's secrets are encrypted with key "a", which ORGPLANE_ENCRYPTION_KEYS does not hold (the first of ORGPLANE_ENCRYPTION_KEYS is "b")`)
      expect(other).toContain("`orgplane keys rotate`")
      const sameId = await refusal(db.start({ encryptionKeys: newKey("a") }))
      expect(sameId).toContain(`The database's secrets do not decrypt with key "a" of ORGPLANE_ENCRYPTION_KEYS`)
      expect(sameId).toContain("`orgplane keys --help`")
      const keyless = await refusal(db.start({ databaseUrl: "postgres://orgplane@127.0.0.1:1/unused", encryptionKeys: "" }))
      expect(keyless).toContain(`ORGPLANE_ENCRYPTION_KEYS is not set, and the database's secrets are encrypted with key "a"`)

      expect(await cursorKeyRows(db)).toEqual([stored])
      // The new key first, the old one after it (a rotation under way): it starts.
      const rotating = await db.start({ encryptionKeys: `${newKey("b")},${right}` })
      await rotating.close()
      const again = await db.start({ encryptionKeys: right })
      await again.close()
    } finally {
      await db.close()
    }
  })
})
