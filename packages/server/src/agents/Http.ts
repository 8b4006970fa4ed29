/**
 * The API to AI agents as an MCP server, `/mcp` on the server's own port (Streamable HTTP, effect/ai's
 * `McpServer.layerHttp`), when `ORGPLANE_MCP=true`; with it the OAuth protected resource metadata (RFC 9728) that
 * tells a client how to present its credential.
 *
 * Every request to `/mcp` passes the gate first: an `Origin` other than the allowed ones is 403, and the caller's
 * credential (`Authorization: Bearer <session token or API key>`, or `X-API-Key`) is checked by `GET /v1/me` run in
 * process; a refusal is the API's 401 with `WWW-Authenticate` naming the metadata document. Then the tools' requests
 * run through the server's own router with that credential (InProcessTransport.ts), each answered and audited as over
 * HTTP, with `Orgplane-Channel: mcp`; `Orgplane-Read-Only: true` on `/mcp` goes with every one of them.
 */
import { Transport } from "@orgplane/mcp"
import * as McpProtocol from "effect/ai/McpProtocol"
import * as McpServer from "effect/ai/McpServer"
import * as Tool from "effect/ai/Tool"
import * as Toolkit from "effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { HttpRouter } from "effect/http"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { API_KEY_PREFIX } from "../identity/ApiKeys.js"
import { ServerConfig, type ServerSettings } from "../platform/Config.js"
import { baseUrlOf } from "../platform/PublicUrl.js"
import { VERSION } from "../Version.js"
import { AgentsConfig, type AgentsSettings } from "./AgentsConfig.js"
import * as InProcessTransport from "./InProcessTransport.js"

/** Where the MCP server is served. */
export const path = "/mcp"

/** The protected resource metadata of `/mcp` (RFC 9728 §3.1: the resource's path after the well-known one). */
export const metadataPath = `/.well-known/oauth-protected-resource${path}`

/** The same document at the host's well-known path, for clients that ask there first. */
export const rootMetadataPath = "/.well-known/oauth-protected-resource"

/** The routes served beside the API when MCP is on (for the request edge's table: log lines, the guard's body limit). */
export const routesOf = (settings: AgentsSettings): ReadonlyArray<readonly [method: string, path: `/${string}`]> =>
  settings.mcp
    ? [
      ...(["POST", "GET", "DELETE", "PUT", "PATCH", "OPTIONS"] as const).map((method) => [method, path] as const),
      ["GET", metadataPath],
      ["GET", rootMetadataPath]
    ]
    : []

/** Every route `/mcp` may add, on or off: what the test suite's contract check leaves to this module. */
export const routes = routesOf({ mcp: true, allowedOrigins: [] })

/**
 * The server's public base URL as a client reaches `/mcp`: `ORGPLANE_PUBLIC_URL`, else the request's host under the
 * mount path (`ORGPLANE_BASE_PATH`).
 */
const publicBase = (settings: ServerSettings, request: HttpServerRequest.HttpServerRequest) => {
  const base = baseUrlOf(settings, request.headers.host)
  return settings.publicUrl === undefined ? `${base}${settings.basePath}` : base
}

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

/**
 * The credential headers of a request to `/mcp`, as the API takes them: a bearer token that is an API key goes as
 * `x-api-key` (an MCP client has one place for a token), and `orgplane-read-only` goes with them.
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

const originRefused = HttpServerResponse.jsonUnsafe({
  error: "forbidden",
  reason: "origin_not_allowed",
  message: "This Origin may not call /mcp: the server's operator lists the browser origins that may in ORGPLANE_MCP_ALLOWED_ORIGINS."
}, { status: 403 })

/**
 * The gate around every `/mcp` route: the origin, then the credential (`GET /v1/me` in process, so exactly the API's
 * resolution and refusals), then the request with the caller's `Transport`. A 401 adds `resource_metadata` to the
 * API's own challenge (RFC 9728 §5.1); any other refusal of `/v1/me` (a bad `Orgplane-Read-Only`, the database
 * unavailable) is answered as the API answered it.
 */
const Gate = HttpRouter.middleware<{ provides: Transport.Transport }>()(Effect.gen(function*() {
  const settings = yield* AgentsConfig
  const server = yield* ServerConfig
  const inProcess = yield* InProcessTransport.make
  const allowed = new Set(settings.allowedOrigins)
  return (httpEffect) =>
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers["origin"]
      if (origin !== undefined && !allowed.has(origin)) return originRefused
      const transport = inProcess.forCaller({ credential: credentialOf(request.headers), request })
      const me = yield* transport.send({ method: "GET", path: "/v1/me", query: {}, headers: {}, body: undefined })
      if (me.status === 401) {
        const challenge = me.headers["www-authenticate"] ?? "Bearer"
        const resourceMetadata = `resource_metadata="${publicBase(server, request)}${metadataPath}"`
        return HttpServerResponse.jsonUnsafe(me.body, {
          status: 401,
          headers: { "www-authenticate": challenge === "Bearer" ? `Bearer ${resourceMetadata}` : `${challenge}, ${resourceMetadata}` }
        })
      }
      if (me.status !== 200) return HttpServerResponse.jsonUnsafe(me.body, { status: me.status })
      return yield* Effect.provideService(httpEffect, Transport.Transport, transport)
    }).pipe(Effect.catchTag("TransportError", (error) => Effect.die(error)))
}))

/** A placeholder tool until the catalog tools land: who the caller is, through the in-process transport. */
const WhoAmI = Tool.make("whoami", {
  description: "The caller: GET /v1/me with the credential of this MCP session.",
  success: Schema.Struct({ status: Schema.Number, body: Schema.Unknown }),
  dependencies: [Transport.Transport]
})

const Placeholder = Toolkit.make(WhoAmI)

const registrations = McpServer.toolkit(Placeholder).pipe(
  Layer.provide(Placeholder.toLayer({
    whoami: () =>
      Effect.flatMap(Transport.Transport, (transport) =>
        transport.send({ method: "GET", path: "/v1/me", query: {}, headers: { [Transport.channelHeader]: "mcp" }, body: undefined })).pipe(
          Effect.map(({ body, status }) => ({ status, body })),
          Effect.orDie
        )
  }))
)

/** `/mcp` and the metadata documents, behind the gate; nothing at all when MCP is off. */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const settings = yield* AgentsConfig
  const serverSettings = yield* ServerConfig
  if (!settings.mcp) return Layer.empty
  const mcp = McpServer.layerHttp({
    name: "orgplane",
    version: VERSION,
    path,
    protocols: [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26, McpProtocol.v2026_07_28],
    allowedOrigins: settings.allowedOrigins,
    registrations
  })
  return Layer.mergeAll(
    Layer.provide(mcp, Gate.layer),
    HttpRouter.add("GET", metadataPath, metadata(serverSettings)),
    HttpRouter.add("GET", rootMetadataPath, metadata(serverSettings))
  )
}))
