/**
 * platform/Crypto.ts and SecretColumns.ts: secrets sealed bound to their place (organization, row, column), keys
 * rotated, password hashes, tokens, signatures, the key file; and what 0.1.0 made still opens and verifies here: a
 * secret it sealed in every column (v2, and v1 as servers before it wrote them), its password hashes, token hashes,
 * derived keys and signatures.
 *
 * What 0.1.0 made is `test/fixtures/0.1.0/crypto.json`, recorded from its code (on keys of fixed bytes, which the file
 * holds); it is never re-recorded.
 */
import { describe, expect, it } from "@effect/vitest"
import { StoredCredentialUnreadable } from "@orgplane/schema"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import * as Redacted from "effect/Redacted"
import * as References from "effect/References"
import * as Result from "effect/Result"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { ServerConfig, type ServerSettings, settingsConfig } from "../src/platform/Config.js"
import {
  CryptoError,
  deriveKey,
  keyFileOf,
  keyFileWritten,
  loadKeys,
  make,
  makeKeyring,
  parseKeys,
  sealV1,
  sign,
  verifySignature
} from "../src/platform/Crypto.js"
import { allSecretColumns, bind, bindInstance, SecretColumns } from "../src/platform/SecretColumns.js"

interface Place {
  readonly column: keyof typeof SecretColumns
  readonly organizationId: string
  readonly row: ReadonlyArray<string>
}

/** What 0.1.0's code made (test/fixtures/0.1.0/crypto.json). */
interface MadeBy010 {
  readonly keys: string
  readonly sealed: ReadonlyArray<Place & { readonly secret: string; readonly ciphertext: string }>
  readonly sealedV1: { readonly secret: string; readonly ciphertext: string }
  readonly sealedWithAnotherKey: Place & { readonly key: string; readonly secret: string; readonly ciphertext: string }
  readonly passwordHashes: ReadonlyArray<{ readonly password: string; readonly hash: string }>
  readonly tokenHashes: ReadonlyArray<{ readonly token: string; readonly hash: string }>
  readonly derivedKeys: ReadonlyArray<{ readonly secret: string; readonly purpose: string; readonly key: string }>
  readonly signatures: ReadonlyArray<{ readonly key: string; readonly message: string; readonly bytes: number; readonly signature: string }>
}

const by010: MadeBy010 = JSON.parse(NodeFs.readFileSync(new URL("./fixtures/0.1.0/crypto.json", import.meta.url), "utf8"))

/** The binding a recorded place names. */
const placeOf = (place: Place) =>
  SecretColumns[place.column].scope === "instance"
    ? bindInstance(SecretColumns[place.column], ...place.row)
    : bind(SecretColumns[place.column], place.organizationId, ...place.row)

const key = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`

describe("Crypto", () => {
  it.effect("encrypts with AES-256-GCM bound to the secret's place: round-trips, randomises, and detects tampering", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: parseKeys(key("k1")) })
      const here = bind(SecretColumns.mcpApiKey, "org_a", "emc_1")
      const a = yield* crypto.encrypt("client-secret", here)
      const b = yield* crypto.encrypt("client-secret", here)
      expect(a).not.toBe(b)
      expect(a).not.toContain("client-secret")
      expect(a.startsWith("v2:k1:")).toBe(true)
      expect(yield* crypto.decrypt(a, here)).toBe("client-secret")
      const parts = a.split(":")
      const flipped = parts[4][0] === "A" ? "B" : "A"
      const tampered = [...parts.slice(0, 4), flipped + parts[4].slice(1)].join(":")
      // A typed failure, not a defect: the API's stored_credential_unreadable, naming the credential, not the secret.
      const failed = yield* Effect.flip(crypto.decrypt(tampered, here))
      expect(failed).toBeInstanceOf(StoredCredentialUnreadable)
      expect(failed.message).toContain("MCP connection's API key")
      expect(failed.message).not.toContain("client-secret")
      const unknownKey = yield* Effect.flip(crypto.decrypt(["v2", "gone", ...parts.slice(2)].join(":"), here))
      expect(unknownKey).toBeInstanceOf(StoredCredentialUnreadable)
    }))

  it("refuses a ciphertext moved to another organization, row or column, and v1 ciphertexts", () => {
    const keyring = makeKeyring(parseKeys(key("k1")))
    const here = bind(SecretColumns.mcpMemberAccessToken, "org_a", "emc_1", "om_1")
    const sealed = Result.getOrThrow(keyring.seal("token", here))
    expect(keyring.open(sealed, here)).toEqual(Result.succeed("token"))
    for (
      const elsewhere of [
        bind(SecretColumns.mcpMemberAccessToken, "org_b", "emc_1", "om_1"),
        bind(SecretColumns.mcpMemberAccessToken, "org_a", "emc_2", "om_1"),
        bind(SecretColumns.mcpMemberAccessToken, "org_a", "emc_1", "om_2"),
        bind(SecretColumns.mcpMemberRefreshToken, "org_a", "emc_1", "om_1"),
        bind(SecretColumns.suiteAccessToken, "org_a", "emc_1", "om_1")
      ]
    ) {
      expect(keyring.open(sealed, elsewhere)).toEqual(Result.fail({ _tag: "NotAuthentic", keyId: "k1" }))
    }
    // Row values are joined unambiguously: ("a:b", "c") is not ("a", "b:c").
    const split = Result.getOrThrow(keyring.seal("token", bind(SecretColumns.suiteAccessToken, "org_a", "a:b", "c")))
    expect(Result.isFailure(keyring.open(split, bind(SecretColumns.suiteAccessToken, "org_a", "a", "b:c")))).toBe(true)
    // A v1 ciphertext (unbound) is refused by `open`; only the upgrade reads it.
    const legacy = sealV1(keyring.current!, "token")
    expect(keyring.open(legacy, here)).toEqual(Result.fail({ _tag: "OldFormat" }))
    expect(keyring.openV1(legacy)).toEqual(Result.succeed("token"))
    expect(keyring.needsRotation(legacy)).toBe(true)
    expect(keyring.open("not a ciphertext", here)).toEqual(Result.fail({ _tag: "Malformed" }))
  })

  it("binds a row to exactly its registered columns", () => {
    expect(() => bind(SecretColumns.mcpApiKey, "org_a")).toThrow(/1 row column/)
    expect(() => bind(SecretColumns.cursorKey, "org_a", "cursor_key")).toThrow(/an instance/)
    expect(() => bindInstance(SecretColumns.mcpApiKey, "emc_1")).toThrow(/an organization's/)
    expect(new Set(allSecretColumns.map((column) => `${column.table}.${column.column}`)).size).toBe(allSecretColumns.length)
  })

  it.effect("logs an unreadable secret once, with its place and key problem, never the secret", () =>
    Effect.gen(function*() {
      const lines: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
      const logger = Logger.make(({ fiber, message }) => {
        lines.push({ message, annotations: { ...fiber.getRef(References.CurrentLogAnnotations) } })
      })
      const writer = yield* make({ passwordCost: 10, keys: parseKeys(key("gone")) })
      const reader = yield* make({ passwordCost: 10, keys: parseKeys(key("k1")) })
      const here = bind(SecretColumns.connectorToken, "org_a", "cac_1")
      const ciphertext = yield* writer.encrypt("ghp_secret", here)
      yield* Effect.flip(reader.decrypt(ciphertext, here)).pipe(Effect.provide(Logger.layer([logger])))
      expect(lines).toHaveLength(1)
      expect(String(lines[0]!.message)).toContain("connector_accounts.token_ciphertext")
      expect(String(lines[0]!.message)).toContain(`key "gone"`)
      expect(lines[0]!.annotations).toMatchObject({ organizationId: "org_a", row: "cac_1", keyId: "gone" })
      expect(JSON.stringify(lines)).not.toContain("ghp_secret")
    }))

  it.effect("rotates keys: old ciphertexts still decrypt and are flagged for re-encryption", () =>
    Effect.gen(function*() {
      const old = key("old")
      const here = bind(SecretColumns.workerRuntimeCredential, "org_a", "wki_1")
      const before = yield* make({ passwordCost: 10, keys: parseKeys(old) })
      const ciphertext = yield* before.encrypt("token", here)
      const after = yield* make({ passwordCost: 10, keys: parseKeys(`${key("new")},${old}`) })
      expect(yield* after.decrypt(ciphertext, here)).toBe("token")
      expect(after.needsRotation(ciphertext)).toBe(true)
      expect(after.needsRotation(yield* after.encrypt("token", here))).toBe(false)
    }))

  it("rejects keys that are not 32 bytes", () => {
    expect(() => parseKeys("k:" + Buffer.alloc(16).toString("base64"))).toThrow(/32 bytes/)
    expect(() => parseKeys("nokid")).toThrow(/kid:base64key/)
  })

  it.effect("fails to encrypt, as a typed error, without a key", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: [] })
      expect(yield* Effect.flip(crypto.encrypt("secret", bind(SecretColumns.ssoClientSecret, "org_a", "ssc_a")))).toBeInstanceOf(CryptoError)
    }))

  it.effect("hashes passwords with a salt and verifies them", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: [] })
      const one = yield* crypto.hashPassword("correct horse")
      const two = yield* crypto.hashPassword("correct horse")
      expect(one).not.toBe(two)
      expect(one.startsWith("scrypt$10$8$1$")).toBe(true)
      expect(yield* crypto.verifyPassword("correct horse", one)).toBe(true)
      expect(yield* crypto.verifyPassword("wrong horse", one)).toBe(false)
      expect(yield* crypto.verifyPassword("correct horse", undefined)).toBe(false)
    }))

  it.effect("has an unusable password hash shaped like a real one, at the same cost, that nothing matches", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: [] })
      const real = (yield* crypto.hashPassword("anything")).split("$")
      const unusable = crypto.unusablePasswordHash.split("$")
      // The same parameters and sizes: checking a password against it is a full hash at the same cost.
      expect(unusable.slice(0, 4)).toEqual(real.slice(0, 4))
      expect(unusable.map((part) => part.length)).toEqual(real.map((part) => part.length))
      for (const password of ["", "anything", "correct horse"]) {
        expect(yield* crypto.verifyPassword(password, crypto.unusablePasswordHash)).toBe(false)
      }
      // Drawn per process, not a constant: another service's differs.
      expect((yield* make({ passwordCost: 10, keys: [] })).unusablePasswordHash).not.toBe(crypto.unusablePasswordHash)
    }))

  it.effect("issues 256-bit tokens and stores only their hash", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: [] })
      const token = yield* crypto.newToken("ops")
      expect(token).toMatch(/^ops_[A-Za-z0-9_-]{43}$/)
      expect(crypto.hashToken(token)).toMatch(/^[0-9a-f]{64}$/)
      expect(crypto.hashToken(token)).not.toBe(crypto.hashToken(yield* crypto.newToken("ops")))
    }))
})

describe("Crypto, with what 0.1.0 made", () => {
  it("opens the secrets 0.1.0 sealed, in every column, only at their place (v2), and its v1 ones", () => {
    const keyring = makeKeyring(parseKeys(by010.keys))
    expect(by010.sealed.map(({ column }) => column).sort()).toEqual(Object.keys(SecretColumns).sort())
    for (const sealed of by010.sealed) {
      const here = placeOf(sealed)
      expect(keyring.open(sealed.ciphertext, here), sealed.column).toEqual(Result.succeed(sealed.secret))
      const column = SecretColumns[sealed.column]
      const elsewhere = column.scope === "instance" ? bindInstance(column, "other") : bind(column, "org_b", ...column.row.map(() => "x"))
      expect(keyring.open(sealed.ciphertext, elsewhere)).toEqual(Result.fail({ _tag: "NotAuthentic", keyId: "new" }))
      expect(keyring.needsRotation(sealed.ciphertext)).toBe(false)
    }
    expect(keyring.openV1(by010.sealedV1.ciphertext)).toEqual(Result.succeed(by010.sealedV1.secret))
    expect(keyring.needsRotation(by010.sealedV1.ciphertext)).toBe(true)
  })

  it("refuses malformed ciphertexts, and 0.1.0's under a key it does not have, for what they are", () => {
    const keyring = makeKeyring(parseKeys(by010.keys))
    const foreign = by010.sealedWithAnotherKey
    const here = placeOf(foreign)
    expect(keyring.open(foreign.ciphertext, here)).toEqual(Result.fail({ _tag: "UnknownKey", keyId: "gone" }))
    expect(makeKeyring(parseKeys(foreign.key)).open(foreign.ciphertext, here)).toEqual(Result.succeed(foreign.secret))
    const sealed = Result.getOrThrow(keyring.seal("x", here))
    const refusals: ReadonlyArray<readonly [string, unknown]> = [
      ["", { _tag: "Malformed" }],
      ["v2", { _tag: "Malformed" }],
      ["v3:new:a:b:c", { _tag: "Malformed" }],
      [sealed.replace(/^v2/, "v1"), { _tag: "OldFormat" }],
      [sealed.slice(0, -2), { _tag: "NotAuthentic", keyId: "new" }],
      [`${sealed}:extra`, { _tag: "Malformed" }]
    ]
    for (const [ciphertext, refusal] of refusals) expect(keyring.open(ciphertext, here), ciphertext).toEqual(Result.fail(refusal))
    expect(() => parseKeys("nokid")).toThrow("ORGPLANE_ENCRYPTION_KEYS entries must look like kid:base64key")
  })

  it.effect("verifies 0.1.0's password hashes, and hashes tokens as it did", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: [] })
      for (const { password, hash } of by010.passwordHashes) {
        expect(yield* crypto.verifyPassword(password, hash), password).toBe(true)
        expect(yield* crypto.verifyPassword(`${password}!`, hash)).toBe(false)
      }
      // NFKC: the ligature and its letters are one password.
      const ligature = yield* crypto.hashPassword("ﬁle")
      expect(yield* crypto.verifyPassword("file", ligature)).toBe(true)
      for (const { hash, token } of by010.tokenHashes) expect(crypto.hashToken(token)).toBe(hash)
    }))

  it("derives keys and signs as 0.1.0 did, so its signatures verify", () => {
    for (const { key, purpose, secret } of by010.derivedKeys) expect(deriveKey(Buffer.from(secret, "hex"), purpose).toString("hex")).toBe(key)
    for (const { bytes, key, message, signature } of by010.signatures) {
      const derived = Buffer.from(key, "hex")
      expect(sign(derived, message, bytes)).toBe(signature)
      expect(verifySignature(derived, message, signature, bytes)).toBe(true)
      expect(verifySignature(derived, `${message}2`, signature, bytes)).toBe(false)
      expect(verifySignature(derived, message, signature.slice(1), bytes)).toBe(false)
    }
  })

  it.effect("loads the keys from the variable, the key file beside the data folder (made once, private), or none", () =>
    Effect.gen(function*() {
      const folder = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-keys-")))
      // The defaults (an empty environment), with the settings of each case on top.
      const defaults = yield* Effect.orDie(settingsConfig.parse(ConfigProvider.fromEnv({ env: {} })))
      const warnings: Array<string> = []
      const capture = Logger.layer([
        Logger.make(({ logLevel, message }) => {
          if (logLevel === "Warn") warnings.push((Array.isArray(message) ? message : [message]).join(" "))
        })
      ])
      const settings = (overrides: Partial<ServerSettings>) =>
        Effect.provideService(loadKeys, ServerConfig, { ...defaults, ...overrides }).pipe(Effect.provide(capture))
      try {
        const dataDir = Path.join(folder, "data")
        expect(keyFileOf(dataDir)).toBe(Path.join(folder, "encryption.key"))
        const made = yield* settings({ dataDir })
        // Made beside the folder, in what may be a host app's own folder: said once, with what to keep out of git.
        expect(warnings).toEqual([keyFileWritten(keyFileOf(dataDir), dataDir)])
        expect(warnings[0]).toContain("in .gitignore: encryption.key and data/")
        expect(made).toHaveLength(1)
        expect(made[0]!.id).toBe("local")
        const file = yield* Effect.promise(() => Fs.readFile(keyFileOf(dataDir), "utf8"))
        expect((yield* Effect.promise(() => Fs.stat(keyFileOf(dataDir)))).mode & 0o777).toBe(0o600)
        expect(parseKeys(file.trim())).toEqual(made)
        expect(yield* settings({ dataDir })).toEqual(made)
        expect(warnings).toHaveLength(1)
        expect(yield* settings({ dataDir, encryptionKeys: Redacted.make(by010.keys) })).toEqual(parseKeys(by010.keys))
        expect(yield* settings({ dataDir, databaseUrl: Redacted.make("postgres://x@127.0.0.1/db") })).toEqual([])
        const memory = yield* settings({ dataDir: "memory" })
        expect(memory.map((entry) => entry.id)).toEqual(["ephemeral"])
        expect(memory[0]!.key).toHaveLength(32)
      } finally {
        yield* Effect.promise(() => Fs.rm(folder, { recursive: true, force: true }))
      }
    }))
})
