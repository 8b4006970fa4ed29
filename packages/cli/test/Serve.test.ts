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
})
