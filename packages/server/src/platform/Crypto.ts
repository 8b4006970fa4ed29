/**
 * Secrets: random tokens and their hashes (what we store instead of session tokens, API keys and claim tokens),
 * password hashing with scrypt, AES-256-GCM encryption of third-party credentials at rest with rotatable keys, and
 * HMAC-SHA256 signatures of what the server hands out and takes back (cursors, OAuth states).
 */
import { Context, Data, Effect, Layer, Redacted } from "effect"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { promisify } from "node:util"
import { ServerConfig } from "./Config.js"

const scrypt = promisify(NodeCrypto.scrypt) as (
  password: NodeCrypto.BinaryLike,
  salt: NodeCrypto.BinaryLike,
  keylen: number,
  options: NodeCrypto.ScryptOptions
) => Promise<Buffer>

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

/** The HMAC-SHA256 of `message`, its first `bytes` bytes (all 32 by default), in base64url. */
export const sign = (key: Buffer, message: string, bytes = 32): string => hmac(key, message).subarray(0, bytes).toString("base64url")

/** Whether `signature` is `sign(key, message, bytes)`, compared in constant time. */
export const verifySignature = (key: Buffer, message: string, signature: string, bytes = 32): boolean => {
  const expected = hmac(key, message).subarray(0, bytes)
  const given = Buffer.from(signature, "base64url")
  return given.length === expected.length && NodeCrypto.timingSafeEqual(given, expected)
}

export interface CryptoService {
  /** A fresh secret: the prefix, `_`, then 32 random bytes in base64url. */
  readonly newToken: (prefix: string) => Effect.Effect<string>
  /** The stored form of a token: SHA-256, hex. Tokens carry 256 bits, so a fast hash is enough. */
  readonly hashToken: (token: string) => string
  readonly hashPassword: (password: string) => Effect.Effect<string>
  /** Constant-time. `stored` undefined still spends a full hash, so unknown emails take as long as wrong passwords. */
  readonly verifyPassword: (password: string, stored: string | undefined) => Effect.Effect<boolean>
  readonly encrypt: (plaintext: string) => Effect.Effect<string, CryptoError>
  readonly decrypt: (ciphertext: string) => Effect.Effect<string, CryptoError>
  /** True when the ciphertext was written with a key other than the current one: re-encrypt it. */
  readonly needsRotation: (ciphertext: string) => boolean
}

export class Crypto extends Context.Tag("@orgplane/server/platform/Crypto")<Crypto, CryptoService>() {}

const SCRYPT_R = 8
const SCRYPT_P = 1
const KEY_LENGTH = 32

const derive = (password: string, salt: Buffer, cost: number, r: number, p: number) =>
  Effect.promise(() => scrypt(password.normalize("NFKC"), salt, KEY_LENGTH, { N: 2 ** cost, r, p, maxmem: 256 * 2 ** cost * r + 1024 * 1024 }))

export const make = (options: { readonly passwordCost: number; readonly keys: ReadonlyArray<EncryptionKey> }): Effect.Effect<CryptoService> =>
  Effect.gen(function*() {
    const hashPassword = (password: string) =>
      Effect.gen(function*() {
        const salt = NodeCrypto.randomBytes(16)
        const hash = yield* derive(password, salt, options.passwordCost, SCRYPT_R, SCRYPT_P)
        return ["scrypt", options.passwordCost, SCRYPT_R, SCRYPT_P, salt.toString("base64"), hash.toString("base64")].join("$")
      })
    const dummy = yield* hashPassword(NodeCrypto.randomBytes(16).toString("hex"))

    const verifyPassword = (password: string, stored: string | undefined) =>
      Effect.gen(function*() {
        const parts = (stored ?? dummy).split("$")
        if (parts.length !== 6 || parts[0] !== "scrypt") return false
        const [, cost, r, p, salt, hash] = parts
        const expected = Buffer.from(hash, "base64")
        const actual = yield* derive(password, Buffer.from(salt, "base64"), Number(cost), Number(r), Number(p))
        return NodeCrypto.timingSafeEqual(expected, actual) && stored !== undefined
      })

    const [current] = options.keys
    const byId = new Map(options.keys.map((key) => [key.id, key.key]))

    return {
      newToken: (prefix) => Effect.sync(() => `${prefix}_${NodeCrypto.randomBytes(32).toString("base64url")}`),
      hashToken: (token) => NodeCrypto.createHash("sha256").update(token).digest("hex"),
      hashPassword,
      verifyPassword,
      encrypt: (plaintext) =>
        Effect.suspend(() => {
          if (!current) return Effect.fail(new CryptoError({ message: "No encryption key: set ORGPLANE_ENCRYPTION_KEYS" }))
          const iv = NodeCrypto.randomBytes(12)
          const cipher = NodeCrypto.createCipheriv("aes-256-gcm", current.key, iv)
          const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
          return Effect.succeed(
            ["v1", current.id, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(":")
          )
        }),
      decrypt: (ciphertext) =>
        Effect.suspend(() => {
          const [version, kid, iv, tag, body] = ciphertext.split(":")
          const key = byId.get(kid)
          if (version !== "v1" || !key || iv === undefined || tag === undefined || body === undefined) {
            return Effect.fail(new CryptoError({ message: `Cannot decrypt: not a v1 ciphertext of a known key (${kid})` }))
          }
          return Effect.try({
            try: () => {
              const decipher = NodeCrypto.createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
              decipher.setAuthTag(Buffer.from(tag, "base64url"))
              return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
            },
            catch: (cause) => new CryptoError({ message: "Cannot decrypt: the ciphertext was altered or is incomplete", cause })
          })
        }),
      needsRotation: (ciphertext) => ciphertext.split(":")[1] !== current?.id
    }
  })

/**
 * Where the keys come from: ORGPLANE_ENCRYPTION_KEYS; else, for the embedded database, a key file generated once
 * beside the data folder; else (in memory) a key for this process only. With DATABASE_URL and no keys, encrypting
 * fails with a message naming the variable.
 */
const loadKeys = Effect.gen(function*() {
  const settings = yield* ServerConfig
  if (settings.encryptionKeys !== undefined) return parseKeys(Redacted.value(settings.encryptionKeys))
  if (settings.databaseUrl !== undefined) {
    yield* Effect.logWarning("ORGPLANE_ENCRYPTION_KEYS is not set: storing third-party credentials will fail until it is.")
    return []
  }
  if (settings.dataDir === "memory") return [{ id: "ephemeral", key: NodeCrypto.randomBytes(32) }]
  const file = Path.join(Path.dirname(Path.resolve(settings.dataDir)), "encryption.key")
  return yield* Effect.promise(async () => {
    const existing = await Fs.readFile(file, "utf8").catch(() => undefined)
    if (existing !== undefined) return parseKeys(existing)
    await Fs.mkdir(Path.dirname(file), { recursive: true })
    const generated = `local:${NodeCrypto.randomBytes(32).toString("base64")}`
    await Fs.writeFile(file, generated, { mode: 0o600, flag: "wx" }).catch(() => undefined)
    return parseKeys(await Fs.readFile(file, "utf8"))
  })
})

export const layer = Layer.effect(
  Crypto,
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    return yield* make({ passwordCost: settings.passwordCost, keys: yield* loadKeys })
  })
)
