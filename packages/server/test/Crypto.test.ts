import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as NodeCrypto from "node:crypto"
import { CryptoError, make, parseKeys } from "../src/platform/Crypto.js"

const key = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`

describe("Crypto", () => {
  it.effect("encrypts with AES-256-GCM: round-trips, randomises, and detects tampering", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: parseKeys(key("k1")) })
      const a = yield* crypto.encrypt("client-secret")
      const b = yield* crypto.encrypt("client-secret")
      expect(a).not.toBe(b)
      expect(a).not.toContain("client-secret")
      expect(yield* crypto.decrypt(a)).toBe("client-secret")
      const parts = a.split(":")
      const flipped = parts[4][0] === "A" ? "B" : "A"
      const tampered = [...parts.slice(0, 4), flipped + parts[4].slice(1)].join(":")
      // A typed failure, not a defect: the caller decides what an undecryptable credential means.
      const failed = yield* Effect.flip(crypto.decrypt(tampered))
      expect(failed).toBeInstanceOf(CryptoError)
      const unknownKey = yield* Effect.flip(crypto.decrypt(["v1", "gone", ...parts.slice(2)].join(":")))
      expect(unknownKey.message).toContain("gone")
    }))

  it.effect("rotates keys: old ciphertexts still decrypt and are flagged for re-encryption", () =>
    Effect.gen(function*() {
      const old = key("old")
      const before = yield* make({ passwordCost: 10, keys: parseKeys(old) })
      const ciphertext = yield* before.encrypt("token")
      const after = yield* make({ passwordCost: 10, keys: parseKeys(`${key("new")},${old}`) })
      expect(yield* after.decrypt(ciphertext)).toBe("token")
      expect(after.needsRotation(ciphertext)).toBe(true)
      expect(after.needsRotation(yield* after.encrypt("token"))).toBe(false)
    }))

  it("rejects keys that are not 32 bytes", () => {
    expect(() => parseKeys("k:" + Buffer.alloc(16).toString("base64"))).toThrow(/32 bytes/)
    expect(() => parseKeys("nokid")).toThrow(/kid:base64key/)
  })

  it.effect("fails to encrypt, as a typed error, without a key", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: [] })
      expect(yield* Effect.flip(crypto.encrypt("secret"))).toBeInstanceOf(CryptoError)
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

  it.effect("issues 256-bit tokens and stores only their hash", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: [] })
      const token = yield* crypto.newToken("ops")
      expect(token).toMatch(/^ops_[A-Za-z0-9_-]{43}$/)
      expect(crypto.hashToken(token)).toMatch(/^[0-9a-f]{64}$/)
      expect(crypto.hashToken(token)).not.toBe(crypto.hashToken(yield* crypto.newToken("ops")))
    }))
})
