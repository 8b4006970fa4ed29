/**
 * `makeNodeListener` and `makeWebHandler` on a database they cannot connect to: they reject with an `Error` whose
 * message is the reason in one line, the driver's error kept as its `cause`.
 */
import * as NodeCrypto from "node:crypto"
import * as Net from "node:net"
import { describe, expect, it } from "vitest"
import { makeNodeListener, makeWebHandler } from "../src/Server.js"
import * as TestDatabase from "./support/TestDatabase.js"

const encryptionKeys = `test:${NodeCrypto.randomBytes(32).toString("base64")}`
const options = (databaseUrl: string) => ({ databaseUrl, encryptionKeys, logLevel: "none" as const, durable: { cluster: { port: 0 } } })

/** A loopback port nothing listens on. */
const closedPort = async () => {
  const server = Net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return typeof address === "object" && address !== null ? address.port : 0
}

/** What a start rejected with: its message, whether it is one line, and whether it keeps the driver's error. */
const rejection = async (start: () => Promise<unknown>) => {
  const error: unknown = await start().then(() => undefined, (error: unknown) => error)
  if (!(error instanceof Error)) throw new Error(`expected a rejection with an Error, got ${String(error)}`)
  const cause: unknown = error.cause
  return {
    message: error.message,
    oneLine: !error.message.includes("\n"),
    cause: typeof cause === "object" && cause !== null && "_tag" in cause ? cause._tag : undefined
  }
}

describe("an embedding host's server that cannot reach its database", { timeout: 60_000 }, () => {
  it("rejects with the reason in one line: nothing listens on the port", async () => {
    const port = await closedPort()
    const expected = {
      message: `Could not connect to the database: connect ECONNREFUSED 127.0.0.1:${port} (nothing listens there: is Postgres running, and are DATABASE_URL's host and port right?)`,
      oneLine: true,
      cause: "SqlError"
    }
    expect(await rejection(() => makeNodeListener(options(`postgres://orgplane@127.0.0.1:${port}/orgplane`)))).toEqual(expected)
    const { handler, dispose } = makeWebHandler(options(`postgres://orgplane@127.0.0.1:${port}/orgplane`))
    try {
      expect(await rejection(() => handler(new Request("http://localhost/health")))).toEqual(expected)
    } finally {
      await dispose()
    }
  })

  it.runIf(TestDatabase.postgresUrl !== undefined)("rejects with the reason in one line: no such role (Postgres only)", async () => {
    const url = new URL(TestDatabase.postgresUrl ?? "")
    url.username = "nobody"
    url.password = ""
    const expected = {
      message: `Could not connect to the database: role "nobody" does not exist (create the role, or name another in DATABASE_URL)`,
      oneLine: true,
      cause: "SqlError"
    }
    expect(await rejection(() => makeNodeListener(options(url.href)))).toEqual(expected)
    const { handler, dispose } = makeWebHandler(options(url.href))
    try {
      expect(await rejection(() => handler(new Request("http://localhost/health")))).toEqual(expected)
    } finally {
      await dispose()
    }
  })
})
