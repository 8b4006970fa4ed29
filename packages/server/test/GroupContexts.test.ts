/**
 * The groups' build-time contexts gathered for the requests to start from (platform/GroupContexts.ts): what a group is
 * built with is in the context a server makes its handler in, the same instances, so that HttpApiBuilder's merge of a
 * group's context into a request's changes nothing; the scope a group was built in is not the request's; and where
 * nothing collects, nothing is gathered.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as GroupContexts from "../src/platform/GroupContexts.js"

class Greeting extends Context.Service<Greeting, { readonly text: string }>()("test/GroupContexts/Greeting") {}
class Counter extends Context.Service<Counter, { readonly count: number }>()("test/GroupContexts/Counter") {}

/** Two groups, each built with a service of its own, as an area's `Layer.provide` gives them. */
const groups = Layer.mergeAll(
  GroupContexts.collect().pipe(Layer.provide(Layer.succeed(Greeting, { text: "hello" }))),
  GroupContexts.collect().pipe(Layer.provide(Layer.succeed(Counter, { count: 1 })))
)

describe("GroupContexts", () => {
  it.effect("a server's requests start from every service its groups were built with, the same instances", () =>
    Effect.gen(function*() {
      const collector = GroupContexts.collector()
      yield* Layer.build(groups).pipe(Effect.provideService(GroupContexts.Collecting, collector))
      assert.strictEqual(collector.contexts.length, 2)

      const [built] = collector.contexts
      const start = yield* GroupContexts.withGroups(collector, Effect.context<never>())
      assert.isDefined(Context.getOrUndefined(start, Greeting))
      assert.strictEqual(Context.getOrUndefined(start, Greeting), Context.getOrUndefined(built, Greeting))
      assert.strictEqual(Context.getOrUndefined(start, Counter)?.count, 1)
      // What HttpApiBuilder does on every handler call now changes nothing: the request's context itself.
      for (const context of collector.contexts) assert.strictEqual(Context.merge(start, context), start)
      // The groups' build scope is not the request's.
      for (const context of collector.contexts) assert.isUndefined(Context.getOrUndefined(context, Scope.Scope))
      assert.strictEqual(Context.getOrUndefined(start, Scope.Scope), yield* Scope.Scope)
    }).pipe(Effect.scoped))

  it.effect("nothing is gathered where nothing collects", () =>
    Effect.gen(function*() {
      const collector = GroupContexts.collector()
      yield* Layer.build(groups)
      assert.strictEqual(collector.contexts.length, 0)
      assert.isUndefined(yield* GroupContexts.Collecting)
    }).pipe(Effect.scoped))
})
