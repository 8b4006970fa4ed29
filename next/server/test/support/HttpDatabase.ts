/**
 * packages/testkit's `TestDatabase.behindProxy` for the HTTP tests of the Effect 4 server, with its Promise API: a
 * fresh migrated database behind testkit's proxy (`pause`, `down`, `up`, `cutAt`), the layer of a pool that reaches
 * it through the proxy, `run` to add to the scope that holds them (a server started on the layer, say), and `close`.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Redacted from "effect/Redacted"
import * as Scope from "effect/Scope"
import * as DatabaseProxy from "../../../../packages/testkit/src/DatabaseProxy.js"
import * as Database from "../../src/platform/Database.js"
import * as TestDatabase from "./TestDatabase.js"

export const behindProxy = async (timeouts: Database.Timeouts & { readonly maxConnections?: number }) => {
  const scope = Scope.makeUnsafe()
  const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.runPromise(Scope.provide(scope)(effect))
  const database = await run(TestDatabase.fresh({ migrated: true }))
  const proxy = await run(Effect.acquireRelease(Effect.promise(() => DatabaseProxy.start(database.target)), (proxy) => Effect.promise(proxy.close)))
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
