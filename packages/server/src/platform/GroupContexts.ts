/**
 * The contexts the server's groups were built in, gathered as they build, so that a server starts every request with
 * them. HttpApiBuilder provides a group's build-time context (its area's services, authentication's middlewares, the
 * router) to the group's handler on every call; a request whose context already holds each of those services finds,
 * with `Context.merge` as patched (patches/effect@4.1.0.patch), nothing to change and copies no map. Without this,
 * every handler call set the 8 to 14 services the request lacked, past the overlays a context keeps, and copied the
 * request's context of some 60 services (issue 71, item 2: the services bound when the server is built).
 *
 * What a handler sees is unchanged: HttpApiBuilder still provides its group's context on every call, so a service
 * two groups were built with in different versions is each group's own (such a merge changes it, as before).
 *
 * A server provides a `collector()` as `Collecting` around the build of its routes and the making of its handler:
 * `HttpErrors.group` adds each group's context to the collector it finds (`collect()`), and `withGroups` gives the
 * handler's maker their union. Where nothing collects (a host's own `HttpRouter.serve` of `ApiLayer`, the tests'
 * small APIs), groups build as before and each handler call merges its group's context.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"

/** The contexts gathered while one server's routes build. */
export interface Collector {
  readonly contexts: Array<Context.Context<never>>
}

/** The collector of the server being built; none by default (nothing collects). */
export const Collecting = Context.Reference<Collector | undefined>("@orgplane/server/platform/GroupContexts", {
  defaultValue: () => undefined
})

/** A new, empty collector: one per server. */
export const collector = (): Collector => ({ contexts: [] })

/**
 * Beside a group's layer: adds the context the group is built in (the same HttpApiBuilder captures) to the collector.
 * A new layer for each group: one layer value would be built once per server (layers are memoized by reference).
 */
export const collect = (): Layer.Layer<never> => Layer.effectDiscard(
  Effect.withFiber((fiber) => {
    fiber.getRef(Collecting)?.contexts.push(Context.omit(Scope.Scope)(fiber.context))
    return Effect.void
  })
)

/** The gathered contexts as one, in build order; the scope a group was built in is not a request's. */
export const union = (groups: Collector): Context.Context<never> => Context.mergeAll(...groups.contexts)

/**
 * How many services a request's context keeps as overlays before it is copied into one map. A read adds about a
 * dozen on its way (its request and scopes, the route, the span, the log's annotations, the database's budget); a
 * write adds more (a transaction's connection, the audit draft, the caller's authority, a span and a scope for each
 * statement). Past the limit the whole context of some 100 services is copied, and copied again at each limit after
 * (GET /v1/me: 107 -> 95 KB allocated a request at 16 where Effect's default is 8; POST /v1/teams 282 -> 266 KB and
 * a role's change 348 -> 332 KB at 32, where 64 saved 2 KB more). Lookups walk at most this many.
 * Set on the context the requests start from, as `Context.makeUnsafe` asks (contexts made from it keep it).
 */
export const requestOverlays = 32

/**
 * `effect` run with the groups' contexts over its own, as one context keeping `requestOverlays`: where a server
 * makes the handler its requests start from. Made once, when the server starts.
 */
export const withGroups = <A, E, R>(groups: Collector, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.updateContext(effect, (context: Context.Context<never>) =>
    Context.makeUnsafe(new Map(Context.merge(context, union(groups)).mapUnsafe), { maxDepth: requestOverlays }))
