/**
 * packages/testkit's DatabaseProxy (a TCP proxy on 127.0.0.1 in front of a database, that tests turn into a hung
 * server with `pause`, a dead one with `down`, or one whose answer never arrives with `cutAt`; plain Node) held in a
 * scope.
 */
import * as Effect from "effect/Effect"
import * as Proxy from "../../../../packages/testkit/src/DatabaseProxy.js"

export type { CutOptions, DatabaseProxy, Target } from "../../../../packages/testkit/src/DatabaseProxy.js"

/** The proxy, closed (with every connection through it) when the scope closes. */
export const scoped = (target: Proxy.Target) => Effect.acquireRelease(Effect.promise(() => Proxy.start(target)), (proxy) => Effect.promise(proxy.close))
