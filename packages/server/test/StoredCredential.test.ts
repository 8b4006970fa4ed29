/**
 * platform/StoredCredential.ts: the stored view of an OAuth credential reads a credential's row (its members, the
 * ciphertexts and dates as they are, other columns left out), and `encryptTokens` encrypts a token endpoint's answer
 * for its row, each token bound to its own column.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import { Crypto, make, parseKeys } from "../src/platform/Crypto.js"
import { bindTokens, McpMemberTokens, McpSharedTokens } from "../src/platform/SecretColumns.js"
import { encryptTokens, NewTokens, StoredCredential } from "../src/platform/StoredCredential.js"

const keys = `k1:${NodeCrypto.randomBytes(32).toString("base64")}`

const row = {
  accessTokenCiphertext: "v2:k1:a:b:c",
  refreshTokenCiphertext: null,
  tokenType: "Bearer",
  grantedScopes: ["read", "write"],
  tokenExpiresAt: new Date("2030-01-01T00:00:00Z"),
  credentialVersion: 3,
  credentialHealth: "ready",
  credentialHealthReason: null,
  connectedAt: new Date("2029-12-01T00:00:00Z")
}

describe("StoredCredential", () => {
  it("reads a credential's columns, and nothing else of the row", () => {
    const decoded = Schema.decodeUnknownSync(StoredCredential)({ ...row, extra: "dropped", credentialCheckedAt: null })
    expect(decoded).toEqual(row)
    expect(() => Schema.decodeUnknownSync(StoredCredential)({ ...row, credentialHealth: "sick" })).toThrow()
    expect(Schema.decodeUnknownSync(NewTokens)({ ...row, refreshTokenCiphertext: "v2:k1:d:e:f" })).toMatchObject({ refreshTokenCiphertext: "v2:k1:d:e:f" })
  })

  it.effect("encrypts a token endpoint's answer for its row, each token bound to its column", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: parseKeys(keys) })
      const where = bindTokens(McpMemberTokens, "org_a", "emc_1", "om_1")
      const at = new Date("2030-01-01T00:00:00Z")
      const tokens = yield* encryptTokens(
        { access_token: "at-1", refresh_token: "rt-1", token_type: "Bearer", expires_in: 3600, scope: "read  write" },
        at,
        ["fallback"],
        where
      ).pipe(Effect.provideService(Crypto, crypto))
      expect(tokens).toMatchObject({ tokenType: "Bearer", grantedScopes: ["read", "write"], tokenExpiresAt: new Date(at.getTime() + 3_600_000) })
      expect(yield* crypto.decrypt(tokens.accessTokenCiphertext, where.access)).toBe("at-1")
      expect(yield* crypto.decrypt(tokens.refreshTokenCiphertext!, where.refresh)).toBe("rt-1")
      // Not at the other token's place, nor at the shared credential's.
      expect(yield* Effect.flip(crypto.decrypt(tokens.accessTokenCiphertext, where.refresh))).toMatchObject({ _tag: "StoredCredentialUnreadable" })
      const shared = bindTokens(McpSharedTokens, "org_a", "emc_1")
      expect(yield* Effect.flip(crypto.decrypt(tokens.accessTokenCiphertext, shared.access))).toMatchObject({ _tag: "StoredCredentialUnreadable" })

      const bare = yield* encryptTokens({ access_token: "at-2", token_type: "Bearer" }, at, ["fallback"], where).pipe(
        Effect.provideService(Crypto, crypto)
      )
      expect(bare).toMatchObject({ refreshTokenCiphertext: null, grantedScopes: ["fallback"], tokenExpiresAt: null })
    }))
})
