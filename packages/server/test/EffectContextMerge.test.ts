/**
 * The patch of effect 4.1.0's `Context.merge` (patches/effect@4.1.0.patch, to be proposed upstream): a merge adds
 * only what `that` changes, answering `self` itself when nothing changes and overlays when few do, so that providing a
 * handler's build-time services to a request that already holds them (HttpApiBuilder does it on every request) copies
 * no map. Held here: a merge reads as the merge of two maps always did, whatever the contexts' shapes (overlays,
 * depth, shared and changed keys), and it copies nothing when nothing changes.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

const keys = Array.from({ length: 24 }, (_, i) => Context.Service<{ readonly n: number }>(`test/EffectContextMerge/${i}`))
const values = Array.from({ length: 6 }, (_, n) => ({ n }))

/** A context made the ways a fiber's is: a base map, then entries added one by one (overlays). */
const contextOf = (base: ReadonlyArray<readonly [number, number]>, added: ReadonlyArray<readonly [number, number]>) => {
  let context = Context.makeUnsafe<never>(new Map(base.map(([key, value]) => [keys[key]!.key, values[value]])))
  for (const [key, value] of added) context = Context.add(context, keys[key]!, values[value]!)
  return context
}

/** What a merge meant before the patch: the map of `self` with every entry of `that` set over it, in that order. */
const expected = (self: Context.Context<never>, that: Context.Context<never>) => {
  const map = new Map(self.mapUnsafe)
  for (const [key, value] of that.mapUnsafe) map.set(key, value)
  return [...map]
}

const entries = fc.array(fc.tuple(fc.nat(keys.length - 1), fc.nat(values.length - 1)), { maxLength: 16 })

describe("Context.merge (patched)", () => {
  it("reads as the merge of the two maps, in their order, for contexts of any shape", () => {
    fc.assert(
      fc.property(entries, entries, entries, entries, (selfBase, selfAdded, thatBase, thatAdded) => {
        const self = contextOf(selfBase, selfAdded)
        const that = contextOf(thatBase, thatAdded)
        const merged = Context.merge(self, that)
        expect([...merged.mapUnsafe]).toEqual(expected(self, that))
        for (const key of keys) expect(Context.getOrUndefined(merged, key)).toBe(Context.getOrUndefined(that, key) ?? Context.getOrUndefined(self, key))
      }),
      { numRuns: 500 }
    )
  })

  it("answers self itself when that holds nothing self does not, and an overlay for one change", () => {
    const self = contextOf([[0, 0], [1, 1], [2, 2], [3, 3]], [[4, 4]])
    expect(Context.merge(self, contextOf([[1, 1], [4, 4]], []))).toBe(self)
    const changed = Context.merge(self, contextOf([[1, 1], [2, 5]], []))
    expect(changed).not.toBe(self)
    expect(Context.getOrUndefined(changed, keys[2]!)).toBe(values[5])
    expect(Context.getOrUndefined(changed, keys[4]!)).toBe(values[4])
  })

  it("provideContext of what the fiber already holds leaves the fiber's context as it was", async () => {
    const services = contextOf([[0, 0], [1, 1], [2, 2]], [])
    const [outer, inner] = await Effect.runPromise(
      Effect.flatMap(Effect.context<never>(), (outer) =>
        Effect.map(Effect.provideContext(Effect.context<never>(), Context.pick(keys[1]!, keys[2]!)(services)), (inner) => [outer, inner] as const)).pipe(
          Effect.provideContext(services)
        )
    )
    expect(inner).toBe(outer)
  })
})
