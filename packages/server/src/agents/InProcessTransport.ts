/**
 * The MCP tools' `Transport` on the server itself: each operation request runs through the server's own router, the
 * request edge (guard, log line, idempotency), the endpoint's authentication, policy, handler and audit, exactly as
 * the same request over HTTP would, with the credential of the caller of `/mcp`; a request only checked (`authorize`)
 * runs the same way up to its handler, which stands aside for the operation's check. Nothing leaves the process.
 */
import { Transport } from "@orgplane/mcp"
import { authorizationCheckHeader } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { API_KEY_PREFIX } from "../identity/ApiKeys.js"
import * as AuthorizationCheck from "../platform/AuthorizationCheck.js"

/** Who the requests are made for: the headers that carry the caller's credential and where it came from. */
export interface Caller {
  /** `authorization` or `x-api-key`, and `orgplane-read-only` when the caller sent it; lower case. */
  readonly credential: Readonly<Record<string, string>>
  /** The request to `/mcp`: its address, `Host`, `User-Agent` and `X-Forwarded-For` go with every request made for it. */
  readonly request: HttpServerRequest.HttpServerRequest
}

/**
 * The credential headers of a request to `/mcp` or to a check, as the API takes them: a bearer token that is an API key
 * goes as `x-api-key` (an MCP client has one place for a token), and `orgplane-read-only` goes with them.
 */
export const credentialOf = (headers: HttpServerRequest.HttpServerRequest["headers"]): Record<string, string> => {
  const credential: Record<string, string> = {}
  const bearer = /^bearer\s+(\S+)\s*$/i.exec(headers["authorization"] ?? "")?.[1]
  if (bearer !== undefined && bearer.startsWith(`${API_KEY_PREFIX}_`)) credential["x-api-key"] = bearer
  else if (headers["authorization"] !== undefined) credential["authorization"] = headers["authorization"]
  if (headers["x-api-key"] !== undefined && credential["x-api-key"] === undefined) credential["x-api-key"] = headers["x-api-key"]
  const readOnly = headers[Transport.readOnlyHeader]
  if (readOnly !== undefined) credential[Transport.readOnlyHeader] = readOnly
  return credential
}

/** The caller of `request`: its credential, and the request itself. */
export const callerOf = (request: HttpServerRequest.HttpServerRequest): Caller => ({ credential: credentialOf(request.headers), request })

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
  /**
   * The API's dry authorization of one request for `caller` (platform/AuthorizationCheck.ts): the request runs through
   * the router as `send` runs it, its handler standing aside for the operation's check; 204 with
   * `Orgplane-Authorization-Check: authorized`, or the refusal the request would get.
   */
  readonly authorize: (caller: Caller, operation: Transport.OperationRequest) => Effect.Effect<Transport.OperationResponse, Transport.TransportError>
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

  /** One operation request for `caller`, answered by the router as an HTTP request would be; only checked with `checking`. */
  const run = Effect.fnUntraced(function*(caller: Caller, operation: Transport.OperationRequest, checking: boolean) {
    app ??= router.asHttpEffect()
    const headers: Record<string, string> = {}
    for (const name of carried) {
      const value = caller.request.headers[name]
      if (value !== undefined) headers[name] = value
    }
    Object.assign(headers, operation.headers, caller.credential, { accept: "application/json" })
    if (operation.body !== undefined) headers["content-type"] = "application/json"
    // The URL names the host when it can (a Host header passed Node's parser, which is not `new URL`); it carries the
    // path as built and reaches the operation's own route, or nothing is run (`Transport.urlOf`).
    const host = headers["host"] !== undefined && URL.canParse(`http://${headers["host"]}`) ? headers["host"] : "localhost"
    const url = yield* Transport.urlOf(`http://${host}`, operation)
    const web = new Request(url, {
      method: operation.method,
      headers,
      body: operation.body === undefined ? null : JSON.stringify(operation.body)
    })
    const request = HttpServerRequest.fromWeb(web).modify({ remoteAddress: caller.request.remoteAddress })
    let answer: Effect.Success<ReturnType<typeof read>> | undefined
    const handled = HttpEffect.toHandled(app, (_, response) => Effect.map(read(response), (whole) => void (answer = whole)))
    yield* handled.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.provideService(AuthorizationCheck.Checking, checking),
      Effect.provideContext(services)
    )
    if (answer === undefined) return yield* new Transport.TransportError({ message: "The API sent no answer." })
    const { status, text } = answer
    const body = text === "" ? undefined : yield* Effect.try({ try: (): unknown => JSON.parse(text), catch: () => notJson(status) })
    return { status, headers: answer.headers, body } satisfies Transport.OperationResponse
  })

  const send = Effect.fn("InProcessTransport.send")((caller: Caller, operation: Transport.OperationRequest) => run(caller, operation, false))
  const authorize = Effect.fn("InProcessTransport.authorize")(function*(caller: Caller, operation: Transport.OperationRequest) {
    const answer = yield* run(caller, operation, true)
    // Only the operation's check passing answers so; anything else is the refusal the request would get.
    if (answer.status === 204 && answer.headers[authorizationCheckHeader] === "authorized") return answer
    return { ...answer, headers: { ...answer.headers, [authorizationCheckHeader]: "refused" } } satisfies Transport.OperationResponse
  })
  return {
    send,
    authorize,
    forCaller: (caller: Caller): Transport.Transport["Service"] => ({
      send: (operation) => send(caller, operation),
      authorize: (operation) => authorize(caller, operation)
    })
  } satisfies InProcess
})
