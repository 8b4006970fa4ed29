/**
 * Tag `paging` (RFC 7644 §3.4.2.4): 1-based `startIndex`, `count`, `totalResults` and `itemsPerPage`, over three
 * fixtures selected by a filter on this run's mark: pages that add up to the whole without repeats, `count=0`
 * answering only the total, and a `startIndex` below 1 read as 1.
 */
import { type Check, check, type Context, expectListResponse, once, random, skip } from "./Check.js"
import { supported } from "./Discovery.js"
import * as Fixtures from "./Fixtures.js"

export const checks = (context: Context): ReadonlyArray<Check> => {
  const type = Fixtures.typeNamed(context, "User") ?? context.discovery.resourceTypes[0]
  const attribute = type?.name === "User" ? "userName" : "displayName"
  const made = once(async () => {
    const fixtures = Fixtures.make(context)
    context.defer(fixtures.cleanup)
    const tag = `p${context.run}${random()}`
    const ids: Array<string> = []
    for (const n of [1, 2, 3]) {
      const value = attribute === "userName" ? `${tag}-${n}@example.com` : `${tag} ${n}`
      ids.push((await fixtures.create(type, { [attribute]: value })).resource.id)
    }
    return { tag, ids }
  })
  const page = async (startIndex: number | string, count: number) => {
    const { tag } = await made()
    const response = await context.client.get(`${type.endpoint}?filter=${encodeURIComponent(`${attribute} sw "${tag}"`)}&startIndex=${startIndex}&count=${count}`)
    return { response, ...expectListResponse(response) }
  }
  const guard = () => (type === undefined ? skip("no resource type") : !supported(context.discovery, "filter") ? skip("paging is checked over a filter; filter.supported is false") : undefined)
  return [
    {
      id: "paging.pages",
      description: "startIndex=1&count=2 then startIndex=3&count=2: totalResults 3, itemsPerPage and startIndex, every fixture once",
      run: async () => {
        const skipped = guard()
        if (skipped !== undefined) return skipped
        const { ids } = await made()
        const first = await page(1, 2)
        check(first.totalResults === 3 && first.Resources.length === 2, "first page: totalResults 3 and 2 resources", first.response)
        check(first.startIndex === 1 && first.itemsPerPage === 2, "first page: startIndex 1 and itemsPerPage 2", first.response)
        const second = await page(3, 2)
        check(second.totalResults === 3 && second.Resources.length === 1, "second page: totalResults 3 and 1 resource", second.response)
        // RFC 7644 §3.4.2 defines itemsPerPage as the number on the page; servers commonly echo count: both pass.
        check(second.startIndex === 3 && (second.itemsPerPage === 1 || second.itemsPerPage === 2), "second page: startIndex 3 and itemsPerPage 1", second.response)
        const seen = [...first.Resources, ...second.Resources].map((r) => r.id).sort()
        check(JSON.stringify(seen) === JSON.stringify([...ids].sort()), `the pages must hold every fixture once: ${JSON.stringify(seen)}`)
      }
    },
    {
      id: "paging.countZero",
      description: "count=0 → totalResults and no resources",
      run: async () => {
        const skipped = guard()
        if (skipped !== undefined) return skipped
        const zero = await page(1, 0)
        check(zero.totalResults === 3 && zero.Resources.length === 0, "count=0: totalResults 3 and no Resources", zero.response)
      }
    },
    {
      id: "paging.startIndexBelowOne",
      description: "startIndex=0 is read as 1 (RFC 7644 §3.4.2.4)",
      run: async () => {
        const skipped = guard()
        if (skipped !== undefined) return skipped
        const low = await page(0, 10)
        check(low.startIndex === 1 && low.Resources.length === 3, "startIndex=0: startIndex 1 and every fixture", low.response)
      }
    },
    {
      id: "paging.beyondTheEnd",
      description: "a startIndex past the last result → no resources, the same totalResults",
      run: async () => {
        const skipped = guard()
        if (skipped !== undefined) return skipped
        const past = await page(10, 10)
        check(past.totalResults === 3 && past.Resources.length === 0, "startIndex=10: totalResults 3 and no Resources", past.response)
      }
    }
  ]
}
