/**
 * Keyset paging of the catalog's lists holds while rows are added: walking the config objects list, the plugins list
 * and a plugin's config-objects list page by page, with inserts landing before, inside and after the page being
 * read, every row that existed before the walk is seen exactly once and no row twice. The concurrent walks need
 * real concurrency (the embedded database serializes every request), so they run on Postgres only; inserts between
 * pages are checked on both databases.
 */
import type { ConfigObjectPage, ConfigObjectResponse, PluginConfigObjectPage, PluginPage, PluginResponse } from "@orgplane/schema"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

type Owner = Awaited<ReturnType<typeof Http.owner>>

const unique = () => Math.random().toString(36).slice(2, 10)

const ok = Http.expectStatus

const post = (owner: Owner, path: string, body: unknown) => Http.request(server.url, "POST", path, { token: owner.token, body })

const createConfigObject = async (owner: Owner, pluginIds?: ReadonlyArray<string>): Promise<string> =>
  ok<typeof ConfigObjectResponse.Encoded>(
    "creating a config object",
    await post(owner, "/v1/config-objects", {
      input: { objectType: "context", rawSourceText: `Context ${unique()}` },
      ...(pluginIds === undefined ? {} : { pluginIds })
    }),
    201
  ).item.id

const createPlugin = async (owner: Owner): Promise<string> =>
  // Random names: in a list by name, new plugins land before, inside and after the page being read.
  ok<typeof PluginResponse.Encoded>("creating a plugin", await post(owner, "/v1/plugins", { name: `${unique()} plugin` }), 201).item.id

/** A page of any of the lists, as sent, and one of its items. */
type ListPage = typeof ConfigObjectPage.Encoded | typeof PluginPage.Encoded | typeof PluginConfigObjectPage.Encoded
type Item = ListPage["items"][number]

/** One list: where it is, how to add a row to it (answering the row's key), and an item's key. */
interface List {
  readonly name: string
  readonly prepare: (owner: Owner) => Promise<{ readonly path: string; readonly insert: () => Promise<string> }>
  readonly key: (item: Item) => string
}

const lists: ReadonlyArray<List> = [
  {
    name: "the config objects list",
    prepare: async (owner) => ({ path: "/v1/config-objects", insert: () => createConfigObject(owner) }),
    key: (item) => item.id
  },
  {
    name: "the plugins list",
    prepare: async (owner) => ({ path: "/v1/plugins", insert: () => createPlugin(owner) }),
    key: (item) => item.id
  },
  {
    name: "a plugin's config-objects list",
    prepare: async (owner) => {
      const pluginId = await createPlugin(owner)
      return { path: `/v1/plugins/${pluginId}/config-objects`, insert: () => createConfigObject(owner, [pluginId]) }
    },
    key: (item) => {
      if (!("configObjectId" in item)) throw new Error(`not a plugin's config object: ${JSON.stringify(item)}`)
      return item.configObjectId
    }
  }
]

/** `count` inserts, `concurrency` at a time. */
const insertMany = async (insert: () => Promise<string>, count: number, concurrency: number) => {
  const keys: Array<string> = []
  let started = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (started < count) {
      started++
      keys.push(await insert())
    }
  }))
  return keys
}

/**
 * Seeds `rows` rows, then walks the list with limit 20 while `writers` keep inserting (each page waits until at
 * least one more insert has landed since the previous one, so the walk and the inserts interleave), and checks what
 * the walk saw.
 */
const walkWhileInserting = async (list: List, rows: number, writers: number) => {
  const owner = await Http.owner(server.url, `Paging ${unique()}`)
  const { insert, path } = await list.prepare(owner)
  const before = await insertMany(insert, rows, 8)

  const inserted: Array<string> = []
  let walking = true
  let failure: unknown = undefined
  let landed: () => void = () => {}
  let next = new Promise<void>((resolve) => (landed = resolve))
  const writer = async () => {
    try {
      while (walking) {
        inserted.push(await insert())
        landed()
        next = new Promise<void>((resolve) => (landed = resolve))
      }
    } catch (error) {
      failure = error
      walking = false
      landed()
    }
  }
  const running = Array.from({ length: writers }, writer)

  const seen: Array<string> = []
  let pages = 0
  try {
    let cursor: string | null = null
    do {
      await next
      if (failure !== undefined) throw failure
      const page: ListPage = ok<ListPage>(
        `page ${pages + 1}`,
        await Http.request(server.url, "GET", `${path}?limit=20${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`, {
          token: owner.token
        }),
        200
      )
      expect(page.items.length).toBeLessThanOrEqual(20)
      seen.push(...page.items.map(list.key))
      cursor = page.nextCursor
      pages++
    } while (cursor !== null)
  } finally {
    walking = false
    await Promise.all(running)
  }
  if (failure !== undefined) throw failure

  const counts = new Map<string, number>()
  for (const key of seen) counts.set(key, (counts.get(key) ?? 0) + 1)
  expect([...counts].filter(([, count]) => count > 1)).toEqual([])
  expect(before.filter((key) => counts.get(key) !== 1)).toEqual([])
  const known = new Set([...before, ...inserted])
  expect(seen.filter((key) => !known.has(key))).toEqual([])
  expect(pages).toBeGreaterThanOrEqual(Math.ceil(rows / 20))
  expect(inserted.length).toBeGreaterThanOrEqual(pages)
}

describe.runIf(TestDatabase.onPostgres)("walking catalog lists under concurrent inserts (needs real concurrency: Postgres only)", () => {
  it.each(lists)("$name: with limit 20 over 300 rows, sees every earlier row exactly once and none twice", async (list) => {
    await walkWhileInserting(list, 300, 3)
  }, 120_000)
})

describe("walking catalog lists with inserts between pages", () => {
  it.each(lists)("$name: sees every earlier row exactly once and none twice", async (list) => {
    await walkWhileInserting(list, 60, 1)
  })
})
