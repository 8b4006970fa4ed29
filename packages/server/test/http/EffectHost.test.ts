/**
 * `ApiLayer` served by an Effect host's own HTTP server, as the README shows it: `HttpRouter.serve(ApiLayer(options),
 * { routerConfig })` on `NodeHttpServer` with `createHttpServer`. That server listens before the routes are built: a
 * request meanwhile is held and answered once they are (the liveness probe at once), and a stop meanwhile answers it 503 at once. The API answers, writes reach the database, and the services are built
 * once: on a data folder, which only one holder may open (a second build of the database would be refused at start).
 * The embedded database only: with DATABASE_URL the server reads it and not the folder (and would open the database it
 * names, not a fresh one), so nothing would tell one build from two.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpRouter, HttpServer } from "effect/http"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import * as Fiber from "effect/Fiber"
import { ApiLayer, createHttpServer, routerConfig } from "../../src/Server.js"
import * as TestDatabase from "../support/TestDatabase.js"
import { encryptionKeys } from "../support/TestServer.js"

describe.skipIf(TestDatabase.onPostgres)("ApiLayer on an Effect host's server (embedded)", () => {
  it.live("serves the API from one build of its services", () =>
    Effect.gen(function*() {
      const dataDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-effect-host-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true })))
      const served = HttpRouter.serve(ApiLayer({ dataDir, encryptionKeys, passwordCost: 10, logLevel: "warn" }), {
        routerConfig,
        disableLogger: true
      }).pipe(Layer.provideMerge(NodeHttpServer.layer(createHttpServer, { host: "127.0.0.1", port: 0 })))
      const context = yield* Layer.build(served)
      const url = HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "")
      const health = yield* Effect.promise(() => fetch(`${url}/health`))
      expect(health.status).toBe(200)
      const signedUp = yield* Effect.promise(() =>
        fetch(`${url}/v1/auth/sign-up`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: "host@example.com", password: "correct horse battery", name: "Host" })
        })
      )
      expect(signedUp.status).toBe(201)
      const { session } = (yield* Effect.promise(() => signedUp.json())) as { session: { token: string } }
      const me = yield* Effect.promise(() => fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${session.token}` } }))
      expect(me.status).toBe(200)
      expect(yield* Effect.promise(() => me.json())).toMatchObject({ user: { email: "host@example.com" } })
    }).pipe(Effect.scoped), 60_000)

  /**
   * The README's composition on a fresh data folder, with `GET <path>` (`/health` unless said) sent on a raw
   * connection the moment the server listens, while the routes are still being built: whether it was sent before the
   * app's listener was there, whether the answer came before it was, and the answer's status line and body once the
   * server closes the connection or answers.
   */
  const startingWithARequest = (dataDir: string, path = "/health") =>
    Effect.gen(function*() {
      // The hold outlasts the slowest build of a fresh folder on a loaded machine (the default, 10 s, does not in CI):
      // this test is about the answer once the routes are there; the 503 after the hold has its own tests.
      const server = createHttpServer({ holdMillis: 50_000 })
      let sentBeforeServing: boolean | undefined
      let answeredBeforeServing: boolean | undefined
      const answer = new Promise<string>((resolve, reject) =>
        server.once("listening", () => {
          const socket = Net.connect((server.address() as Net.AddressInfo).port, "127.0.0.1", () => {
            // One listener is the server's own bookkeeping: the app's comes when `serve` attaches it.
            sentBeforeServing = server.listenerCount("request") === 1
            socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`)
          })
          let received = ""
          socket.on("data", (data) => {
            answeredBeforeServing ??= server.listenerCount("request") === 1
            received += data.toString("latin1")
          })
          socket.once("close", () => resolve(received))
          socket.once("error", reject)
        })
      )
      const served = HttpRouter.serve(ApiLayer({ dataDir, encryptionKeys, passwordCost: 10, logLevel: "warn" }), {
        routerConfig,
        disableLogger: true
      }).pipe(Layer.provideMerge(NodeHttpServer.layer(() => server, { host: "127.0.0.1", port: 0 })))
      return { served, answer, sentBeforeServing: () => sentBeforeServing, answeredBeforeServing: () => answeredBeforeServing, server }
    })

  const folder = Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "orgplane-effect-host-"))),
    (dataDir) => Effect.sync(() => Fs.rmSync(dataDir, { recursive: true, force: true }))
  )

  it.live("answers a request that came while the routes were being built, once they are", () =>
    Effect.gen(function*() {
      const { answer, sentBeforeServing, served } = yield* startingWithARequest(yield* folder)
      yield* Layer.build(served)
      const received = yield* Effect.promise(() => answer)
      expect(sentBeforeServing()).toBe(true)
      expect(received.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
    }).pipe(Effect.scoped), 60_000)

  it.live("answers the liveness probe at once while the routes are being built, not holding it for them", () =>
    Effect.gen(function*() {
      const { answer, answeredBeforeServing, sentBeforeServing, served } = yield* startingWithARequest(yield* folder, "/health/live")
      const building = yield* Effect.forkChild(Effect.scoped(Layer.build(served)))
      const received = yield* Effect.promise(() => answer)
      expect(sentBeforeServing()).toBe(true)
      expect(answeredBeforeServing()).toBe(true)
      expect(received.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
      expect(JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4))).toEqual({ status: "up", checks: [] })
      yield* Fiber.interrupt(building)
    }).pipe(Effect.scoped), 60_000)

  it.live("a stop while the routes are being built answers that request 503 with Retry-After at once", () =>
    Effect.gen(function*() {
      const { answer, sentBeforeServing, served, server } = yield* startingWithARequest(yield* folder)
      const building = yield* Effect.forkChild(Effect.scoped(Layer.build(served)))
      // Stopped once the request has reached the server (it is held: no one to answer it yet).
      yield* Effect.promise(() => new Promise<void>((resolve) => server.once("connection", (socket: Net.Socket) => socket.once("data", () => setImmediate(resolve)))))
      yield* Fiber.interrupt(building)
      const received = yield* Effect.promise(() => answer)
      expect(sentBeforeServing()).toBe(true)
      expect(received.split("\r\n")[0]).toBe("HTTP/1.1 503 Service Unavailable")
      expect(received.toLowerCase()).toContain("retry-after: 5")
      expect(server.listening).toBe(false)
    }).pipe(Effect.scoped), 60_000)
})
