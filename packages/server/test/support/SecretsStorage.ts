/**
 * The server's storage as Server.ts composes it with `StartupSecrets` (configuration, database, migrations, then the
 * keys' check and the upgrade of old ciphertexts), started and stopped on a database the test keeps: what a server's
 * start does to its secrets, without the HTTP server the areas that read them would need.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as SqlClient from "effect/sql/SqlClient"
import { migrations } from "../../src/migrations/index.js"
import * as Config from "../../src/platform/Config.js"
import { Crypto } from "../../src/platform/Crypto.js"
import { CursorKey } from "../../src/platform/Keyset.js"
import { migrate } from "../../src/platform/Migrator.js"
import * as StartupSecrets from "../../src/platform/StartupSecrets.js"
import * as TestDatabase from "./TestDatabase.js"

const Migrations = Layer.effectDiscard(migrate(migrations))

/** Server.ts's storage with `StartupSecrets` on top, as the integration puts it, on `database`. */
export const storage = (options: Config.Options, database: Layer.Layer<SqlClient.SqlClient>) => {
  const config = Config.layer(options)
  return Layer.provideMerge(StartupSecrets.layer, Layer.provideMerge(Migrations, Layer.merge(database, config)))
}

/** What a start gave the server: its cursor key, and the same `Crypto` the platform would use. */
export interface Started {
  readonly cursorKey: Buffer
  readonly crypto: Crypto["Service"]
}

/**
 * A fresh database kept for the scope: `start` builds the storage on it with `options` and stops it (the start's
 * outcome as an Exit: a refusal is its failure); `sql` runs statements on it directly.
 */
export const sharedDatabase = Effect.gen(function*() {
  const context = yield* Layer.build(Layer.unwrap(TestDatabase.layer()))
  const database = Layer.succeedContext(context)
  const sql = Context.get(context, SqlClient.SqlClient)
  const start = (options: Config.Options) =>
    Effect.exit(Effect.scoped(Effect.gen(function*() {
      const scope = yield* Scope.Scope
      const started = yield* Layer.buildWithScope(Layer.provideMerge(Crypto.layer, storage(options, database)), scope)
      return { cursorKey: Context.get(started, CursorKey), crypto: Context.get(started, Crypto) } satisfies Started
    })))
  /** A start that must succeed. */
  const started = (options: Config.Options) =>
    Effect.flatMap(start(options), (exit) => Exit.isSuccess(exit) ? Effect.succeed(exit.value) : Effect.die(new Error(`the start failed: ${String(exit.cause)}`)))
  return { sql, start, started }
})
