/**
 * A real MCP server on 127.0.0.1, built with `@modelcontextprotocol/sdk` (`McpServer` + `StreamableHTTPServerTransport`)
 * and served over Streamable HTTP at `path` (default `/mcp`).
 *
 * Stateless: every POST gets a fresh `McpServer` and transport (`sessionIdGenerator: undefined`), so no session id
 * is issued, a test may call tools without replaying `initialize`, and nothing outlives a request. GET (the
 * optional server-to-client stream) and DELETE answer 405, which the SDK client accepts. Responses are SSE
 * (`text/event-stream`, the SDK default) unless `json: true` (plain `application/json`).
 *
 * Tools (annotations as MCP 2025-06-18 defines them):
 * - `echo` `{ text }` → the text (readOnlyHint);
 * - `add` `{ a, b }` → the sum, also as `structuredContent` `{ sum }` under an output schema (readOnly, idempotent);
 * - `delete_item` `{ id }` → "deleted <id>" (destructiveHint);
 * - `fail` → a result with `isError: true` (the tool ran and failed);
 * - `protocol_error` → a JSON-RPC error (-32603). The SDK's `McpServer` turns anything a tool throws into an
 *   `isError` result, so this one is answered by the fake itself, before the SDK, with a real JSON-RPC error body;
 * - `large_output` `{ bytes }` → a text of that many bytes (a tool result too large to keep);
 * - `extraTools: n` adds `tool_001` … (read-only, answering their name), for listings longer than a client keeps.
 * `toolsPageSize` makes `tools/list` answer pages of that size with a `nextCursor` (an offset; a cursor that is not
 * one is a JSON-RPC invalid-params error); by default the SDK answers every tool at once.
 *
 * Authentication (`auth`):
 * - `"none"` (default);
 * - `{ apiKey, header? }`: the key as `Authorization: Bearer <key>` (default) or as `x-api-key: <key>`; missing or
 *   wrong → 401 with `WWW-Authenticate` (`Bearer realm="mcp"`, or `ApiKey header="x-api-key"`);
 * - `"oauth"` or `{ oauth: { requiredScopes?, authorizationServer?, authorizationServerOptions? } }`: a resource
 *   server (RFC 9728). Without a valid token → 401 `WWW-Authenticate: Bearer resource_metadata="<url>"` (plus
 *   `error="invalid_token"` when a token was sent, and `scope="..."` when scopes are required); the protected-resource metadata is served at
 *   `/.well-known/oauth-protected-resource<path>` and `/.well-known/oauth-protected-resource`, naming `<url><path>`
 *   as `resource` and the authorization server. Tokens are those of a `FakeOAuth` (its own, started with the fake
 *   and closed with it, unless one is passed); a token asked for another `resource` is refused; a token without
 *   every `requiredScopes` → 403 `WWW-Authenticate: Bearer error="insufficient_scope", scope="..."`.
 *
 * Misbehaviour (`setMode`, or at start: `redirect`, `slowMs`, `oversizedBytes` set the first mode; at most one):
 * `redirect` answers 307 (or 308) to `to` for the MCP path; `slow` waits before answering normally; `hang` never
 * answers; `oversized` answers every MCP request 200 with a body of N bytes (not a JSON-RPC answer: the client must
 * cap before parsing), `application/json` or `text/event-stream` (one huge `data:` line), with `content-length`
 * unless `advertise: false` (chunked, so only counting the streamed bytes catches it); `status` answers a bare
 * status (with `headers` and a `body` if given). `slow`, `hang` and `status` may name an `rpcMethod`: then only
 * requests of that JSON-RPC method misbehave (`tools/call`: the session initializes, the call hangs). The
 * well-known documents are never affected.
 *
 * `requests` records every request: method, path, headers, the JSON-RPC method of a POST, the status answered.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { ErrorCode, ListToolsRequestSchema, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js"
import * as Http from "node:http"
import type * as Net from "node:net"
import { z } from "zod"
import * as FakeOAuth from "./FakeOAuth.js"

export interface OAuthOptions {
  /** Scopes every call needs (default none). */
  readonly requiredScopes?: ReadonlyArray<string>
  /** An authorization server already started (the fake does not close it); default: its own. */
  readonly authorizationServer?: FakeOAuth.FakeOAuth
  /** Options of its own authorization server. */
  readonly authorizationServerOptions?: FakeOAuth.Options
}

export type Auth =
  | "none"
  | { readonly apiKey: string; readonly header?: "authorization" | "x-api-key" }
  | "oauth"
  | { readonly oauth: OAuthOptions }

export type Mode =
  | { readonly _tag: "ok" }
  | { readonly _tag: "redirect"; readonly to: string; readonly status?: 307 | 308 }
  | { readonly _tag: "slow"; readonly ms: number; readonly rpcMethod?: string }
  | { readonly _tag: "hang"; readonly rpcMethod?: string }
  /** Holds each request until `until` settles, then answers it normally: a slow server whose pace the test sets. */
  | { readonly _tag: "held"; readonly until: Promise<unknown>; readonly rpcMethod?: string }
  | {
    readonly _tag: "oversized"
    readonly bytes: number
    /** Default "application/json". */
    readonly contentType?: "application/json" | "text/event-stream"
    /** Send `content-length` (default true); false: chunked. */
    readonly advertise?: boolean
  }
  | {
    readonly _tag: "status"
    readonly status: number
    /** Only for requests of this JSON-RPC method (others are answered normally). */
    readonly rpcMethod?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string
  }

export interface Options {
  readonly auth?: Auth
  /** Where MCP is served; default `/mcp`. */
  readonly path?: string
  /** Plain JSON answers instead of SSE. */
  readonly json?: boolean
  readonly redirect?: { readonly to: string; readonly status?: 307 | 308 }
  readonly slowMs?: number
  readonly oversizedBytes?: number
  /** Generated read-only tools added to the listing (`tool_001` …). */
  readonly extraTools?: number
  /** Page size of `tools/list` (default: one page). */
  readonly toolsPageSize?: number
  /** Adds the tool `snapshot`, whose result holds every kind of content: text, image, audio, resource link, resource. */
  readonly mediaTool?: boolean
  /** `serverInfo.name`; default "fake-mcp". */
  readonly name?: string
}

export interface RecordedRequest {
  readonly method: string
  /** Path and query. */
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** The JSON-RPC method of a POST (the first message's, for a batch). */
  readonly rpcMethod: string | undefined
  /** `null` while unanswered. */
  status: number | null
}

export interface FakeMcp {
  /** The MCP endpoint: base URL plus `path`. */
  readonly url: string
  /** The base URL (scheme, host and port). */
  readonly origin: string
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly setMode: (mode: Mode) => void
  /** The authorization server of an OAuth fake. */
  readonly oauth: FakeOAuth.FakeOAuth | undefined
  /** Where the protected-resource metadata is (OAuth fakes). */
  readonly resourceMetadataUrl: string | undefined
  readonly close: () => Promise<void>
}

const json = (response: Http.ServerResponse, status: number, body: unknown, headers: Http.OutgoingHttpHeaders = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify(body))
}

interface Catalogue {
  readonly name: string
  readonly extraTools: number
  readonly pageSize: number | undefined
  readonly mediaTool: boolean
  /** Every tool as `tools/list` shows it, known once the fake has started. */
  tools: ReadonlyArray<Tool>
}

/** 852 bytes standing for a PNG: its signature, then bytes of a fixed pseudo-random sequence. */
const pngBytes = () => {
  const bytes = Buffer.alloc(852)
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(bytes)
  let state = 12345
  for (let i = 8; i < bytes.length; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff
    bytes[i] = (state >> 16) & 0xff
  }
  return bytes.toString("base64")
}

/** The media `snapshot` answers, base64: an image (852 bytes) and 44 bytes of silent WAV header. */
export const MEDIA = {
  png: pngBytes(),
  wav: "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="
} as const

const buildServer = (catalogue: Catalogue): McpServer => {
  const server = new McpServer({ name: catalogue.name, version: "1.0.0" })
  server.registerTool(
    "echo",
    { title: "Echo", description: "Answers its text.", inputSchema: { text: z.string() }, annotations: { readOnlyHint: true, openWorldHint: false } },
    async ({ text }) => ({ content: [{ type: "text", text }] })
  )
  server.registerTool(
    "add",
    {
      title: "Add",
      description: "Adds two numbers.",
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false }
    },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } })
  )
  server.registerTool(
    "delete_item",
    {
      title: "Delete an item",
      description: "Deletes the item (pretends to).",
      inputSchema: { id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
    },
    async ({ id }) => ({ content: [{ type: "text", text: `deleted ${id}` }] })
  )
  server.registerTool("fail", { description: "Always fails (a tool error, isError)." }, async () => ({
    content: [{ type: "text", text: "the tool failed" }],
    isError: true
  }))
  server.registerTool("protocol_error", { description: "Answers a JSON-RPC error instead of a result." }, async () => {
    // Unreachable: the fake answers this tool before the SDK (see the file header).
    return { content: [{ type: "text", text: "unreachable" }], isError: true }
  })
  server.registerTool(
    "large_output",
    { description: "Answers a text of `bytes` bytes.", inputSchema: { bytes: z.number().int().min(0) }, annotations: { readOnlyHint: true } },
    async ({ bytes }) => ({ content: [{ type: "text", text: "x".repeat(bytes) }] })
  )
  if (catalogue.mediaTool) {
    server.registerTool("snapshot", { description: "Answers one content item of each kind.", annotations: { readOnlyHint: true } }, async () => ({
      content: [
        { type: "text", text: "A snapshot of the board." },
        { type: "image", data: MEDIA.png, mimeType: "image/png" },
        { type: "audio", data: MEDIA.wav, mimeType: "audio/wav" },
        { type: "resource_link", uri: "https://files.example.com/board.pdf", name: "board.pdf", title: "The board", mimeType: "application/pdf" },
        { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "Embedded notes." } },
        { type: "resource", resource: { uri: "file:///raw.bin", mimeType: "application/octet-stream", blob: MEDIA.wav } }
      ]
    }))
  }
  for (let index = 1; index <= catalogue.extraTools; index++) {
    const toolName = `tool_${String(index).padStart(3, "0")}`
    server.registerTool(toolName, { description: `Generated tool ${index}.`, annotations: { readOnlyHint: true } }, async () => ({
      content: [{ type: "text", text: toolName }]
    }))
  }
  const pageSize = catalogue.pageSize
  if (pageSize !== undefined && catalogue.tools.length > 0) {
    server.server.setRequestHandler(ListToolsRequestSchema, (request) => {
      const cursor = request.params?.cursor ?? "0"
      const offset = /^\d+$/.test(cursor) ? Number(cursor) : Number.NaN
      if (!Number.isSafeInteger(offset) || offset > catalogue.tools.length) throw new McpError(ErrorCode.InvalidParams, "Invalid cursor")
      const next = offset + pageSize
      return { tools: catalogue.tools.slice(offset, next), ...(next < catalogue.tools.length ? { nextCursor: String(next) } : {}) }
    })
  }
  return server
}

/** The whole listing, as the SDK renders it (asked once, in memory). */
const listAll = async (catalogue: Catalogue): Promise<ReadonlyArray<Tool>> => {
  const server = buildServer(catalogue)
  const client = new Client({ name: "fake-mcp-catalogue", version: "1.0.0" })
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  await client.connect(clientSide)
  const { tools } = await client.listTools()
  await client.close()
  await server.close()
  return tools
}

const readBody = (request: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const firstMessage = (parsed: unknown): { method?: unknown; id?: unknown; params?: unknown } | undefined => {
  const message: unknown = Array.isArray(parsed) ? parsed[0] : parsed
  return message !== null && typeof message === "object" ? (message as { method?: unknown; id?: unknown; params?: unknown }) : undefined
}

export const start = async (options: Options = {}): Promise<FakeMcp> => {
  const path = options.path ?? "/mcp"
  const name = options.name ?? "fake-mcp"
  const auth = options.auth ?? "none"
  const catalogue: Catalogue = { name, extraTools: options.extraTools ?? 0, pageSize: options.toolsPageSize, mediaTool: options.mediaTool ?? false, tools: [] }
  catalogue.tools = await listAll(catalogue)
  const requests: Array<RecordedRequest> = []
  const timers = new Set<NodeJS.Timeout>()
  let mode: Mode = options.redirect !== undefined
    ? { _tag: "redirect", ...options.redirect }
    : options.slowMs !== undefined
      ? { _tag: "slow", ms: options.slowMs }
      : options.oversizedBytes !== undefined
        ? { _tag: "oversized", bytes: options.oversizedBytes }
        : { _tag: "ok" }

  const oauthOptions: OAuthOptions | undefined = auth === "oauth" ? {} : typeof auth === "object" && "oauth" in auth ? auth.oauth : undefined
  const ownAuthorizationServer = oauthOptions !== undefined && oauthOptions.authorizationServer === undefined
  const authorizationServer = oauthOptions === undefined
    ? undefined
    : oauthOptions.authorizationServer ?? (await FakeOAuth.start(oauthOptions.authorizationServerOptions ?? {}))
  const requiredScopes = oauthOptions?.requiredScopes ?? []

  let origin = ""
  const resourceMetadataUrl = () => `${origin}/.well-known/oauth-protected-resource${path === "/" ? "" : path}`

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        timers.delete(timer)
        resolve()
      }, ms)
      timers.add(timer)
    })

  /** True when the request may proceed; otherwise the refusal was sent. */
  const checkAuth = (request: Http.IncomingMessage, response: Http.ServerResponse): boolean => {
    if (auth === "none") return true
    if (typeof auth === "object" && "apiKey" in auth) {
      if ((auth.header ?? "authorization") === "x-api-key") {
        if (request.headers["x-api-key"] === auth.apiKey) return true
        json(response, 401, { error: "unauthorized" }, { "www-authenticate": `ApiKey header="x-api-key"` })
        return false
      }
      if (request.headers.authorization === `Bearer ${auth.apiKey}`) return true
      json(response, 401, { error: "unauthorized" }, { "www-authenticate": `Bearer realm="mcp"` })
      return false
    }
    const header = request.headers.authorization
    const token = header?.startsWith("Bearer ") ? header.slice(7) : undefined
    const info = token === undefined ? undefined : authorizationServer!.verifyAccessToken(token)
    const resource = `${origin}${path}`
    if (info === undefined || (info.resource !== undefined && info.resource !== resource)) {
      const error = token === undefined ? "" : `error="invalid_token", `
      const scope = requiredScopes.length > 0 ? `, scope="${requiredScopes.join(" ")}"` : ""
      json(response, 401, { error: token === undefined ? "unauthorized" : "invalid_token" }, {
        "www-authenticate": `Bearer ${error}resource_metadata="${resourceMetadataUrl()}"${scope}`
      })
      return false
    }
    const missing = requiredScopes.filter((s) => !info.scopes.includes(s))
    if (missing.length > 0) {
      json(response, 403, { error: "insufficient_scope" }, {
        "www-authenticate": `Bearer error="insufficient_scope", scope="${requiredScopes.join(" ")}", resource_metadata="${resourceMetadataUrl()}"`
      })
      return false
    }
    return true
  }

  const handle = async (request: Http.IncomingMessage, response: Http.ServerResponse, record: RecordedRequest, body: string) => {
    const target = new URL(request.url ?? "/", "http://127.0.0.1")
    if (authorizationServer !== undefined && request.method === "GET" && target.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      const suffix = target.pathname.slice("/.well-known/oauth-protected-resource".length)
      if (suffix !== "" && suffix !== path) return json(response, 404, { error: "not_found" })
      return json(response, 200, {
        resource: `${origin}${path}`,
        authorization_servers: [authorizationServer.url],
        scopes_supported: requiredScopes.length > 0 ? requiredScopes : ["mcp:read", "mcp:write"],
        bearer_methods_supported: ["header"],
        resource_name: name
      })
    }
    if (target.pathname !== path) return json(response, 404, { error: "not_found" })
    const current: Mode = "rpcMethod" in mode && mode.rpcMethod !== undefined && mode.rpcMethod !== record.rpcMethod ? { _tag: "ok" } : mode
    switch (current._tag) {
      case "redirect":
        response.writeHead(current.status ?? 307, { location: current.to })
        return response.end()
      case "hang":
        return
      case "status":
        response.writeHead(current.status, { ...current.headers })
        return response.end(current.body)
      case "slow":
        await wait(current.ms)
        break
      case "held":
        await current.until.then(() => undefined, () => undefined)
        break
      case "oversized":
      case "ok":
        break
    }
    if (!checkAuth(request, response)) return
    if (current._tag === "oversized") {
      const contentType = current.contentType ?? "application/json"
      const text = contentType === "application/json"
        ? " ".repeat(Math.max(0, current.bytes - 2)) + "{}"
        : "data: " + "x".repeat(Math.max(0, current.bytes - 8)) + "\n\n"
      const payload = Buffer.from(text, "utf8").subarray(0, current.bytes)
      response.writeHead(200, { "content-type": contentType, ...(current.advertise === false ? {} : { "content-length": payload.length }) })
      return response.end(payload)
    }
    if (request.method !== "POST") {
      return json(response, 405, { jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed." }, id: null }, { allow: "POST" })
    }
    let parsed: unknown
    try {
      parsed = body === "" ? undefined : JSON.parse(body)
    } catch {
      return json(response, 400, { jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null })
    }
    const message = firstMessage(parsed)
    const params = message?.params as { name?: unknown } | undefined
    if (record.rpcMethod === "tools/call" && params?.name === "protocol_error") {
      return json(response, 200, { jsonrpc: "2.0", id: message?.id ?? null, error: { code: -32603, message: "the fake answers a JSON-RPC error" } })
    }
    const server = buildServer(catalogue)
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: options.json ?? false })
    response.on("close", () => {
      void transport.close()
      void server.close()
    })
    await server.connect(transport)
    await transport.handleRequest(request, response, parsed)
  }

  const server = Http.createServer((request, response) => {
    void (async () => {
      const body = await readBody(request)
      let rpcMethod: string | undefined
      if (request.method === "POST") {
        try {
          const method = firstMessage(JSON.parse(body))?.method
          rpcMethod = typeof method === "string" ? method : undefined
        } catch {
          rpcMethod = undefined
        }
      }
      const record: RecordedRequest = { method: request.method ?? "", path: request.url ?? "", headers: request.headers, rpcMethod, status: null }
      requests.push(record)
      response.on("finish", () => {
        record.status = response.statusCode
      })
      await handle(request, response, record, body)
    })().catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { jsonrpc: "2.0", error: { code: -32603, message: String(error) }, id: null })
    })
  })
  // Idle connections outlive the client pool's 4 s (as in FakeSuites.ts): no request handed to a socket just closed.
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`

  return {
    url: `${origin}${path}`,
    origin,
    requests,
    setMode: (next) => {
      mode = next
    },
    oauth: authorizationServer,
    resourceMetadataUrl: authorizationServer === undefined ? undefined : resourceMetadataUrl(),
    close: async () => {
      for (const timer of timers) clearTimeout(timer)
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
      if (ownAuthorizationServer) await authorizationServer?.close()
    }
  }
}
