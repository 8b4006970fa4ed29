/**
 * The API to AI agents as an MCP server, `/mcp` on the server's own port (Streamable HTTP, effect/ai's
 * `McpServer.layerHttp`), when `ORGPLANE_MCP=true`; with it the OAuth protected resource metadata (RFC 9728) that
 * tells a client how to present its credential.
 *
 * Every request to `/mcp` passes the gate first: an `Origin` other than the server's own and the allowed ones is 403, and the caller's
 * credential (`Authorization: Bearer <session token or API key>`, or `X-API-Key`) is checked by `GET /v1/me` run in
 * process; a refusal is the API's 401 with `WWW-Authenticate` naming the metadata document. Then the tools' requests
 * run through the server's own router with that credential (InProcessTransport.ts), each answered and audited as over
 * HTTP, with `Orgplane-Channel: mcp`; `Orgplane-Read-Only: true`, as the session's `initialize` sent it, goes with
 * every one of them (McpSessionNarrowing.ts).
 *
 * The tools are @orgplane/mcp's (`Tools.layer`): the four catalog tools, and the toolsets, each registered once when
 * a request first names it in `Orgplane-Mcp-Toolsets` (`Tools.ToolsetLoader`; an unknown one is 400 at the gate), a
 * request seeing those its session names.
 *
 * Beside it, on or off, the API's dry authorization over HTTP (`POST /v1/authorization-checks`, AuthorizationChecks.ts),
 * which `orgplane mcp serve` asks before a confirmation as `/mcp` asks it in process.
 */
import { Catalog, Server as McpServerInfo, Tools, Transport } from "@orgplane/mcp"
import { InvalidRequest, InvalidRequestResponse, mcpToolsetsHeader, readOnlyHeader } from "@orgplane/schema"
import * as McpServer from "effect/ai/McpServer"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as HttpRouter from "effect/http/HttpRouter"
import * as Headers from "effect/http/Headers"
import * as HttpEffect from "effect/http/HttpEffect"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { ServerConfig, type ServerSettings } from "../platform/Config.js"
import { sign } from "../platform/Crypto.js"
import { CursorKey } from "../platform/Keyset.js"
import { baseUrlOf } from "../platform/PublicUrl.js"
import { VERSION } from "../Version.js"
import { AgentsConfig, type AgentsSettings } from "./AgentsConfig.js"
import * as AuthorizationChecks from "./AuthorizationChecks.js"
import * as InProcessTransport from "./InProcessTransport.js"
import * as McpInput from "./McpInput.js"
import * as McpOrigin from "./McpOrigin.js"
import * as McpSessionNarrowing from "./McpSessionNarrowing.js"

/** Where the MCP server is served. */
export const path = "/mcp"

/** The protected resource metadata of `/mcp` (RFC 9728 §3.1: the resource's path after the well-known one). */
export const metadataPath = `/.well-known/oauth-protected-resource${path}`

/** The same document at the host's well-known path, for clients that ask there first. */
export const rootMetadataPath = "/.well-known/oauth-protected-resource"

/**
 * The routes served beside the API (for the request edge's table: log lines, the guard's body limit): the dry
 * authorization's always, `/mcp` and its metadata when MCP is on.
 */
export const routesOf = (settings: AgentsSettings): ReadonlyArray<readonly [method: string, path: `/${string}`]> => [
  ...AuthorizationChecks.routes,
  ...(settings.mcp
    ? [
      ...(["POST", "GET", "DELETE", "PUT", "PATCH", "OPTIONS"] as const).map((method) => [method, path] as const),
      ["GET", metadataPath] as const,
      ["GET", rootMetadataPath] as const
    ]
    : [])
]

/** Every route this area may add, MCP on or off: what the test suite's contract check leaves to this module. */
export const routes = routesOf({ mcp: true, allowedOrigins: [] })

/** The server's public base URL as a client reaches `/mcp` (platform/PublicUrl.ts). */
const publicBase = (settings: ServerSettings, request: HttpServerRequest.HttpServerRequest) => baseUrlOf(settings, request.headers.host)

/**
 * RFC 9728's document: the resource, and that its bearer goes in the `Authorization` header. No authorization server:
 * orgplane issues session tokens (`POST /v1/auth/sign-in`) and API keys (`POST /v1/api-keys`), not OAuth tokens.
 */
const metadata = (settings: ServerSettings) => (request: HttpServerRequest.HttpServerRequest) => {
  const base = publicBase(settings, request)
  return Effect.succeed(HttpServerResponse.jsonUnsafe({
    resource: `${base}${path}`,
    bearer_methods_supported: ["header"],
    resource_name: "orgplane",
    resource_documentation: `${base}/docs`
  }, { headers: { "cache-control": "no-store" } }))
}

/** The request header naming the toolsets `/mcp` serves besides the catalog tools: `teams,members`. */
export const toolsetsHeader = mcpToolsetsHeader

const { requestedToolsets } = McpSessionNarrowing

/**
 * Every toolset is registered once, when a request first names it; a request sees the catalog tools and the toolsets
 * its `Orgplane-Mcp-Toolsets` names (and, inside, only the operations its caller may take: @orgplane/mcp's own
 * visibility).
 */
const requestedToolsetsOnly = () => {
  // Each toolset tool's group, by the tool's name; the catalog tools are none of them.
  const toolsetOf = new Map(Catalog.served().map((operation) => [Catalog.toolNameOf(operation), operation.group]))
  return McpServer.visibility((options: McpServer.MiddlewareOptions) => {
    const group = toolsetOf.get(options.target)
    return Effect.succeed(group === undefined || requestedToolsets(options.headers).includes(group))
  })
}

/** The message of a request naming a toolset there is not, or undefined. */
const unknownToolsets = (headers: Readonly<Record<string, string | undefined>>) => {
  const groups = Catalog.groups()
  const unknown = requestedToolsets(headers).filter((name) => !groups.includes(name))
  return unknown.length === 0 ? undefined : `Unknown toolset ${unknown.join(", ")} in Orgplane-Mcp-Toolsets; the toolsets are ${groups.join(", ")}.`
}

const encodeInvalidRequest = Schema.encodeSync(InvalidRequestResponse)

const originRefused = HttpServerResponse.jsonUnsafe({
  error: "forbidden",
  reason: "origin_not_allowed",
  message: "This Origin may not call /mcp: only the server's own origin and those its operator lists in ORGPLANE_MCP_ALLOWED_ORIGINS may."
}, { status: 403 })

/**
 * The request as the tools and the MCP server read it once the gate admitted it: the same request, its body as the
 * request guard read it included (through the prototype: `modify` would make a new request of the consumed stream),
 * without `Origin` (admitted), and with its session's narrowing in place of its own headers (McpSessionNarrowing.ts).
 */
const admittedRequest = (request: HttpServerRequest.HttpServerRequest, narrowing: McpSessionNarrowing.Narrowing): HttpServerRequest.HttpServerRequest => {
  const fixed = (headers: Headers.Headers, name: string, value: string | undefined) =>
    value === undefined ? Headers.remove(headers, name) : Headers.set(headers, name, value)
  const headers = fixed(fixed(Headers.remove(request.headers, "origin"), readOnlyHeader, narrowing.readOnly), toolsetsHeader, narrowing.toolsets)
  const admitted: HttpServerRequest.HttpServerRequest = Object.create(request, { headers: { value: headers } })
  return admitted
}

/**
 * The gate around every `/mcp` route: the origin (McpOrigin.ts, the one rule: the MCP server is handed the request
 * without its `Origin` once admitted, and admits none itself), a POST's batch size and ids (McpInput.ts), then the
 * session's narrowing (McpSessionNarrowing.ts: `Orgplane-Read-Only` and the toolsets as `initialize` sent them), then
 * the credential (`GET /v1/me` in process, so exactly the API's
 * resolution and refusals), then the request with the caller's `Transport`. A 401 adds `resource_metadata` to the
 * API's own challenge (RFC 9728 §5.1); any other refusal of `/v1/me` (a bad `Orgplane-Read-Only`, the database
 * unavailable) is answered as the API answered it.
 */
const Gate = (toolsets: Tools.ToolsetLoader) => HttpRouter.middleware<{ provides: Transport.Transport }>()(Effect.gen(function*() {
  const settings = yield* AgentsConfig
  const server = yield* ServerConfig
  const inProcess = yield* InProcessTransport.make
  const allowed = new Set(settings.allowedOrigins)
  const sessions = McpSessionNarrowing.make()
  return (httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (!McpOrigin.admits(allowed, server, request.headers)) return originRefused
      if (request.method === "POST") {
        // A body that cannot be read is the MCP server's to answer, as it reads it again.
        const refused = McpInput.refusalOf(yield* Effect.orElseSucceed(request.text, () => ""))
        if (refused !== undefined) return HttpServerResponse.jsonUnsafe(refused.body, { status: refused.status })
      }
      const applied = sessions.apply(request.headers)
      if (applied._tag === "Refused") {
        return HttpServerResponse.jsonUnsafe(encodeInvalidRequest(InvalidRequest.field([applied.header], applied.message)), { status: 400 })
      }
      const admitted = admittedRequest(request, applied.narrowing)
      const unknown = unknownToolsets(admitted.headers)
      if (unknown !== undefined) {
        return HttpServerResponse.jsonUnsafe(encodeInvalidRequest(InvalidRequest.field([toolsetsHeader], unknown)), { status: 400 })
      }
      const transport = inProcess.forCaller(InProcessTransport.callerOf(admitted))
      const me = yield* transport.send({ operation: "users.me", method: "GET", path: "/v1/me", query: {}, headers: {}, body: undefined })
      if (me.status === 401) {
        const challenge = me.headers["www-authenticate"] ?? "Bearer"
        const resourceMetadata = `resource_metadata="${publicBase(server, request)}${metadataPath}"`
        return HttpServerResponse.jsonUnsafe(me.body, {
          status: 401,
          headers: { "www-authenticate": challenge === "Bearer" ? `Bearer ${resourceMetadata}` : `${challenge}, ${resourceMetadata}` }
        })
      }
      if (me.status !== 200) return HttpServerResponse.jsonUnsafe(me.body, { status: me.status })
      // The tools ask who the caller is too (@orgplane/mcp's Caller.read): the answer just read, not a second request.
      const knowingCaller: Transport.Transport["Service"] = {
        ...transport,
        send: (operation) => operation.operation === "users.me" && Object.keys(operation.headers).length === 0 ? Effect.succeed(me) : transport.send(operation)
      }
      yield* toolsets.ensure(requestedToolsets(admitted.headers))
      const response = yield* httpEffect.pipe(
        Effect.provideService(Transport.Transport, knowingCaller),
        Effect.provideService(HttpServerRequest.HttpServerRequest, admitted)
      )
      const session = request.headers[McpSessionNarrowing.sessionHeader]
      if (session === undefined) {
        // An initialize answered with a session: its narrowing holds for the session. The MCP server names the session
        // as the answer is sent (a pre-response handler of its own, added while it ran): this one runs after it.
        yield* HttpEffect.appendPreResponseHandler((_, answer) => {
          const opened = answer.headers[McpSessionNarrowing.sessionHeader]
          if (opened !== undefined) sessions.opened(opened, request.headers)
          return Effect.succeed(answer)
        })
      } else if (request.method === "DELETE" && response.status === 204) sessions.ended(session)
      return response
    }).pipe(Effect.catchTag("TransportError", (error) => Effect.die(error)))
}))

/**
 * The tools, the toolsets registered by `toolsets` when first named, confirmation tokens signed with a key derived
 * from the instance's cursor key (so every process of a cluster honours the tokens of the others).
 */
const registrations = (toolsets: Tools.ToolsetLoader) =>
  Effect.map(CursorKey, (cursorKey) =>
    Tools.layer({ confirmationKey: sign(cursorKey, "orgplane mcp confirmation key") }, toolsets).pipe(
      Layer.provide(requestedToolsetsOnly().layer)
    ))

/** The dry authorization's route; `/mcp` and the metadata documents, behind the gate, when MCP is on. */
export const layer: Layer.Layer<
  never,
  Tools.OptionsError | Cause.IllegalArgumentError,
  ServerConfig | AgentsConfig | CursorKey | HttpRouter.HttpRouter
> = Layer.unwrap(Effect.gen(function*() {
  const settings = yield* AgentsConfig
  const serverSettings = yield* ServerConfig
  if (!settings.mcp) return AuthorizationChecks.layer
  const toolsets = Tools.makeToolsetLoader()
  const mcp = McpServer.layerHttp({
    name: McpServerInfo.name,
    version: VERSION,
    instructions: McpServerInfo.instructions,
    path,
    protocols: McpServerInfo.protocols,
    // None: the gate admits a browser's origin (McpOrigin.ts) and hands the request on without it.
    allowedOrigins: [],
    // A client ends its session (DELETE with its Mcp-Session-Id), so the server forgets it; the gate ran first.
    allowSessionTermination: true,
    registrations: yield* registrations(toolsets)
  })
  return Layer.mergeAll(
    Layer.provide(mcp, Gate(toolsets).layer),
    HttpRouter.add("GET", metadataPath, metadata(serverSettings)),
    HttpRouter.add("GET", rootMetadataPath, metadata(serverSettings)),
    AuthorizationChecks.layer
  )
}))
