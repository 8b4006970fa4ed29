/**
 * platform/Crypto.ts and SecretColumns.ts: the assertions of packages/server/test/Crypto.test.ts, and the port held to
 * the Effect 3 original on the same inputs: a secret sealed by either opens with the other (v2 and v1), password
 * hashes and signatures of either verify with the other, the same key file and keys are read, the same places bound.
 *
 * The Effect 3 side is recorded (support/Effect3.ts): what the original seals, hashes, signs, opens and verifies, on
 * keys of fixed bytes, its random draws (IVs, salts) pinned to the recorded key (support/PinnedRandom.ts), so every
 * record run writes the same values. Where the original opens or verifies what the port made, the port's draws are
 * pinned too, so its ciphertexts and hashes are the same on every run and the original's answer on them is recorded.
 */
import { describe, expect, it } from "@effect/vitest"
import { StoredCredentialUnreadable } from "@orgplane-next/schema"
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
import { pinned, pinnedAsync, pinnedEffect } from "./support/PinnedRandom.js"

/** The Effect 3 originals' answers, recorded (support/Effect3.ts). */
const effect3 = await Recorded.originals("Crypto", async () => ({
  Original: await import("../../../packages/server/src/platform/Crypto.js"),
  OriginalColumns: await import("../../../packages/server/src/platform/SecretColumns.js"),
  Effect3: await import("effect-3/Effect")
}))
type Originals = Parameters<Parameters<typeof effect3>[1]>[0]

/** The original's value under `key`, its random draws (IVs, salts) pinned to the key. */
const original = <A>(key: string, compute: (originals: Originals) => A): A =>
  effect3(key, (originals) => pinned(key, () => compute(originals)))
const originalAsync = <A>(key: string, compute: (originals: Originals) => Promise<A>): Promise<A> =>
  effect3.await(key, (originals) => pinnedAsync(key, () => compute(originals)))

/** An Effect 3 `Either` as a plain value (its `_tag` lives on its prototype, which a recorded value does not keep). */
type Plain<A, E> = { readonly _tag: "Right"; readonly right: A } | { readonly _tag: "Left"; readonly left: E }
const plain = <A, E>(either: Plain<A, E>): Plain<A, E> =>
  either._tag === "Left" ? { _tag: "Left", left: either.left } : { _tag: "Right", right: either.right }

const key = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`
/** A key of fixed bytes (the SHA-256 of its id), for what the original does with it to be recorded. */
const fixedKey = (id: string) => `${id}:${NodeCrypto.createHash("sha256").update(`orgplane-crypto-test/${id}`).digest("base64")}`

/** The value of an Effect 3 `Either` the original's keyring answers, or a throw naming its failure. */
const right = <A, E>(either: { readonly _tag: "Right"; readonly right: A } | { readonly _tag: "Left"; readonly left: E }): A => {
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
    expect(allSecretColumns).toEqual(effect3("allSecretColumns", ({ OriginalColumns }) => OriginalColumns.allSecretColumns))
    expect(SecretColumns).toEqual(effect3("SecretColumns", ({ OriginalColumns }) => OriginalColumns.SecretColumns))
    const here = bind(SecretColumns.suiteAccessToken, "org_a", "calendar", "om_1")
    expect(here).toEqual(
      effect3(
        Recorded.call("bind", "suiteAccessToken", "org_a", "calendar", "om_1"),
        ({ OriginalColumns }) => OriginalColumns.bind(OriginalColumns.SecretColumns.suiteAccessToken, "org_a", "calendar", "om_1")
      )
    )
    expect(additionalData(here).toString("base64")).toBe(
      effect3(Recorded.call("additionalData", here), ({ Original }) => Original.additionalData(here).toString("base64"))
    )
    expect(bindInstance(SecretColumns.cursorKey, "cursor_key")).toEqual(
      effect3(
        Recorded.call("bindInstance", "cursorKey", "cursor_key"),
        ({ OriginalColumns }) => OriginalColumns.bindInstance(OriginalColumns.SecretColumns.cursorKey, "cursor_key")
      )
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
        original(Recorded.call("seal", keys, secret, here), ({ Original }) => plain(Original.makeKeyring(Original.parseKeys(keys)).seal(secret, here)))
      )
      expect(port.open(byOriginal, here)).toEqual(Result.succeed(secret))
      const byPort = pinned(`port seal ${secret}`, () => Result.getOrThrow(port.seal(secret, here)))
      expect(
        right(original(Recorded.call("open", keys, byPort, here), ({ Original }) => plain(Original.makeKeyring(Original.parseKeys(keys)).open(byPort, here))))
      ).toBe(secret)
      // Both refuse the other's ciphertext elsewhere alike.
      const elsewhere = column.scope === "instance" ? bindInstance(column, "other") : bind(column, "org_b", ...column.row.map(() => "x"))
      expect(port.open(byOriginal, elsewhere)).toEqual(Result.fail({ _tag: "NotAuthentic", keyId: "new" }))
      expect(
        original(Recorded.call("open", keys, byPort, elsewhere), ({ Original }) => plain(Original.makeKeyring(Original.parseKeys(keys)).open(byPort, elsewhere)))
      ).toMatchObject({ _tag: "Left", left: { _tag: "NotAuthentic", keyId: "new" } })
    }
    const [, oldKey] = parseKeys(keys)
    const legacyByOriginal = original(Recorded.call("sealV1", fixedKey("old"), "legacy"), ({ Original }) => Original.sealV1(oldKey!, "legacy"))
    expect(port.openV1(legacyByOriginal)).toEqual(Result.succeed("legacy"))
    const legacyByPort = pinned("port sealV1 legacy", () => sealV1(oldKey!, "legacy"))
    expect(
      right(original(Recorded.call("openV1", keys, legacyByPort), ({ Original }) => plain(Original.makeKeyring(Original.parseKeys(keys)).openV1(legacyByPort))))
    ).toBe("legacy")
    const sealedByPort = pinned("port seal x", () => Result.getOrThrow(port.seal("x", bind(SecretColumns.mcpApiKey, "o", "r"))))
    for (const ciphertext of [legacyByOriginal, sealedByPort]) {
      expect(port.needsRotation(ciphertext)).toBe(
        original(Recorded.call("needsRotation", keys, ciphertext), ({ Original }) => Original.makeKeyring(Original.parseKeys(keys)).needsRotation(ciphertext))
      )
    }
  })

  it("refuses the same malformed and foreign ciphertexts for the same reasons", () => {
    const port = makeKeyring(parseKeys(keys))
    const here = bind(SecretColumns.llmCredential, "org_a", "llm_1")
    const gone = fixedKey("gone")
    const foreign = right(
      original(Recorded.call("seal", gone, "x", here), ({ Original }) => plain(Original.makeKeyring(Original.parseKeys(gone)).seal("x", here)))
    )
    const sealed = pinned("port seal x llm", () => Result.getOrThrow(port.seal("x", here)))
    for (const ciphertext of ["", "v2", "v3:new:a:b:c", sealed.replace(/^v2/, "v1"), foreign, sealed.slice(0, -2), `${sealed}:extra`]) {
      const mine = port.open(ciphertext, here)
      const theirs = original(
        Recorded.call("open", keys, ciphertext, here),
        ({ Original }) => plain(Original.makeKeyring(Original.parseKeys(keys)).open(ciphertext, here))
      )
      expect(Result.isFailure(mine) ? { _tag: "Left", left: mine.failure } : { _tag: "Right", right: mine.success }).toEqual(theirs)
    }
    // The original's refusal of a key without an id, word for word the port's.
    const refusal = original(Recorded.call("parseKeys", "nokid"), ({ Original }) => {
      try {
        Original.parseKeys("nokid")
        return "accepted"
      } catch (error) {
        return error instanceof Error ? error.message : String(error)
      }
    })
    expect(refusal).toMatch(/kid:base64key/)
    expect(() => parseKeys("nokid")).toThrow(refusal)
  })

  it.effect("verifies the original's password hashes, and the original verifies the port's", () =>
    Effect.gen(function*() {
      const port = yield* make({ passwordCost: 10, keys: [] })
      /** The original's `verifyPassword(password, stored)`, recorded. */
      const originalVerifies = (password: string, stored: string) =>
        Effect.promise(() =>
          originalAsync(
            Recorded.call("verifyPassword", password, stored),
            ({ Effect3, Original }) =>
              Effect3.runPromise(Effect3.flatMap(Original.make({ passwordCost: 10, keys: [] }), (service) => service.verifyPassword(password, stored)))
          )
        )
      for (const password of ["correct horse", "Ünïcödé ﬁ", ""]) {
        const byOriginal = yield* Effect.promise(() =>
          originalAsync(
            Recorded.call("hashPassword", 10, password),
            ({ Effect3, Original }) =>
              Effect3.runPromise(Effect3.flatMap(Original.make({ passwordCost: 10, keys: [] }), (service) => service.hashPassword(password)))
          )
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
        original(
          Recorded.call("hashToken", "ops_abc"),
          ({ Effect3, Original }) => Effect3.runSync(Original.make({ passwordCost: 10, keys: [] })).hashToken("ops_abc")
        )
      )
    }))

  it("signs and verifies as the original does", () => {
    const secret = NodeCrypto.createHash("sha256").update("orgplane-crypto-test/secret").digest()
    const derived = deriveKey(secret, "orgplane/mcp-oauth-state")
    expect(derived.toString("hex")).toBe(
      original(
        Recorded.call("deriveKey", secret.toString("hex"), "orgplane/mcp-oauth-state"),
        ({ Original }) => Original.deriveKey(secret, "orgplane/mcp-oauth-state").toString("hex")
      )
    )
    for (const bytes of [16, 32]) {
      const signature = sign(derived, "org.auth", bytes)
      expect(signature).toBe(original(Recorded.call("sign", derived.toString("hex"), "org.auth", bytes), ({ Original }) => Original.sign(derived, "org.auth", bytes)))
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
          original(Recorded.call("keyFileOf", "<temporary folder>/data"), ({ Original }) => Path.relative(folder, Original.keyFileOf(dataDir)))
        )
        expect(keyFileOf(dataDir)).toBe(Path.join(folder, "encryption.key"))
        // The generated key pinned, so the file the original parses is the same on every run.
        const made = yield* pinnedEffect("port loadKeys key file", settings({ dataDir }))
        expect(made).toHaveLength(1)
        expect(made[0]!.id).toBe("local")
        const file = yield* Effect.promise(() => Fs.readFile(keyFileOf(dataDir), "utf8"))
        expect((yield* Effect.promise(() => Fs.stat(keyFileOf(dataDir)))).mode & 0o777).toBe(0o600)
        expect(original(Recorded.call("parseKeys", file), ({ Original }) => plainKeys(Original.parseKeys(file)))).toEqual(plainKeys(made))
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
