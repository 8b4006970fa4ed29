/** A test server on a free loopback port, for the scope, and plain HTTP against it. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { HttpServer } from "effect/http"
import { randomBytes } from "node:crypto"
import * as Server from "../../src/Server.js"
import { watched } from "./Contract.js"

/**
 * The encryption key test servers use unless told otherwise, one per test process: a server
 * on `DATABASE_URL` does not start without keys, and one on a given database would otherwise look for a key file in
 * its data folder.
 */
export const encryptionKeys = `test:${randomBytes(32).toString("base64")}`

export const start = Effect.fn("TestServer.start")(function*(options: Server.ServerOptions) {
  const context = yield* Layer.build(Server.layer({ host: "127.0.0.1", port: 0, encryptionKeys, ...options }, watched))
  return { url: HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address).replace(/\/$/, "") }
})

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
  /** Milliseconds from sending the request to reading the whole answer. */
  readonly millis: number
}

/** `GET url + path` through fetch, the body read as JSON when it is some. */
export const get = (url: string, path: string) =>
  Effect.promise(async (): Promise<Answer> => {
    const started = performance.now()
    const response = await fetch(`${url}${path}`)
    const text = await response.text()
    return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text), millis: performance.now() - started }
  })
