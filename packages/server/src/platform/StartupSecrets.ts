/**
 * After the migrations, before serving: the keys checked against the database by reading the instance's cursor key
 * (made and stored encrypted on the first start; platform/InstanceSecrets.ts), so that a server without its keys or
 * with the wrong ones stops here; then stored secrets of the old unbound format rewritten bound to their rows
 * (platform/StoredSecrets.ts). Not migrations: migrations run without the keys, which only the configuration has.
 *
 * Server.ts puts it on top of its storage, after the migrations. It gives the `CursorKey`; it fails with
 * `EncryptionKeysUnusable` (the refusal, nothing changed) or `SqlError` (the upgrade's statements).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { ServerConfig } from "./Config.js"
import { Crypto } from "./Crypto.js"
import { cursorKeyLayer, type EncryptionKeysUnusable } from "./InstanceSecrets.js"
import type { CursorKey } from "./Keyset.js"
import { upgradeV1 } from "./StoredSecrets.js"

/** v1 ciphertexts rewritten as v2 with the configured keys (after the keys' check, which gives the cursor key). */
const upgrade = Layer.effectDiscard(Effect.gen(function*() {
  const crypto = yield* Crypto
  yield* upgradeV1(crypto.keyring)
}))

/**
 * The keys' check, then the upgrade of old ciphertexts, on the migrated database of the context, with the configured
 * keys (`Crypto.layer`: the same layer value the server's platform provides, so one build makes one keyring, and
 * one ephemeral key for a `memory` database).
 */
export const layer: Layer.Layer<CursorKey, EncryptionKeysUnusable | SqlError, ServerConfig | SqlClient.SqlClient> = Layer.provideMerge(
  upgrade,
  cursorKeyLayer
).pipe(Layer.provide(Crypto.layer))
