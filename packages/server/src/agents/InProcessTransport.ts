/**
 * The MCP tools' `Transport` on the server itself: each operation request runs through the server's own router, the
 * request edge (guard, log line, idempotency), the endpoint's authentication, policy, handler and audit, exactly as
 * the same request over HTTP would, with the credential of the caller of `/mcp`. Nothing leaves the process.
 */
import { Transport } from "@orgplane/mcp"
import * as Effect from "effect/Effect"
import { HttpRouter } from "effect/http"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"

/** Who the requests are made for: the headers that carry the caller's credential and where it came from. */
export interface Caller {
  /** `authorization` or `x-api-key`, and `orgplane-read-only` when the caller sent it; lower case. */
  readonly credential: Readonly<Record<string, string>>
  /** The request to `/mcp`: its address, `Host`, `User-Agent` and `X-Forwarded-For` go with every request made for it. */
  readonly request: HttpServerRequest.HttpServerRequest
}

/** What an in-process request carries of the request to `/mcp` (the audit log's address and user agent, links' host). */
const carried = ["host", "user-agent", "x-forwarded-for"] as const

/** The answer read whole, while the request's scope is open (a streamed body is read to its end). */
const read = (response: HttpServerResponse.HttpServerResponse) =>
  Effect.flatMap(Effect.context<never>(), (context) =>
    Effect.promise(async () => {
      const web = HttpServerResponse.toWeb(response, { context })
      return { status: web.status, headers: Object.fromEntries(web.headers), text: await web.text() }
    }))

const notJson = (status: number) =>
  new Transport.TransportError({ message: `The API answered ${status} with a body that is not JSON.` })

/** The in-process transport maker: one request for a caller, or a caller's `Transport`. */
export interface InProcess {
  readonly send: (caller: Caller, operation: Transport.OperationRequest) => Effect.Effect<Transport.OperationResponse, Transport.TransportError>
  /** The `Transport` of one caller, for the tools of one MCP request. */
  readonly forCaller: (caller: Caller) => Transport.Transport["Service"]
}

/**
 * The server's router as a transport maker: `router.asHttpEffect()` (its global middleware, the request edge, and
 * every route), run with the services it was built with. Made once, at build, inside the routes' layer.
 */
export const make: Effect.Effect<InProcess, never, HttpRouter.HttpRouter> = Effect.gen(function*() {
  const router = yield* HttpRouter.HttpRouter
  const services = yield* Effect.context<never>()
  // Read when the first request is made: by then every route and the global middleware are registered.
  let app: ReturnType<HttpRouter.HttpRouter["asHttpEffect"]> | undefined

  /** One operation request for `caller`, answered by the router as an HTTP request would be. */
  const send = Effect.fn("InProcessTransport.send")(function*(caller: Caller, operation: Transport.OperationRequest) {
    app ??= router.asHttpEffect()
    const query = new URLSearchParams()
    for (const [name, value] of Object.entries(operation.query)) {
      for (const item of typeof value === "string" ? [value] : value) query.append(name, item)
    }
    const search = query.size === 0 ? "" : `?${query}`
    const headers: Record<string, string> = {}
    for (const name of carried) {
      const value = caller.request.headers[name]
      if (value !== undefined) headers[name] = value
    }
    Object.assign(headers, operation.headers, caller.credential, { accept: "application/json" })
    if (operation.body !== undefined) headers["content-type"] = "application/json"
    // The URL names the host when it can (a Host header passed Node's parser, which is not `new URL`).
    const host = headers["host"] !== undefined && URL.canParse(`http://${headers["host"]}`) ? headers["host"] : "localhost"
    const web = new Request(`http://${host}${operation.path}${search}`, {
      method: operation.method,
      headers,
      body: operation.body === undefined ? null : JSON.stringify(operation.body)
    })
    const request = HttpServerRequest.fromWeb(web).modify({ remoteAddress: caller.request.remoteAddress })
    let answer: Effect.Success<ReturnType<typeof read>> | undefined
    const handled = HttpEffect.toHandled(app, (_, response) => Effect.map(read(response), (whole) => void (answer = whole)))
    yield* handled.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.provideContext(services)
    )
    if (answer === undefined) return yield* new Transport.TransportError({ message: "The API sent no answer." })
    const { status, text } = answer
    const body = text === "" ? undefined : yield* Effect.try({ try: (): unknown => JSON.parse(text), catch: () => notJson(status) })
    return { status, headers: answer.headers, body } satisfies Transport.OperationResponse
  })

  return {
    send,
    forCaller: (caller: Caller): Transport.Transport["Service"] => ({ send: (operation) => send(caller, operation) })
  } satisfies InProcess
})
