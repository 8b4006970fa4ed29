/**
 * platform/StoredSecrets.ts through the storage's start (test/support/SecretsStorage.ts) and on its own, on a fresh
 * database, without the areas that read secrets over HTTP (a suite client's secret, written into its row, stands for
 * every encrypted column; http/SecretsAtRest.test.ts reads them over HTTP): v1 ciphertexts
 * (as servers before 0.1.0 wrote them) are rewritten bound to their rows at start-up, and so is a cursor
 * key kept in clear, whose value stays; a v1 ciphertext whose key is not configured stays as it is and the server
 * still starts; the rotation re-encrypts every registered column with the newest key, in batches, leaves the
 * unreadable, and a second run finds nothing to do.
 *
 * The ciphertexts below were written by earlier releases' code (recorded from it, never re-recorded), on keys of
 * fixed bytes: v1 ones as servers before 0.1.0 wrote them, which this server upgrades, and a
 * v2 one of 0.1.0's, which it rotates; and the additional data 0.1.0 authenticated a secret's place with, which what
 * this server writes is still sealed at (so a server of 0.1.0's format reads it).
 */
import { describe, expect, it } from "@effect/vitest"
import { StoredCredentialUnreadable } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { migrations } from "../src/migrations/index.js"
import * as Config from "../src/platform/Config.js"
import { additionalData, makeKeyring, parseKeys } from "../src/platform/Crypto.js"
import { bind, bindInstance, SecretColumns } from "../src/platform/SecretColumns.js"
import * as StoredSecrets from "../src/platform/StoredSecrets.js"
import { sharedDatabase } from "./support/SecretsStorage.js"

const newKey = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`
/** A key of fixed bytes (the SHA-256 of its id): the one the earlier releases' ciphertexts below were sealed with. */
const fixedKey = (id: string) => `${id}:${NodeCrypto.createHash("sha256").update(`orgplane-stored-secrets-test/${id}`).digest("base64")}`
/** v1 ciphertexts, by key id and plaintext, as servers before 0.1.0 wrote them (before secrets were bound to their rows). */
const v1Ciphertexts: ReadonlyMap<string, string> = new Map([
  ["k1 sk-stored-secret-123", "v1:k1:_yB4Df4X11aHpxuz:Us4FkdSewiQk7d9G7xfYVg:oDqZ0skvSmnTBBttykqZcVG45M8"],
  ["k1 other", "v1:k1:yUagE7PufPAHynBG:Qj-cS1_OkDrKuhuZ_Qa52w:X8Np7eQ"],
  ["gone sk-stored-secret-123", "v1:gone:6Lm0zdluSrEqtJnS:tUuqk75Zg2ACQb3J2aqEuQ:UHOe7cnmneghh3KhInQTgefwKbs"]
])
/** The v1 ciphertext of `plaintext` an earlier server wrote with `fixedKey(keyId)`. */
const v1Of = (keyId: string, plaintext: string) => {
  const ciphertext = v1Ciphertexts.get(`${keyId} ${plaintext}`)
  if (ciphertext === undefined) throw new Error(`no v1 ciphertext of ${plaintext} with ${keyId}`)
  return ciphertext
}
const SECRET = "sk-stored-secret-123"
const column = SecretColumns.suiteClientSecret
const where = (organizationId: string, suite: string) => bind(column, organizationId, suite)

/** An organization and its suite clients, their secrets as given (the tables a started server made). */
const insertClients = (sql: SqlClient.SqlClient, organizationId: string, secrets: Record<string, string>) =>
  Effect.gen(function*() {
    yield* sql`INSERT INTO organizations (id, name, plan, created_at, updated_at) VALUES (${organizationId}, ${organizationId}, 'free', now(), now())`
    for (const [suite, ciphertext] of Object.entries(secrets)) {
      yield* sql`INSERT INTO suite_clients (organization_id, suite, client_id, client_secret_ciphertext, created_at, updated_at)
        VALUES (${organizationId}, ${suite}, 'client', ${ciphertext}, now(), now())`
    }
  })

const storedSecret = (sql: SqlClient.SqlClient, organizationId: string, suite: string) =>
  Effect.map(
    sql<{ readonly secret: string }>`SELECT client_secret_ciphertext AS secret FROM suite_clients WHERE organization_id = ${organizationId} AND suite = ${suite}`,
    (rows) => rows[0]!.secret
  )

describe("stored secrets", { timeout: 120_000 }, () => {
  it.live("v1 ciphertexts are refused, and rewritten bound to their rows when a server starts", () =>
    Effect.scoped(Effect.gen(function*() {
      const keys = fixedKey("k1")
      const db = yield* sharedDatabase
      const first = yield* db.started({ encryptionKeys: keys })
      // As servers before 0.1.0 wrote them, before the binding.
      const legacy = v1Of("k1", SECRET)
      yield* insertClients(db.sql, "org_a", { "suite-a": legacy, "suite-b": v1Of("k1", "other") })
      expect(yield* Effect.flip(first.crypto.decrypt(legacy, where("org_a", "suite-a")))).toBeInstanceOf(StoredCredentialUnreadable)

      const lines: Array<string> = []
      const logger = Logger.make(({ message }) => {
        lines.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
      })
      const second = yield* db.started({ encryptionKeys: keys }).pipe(Effect.provide(Logger.layer([logger])))
      const upgraded = yield* storedSecret(db.sql, "org_a", "suite-a")
      expect(upgraded.startsWith("v2:k1:")).toBe(true)
      expect(yield* second.crypto.decrypt(upgraded, where("org_a", "suite-a"))).toBe(SECRET)
      expect(yield* second.crypto.decrypt(yield* storedSecret(db.sql, "org_a", "suite-b"), where("org_a", "suite-b"))).toBe("other")
      expect(lines).toContain("Bound 2 stored secret(s) to their rows (v1 → v2 ciphertexts).")
      // Sealed at the place 0.1.0 authenticates (its additional data for this row), so a server of its format reads it.
      expect(additionalData(where("org_a", "suite-a")).toString("base64")).toBe(
        "WyJvcmdwbGFuZS1zZWNyZXQiLCJ2MiIsInN1aXRlX2NsaWVudHMiLCJjbGllbnRfc2VjcmV0X2NpcGhlcnRleHQiLCJvcmdfYSIsInN1aXRlLWEiXQ=="
      )
      expect(makeKeyring(parseKeys(keys)).open(upgraded, where("org_a", "suite-a"))).toEqual(Result.succeed(SECRET))
      // Nothing left to upgrade: a second pass rewrites nothing.
      const again = yield* StoredSecrets.upgradeV1(makeKeyring(parseKeys(keys))).pipe(Effect.provideService(SqlClient.SqlClient, db.sql))
      expect(again.rewritten).toBe(0)
      expect(again.columns).toHaveLength(Object.keys(SecretColumns).length)
    })))

  it.live("a cursor key kept in clear (before it was encrypted) is encrypted at start-up, its clear copy deleted; its value stays", () =>
    Effect.scoped(Effect.gen(function*() {
      const keys = newKey("k1")
      const keyring = makeKeyring(parseKeys(keys))
      const binding = bindInstance(SecretColumns.cursorKey, "cursor_key")
      const db = yield* sharedDatabase
      const first = yield* db.started({ encryptionKeys: keys })
      // The database as a server before the encryption left it: the key in clear in instance_settings.
      const [row] = yield* db.sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets WHERE name = 'cursor_key'`
      const clear = Result.getOrThrow(keyring.open(row!.ciphertext, binding))
      yield* db.sql`DELETE FROM instance_secrets`
      yield* db.sql`INSERT INTO instance_settings (key, value) VALUES ('cursor_key', ${clear})`

      const second = yield* db.started({ encryptionKeys: keys })
      expect(yield* db.sql`SELECT value FROM instance_settings WHERE key = 'cursor_key'`).toEqual([])
      const [encrypted] = yield* db.sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets WHERE name = 'cursor_key'`
      expect(encrypted!.ciphertext).toMatch(/^v2:k1:/)
      expect(encrypted!.ciphertext).not.toContain(clear)
      expect(Result.getOrThrow(keyring.open(encrypted!.ciphertext, binding))).toBe(clear)
      // The same key: cursors made before the upgrade stay valid.
      expect(second.cursorKey.equals(first.cursorKey)).toBe(true)
    })))

  it.live("a v1 ciphertext whose key is not configured stays as it is, and the server still starts", () =>
    Effect.scoped(Effect.gen(function*() {
      const keys = newKey("k1")
      const db = yield* sharedDatabase
      yield* db.started({ encryptionKeys: keys })
      const legacy = v1Of("gone", SECRET)
      yield* insertClients(db.sql, "org_a", { "suite-a": legacy })
      const started = yield* db.started({ encryptionKeys: keys })
      expect(yield* storedSecret(db.sql, "org_a", "suite-a")).toBe(legacy)
      expect(yield* Effect.flip(started.crypto.decrypt(legacy, where("org_a", "suite-a")))).toBeInstanceOf(StoredCredentialUnreadable)
      const report = yield* StoredSecrets.upgradeV1(makeKeyring(parseKeys(keys))).pipe(Effect.provideService(SqlClient.SqlClient, db.sql))
      expect(report).toMatchObject({ rewritten: 0, unreadable: 1, changedMeanwhile: 0 })
    })))

  it.live("rotation re-encrypts every secret with the newest key, in batches, leaves the unreadable, and is idempotent", () =>
    Effect.scoped(Effect.gen(function*() {
      const old = fixedKey("old")
      const fresh = newKey("new")
      const db = yield* sharedDatabase
      const first = yield* db.started({ encryptionKeys: old })
      const seal = (organizationId: string, suite: string) => first.crypto.encrypt(SECRET, where(organizationId, suite))
      yield* insertClients(db.sql, "org_a", { "suite-a": yield* seal("org_a", "suite-a"), "suite-b": yield* seal("org_a", "suite-b") })
      // Written by a 0.1.0 server (with `old`, at org_b's suite-a): rotated alike.
      const by010 = "v2:old:Mq-K9-eE3wGgs52m:Ep96lFCUVe7IY2-yBYVkgg:y6VUAJSXDCTO82lOWaPx8xImybI"
      // Copied from another organization's row: it does not open here, and is left.
      const copied = yield* seal("org_a", "suite-a")
      yield* insertClients(db.sql, "org_b", { "suite-a": by010, "suite-b": copied })

      const keyring = makeKeyring(parseKeys(`${fresh},${old}`))
      const rotate = StoredSecrets.rotate(keyring, { batchSize: 2 }).pipe(Effect.provideService(SqlClient.SqlClient, db.sql))
      const report = yield* rotate
      const clients = report.columns.find((entry) => entry.table === "suite_clients" && entry.column === "client_secret_ciphertext")
      expect(clients).toMatchObject({ rewritten: 3, unreadable: 1, changedMeanwhile: 0 })
      // The instance's cursor key is rotated with them.
      expect(report.columns.find((entry) => entry.table === "instance_secrets")).toMatchObject({ rewritten: 1, unreadable: 0 })
      expect(report.rewritten).toBe(4)
      for (const [organizationId, suite] of [["org_a", "suite-a"], ["org_a", "suite-b"], ["org_b", "suite-a"]] as const) {
        const rotated = yield* storedSecret(db.sql, organizationId, suite)
        expect(rotated.startsWith("v2:new:")).toBe(true)
        expect(Result.getOrThrow(keyring.open(rotated, where(organizationId, suite)))).toBe(SECRET)
      }
      expect(yield* storedSecret(db.sql, "org_b", "suite-b")).toBe(copied)

      expect(yield* rotate).toMatchObject({ rewritten: 0, unreadable: 1 })

      // The old key can go: the new one alone starts the server and reads every rotated secret.
      const after = yield* db.started({ encryptionKeys: fresh })
      expect(after.cursorKey.equals(first.cursorKey)).toBe(true)
      expect(yield* after.crypto.decrypt(yield* storedSecret(db.sql, "org_b", "suite-a"), where("org_b", "suite-a"))).toBe(SECRET)
    })))

  it.live("the local rotation refuses a database not migrated to this version, and runs without a server on one that is", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* sharedDatabase
      const provide = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(effect, SqlClient.SqlClient, db.sql)
      const latest = Math.max(...migrations.map((migration) => migration.id))
      const refused = yield* Effect.flip(provide(StoredSecrets.requireMigrated(latest, "rotate")))
      expect(refused).toBeInstanceOf(StoredSecrets.DatabaseNotMigrated)
      expect(refused.message).toBe(
        `The database is not migrated to this version (migration 0 of ${latest}): start \`orgplane serve\` of this version once, then rotate.`
      )
      const k1 = newKey("k1")
      yield* db.started({ encryptionKeys: k1 })
      yield* provide(StoredSecrets.requireMigrated(latest, "rotate"))
      expect(Exit.isFailure(yield* Effect.exit(provide(StoredSecrets.requireMigrated(latest + 1, "rotate"))))).toBe(true)

      // `orgplane keys rotate` with the configured keys: none is refused; the new one first rotates to it.
      const configured = (options: Config.Options) =>
        provide(StoredSecrets.rotateConfigured({ latestMigration: latest }).pipe(Effect.provide(Config.layer(options))))
      const keyless = yield* Effect.flip(configured({ databaseUrl: "postgres://orgplane@127.0.0.1:1/unused", encryptionKeys: "" }))
      expect(keyless).toEqual(new StoredSecrets.NoEncryptionKey({ message: "No encryption key is configured: set ORGPLANE_ENCRYPTION_KEYS (the new key first)." }))
      const rotated = yield* configured({ encryptionKeys: `${newKey("k2")},${k1}` })
      expect(rotated).toMatchObject({ keyId: "k2", rewritten: 1, unreadable: 0 })
    })))
})
