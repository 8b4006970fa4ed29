/**
 * `makeNodeListener` and `makeWebHandler` on a database they cannot connect to: they reject with an `Error` whose
 * message is the reason in one line, the driver's error kept as its `cause`. On a Node older than 22.19 they, and
 * the server's Layer, refuse at once with the CLI's line, and open nothing.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import * as NodeVersion from "../src/platform/NodeVersion.js"
import { layer, makeNodeListener, makeWebHandler } from "../src/Server.js"
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

describe("an embedding host's server on a Node older than 22.19", () => {
  /** Runs `run` as if on Node `version` (process.versions.node, which the entry points read), then restores it. */
  const onNode = async <A>(version: string, run: () => Promise<A>) => {
    const own = Object.getOwnPropertyDescriptor(process.versions, "node")!
    Object.defineProperty(process.versions, "node", { ...own, value: version })
    try {
      return await run()
    } finally {
      Object.defineProperty(process.versions, "node", own)
    }
  }

  it("is refused at once by makeNodeListener, makeWebHandler and the Layer, with the CLI's line, and opens nothing", async () => {
    const home = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-old-node-"))
    try {
      const settings = { dataDir: Path.join(home, "data"), encryptionKeys, logLevel: "none" as const, port: 0 }
      const refusal =
        "orgplane needs Node 22.19 or later and this is Node 20.20.2: install Node 24 from https://nodejs.org (or `nvm install 24`)"
      await onNode("20.20.2", async () => {
        expect(await rejection(() => makeNodeListener(settings))).toMatchObject({ message: refusal, oneLine: true })
        expect(() => makeWebHandler(settings)).toThrow(refusal)
        const exit = await Effect.runPromiseExit(Layer.build(layer(settings)).pipe(Effect.scoped))
        expect(Exit.isFailure(exit) && String(exit.cause)).toContain(refusal)
      })
      await onNode("22.18.0", async () => expect(() => makeWebHandler(settings)).toThrow("this is Node 22.18.0"))
      expect(await Fs.readdir(home)).toEqual([])
      // 22.19 and later are not refused (the rule itself: starting a server here would open a database).
      for (const version of ["22.19.0", "23.0.0", "24.11.1"]) expect(NodeVersion.refusal(version), version).toBeUndefined()
    } finally {
      await Fs.rm(home, { recursive: true, force: true })
    }
  })
})
