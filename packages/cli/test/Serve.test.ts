/**
 * `orgplane serve` in-process (see Harness.ts) where what it needs is taken: the port it names is the one in use.
 * The HTTP port's case runs as a real process in Binary.test.ts. The server's TestDatabase makes the fresh Postgres
 * database.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as NodeCrypto from "node:crypto"
import * as Net from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import * as TestDatabase from "../../server/test/support/TestDatabase.js"
import { cleanup, fresh } from "./Harness.js"

afterAll(() => cleanup())

describe("orgplane serve", { timeout: 120_000 }, () => {
  it.runIf(TestDatabase.postgresUrl !== undefined)("names the durable engine's runner port and ORGPLANE_CLUSTER_PORT when that port is taken (Postgres only)", async () => {
    const taken = Net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    try {
      const address = taken.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      const { cli } = await fresh()
      const result = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const url = Option.getOrThrow(Option.fromNullishOr(TestDatabase.postgresUrl))
        const database = Redacted.make(yield* TestDatabase.freshPostgres(url))
        // An encryption key: without one the server stops at its key check, before it binds the runner port.
        const key = `test:${NodeCrypto.randomBytes(32).toString("base64")}`
        return yield* Effect.promise(() =>
          cli(["serve", "--port", "0", "--database-url", Redacted.value(database)], { ORGPLANE_CLUSTER_PORT: String(port), ORGPLANE_ENCRYPTION_KEYS: key })
        )
      })))
      expect(result.code).toBe(1)
      expect(result.stderr.trim().split("\n").at(-1)).toBe(
        `error: port ${port} on 127.0.0.1 is already in use: it is the durable engine's runner port (with DATABASE_URL every server process is a runner; another one on this host?); choose another with ORGPLANE_CLUSTER_PORT (0 takes any free one)`
      )
    } finally {
      taken.close()
    }
  })

  /** `serve` on `databaseUrl`, with a key (so only the database can stop it): its exit code and last line on stderr. */
  const serveOn = async (databaseUrl: string) => {
    const { cli } = await fresh()
    const key = `test:${NodeCrypto.randomBytes(32).toString("base64")}`
    const result = await cli(["serve", "--port", "0", "--database-url", databaseUrl], { ORGPLANE_CLUSTER_PORT: "0", ORGPLANE_ENCRYPTION_KEYS: key })
    return { code: result.code, last: result.stderr.trim().split("\n").at(-1) }
  }

  it("says the database's port is closed when nothing listens there", async () => {
    const closed = Net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const address = closed.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    await new Promise<void>((resolve) => closed.close(() => resolve()))
    expect(await serveOn(`postgres://orgplane@127.0.0.1:${port}/orgplane`)).toEqual({
      code: 1,
      last: `error: Could not connect to the database: connect ECONNREFUSED 127.0.0.1:${port} (nothing listens there: is Postgres running, and are DATABASE_URL's host and port right?)`
    })
  })

  it.runIf(TestDatabase.postgresUrl !== undefined)("names the missing role, and the missing database (Postgres only)", async () => {
    const url = new URL(TestDatabase.postgresUrl ?? "")
    const role = new URL(url)
    role.username = "nobody_here"
    role.password = ""
    expect(await serveOn(role.href)).toEqual({
      code: 1,
      last: `error: Could not connect to the database: role "nobody_here" does not exist (create the role, or name another in DATABASE_URL)`
    })
    const database = new URL(url)
    database.pathname = "/no_such_database_here"
    expect(await serveOn(database.href)).toEqual({
      code: 1,
      last: `error: Could not connect to the database: database "no_such_database_here" does not exist (create the database (createdb), or name another in DATABASE_URL)`
    })
  })
})
