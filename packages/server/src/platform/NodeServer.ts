/**
 * Node's HTTP server as orgplane listens with it (`createHttpServer`): it stops gracefully with long keep-alive, it
 * holds the requests that come while it listens before the app's listener is attached (an Effect host's server
 * listens, then builds the routes: seconds, on a first start), answering them once the app is there, or 503 with
 * `Retry-After` when it is not within `startupHoldMillis` or the server stops first (the liveness probe,
 * `GET /health/live`, is not held: answered at once), and what its parser refuses
 * is answered in the API's error shape (`ClientErrors.ts`).
 */
import { HealthReport, ServiceUnavailable, ServiceUnavailableResponse } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import { IncomingMessage, Server, type ServerOptions, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { clientErrorListener } from "./ClientErrors.js"
import { retryAfterSeconds } from "./Unavailable.js"

/** How long a stopping server lets requests in flight finish before it closes their connections. */
export const shutdownGraceMillis = 10_000

/**
 * How long a request that came before the app's listener waits for it; then it is answered 503 with `Retry-After`.
 * A first start on a slow machine builds the routes in seconds; a client waits no longer than its retry would.
 */
export const startupHoldMillis = 10_000

const unavailable = (message: string) => JSON.stringify(Schema.encodeSync(ServiceUnavailableResponse)(new ServiceUnavailable({ message })))

/** A held request's answer when the app is not there for it: 503, retry in `retryAfterSeconds`, on a closing connection. */
const answerUnavailable = (response: ServerResponse, message: string) => {
  if (response.headersSent || response.writableEnded) return
  const body = unavailable(message)
  response.writeHead(503, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    "retry-after": String(retryAfterSeconds),
    connection: "close"
  }).end(body)
}

/** `/health/live`'s answer: the process serves requests, the app's listener or not. */
const live = JSON.stringify(Schema.encodeSync(HealthReport)({ status: "up", checks: [] }))

/**
 * Whether a request is the liveness probe, `GET /health/live`, under a mount or not (the mount is the host's, and
 * the held request's URL is the host's too): answered at once while requests are held, so a slow first start does
 * not fail the probe that restarts the process.
 */
const isLivenessProbe = (request: IncomingMessage) => {
  const path = (request.url ?? "").split("?")[0] ?? ""
  return request.method === "GET" && path.endsWith("/health/live")
}

const answerLive = (response: ServerResponse) =>
  response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(live) }).end(live)

interface Held {
  readonly request: IncomingMessage
  readonly response: ServerResponse
  readonly timer: ReturnType<typeof setTimeout>
}

/**
 * Node's HTTP server, stopping gracefully with long keep-alive. `close()` stops accepting and ends every connection
 * that awaits no answer, then each other one as soon as its answers are sent, and whatever is still open after
 * `shutdownGraceMillis`: a stop takes as long as the requests in flight, never a keep-alive timeout. Node's own
 * `closeIdleConnections` would miss a connection whose answer is sent but whose request body is not all read (a
 * 413 to a body announced and never sent): the parser still calls it busy.
 */
class GracefulServer extends Server {
  /** Open connections, with how many of their requests await an answer. */
  readonly #awaiting = new Map<Socket, number>()
  #closing = false
  readonly #holdMillis: number
  /**
   * Requests emitted while listening and before the app's listener was attached, in order; `undefined` when not
   * holding. It holds from listening when no `request` listener but its own is attached then (an Effect host's
   * `NodeHttpServer.layer` listens, then `HttpRouter.serve` attaches the listener once the routes are built), or
   * when `holdEarlyRequests` asked for it before listening (`Server.layer`, whose server a test may watch with a
   * listener of its own). The first `request` listener added while listening is the app's: the held requests are
   * handed to it. A host that attaches its listener before listening holds nothing.
   */
  #early: Array<Held> | undefined = undefined
  #holdAsked = false

  constructor(options: ServerOptions, holdMillis: number) {
    super(options)
    this.#holdMillis = holdMillis
    this.on("newListener", (event: string | symbol) => {
      const early = this.#early
      if (event !== "request" || !this.listening || early === undefined) return
      this.#early = undefined
      for (const held of early) clearTimeout(held.timer)
      // After the listener is added (`newListener` comes before), and the ones `serve` adds with it.
      if (early.length > 0) process.nextTick(() => early.forEach((held) => this.emit("request", held.request, held.response)))
    })
    this.on("connection", (socket: Socket) => {
      this.#awaiting.set(socket, 0)
      socket.once("close", () => this.#awaiting.delete(socket))
    })
    this.on("request", (request: IncomingMessage, response: ServerResponse) => {
      const socket = request.socket
      this.#awaiting.set(socket, (this.#awaiting.get(socket) ?? 0) + 1)
      response.once("close", () => {
        const left = this.#awaiting.get(socket)
        if (left === undefined) return
        this.#awaiting.set(socket, left - 1)
        if (this.#closing && left === 1) socket.end()
      })
    })
    // Registered before anyone else's: the first to run once listening, before a listener could be added.
    this.on("listening", () => {
      if (this.#early === undefined && (this.#holdAsked || this.listenerCount("request") === 1)) this.#early = []
    })
  }

  /** Holds the requests that come after listening until a `request` listener is added (see `#early`). */
  holdEarlyRequests(): this {
    if (!this.listening) this.#holdAsked = true
    return this
  }

  override emit(event: string, ...args: Array<unknown>): boolean {
    const early = this.#early
    if (event === "request" && early !== undefined && this.listening) {
      const [request, response] = args
      if (request instanceof IncomingMessage && response instanceof ServerResponse) {
        if (isLivenessProbe(request)) {
          answerLive(response)
          return true
        }
        const timer = setTimeout(() => {
          const index = early.findIndex((held) => held.response === response)
          if (index === -1) return
          early.splice(index, 1)
          answerUnavailable(response, "The server is starting and is not serving yet; retry in a few seconds.")
        }, this.#holdMillis).unref()
        early.push({ request, response, timer })
        return true
      }
    }
    return super.emit(event, ...args)
  }

  override close(callback?: (error?: Error) => void): this {
    if (!this.#closing && this.listening) {
      this.#closing = true
      // Held requests will not be served: answered now, so the stop does not wait out their hold.
      const early = this.#early ?? []
      this.#early = undefined
      for (const held of early) {
        clearTimeout(held.timer)
        answerUnavailable(held.response, "The server is stopping; retry in a few seconds.")
      }
      for (const [socket, awaiting] of this.#awaiting) if (awaiting === 0) socket.end()
      const cut = setTimeout(() => this.closeAllConnections(), shutdownGraceMillis).unref()
      this.once("close", () => clearTimeout(cut))
    }
    return super.close(callback)
  }
}

/**
 * Node's HTTP server as the standalone server runs it, and as an Effect host should serve `ApiLayer` with: what its
 * parser refuses (a request line or header block over its limit, malformed HTTP) is answered in the API's error
 * shape (`ClientErrors.ts`), a request that comes before the app's listener is held for it (`GracefulServer`), and a
 * stop is graceful.
 *
 * An idle keep-alive connection is kept 65 s, longer than clients and proxies keep theirs (undici, so `fetch` and
 * the SDK, 4 s; load balancers commonly 60 s): the client closes first, so it never sends a request on a socket
 * the server is closing at that moment, which it would see as `ECONNRESET`. Node's default, 5 s, loses that race
 * whenever a client's idle timer runs late. Stopping does not wait for it (`GracefulServer`).
 *
 * `holdMillis` (default `startupHoldMillis`) bounds how long a request waits for the app's listener.
 */
export const createHttpServer = (options: { readonly holdMillis?: number | undefined } = {}): Server =>
  new GracefulServer({ keepAliveTimeout: 65_000 }, options.holdMillis ?? startupHoldMillis).on("clientError", clientErrorListener)

/**
 * `server`, made to hold the requests that reach it between listening and its first `request` listener even when
 * another listener (a test's watcher) is attached before, when it is one `createHttpServer` made (what `layer` does
 * with the server it listens with; a host's own server is left as it is).
 */
export const holdEarlyRequests = (server: Server): Server => server instanceof GracefulServer ? server.holdEarlyRequests() : server
