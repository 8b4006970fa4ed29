import { describe, expect, it } from "@effect/vitest"
import * as FastCheck from "fast-check"
import { collector, initial, type Load, loadOf, type State, step } from "../src/platform/MemoryRelease.js"

/** The rule, written apart from `step`: collect at the sixth quiet window in a row after the last busy one, once. */
const expected = (loads: ReadonlyArray<Load>): ReadonlyArray<boolean> => {
  let busySeen = false
  let quiet = 0
  return loads.map((load) => {
    if (load === "busy") {
      busySeen = true
      quiet = 0
      return false
    }
    if (!busySeen) return false
    quiet = load === "quiet" ? quiet + 1 : 0
    if (quiet < 6) return false
    busySeen = false
    quiet = 0
    return true
  })
}

describe("MemoryRelease", () => {
  it("reads a window's CPU time as busy from 10% of a core, quiet under 2%", () => {
    expect(loadOf(500_000, 5000)).toBe("busy")
    expect(loadOf(499_999, 5000)).toBe("between")
    expect(loadOf(100_000, 5000)).toBe("between")
    expect(loadOf(99_999, 5000)).toBe("quiet")
    expect(loadOf(0, 5000)).toBe("quiet")
  })

  it("collects once after each load, at its sixth quiet window, and never while idle or busy", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.array(FastCheck.constantFrom<Load>("busy", "quiet", "between"), { maxLength: 60 }), (loads) => {
        let state: State = initial
        const collected = loads.map((load) => {
          const [next, now] = step(state, load)
          state = next
          return now
        })
        expect(collected).toEqual(expected(loads))
        // Never two collections without a busy window between them.
        let sinceBusy = false
        loads.forEach((load, i) => {
          if (load === "busy") sinceBusy = true
          if (collected[i] === true) {
            expect(sinceBusy).toBe(true)
            sinceBusy = false
          }
        })
      })
    )
    expect(step(initial, "quiet")).toEqual([initial, false])
  })

  it("the collector it reaches gives the heap back (V8 hands `gc` to a new context once --expose-gc is set)", () => {
    const gc = collector()
    expect(typeof gc).toBe("function")
    // The host's global scope is left without `gc`.
    expect(Reflect.get(globalThis, "gc")).toBeUndefined()
    let garbage: Array<Array<number>> | undefined = Array.from({ length: 200 }, () => Array.from({ length: 10_000 }, (_, i) => i))
    const grown = process.memoryUsage().heapUsed
    garbage = undefined
    expect(garbage).toBeUndefined()
    if (typeof gc === "function") gc()
    expect(process.memoryUsage().heapUsed).toBeLessThan(grown)
  })
})
