/**
 * platform/StoredCredential.ts: the stored view of an OAuth credential reads the same row as the Effect 3 original's
 * (the same members, the ciphertexts and dates as they are), and `encryptTokens` encrypts a token endpoint's answer
 * for its row, each token bound to its own column, readable by the original's keyring.
 *
 * The Effect 3 side is read from the recorded fixture (support/Effect3.ts, test/fixtures/effect3/StoredCredential.json):
 * 0.1.0's original reading the row (its dates as ISO text, which a recorded value keeps), and its keyring opening the
 * port's ciphertext, on a key of fixed bytes. The port's IVs are pinned (support/PinnedRandom.ts): the recorded key
 * names the port's ciphertext, so the port must make those very bytes.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import { Crypto, make, parseKeys } from "../src/platform/Crypto.js"
import { bindTokens, McpMemberTokens, McpSharedTokens } from "../src/platform/SecretColumns.js"
import { encryptTokens, NewTokens, StoredCredential } from "../src/platform/StoredCredential.js"
import * as Recorded from "./support/Effect3.js"
import { pinnedEffect } from "./support/PinnedRandom.js"

/** The Effect 3 originals' answers, recorded (support/Effect3.ts). */
const effect3 = Recorded.originals("StoredCredential")

/** A key of fixed bytes: the recorded key names the original's answer on what the port sealed with it. */
const keys = `k1:${NodeCrypto.createHash("sha256").update("orgplane-stored-credential-test/k1").digest("base64")}`

/** A decoded row with its dates as ISO text, as a recorded value keeps them. */
const datesAsText = (value: object) =>
  Object.fromEntries(Object.entries(value).map(([name, member]) => [name, member instanceof Date ? { date: member.toISOString() } : member]))

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
  it("reads a credential's columns as the original does", () => {
    const decoded = Schema.decodeUnknownSync(StoredCredential)({ ...row, extra: "dropped", credentialCheckedAt: null })
    expect(decoded).toEqual(row)
    expect(datesAsText(decoded)).toEqual(
      effect3("decodeUnknownSync(StoredCredential)(row with extra and credentialCheckedAt)")
    )
    expect(() => Schema.decodeUnknownSync(StoredCredential)({ ...row, credentialHealth: "sick" })).toThrow()
    expect(Schema.decodeUnknownSync(NewTokens)({ ...row, refreshTokenCiphertext: "v2:k1:d:e:f" })).toMatchObject({ refreshTokenCiphertext: "v2:k1:d:e:f" })
  })

  it.effect("encrypts a token endpoint's answer for its row, each token bound to its column", () =>
    Effect.gen(function*() {
      const crypto = yield* make({ passwordCost: 10, keys: parseKeys(keys) })
      const where = bindTokens(McpMemberTokens, "org_a", "emc_1", "om_1")
      const at = new Date("2030-01-01T00:00:00Z")
      // The IVs pinned: the original's opening of the access token was recorded under this very ciphertext.
      const tokens = yield* pinnedEffect(
        "port encryptTokens",
        encryptTokens(
          { access_token: "at-1", refresh_token: "rt-1", token_type: "Bearer", expires_in: 3600, scope: "read  write" },
          at,
          ["fallback"],
          where
        ).pipe(Effect.provideService(Crypto, crypto))
      )
      expect(tokens).toMatchObject({ tokenType: "Bearer", grantedScopes: ["read", "write"], tokenExpiresAt: new Date(at.getTime() + 3_600_000) })
      expect(yield* crypto.decrypt(tokens.accessTokenCiphertext, where.access)).toBe("at-1")
      expect(yield* crypto.decrypt(tokens.refreshTokenCiphertext!, where.refresh)).toBe("rt-1")
      // Not at the other token's place, nor at the shared credential's.
      expect(yield* Effect.flip(crypto.decrypt(tokens.accessTokenCiphertext, where.refresh))).toMatchObject({ _tag: "StoredCredentialUnreadable" })
      const shared = bindTokens(McpSharedTokens, "org_a", "emc_1")
      expect(yield* Effect.flip(crypto.decrypt(tokens.accessTokenCiphertext, shared.access))).toMatchObject({ _tag: "StoredCredentialUnreadable" })
      // The Effect 3 server reads them.
      const opened = effect3(Recorded.call("open", keys, tokens.accessTokenCiphertext, where.access))
      expect(opened).toMatchObject({ _tag: "Right", right: "at-1" })

      const bare = yield* encryptTokens({ access_token: "at-2", token_type: "Bearer" }, at, ["fallback"], where).pipe(
        Effect.provideService(Crypto, crypto)
      )
      expect(bare).toMatchObject({ refreshTokenCiphertext: null, grantedScopes: ["fallback"], tokenExpiresAt: null })
    }))
})
