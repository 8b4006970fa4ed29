import { describe, expect, it } from "@effect/vitest"
import { StoredCredentialUnreadable } from "@orgplane/schema"
import { Effect, Either, HashMap, Logger } from "effect"
import * as NodeCrypto from "node:crypto"
import { CryptoError, make, makeKeyring, parseKeys, sealV1 } from "../src/platform/Crypto.js"
import { allSecretColumns, bind, SecretColumns } from "../src/platform/SecretColumns.js"

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
    const sealed = Either.getOrThrow(keyring.seal("token", here))
    expect(keyring.open(sealed, here)).toEqual(Either.right("token"))
    for (
      const elsewhere of [
        bind(SecretColumns.mcpMemberAccessToken, "org_b", "emc_1", "om_1"),
        bind(SecretColumns.mcpMemberAccessToken, "org_a", "emc_2", "om_1"),
        bind(SecretColumns.mcpMemberAccessToken, "org_a", "emc_1", "om_2"),
        bind(SecretColumns.mcpMemberRefreshToken, "org_a", "emc_1", "om_1"),
        bind(SecretColumns.suiteAccessToken, "org_a", "emc_1", "om_1")
      ]
    ) {
      expect(keyring.open(sealed, elsewhere)).toEqual(Either.left({ _tag: "NotAuthentic", keyId: "k1" }))
    }
    // Row values are joined unambiguously: ("a:b", "c") is not ("a", "b:c").
    const split = Either.getOrThrow(keyring.seal("token", bind(SecretColumns.suiteAccessToken, "org_a", "a:b", "c")))
    expect(Either.isLeft(keyring.open(split, bind(SecretColumns.suiteAccessToken, "org_a", "a", "b:c")))).toBe(true)
    // A v1 ciphertext (unbound) is refused by `open`; only the upgrade reads it.
    const legacy = sealV1(keyring.current!, "token")
    expect(keyring.open(legacy, here)).toEqual(Either.left({ _tag: "OldFormat" }))
    expect(keyring.openV1(legacy)).toEqual(Either.right("token"))
    expect(keyring.needsRotation(legacy)).toBe(true)
    expect(keyring.open("not a ciphertext", here)).toEqual(Either.left({ _tag: "Malformed" }))
  })

  it("binds a row to exactly its registered columns", () => {
    expect(() => bind(SecretColumns.mcpApiKey, "org_a")).toThrow(/1 row column/)
    expect(new Set(allSecretColumns.map((column) => `${column.table}.${column.column}`)).size).toBe(allSecretColumns.length)
  })

  it.effect("logs an unreadable secret once, with its place and key problem, never the secret", () =>
    Effect.gen(function*() {
      const lines: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
      const logger = Logger.make(({ annotations, message }) => {
        lines.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
      })
      const writer = yield* make({ passwordCost: 10, keys: parseKeys(key("gone")) })
      const reader = yield* make({ passwordCost: 10, keys: parseKeys(key("k1")) })
      const here = bind(SecretColumns.connectorToken, "org_a", "cac_1")
      const ciphertext = yield* writer.encrypt("ghp_secret", here)
      yield* Effect.flip(reader.decrypt(ciphertext, here)).pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
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
