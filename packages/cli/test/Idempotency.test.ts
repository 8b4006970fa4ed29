/**
 * The CLI's writes carry an `Idempotency-Key` (from `@orgplane/client`), so their retries make a change once.
 * Against a real server (RealServer.ts) on a data folder of its own, whose `idempotency_keys` are read once it has
 * stopped (the embedded database has one user at a time).
 */
import { Database } from "@orgplane/server"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import * as Http from "../../../packages/testkit/src/Http.js"
import { cleanup, fresh, json } from "./Harness.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer
let dataDir: string
beforeAll(async () => {
  dataDir = Path.join((await fresh()).home, "data")
  server = await RealServer.start({}, { data: dataDir })
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

/** The keys the server stored, oldest first: read from its database after it stopped. */
const storedKeys = async () => {
  await server.close()
  return Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ key: string }>`SELECT key FROM idempotency_keys ORDER BY created_at`
      return rows.map((row) => row.key)
    }).pipe(Effect.provide(Database.layerEmbedded({ dataDir })))
  )
}

it("sends a fresh Idempotency-Key with each write command, and none with reads", async () => {
  const owner = await Http.owner(server.url)
  const { cli } = await fresh()
  const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
  const keys = storedKeys

  expect(json(await cli(["teams", "create", "Platform", "--json"], env)).team.name).toBe("Platform")
  expect((await cli(["teams", "list", "--json"], env)).code).toBe(0)
  expect((await cli(["teams", "create", "Design", "--json"], env)).code).toBe(0)
  const sent = await keys()
  expect(sent).toHaveLength(2)
  expect(new Set(sent).size).toBe(2)
  for (const key of sent) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
})
