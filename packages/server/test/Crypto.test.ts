/**
 * platform/Crypto.ts and SecretColumns.ts: the assertions of packages/server/test/Crypto.test.ts, and the port held to
 * the Effect 3 original on the same inputs: a secret sealed by either opens with the other (v2 and v1), password
 * hashes and signatures of either verify with the other, the same key file and keys are read, the same places bound.
 *
 * The Effect 3 side is read from the recorded fixture (support/Effect3.ts, test/fixtures/effect3/Crypto.json): what
 * 0.1.0's original sealed, hashed, signed, opened and verified, on keys of fixed bytes. Where the original's answer is
 * on what the port made (a ciphertext it opens, a password hash it verifies, a key file it parses), the port's random
 * draws are pinned (support/PinnedRandom.ts), so the port makes the very bytes the recorded key names.
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
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { ServerConfig, type ServerSettings, settingsConfig } from "../src/platform/Config.js"
import {
  additionalData,
  CryptoError,
  deriveKey,
  keyFileOf,
  loadKeys,
  make,
  makeKeyring,
  parseKeys,
  sealV1,
  sign,
  verifySignature
} from "../src/platform/Crypto.js"
import { allSecretColumns, bind, bindInstance, SecretColumns } from "../src/platform/SecretColumns.js"
import * as Recorded from "./support/Effect3.js"
import { pinned, pinnedEffect } from "./support/PinnedRandom.js"

/** The Effect 3 originals' answers, recorded (support/Effect3.ts). */
const effect3 = Recorded.originals("Crypto")

/** An Effect 3 `Either` as recorded: a plain value with its `_tag`. */
type Plain<A, E> = { readonly _tag: "Right"; readonly right: A } | { readonly _tag: "Left"; readonly left: E }

const key = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`
/** A key of fixed bytes (the SHA-256 of its id): the recorded keys name what the original did with it. */
const fixedKey = (id: string) => `${id}:${NodeCrypto.createHash("sha256").update(`orgplane-crypto-test/${id}`).digest("base64")}`

/** The value of an Effect 3 `Either` the original's keyring answered, or a throw naming its failure. */
const right = <A, E>(either: Plain<A, E>): A => {
  if (either._tag === "Left") throw new Error(`expected Right, got ${JSON.stringify(either.left)}`)
  return either.right
}

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

describe("Crypto, held to the Effect 3 original", () => {
  const keys = `${fixedKey("new")},${fixedKey("old")}`

  it("binds every column to the same place, with the same additional data", () => {
    expect(allSecretColumns).toEqual(effect3("allSecretColumns"))
    expect(SecretColumns).toEqual(effect3("SecretColumns"))
    const here = bind(SecretColumns.suiteAccessToken, "org_a", "calendar", "om_1")
    expect(here).toEqual(
      effect3(Recorded.call("bind", "suiteAccessToken", "org_a", "calendar", "om_1"))
    )
    expect(additionalData(here).toString("base64")).toBe(
      effect3(Recorded.call("additionalData", here))
    )
    expect(bindInstance(SecretColumns.cursorKey, "cursor_key")).toEqual(
      effect3(Recorded.call("bindInstance", "cursorKey", "cursor_key"))
    )
  })

  it("opens what the original sealed, and the original opens what the port sealed, in every column (v2 and v1)", () => {
    const port = makeKeyring(parseKeys(keys))
    for (const column of allSecretColumns) {
      const here = column.scope === "instance"
        ? bindInstance(column, ...column.row.map((name) => `${name}-1`))
        : bind(column, "org_a", ...column.row.map((name) => `${name}-1`))
      const secret = `secret of ${column.table}.${column.column} ✓`
      const byOriginal = right(
        effect3<Plain<string, unknown>>(Recorded.call("seal", keys, secret, here))
      )
      expect(port.open(byOriginal, here)).toEqual(Result.succeed(secret))
      const byPort = pinned(`port seal ${secret}`, () => Result.getOrThrow(port.seal(secret, here)))
      expect(
        right(effect3<Plain<string, unknown>>(Recorded.call("open", keys, byPort, here)))
      ).toBe(secret)
      // Both refuse the other's ciphertext elsewhere alike.
      const elsewhere = column.scope === "instance" ? bindInstance(column, "other") : bind(column, "org_b", ...column.row.map(() => "x"))
      expect(port.open(byOriginal, elsewhere)).toEqual(Result.fail({ _tag: "NotAuthentic", keyId: "new" }))
      expect(
        effect3(Recorded.call("open", keys, byPort, elsewhere))
      ).toMatchObject({ _tag: "Left", left: { _tag: "NotAuthentic", keyId: "new" } })
    }
    const [, oldKey] = parseKeys(keys)
    const legacyByOriginal = effect3<string>(Recorded.call("sealV1", fixedKey("old"), "legacy"))
    expect(port.openV1(legacyByOriginal)).toEqual(Result.succeed("legacy"))
    const legacyByPort = pinned("port sealV1 legacy", () => sealV1(oldKey!, "legacy"))
    expect(
      right(effect3<Plain<string, unknown>>(Recorded.call("openV1", keys, legacyByPort)))
    ).toBe("legacy")
    const sealedByPort = pinned("port seal x", () => Result.getOrThrow(port.seal("x", bind(SecretColumns.mcpApiKey, "o", "r"))))
    for (const ciphertext of [legacyByOriginal, sealedByPort]) {
      expect(port.needsRotation(ciphertext)).toBe(
        effect3(Recorded.call("needsRotation", keys, ciphertext))
      )
    }
  })

  it("refuses the same malformed and foreign ciphertexts for the same reasons", () => {
    const port = makeKeyring(parseKeys(keys))
    const here = bind(SecretColumns.llmCredential, "org_a", "llm_1")
    const gone = fixedKey("gone")
    const foreign = right(
      effect3<Plain<string, unknown>>(Recorded.call("seal", gone, "x", here))
    )
    const sealed = pinned("port seal x llm", () => Result.getOrThrow(port.seal("x", here)))
    for (const ciphertext of ["", "v2", "v3:new:a:b:c", sealed.replace(/^v2/, "v1"), foreign, sealed.slice(0, -2), `${sealed}:extra`]) {
      const mine = port.open(ciphertext, here)
      const theirs = effect3(Recorded.call("open", keys, ciphertext, here))
      expect(Result.isFailure(mine) ? { _tag: "Left", left: mine.failure } : { _tag: "Right", right: mine.success }).toEqual(theirs)
    }
    // The original's refusal of a key without an id, word for word the port's.
    const refusal = effect3<string>(Recorded.call("parseKeys", "nokid"))
    expect(refusal).toMatch(/kid:base64key/)
    expect(() => parseKeys("nokid")).toThrow(refusal)
  })

  it.effect("verifies the original's password hashes, and the original verifies the port's", () =>
    Effect.gen(function*() {
      const port = yield* make({ passwordCost: 10, keys: [] })
      /** The original's `verifyPassword(password, stored)`, recorded. */
      const originalVerifies = (password: string, stored: string) =>
        Effect.promise(() =>
          effect3.await<boolean>(Recorded.call("verifyPassword", password, stored))
        )
      for (const password of ["correct horse", "Ünïcödé ﬁ", ""]) {
        const byOriginal = yield* Effect.promise(() =>
          effect3.await<string>(Recorded.call("hashPassword", 10, password))
        )
        expect(yield* port.verifyPassword(password, byOriginal)).toBe(true)
        expect(yield* port.verifyPassword(`${password}!`, byOriginal)).toBe(false)
        const byPort = yield* pinnedEffect(`port hashPassword ${password}`, port.hashPassword(password))
        expect(yield* originalVerifies(password, byPort)).toBe(true)
      }
      // NFKC: the ligature and its letters are one password for both.
      const ligature = yield* pinnedEffect("port hashPassword ﬁle", port.hashPassword("ﬁle"))
      expect(yield* originalVerifies("file", ligature)).toBe(true)
      expect(port.hashToken("ops_abc")).toBe(
        effect3(Recorded.call("hashToken", "ops_abc"))
      )
    }))

  it("signs and verifies as the original does", () => {
    const secret = NodeCrypto.createHash("sha256").update("orgplane-crypto-test/secret").digest()
    const derived = deriveKey(secret, "orgplane/mcp-oauth-state")
    expect(derived.toString("hex")).toBe(
      effect3(Recorded.call("deriveKey", secret.toString("hex"), "orgplane/mcp-oauth-state"))
    )
    for (const bytes of [16, 32]) {
      const signature = sign(derived, "org.auth", bytes)
      expect(signature).toBe(effect3(Recorded.call("sign", derived.toString("hex"), "org.auth", bytes)))
      expect(verifySignature(derived, "org.auth", signature, bytes)).toBe(true)
      expect(verifySignature(derived, "org.auth2", signature, bytes)).toBe(false)
      expect(verifySignature(derived, "org.auth", signature.slice(1), bytes)).toBe(false)
    }
  })

  it.effect("loads the keys from the same places: the variable, the key file beside the data folder (made once), or none", () =>
    Effect.gen(function*() {
      const folder = yield* Effect.promise(() => Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-keys-")))
      // The defaults (an empty environment), with the settings of each case on top.
      const defaults = yield* Effect.orDie(settingsConfig.parse(ConfigProvider.fromEnv({ env: {} })))
      const settings = (overrides: Partial<ServerSettings>) => Effect.provideService(loadKeys, ServerConfig, { ...defaults, ...overrides })
      /** Keys as JSON keeps them. */
      const plainKeys = (keys: ReadonlyArray<{ readonly id: string; readonly key: Buffer }>) => keys.map(({ id, key }) => ({ id, key: key.toString("base64") }))
      try {
        const dataDir = Path.join(folder, "data")
        // The temporary folder differs from run to run: the original's key file is recorded relative to it.
        expect(Path.relative(folder, keyFileOf(dataDir))).toBe(
          effect3(Recorded.call("keyFileOf", "<temporary folder>/data"))
        )
        expect(keyFileOf(dataDir)).toBe(Path.join(folder, "encryption.key"))
        // The generated key pinned, so the key file is the one whose parse by the original was recorded.
        const made = yield* pinnedEffect("port loadKeys key file", settings({ dataDir }))
        expect(made).toHaveLength(1)
        expect(made[0]!.id).toBe("local")
        const file = yield* Effect.promise(() => Fs.readFile(keyFileOf(dataDir), "utf8"))
        expect((yield* Effect.promise(() => Fs.stat(keyFileOf(dataDir)))).mode & 0o777).toBe(0o600)
        expect(effect3(Recorded.call("parseKeys", file))).toEqual(plainKeys(made))
        expect(yield* settings({ dataDir })).toEqual(made)
        expect(yield* settings({ dataDir, encryptionKeys: Redacted.make(keys) })).toEqual(parseKeys(keys))
        expect(yield* settings({ dataDir, databaseUrl: Redacted.make("postgres://x@127.0.0.1/db") })).toEqual([])
        const memory = yield* settings({ dataDir: "memory" })
        expect(memory.map((entry) => entry.id)).toEqual(["ephemeral"])
        expect(memory[0]!.key).toHaveLength(32)
      } finally {
        yield* Effect.promise(() => Fs.rm(folder, { recursive: true, force: true }))
      }
    }))
})
