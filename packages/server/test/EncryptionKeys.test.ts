/**
 * The start-up check of the encryption keys (platform/InstanceSecrets.ts, run by platform/StartupSecrets.ts), through
 * the storage's start as Server.ts composes it (test/support/SecretsStorage.ts), on a fresh database: a server without
 * keys (DATABASE_URL and no ORGPLANE_ENCRYPTION_KEYS), or with keys that do not open its database's secrets (another
 * key, or a key of the same id with other bytes), refuses to start, naming the variable and `orgplane keys`, and
 * changes nothing: the right keys start it afterwards. And the cursor key a 0.1.0 server stored opens here, and the one this server stores is sealed at the place 0.1.0
 * authenticates (its additional data for the cursor key), so a server of 0.1.0's format reads it.
 *
 * The cursor key's ciphertext below was sealed by 0.1.0's code (recorded from it, never re-recorded): a cursor key of
 * fixed bytes under a key of fixed bytes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as NodeCrypto from "node:crypto"
import { settingsConfig } from "../src/platform/Config.js"
import { additionalData, makeKeyring, parseKeys } from "../src/platform/Crypto.js"
import { EncryptionKeysUnusable, keysOrigin } from "../src/platform/InstanceSecrets.js"
import { bindInstance, SecretColumns } from "../src/platform/SecretColumns.js"
import { sharedDatabase } from "./support/SecretsStorage.js"

const newKey = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`

/** Why a start failed: its refusal's message; fails the test if it started, or failed otherwise. */
const refusal = <A, E>(exit: Exit.Exit<A, E>) => {
  expect(Exit.isFailure(exit), "the server started").toBe(true)
  const error = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.findErrorOption(exit.cause)) : undefined
  expect(error, String(Exit.isFailure(exit) ? exit.cause : "")).toBeInstanceOf(EncryptionKeysUnusable)
  return error instanceof EncryptionKeysUnusable ? error.message : ""
}

/** The Postgres a server runs on: no key is generated for it. The database is the test's. */
const unused = "postgres://orgplane@127.0.0.1:1/unused"

describe("a server's encryption keys", { timeout: 120_000 }, () => {
  it.live("without any (DATABASE_URL, no ORGPLANE_ENCRYPTION_KEYS): refused at start, naming the variable and `orgplane keys`", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* sharedDatabase
      const message = refusal(yield* db.start({ databaseUrl: unused, encryptionKeys: "" }))
      expect(message).toContain("ORGPLANE_ENCRYPTION_KEYS is not set")
      expect(message).toContain("`orgplane keys generate`")
      expect(yield* db.sql`SELECT ciphertext FROM instance_secrets`).toEqual([])
    })))

  it.live("that do not open the database's secrets: refused at start with what is wrong, nothing changed; the right ones start it", () =>
    Effect.scoped(Effect.gen(function*() {
      const right = newKey("a")
      const db = yield* sharedDatabase
      const first = yield* db.started({ encryptionKeys: right })
      const [stored] = yield* db.sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets`
      expect(stored!.ciphertext).toMatch(/^v2:a:/)

      const other = refusal(yield* db.start({ encryptionKeys: newKey("b") }))
      expect(other).toContain(
        `The database's secrets are encrypted with key "a", which ORGPLANE_ENCRYPTION_KEYS does not hold (the first of ORGPLANE_ENCRYPTION_KEYS is "b")`
      )
      expect(other).toContain("`orgplane keys rotate`")
      const sameId = refusal(yield* db.start({ encryptionKeys: newKey("a") }))
      expect(sameId).toContain(`The database's secrets do not decrypt with key "a" of ORGPLANE_ENCRYPTION_KEYS`)
      expect(sameId).toContain("`orgplane keys --help`")
      const keyless = refusal(yield* db.start({ databaseUrl: unused, encryptionKeys: "" }))
      expect(keyless).toContain(`ORGPLANE_ENCRYPTION_KEYS is not set, and the database's secrets are encrypted with key "a"`)

      expect(yield* db.sql`SELECT ciphertext FROM instance_secrets`).toEqual([stored])
      // The new key first, the old one after it (a rotation under way): it starts, with the same cursor key.
      const rotating = yield* db.started({ encryptionKeys: `${newKey("b")},${right}` })
      expect(rotating.cursorKey.equals(first.cursorKey)).toBe(true)
      const again = yield* db.started({ encryptionKeys: right })
      expect(again.cursorKey.equals(first.cursorKey)).toBe(true)
      expect(first.cursorKey).toHaveLength(32)
    })))

  it.live("an altered cursor key is refused as not a ciphertext of this server", () =>
    Effect.scoped(Effect.gen(function*() {
      const keys = newKey("a")
      const db = yield* sharedDatabase
      yield* db.started({ encryptionKeys: keys })
      yield* db.sql`UPDATE instance_secrets SET ciphertext = 'v3:a:x:y:z' WHERE name = 'cursor_key'`
      const message = refusal(yield* db.start({ encryptionKeys: keys }))
      expect(message).toContain("The database's cursor key (instance_secrets) is not a ciphertext this server reads (a): it was altered.")
    })))

  it.live("one keyring per start: the platform's Crypto opens the cursor key the check sealed (a memory database's ephemeral key too)", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* sharedDatabase
      // DATABASE_URL (when the tests run on Postgres) would leave no key: give one then.
      const started = yield* db.started({ dataDir: "memory", encryptionKeys: process.env["DATABASE_URL"] ? newKey("k") : undefined })
      const [stored] = yield* db.sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets`
      const opened = started.crypto.keyring.open(stored!.ciphertext, bindInstance(SecretColumns.cursorKey, "cursor_key"))
      expect(Result.isSuccess(opened) && Buffer.from(opened.success, "base64").equals(started.cursorKey)).toBe(true)
    })))

  it.live("two servers starting together on a new database agree on one cursor key", () =>
    Effect.scoped(Effect.gen(function*() {
      const keys = newKey("a")
      const db = yield* sharedDatabase
      const [one, two] = yield* Effect.all([db.started({ encryptionKeys: keys }), db.started({ encryptionKeys: keys })], { concurrency: 2 })
      expect(one!.cursorKey.equals(two!.cursorKey)).toBe(true)
      expect(yield* db.sql`SELECT name FROM instance_secrets`).toEqual([{ name: "cursor_key" }])
    })))

  it("names where the keys came from: the variable, or the embedded database's key file", () => {
    const read = (env: Record<string, string>) => Effect.runSync(Effect.orDie(settingsConfig.parse(ConfigProvider.fromEnv({ env }))))
    expect(keysOrigin(read({ ORGPLANE_DATA_DIR: "/srv/orgplane/data" }))).toBe(
      "the key file /srv/orgplane/encryption.key (ORGPLANE_ENCRYPTION_KEYS is not set)"
    )
    expect(keysOrigin(read({ ORGPLANE_DATA_DIR: "/srv/orgplane/data", ORGPLANE_ENCRYPTION_KEYS: newKey("a") }))).toBe("ORGPLANE_ENCRYPTION_KEYS")
    expect(keysOrigin(read({ ORGPLANE_DATA_DIR: "memory" }))).toBe("ORGPLANE_ENCRYPTION_KEYS")
    expect(keysOrigin(read({ DATABASE_URL: unused }))).toBe("ORGPLANE_ENCRYPTION_KEYS")
  })
})

describe("a server's encryption keys, with a database a 0.1.0 server keyed", { timeout: 120_000 }, () => {
  it.live("starts with the cursor key 0.1.0 sealed, and seals its own where 0.1.0 reads it", () =>
    Effect.scoped(Effect.gen(function*() {
      // Fixed bytes: the key 0.1.0 sealed the cursor key below with.
      const keys = `k1:${NodeCrypto.createHash("sha256").update("orgplane-encryption-keys-test/k1").digest("base64")}`
      const db = yield* sharedDatabase
      // A start makes the tables (and a cursor key of its own, replaced below by 0.1.0's).
      yield* db.started({ encryptionKeys: keys })
      const value = NodeCrypto.createHash("sha256").update("orgplane-encryption-keys-test/cursor key").digest()
      // `value`, sealed by 0.1.0 as its cursor key.
      const sealed = "v2:k1:CHg_qCIWFAJBc2gu:6JjCER8rNutAE-qsNoPc-Q:_WYiDVKKSzFufuThlbMdtngQxQrruc0rT5aAJmJiJDwYeSGpiVUAMQ4GRFA"
      yield* db.sql`UPDATE instance_secrets SET ciphertext = ${sealed} WHERE name = 'cursor_key'`
      expect((yield* db.started({ encryptionKeys: keys })).cursorKey.equals(value)).toBe(true)

      // The other way: a cursor key this server made is sealed at the place 0.1.0 authenticates, and opens.
      yield* db.sql`DELETE FROM instance_secrets`
      const made = yield* db.started({ encryptionKeys: keys })
      const [stored] = yield* db.sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets`
      const here = bindInstance(SecretColumns.cursorKey, "cursor_key")
      expect(additionalData(here).toString("base64")).toBe("WyJvcmdwbGFuZS1zZWNyZXQiLCJ2MiIsImluc3RhbmNlX3NlY3JldHMiLCJjaXBoZXJ0ZXh0IiwiIiwiY3Vyc29yX2tleSJd")
      expect(stored!.ciphertext).toMatch(/^v2:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/)
      const opened = makeKeyring(parseKeys(keys)).open(stored!.ciphertext, here)
      expect(Result.isSuccess(opened) && Buffer.from(opened.success, "base64").equals(made.cursorKey)).toBe(true)
    })))
})
