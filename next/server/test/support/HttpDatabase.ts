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
  const postgres = TestDatabase.postgresUrl
  let target: DatabaseProxy.Target
  let via: (port: number) => string
  if (postgres !== undefined) {
    const fresh = new URL(await run(TestDatabase.freshPostgres(postgres, { migrated: true })))
    target = { host: fresh.hostname, port: Number(fresh.port || 5432) }
    via = (port) => Object.assign(new URL(fresh), { hostname: "127.0.0.1", port: String(port) }).toString()
  } else {
    // The embedded database's socket is TestDatabase's own: this proxy fronts TestDatabase's (which only pauses).
    const inner = await run(TestDatabase.behindProxy({ migrated: true }))
    target = { host: "127.0.0.1", port: inner.proxy.port }
    via = (port) => `postgres://postgres@127.0.0.1:${port}/postgres`
  }
  const proxy = await run(Effect.acquireRelease(Effect.promise(() => DatabaseProxy.start(target)), (proxy) => Effect.promise(proxy.close)))
  return {
    proxy,
    // The embedded database has one session: more connections would interleave.
    layer: Database.layerUrl(Redacted.make(via(proxy.port)), { maxConnections: postgres !== undefined ? 4 : 1, ...timeouts }),
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}
