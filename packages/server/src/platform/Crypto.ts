/**
 * Secrets: random tokens and their hashes (what we store instead of session tokens, API keys and claim tokens),
 * password hashing with scrypt, AES-256-GCM encryption of third-party credentials at rest (bound to their row) with
 * rotatable keys, and HMAC-SHA256 signatures of what the server hands out and takes back (cursors, OAuth states).
 *
 * The stored forms (ciphertexts, password hashes, token hashes, signatures) are fixed byte for byte: what 0.1.0
 * wrote opens here, and the other way round (test/Crypto.test.ts holds them to each other).
 */
import { StoredCredentialUnreadable } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { promisify } from "node:util"
import { ServerConfig, type ServerSettings } from "./Config.js"
import type { Binding } from "./SecretColumns.js"

const scrypt: (
  password: NodeCrypto.BinaryLike,
  salt: NodeCrypto.BinaryLike,
  keylen: number,
  options: NodeCrypto.ScryptOptions
) => Promise<Buffer> = promisify(NodeCrypto.scrypt)

export interface EncryptionKey {
  readonly id: string
  readonly key: Buffer
}

/**
 * A secret that cannot be encrypted (no key configured) or decrypted (unknown key, tampered or truncated text):
 * a typed failure, so the caller decides what it means (say, a stored credential to reconnect), not a crash.
 */
export class CryptoError extends Data.TaggedError("CryptoError")<{ readonly message: string; readonly cause?: unknown }> {}

/** A configuration mistake in the keys themselves, found at start-up. */
export class KeyConfigurationError extends Error {
  readonly _tag = "KeyConfigurationError"
}

/** Parses `kid:base64key[,kid:base64key...]`; every key must be 32 bytes. */
export const parseKeys = (value: string): ReadonlyArray<EncryptionKey> =>
  value.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "").map((entry) => {
    const colon = entry.indexOf(":")
    if (colon <= 0) throw new KeyConfigurationError("ORGPLANE_ENCRYPTION_KEYS entries must look like kid:base64key")
    const key = Buffer.from(entry.slice(colon + 1), "base64")
    if (key.length !== 32) throw new KeyConfigurationError(`Encryption key ${entry.slice(0, colon)} must be 32 bytes`)
    return { id: entry.slice(0, colon), key }
  })

const hmac = (key: Buffer, message: string) => NodeCrypto.createHmac("sha256", key).update(message).digest()

/** A key for one purpose, derived from `key`: a signature made for one purpose is refused by every other. */
export const deriveKey = (key: Buffer, purpose: string): Buffer => hmac(key, purpose)

/**
 * An HMAC-SHA256 fed in parts, for a message too large to hold at once (a dump, as it is written or read): `update`
 * with each part in order, then one `signature` or `verifies`, after which it takes no more.
 */
export interface Signer {
  readonly update: (part: string | Uint8Array) => Signer
  /** The signature of what was fed: its first `bytes` bytes (all 32 by default), in base64url. */
  readonly signature: (bytes?: number) => string
  /** Whether `signature` is the signature of what was fed, compared in constant time. */
  readonly verifies: (signature: string, bytes?: number) => boolean
}

export const signer = (key: Buffer): Signer => {
  const mac = NodeCrypto.createHmac("sha256", key)
  let digest: Buffer | undefined
  const final = (bytes: number) => (digest ??= mac.digest()).subarray(0, bytes)
  const self: Signer = {
    update: (part) => (mac.update(part), self),
    signature: (bytes = 32) => final(bytes).toString("base64url"),
    verifies: (signature, bytes = 32) => {
      const expected = final(bytes)
      const given = Buffer.from(signature, "base64url")
      return given.length === expected.length && NodeCrypto.timingSafeEqual(given, expected)
    }
  }
  return self
}

/** The HMAC-SHA256 of `message`, its first `bytes` bytes (all 32 by default), in base64url. */
export const sign = (key: Buffer, message: string, bytes = 32): string => signer(key).update(message).signature(bytes)

/** Whether `signature` is `sign(key, message, bytes)`, compared in constant time. */
export const verifySignature = (key: Buffer, message: string, signature: string, bytes = 32): boolean =>
  signer(key).update(message).verifies(signature, bytes)

/**
 * The stored form of an encrypted secret, `v2:<key id>:<iv>:<tag>:<ciphertext>` (base64url parts): AES-256-GCM whose
 * additional authenticated data is the secret's place (`SecretColumns.ts`: table, column, organization, row), so a
 * ciphertext copied to another column, row or organization fails to decrypt like a tampered one. `v1` (no
 * additional data) was written before 0.1.0's binding; the start-up upgrade (StoredSecrets.ts) rewrites it as v2 and
 * `decrypt` refuses it.
 */
export const FORMAT = "v2"

/** What a v2 ciphertext authenticates besides itself: unambiguous (a JSON array), versioned with the format. */
export const additionalData = (binding: Binding): Buffer =>
  Buffer.from(JSON.stringify(["orgplane-secret", FORMAT, binding.column.table, binding.column.column, binding.organizationId, ...binding.row]), "utf8")

/** The key id a stored ciphertext names (its second part), if it has one. */
export const keyIdOf = (ciphertext: string): string | undefined => ciphertext.split(":")[1]

/** Why a stored ciphertext cannot be opened, in words for the log (never the secret). */
export type OpenFailure =
  | { readonly _tag: "UnknownKey"; readonly keyId: string }
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "OldFormat" }
  | { readonly _tag: "NotAuthentic"; readonly keyId: string }

const describeFailure = (failure: OpenFailure) => {
  switch (failure._tag) {
    case "UnknownKey":
      return `it was encrypted with key "${failure.keyId}", which ORGPLANE_ENCRYPTION_KEYS does not list`
    case "Malformed":
      return "it is not a ciphertext of this server"
    case "OldFormat":
      return "it is a v1 ciphertext (not bound to its row) that the start-up upgrade could not rewrite"
    case "NotAuthentic":
      return `it does not authenticate with key "${failure.keyId}" at this place: it was altered, or moved from another row, column or organization`
  }
}

const sealWith = (key: EncryptionKey, plaintext: string, aad: Buffer | undefined, version: string) => {
  const iv = NodeCrypto.randomBytes(12)
  const cipher = NodeCrypto.createCipheriv("aes-256-gcm", key.key, iv)
  if (aad !== undefined) cipher.setAAD(aad)
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
  return [version, key.id, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(":")
}

const openWith = (
  keys: ReadonlyMap<string, Buffer>,
  ciphertext: string,
  version: string,
  aad: Buffer | undefined
): Result.Result<string, OpenFailure> => {
  const parts = ciphertext.split(":")
  const [given, kid, iv, tag, body] = parts
  if (parts.length !== 5 || kid === undefined || iv === undefined || tag === undefined || body === undefined) {
    return Result.fail({ _tag: "Malformed" })
  }
  if (given !== version) return Result.fail(given === "v1" ? { _tag: "OldFormat" } : { _tag: "Malformed" })
  const key = keys.get(kid)
  if (key === undefined) return Result.fail({ _tag: "UnknownKey", keyId: kid })
  try {
    const decipher = NodeCrypto.createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
    if (aad !== undefined) decipher.setAAD(aad)
    decipher.setAuthTag(Buffer.from(tag, "base64url"))
    return Result.succeed(Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8"))
  } catch {
    return Result.fail({ _tag: "NotAuthentic", keyId: kid })
  }
}

/** The keys as a value: the first encrypts, all decrypt. What the service, the upgrade and the rotation share. */
export interface Keyring {
  /** The key new ciphertexts are written with, if any is configured. */
  readonly current: EncryptionKey | undefined
  /** Encrypts `plaintext` bound to `binding` with the current key. */
  readonly seal: (plaintext: string, binding: Binding) => Result.Result<string, CryptoError>
  /** Decrypts a v2 ciphertext at `binding`. */
  readonly open: (ciphertext: string, binding: Binding) => Result.Result<string, OpenFailure>
  /** Decrypts a v1 ciphertext (unbound): only the start-up upgrade does, to rewrite it as v2. */
  readonly openV1: (ciphertext: string) => Result.Result<string, OpenFailure>
  /** True when the ciphertext was not written as v2 with the current key: re-encrypt it. */
  readonly needsRotation: (ciphertext: string) => boolean
}

export const makeKeyring = (keys: ReadonlyArray<EncryptionKey>): Keyring => {
  const [current] = keys
  const byId = new Map(keys.map((key) => [key.id, key.key]))
  return {
    current,
    seal: (plaintext, binding) =>
      current === undefined
        ? Result.fail(new CryptoError({ message: "No encryption key: set ORGPLANE_ENCRYPTION_KEYS" }))
        : Result.succeed(sealWith(current, plaintext, additionalData(binding), FORMAT)),
    open: (ciphertext, binding) => openWith(byId, ciphertext, FORMAT, additionalData(binding)),
    openV1: (ciphertext) => openWith(byId, ciphertext, "v1", undefined),
    needsRotation: (ciphertext) => !ciphertext.startsWith(`${FORMAT}:`) || keyIdOf(ciphertext) !== current?.id
  }
}

/** A v1 ciphertext, as servers before the binding wrote them: for tests of the upgrade only. */
export const sealV1 = (key: EncryptionKey, plaintext: string): string => sealWith(key, plaintext, undefined, "v1")

/**
 * The answer for a stored secret that does not decrypt, after one error line in the log naming its place and the
 * key problem (never the secret): what `decrypt` fails with, declared by the operations that read secrets.
 */
export const unreadable = (binding: Binding, failure: OpenFailure): Effect.Effect<never, StoredCredentialUnreadable> =>
  Effect.andThen(
    Effect.logError(`Stored secret unreadable: ${binding.column.table}.${binding.column.column}: ${describeFailure(failure)}`).pipe(
      Effect.annotateLogs({
        table: binding.column.table,
        column: binding.column.column,
        organizationId: binding.organizationId,
        row: binding.row.join("/"),
        keyId: "keyId" in failure ? failure.keyId : ""
      })
    ),
    Effect.fail(
      new StoredCredentialUnreadable({
        message: `The stored ${binding.column.holds.replace(/^the /, "")} cannot be decrypted with this server's encryption keys (the server's log says why): an operator checks ORGPLANE_ENCRYPTION_KEYS, or an admin sets the credential again.`
      })
    )
  )

export interface CryptoService {
  /** A fresh secret: the prefix, `_`, then 32 random bytes in base64url. */
  readonly newToken: (prefix: string) => Effect.Effect<string>
  /** The stored form of a token: SHA-256, hex. Tokens carry 256 bits, so a fast hash is enough. */
  readonly hashToken: (token: string) => string
  readonly hashPassword: (password: string) => Effect.Effect<string>
  /**
   * The password hash of an account made without a password (SSO JIT, SCIM): a stored hash in the usual format and
   * at the configured cost whose salt and hash are random bytes, drawn once per process. No password matches it
   * (that would take an scrypt preimage of 32 random bytes), and checking one against it takes a full hash like any
   * other. Nothing is hashed to make it: hashing a random password instead cost every start-up a fifth of a second
   * (cost 15) and proved nothing more.
   */
  readonly unusablePasswordHash: string
  /** Constant-time. `stored` undefined still spends a full hash, so unknown emails take as long as wrong passwords. */
  readonly verifyPassword: (password: string, stored: string | undefined) => Effect.Effect<boolean>
  /** Encrypts a secret for its place (`SecretColumns.ts`); fails only when no key is configured (a server does not start so). */
  readonly encrypt: (plaintext: string, binding: Binding) => Effect.Effect<string, CryptoError>
  /** Decrypts the secret stored at `binding`; a failure is logged once and answered as `stored_credential_unreadable`. */
  readonly decrypt: (ciphertext: string, binding: Binding) => Effect.Effect<string, StoredCredentialUnreadable>
  /** True when the ciphertext was written with a key other than the current one: re-encrypt it. */
  readonly needsRotation: (ciphertext: string) => boolean
  readonly keyring: Keyring
}

const SCRYPT_R = 8
const SCRYPT_P = 1
const KEY_LENGTH = 32

const derive = (password: string, salt: Buffer, cost: number, r: number, p: number) =>
  Effect.promise(() => scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { N: 2 ** cost, r, p, maxmem: 256 * 2 ** cost * r + 1024 * 1024 }))

export const make = Effect.fnUntraced(function*(options: { readonly passwordCost: number; readonly keys: ReadonlyArray<EncryptionKey> }) {
  const hashPassword = Effect.fn("Crypto.hashPassword")(function*(password: string) {
    const salt = NodeCrypto.randomBytes(16)
    const hash = yield* derive(password, salt, options.passwordCost, SCRYPT_R, SCRYPT_P)
    return ["scrypt", options.passwordCost, SCRYPT_R, SCRYPT_P, salt.toString("base64"), hash.toString("base64")].join("$")
  })
  const dummy = ["scrypt", options.passwordCost, SCRYPT_R, SCRYPT_P, NodeCrypto.randomBytes(16).toString("base64"), NodeCrypto.randomBytes(KEY_LENGTH).toString("base64")].join("$")

  const verifyPassword = Effect.fn("Crypto.verifyPassword")(function*(password: string, stored: string | undefined) {
    const parts = (stored ?? dummy).split("$")
    if (parts.length !== 6 || parts[0] !== "scrypt") return false
    const [, cost, r, p, salt, hash] = parts
    const expected = Buffer.from(hash, "base64")
    const actual = yield* derive(password, Buffer.from(salt, "base64"), Number(cost), Number(r), Number(p))
    return NodeCrypto.timingSafeEqual(expected, actual) && stored !== undefined
  })

  const keyring = makeKeyring(options.keys)

  const service: CryptoService = {
    newToken: (prefix) => Effect.sync(() => `${prefix}_${NodeCrypto.randomBytes(32).toString("base64url")}`),
    hashToken: (token) => NodeCrypto.createHash("sha256").update(token).digest("hex"),
    hashPassword,
    unusablePasswordHash: dummy,
    verifyPassword,
    encrypt: Effect.fn("Crypto.encrypt")(function*(plaintext: string, binding: Binding) {
      return yield* Effect.fromResult(keyring.seal(plaintext, binding))
    }),
    decrypt: Effect.fn("Crypto.decrypt")(function*(ciphertext: string, binding: Binding) {
      const opened = keyring.open(ciphertext, binding)
      return Result.isSuccess(opened) ? opened.success : yield* unreadable(binding, opened.failure)
    }),
    needsRotation: keyring.needsRotation,
    keyring
  }
  return service
})

/** The key file of an embedded database in `dataDir`: beside the data folder, so a copy of the folder alone lacks it. */
export const keyFileOf = (dataDir: string) => Path.join(Path.dirname(Path.resolve(dataDir)), "encryption.key")

/** The settings that say where the keys are. */
export type KeySettings = Pick<ServerSettings, "encryptionKeys" | "databaseUrl" | "dataDir">

/**
 * The keys the settings name, none made: ORGPLANE_ENCRYPTION_KEYS; else, for the embedded database in a folder, its
 * key file when there is one. What the commands that sign and check a dump (`orgplane db dump`, `db restore`) use.
 */
export const configuredKeys = Effect.fn("Crypto.configuredKeys")(function*(settings: KeySettings) {
  if (settings.encryptionKeys !== undefined) return parseKeys(Redacted.value(settings.encryptionKeys))
  if (settings.databaseUrl !== undefined || settings.dataDir === "memory") return []
  const existing = yield* Effect.promise(() => Fs.readFile(keyFileOf(settings.dataDir), "utf8").catch(() => undefined))
  return existing === undefined ? [] : parseKeys(existing)
})

/**
 * Where the keys come from: ORGPLANE_ENCRYPTION_KEYS; else, for the embedded database, a key file generated once
 * beside the data folder; else (in memory) a key for this process only. With DATABASE_URL and no keys: none, and
 * the server refuses to start (platform/InstanceSecrets.ts says so, naming the variable).
 */
export const loadKeys: Effect.Effect<ReadonlyArray<EncryptionKey>, never, ServerConfig> = Effect.gen(function*() {
  const settings = yield* ServerConfig
  const configured = yield* configuredKeys(settings)
  if (configured.length > 0 || settings.encryptionKeys !== undefined || settings.databaseUrl !== undefined) return configured
  if (settings.dataDir === "memory") return [{ id: "ephemeral", key: NodeCrypto.randomBytes(32) }]
  // No key file, or an empty one: a key is generated, unless a start beside this one wrote its own first (read back).
  const file = keyFileOf(settings.dataDir)
  const { keys, created } = yield* Effect.promise(async () => {
    await Fs.mkdir(Path.dirname(file), { recursive: true })
    const generated = `local:${NodeCrypto.randomBytes(32).toString("base64")}`
    const created = await Fs.writeFile(file, generated, { mode: 0o600, flag: "wx" }).then(() => true, () => false)
    return { keys: parseKeys(await Fs.readFile(file, "utf8")), created }
  })
  // Written beside the data folder, so in a host app's own folder when it embeds with `dataDir: "./data"`: said once.
  if (created) yield* Effect.logWarning(keyFileWritten(file, settings.dataDir))
  return keys
})

/** What the start that generates the key file says: where it is, why there, and to keep it (and out of git). */
export const keyFileWritten = (file: string, dataDir: string) =>
  `Generated the encryption key ${file}, beside the data folder ${Path.resolve(dataDir)} (not in it: a copy of the folder alone cannot read its secrets). Back it up, apart from the folder's backups: without it the stored secrets are lost. Keep both out of version control (in .gitignore: ${Path.basename(file)} and ${Path.basename(Path.resolve(dataDir))}/), or set ORGPLANE_ENCRYPTION_KEYS instead.`

export class Crypto extends Context.Service<Crypto, CryptoService>()("@orgplane/server/platform/Crypto") {
  /** The service with the configured password cost and keys (`loadKeys`). */
  static readonly layer: Layer.Layer<Crypto, never, ServerConfig> = Layer.effect(
    this,
    Effect.gen(function*() {
      const settings = yield* ServerConfig
      return yield* make({ passwordCost: settings.passwordCost, keys: yield* loadKeys })
    })
  )
}

/** `Crypto.layer`, as the module's own (Server.ts's `Crypto.layer`). */
export const layer = Crypto.layer
