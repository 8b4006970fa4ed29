/**
 * Test databases for the HTTP tests: `behindProxy`, with its Promise API (a
 * fresh migrated database behind testkit's proxy (`pause`, `down`, `up`, `cutAt`), the layer of a pool that reaches
 * it through the proxy, `run` to add to the scope that holds them (a server started on the layer, say), and `close`);
 * `postgresUrl`, the Postgres the tests run on, if any; `layer`, a fresh migrated database.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as Database from "../../src/platform/Database.js"
import * as DatabaseProxy from "./DatabaseProxy.js"
import * as TestDatabase from "./TestDatabase.js"

export const behindProxy = async (timeouts: Database.Timeouts & { readonly maxConnections?: number }) => {
  const scope = Scope.makeUnsafe()
  const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.provide(scope)(effect))
  const database = await run(TestDatabase.fresh({ migrated: true }))
  const proxy = await run(DatabaseProxy.scoped(database.target))
  const via = "url" in database
    ? Object.assign(new URL(database.url), { hostname: "127.0.0.1", port: String(proxy.port) }).toString()
    : `postgres://postgres@127.0.0.1:${proxy.port}/postgres`
  return {
    proxy,
    // The embedded database has one session: more connections would interleave.
    layer: Database.layerUrl(Redacted.make(via), { maxConnections: "url" in database ? 4 : 1, ...timeouts }),
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** `DATABASE_URL` when the tests run on Postgres (an effect, of an option). */
export const postgresUrl = Effect.sync(() => Option.map(Option.fromUndefinedOr(TestDatabase.postgresUrl), Redacted.make))

/** A fresh migrated database, reached as the server reaches it. */
export const layer = Layer.unwrap(TestDatabase.layer({ migrated: true }))
