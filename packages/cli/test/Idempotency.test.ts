/** The CLI's writes carry an `Idempotency-Key` (from `@orgplane/client`), so their retries make a change once. */
import { Http, TestServer } from "@orgplane/testkit"
import { Effect } from "effect"
import { afterAll, beforeAll, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

it("sends a fresh Idempotency-Key with each write command, and none with reads", async () => {
  const owner = await Http.owner(server.url)
  const { cli } = await fresh()
  const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
  const keys = () => server.sql((sql) => Effect.map(sql<{ key: string }>`SELECT key FROM idempotency_keys ORDER BY created_at`, (rows) => rows.map((row) => row.key)))

  expect(json(await cli(["teams", "create", "Platform", "--json"], env)).team.name).toBe("Platform")
  expect((await cli(["teams", "list", "--json"], env)).code).toBe(0)
  expect((await cli(["teams", "create", "Design", "--json"], env)).code).toBe(0)
  const sent = await keys()
  expect(sent).toHaveLength(2)
  expect(new Set(sent).size).toBe(2)
  for (const key of sent) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})
