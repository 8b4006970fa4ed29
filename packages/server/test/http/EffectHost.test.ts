/**
 * `ApiLayer` served by an Effect host's own HTTP server, as the README shows it: `HttpRouter.serve(ApiLayer(options),
 * { routerConfig })` on `NodeHttpServer`. The API answers, writes reach the database, and the services are built
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
import { createServer } from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { ApiLayer, routerConfig } from "../../src/Server.js"
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
      }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 })))
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
})
