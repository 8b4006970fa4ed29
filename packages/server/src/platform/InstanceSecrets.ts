/**
 * The instance's own secrets, and the start-up check of the encryption keys they give: the cursor key (which signs
 * list cursors and, through keys derived from it, OAuth states) is stored encrypted in `instance_secrets`, bound to
 * its row like every other secret (SecretColumns.ts), and rotated with them (`orgplane keys rotate`). Every start
 * reads it: a server without its encryption keys, or with keys that do not open what the database holds, stops
 * there with a message naming ORGPLANE_ENCRYPTION_KEYS and `orgplane keys`, before it serves anything, rather than
 * fail at the first request that needs a secret. The refusals' words are held by test/EncryptionKeys.test.ts, and
 * the stored cursor key keeps its form: a database a 0.1.0 server keyed starts with the same keys, and its cursors
 * stay valid.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as SqlClient from "effect/sql/SqlClient"
import * as NodeCrypto from "node:crypto"
import { ServerConfig } from "./Config.js"
import { Crypto, keyFileOf, type Keyring, keyIdOf, type KeySettings, type OpenFailure } from "./Crypto.js"
import { CursorKey } from "./Keyset.js"
import { bindInstance, SecretColumns } from "./SecretColumns.js"

/** The start-up refusal: the keys are missing, or they do not open the database's secrets. Nothing was changed. */
export class EncryptionKeysUnusable extends Data.TaggedError("EncryptionKeysUnusable")<{ readonly message: string }> {}

const CURSOR_KEY = "cursor_key"

/** Where the configured keys come from, in words: the variable, or the embedded database's key file. */
export const keysOrigin = (settings: KeySettings): string =>
  settings.encryptionKeys !== undefined
    ? "ORGPLANE_ENCRYPTION_KEYS"
    : settings.databaseUrl === undefined && settings.dataDir !== "memory"
    ? `the key file ${keyFileOf(settings.dataDir)} (ORGPLANE_ENCRYPTION_KEYS is not set)`
    : "ORGPLANE_ENCRYPTION_KEYS"

const HELP = "`orgplane keys --help` says how keys are made and rotated"

/** Why the stored cursor key does not open, as the operator needs to read it. */
const refusal = (failure: OpenFailure, keyring: Keyring, origin: string, ciphertext: string) => {
  const configured = keyring.current === undefined ? "" : ` (the first of ${origin} is "${keyring.current.id}")`
  switch (failure._tag) {
    case "UnknownKey":
      return `The database's secrets are encrypted with key "${failure.keyId}", which ${origin} does not hold${configured}: start with the keys they were written with. While rotating, list the new key first and the old one after it (ORGPLANE_ENCRYPTION_KEYS=new:…,${failure.keyId}:…) until \`orgplane keys rotate\` has re-encrypted everything; ${HELP}. Nothing was changed.`
    case "NotAuthentic":
      return `The database's secrets do not decrypt with key "${failure.keyId}" of ${origin}: a key of that id with other bytes, not the one they were written with. Start with the key they were written with (ORGPLANE_ENCRYPTION_KEYS); ${HELP}. Nothing was changed.`
    case "Malformed":
    case "OldFormat":
      return `The database's cursor key (instance_secrets) is not a ciphertext this server reads (${keyIdOf(ciphertext) ?? "no key id"}): it was altered. ${HELP}. Nothing was changed.`
  }
}

/**
 * The cursor key: read and decrypted, or on the first start made (or, on a database written before it was encrypted,
 * taken from `instance_settings`), encrypted with the current key and stored, its clear copy deleted. Fails with
 * `EncryptionKeysUnusable` when no key is configured or the stored one does not decrypt. Two servers starting
 * together agree: the first insert wins and both read it back.
 */
export const loadCursorKey = Effect.fn("InstanceSecrets.loadCursorKey")(function*(keyring: Keyring, origin: string) {
  const sql = yield* SqlClient.SqlClient
  const binding = bindInstance(SecretColumns.cursorKey, CURSOR_KEY)
  const stored = sql<{ readonly ciphertext: string }>`SELECT ciphertext FROM instance_secrets WHERE name = ${CURSOR_KEY}`.pipe(
    Effect.map(([row]) => row?.ciphertext)
  )
  let ciphertext = yield* stored
  if (keyring.current === undefined) {
    return yield* new EncryptionKeysUnusable({
      message: ciphertext === undefined
        ? "ORGPLANE_ENCRYPTION_KEYS is not set: the server keeps its secrets encrypted and does not start without a key. Set it to kid:<32 random bytes in base64> (`orgplane keys generate` prints one; keep it safe: the secrets are lost without it)."
        : `ORGPLANE_ENCRYPTION_KEYS is not set, and the database's secrets are encrypted with key "${keyIdOf(ciphertext) ?? "?"}": set it to the keys the server was started with before; ${HELP}.`
    })
  }
  if (ciphertext === undefined) {
    yield* sql.withTransaction(Effect.gen(function*() {
      const [clear] = yield* sql<{ readonly value: string }>`SELECT value FROM instance_settings WHERE key = ${CURSOR_KEY}`
      const value = clear?.value ?? NodeCrypto.randomBytes(32).toString("base64")
      // The key was just checked to be there: sealing cannot fail.
      const sealed = yield* Effect.orDie(Effect.fromResult(keyring.seal(value, binding)))
      yield* sql`INSERT INTO instance_secrets (name, ciphertext) VALUES (${CURSOR_KEY}, ${sealed}) ON CONFLICT (name) DO NOTHING`
      yield* sql`DELETE FROM instance_settings WHERE key = ${CURSOR_KEY}`
    }))
    ciphertext = yield* stored
  }
  const found = ciphertext ?? ""
  const opened = keyring.open(found, binding)
  if (Result.isFailure(opened)) return yield* new EncryptionKeysUnusable({ message: refusal(opened.failure, keyring, origin, found) })
  return Buffer.from(opened.success, "base64")
})

/**
 * The cursor key of the configured database, read at start-up with the configured keys: the start-up check of the
 * keys. A database failure is a defect (the migrations just ran on it); the keys' refusal is a typed failure.
 */
export const cursorKeyLayer: Layer.Layer<CursorKey, EncryptionKeysUnusable, Crypto | ServerConfig | SqlClient.SqlClient> = Layer.effect(
  CursorKey,
  Effect.gen(function*() {
    const crypto = yield* Crypto
    const settings = yield* ServerConfig
    return yield* loadCursorKey(crypto.keyring, keysOrigin(settings)).pipe(Effect.catchTag("SqlError", Effect.die))
  })
)
