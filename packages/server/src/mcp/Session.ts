/**
 * An MCP session with an external server: the official SDK's `Client` over its Streamable HTTP transport, every
 * request going through the outbound guard as a user-supplied destination (block lists, the connection pinned to
 * the address checked, redirects re-checked hop by hop, size cap, timeout). The guard follows redirects itself, so
 * the transport is told to accept the answer from wherever the guard ended (`redirectPolicy: "follow"`); the guard
 * already stripped credentials on a cross-origin hop.
 *
 * Credentials are plain headers (`Authorization: Bearer …` for an API key or an OAuth access token the server
 * obtained and refreshes itself, see `Credentials.ts`): no SDK auth provider, so the SDK never starts an OAuth flow
 * of its own in the middle of a call.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { VERSION } from "../Version.js"
import { Outbound, OutboundError } from "../platform/Outbound.js"
import { mcpSdk, mcpSdkIfLoaded } from "../integrations/mcp/McpSdk.js"

/** Where the SDK failed: the error it threw, kept whole for the diagnostics (`SessionErrors.ts`). */
export class McpSessionError extends Data.TaggedError("McpSessionError")<{
  readonly stage: "initialize" | "request"
  readonly cause: unknown
  readonly message: string
}> {
  static of(stage: "initialize" | "request", cause: unknown) {
    return new McpSessionError({ stage, cause, message: describe(cause) })
  }
}

export interface SessionOptions {
  readonly url: string
  /** Sent with every request (credentials); the guard drops them on a cross-origin redirect. */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Per request; default 30 s. */
  readonly timeout?: Duration.Input | undefined
  /** Largest answer read, in bytes; default 4 MiB. */
  readonly maxBodyBytes?: number | undefined
  /** Wraps the guarded fetch (the tool runner's inspector records the `tools/call` exchange through it). */
  readonly wrapFetch?: ((fetch: FetchLike) => FetchLike) | undefined
}

export const DEFAULT_TIMEOUT = Duration.seconds(30)
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024

/** The SDK's `StreamableHTTPError` carries the HTTP status as `code` (-1 for an unexpected content type). */
export const httpStatusOf = (error: unknown): number | undefined => {
  const sdk = mcpSdkIfLoaded()
  return sdk !== undefined && error instanceof sdk.StreamableHTTPError && typeof error.code === "number" && error.code >= 100 ? error.code : undefined
}

/** The guard's own failure behind a `fetch` rejection, if that is what it was. */
export const outboundErrorOf = (error: unknown): OutboundError | undefined => {
  for (let current: unknown = error, depth = 0; current !== undefined && current !== null && depth < 5; depth++) {
    if (current instanceof OutboundError) return current
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

const describe = (error: unknown): string => {
  const outbound = outboundErrorOf(error)
  if (outbound !== undefined) return outbound.message
  return error instanceof Error ? error.message : String(error)
}

/**
 * A connected, initialized client, closed when the scope ends. Fails with `McpSessionError` (stage `initialize`)
 * when the server does not complete `initialize`.
 */
export const open = Effect.fn("Session.open")(function*(options: SessionOptions): Effect.fn.Return<Client, McpSessionError, Outbound | Scope.Scope> {
  const outbound = yield* Outbound
  const timeout = Duration.fromInputUnsafe(options.timeout ?? DEFAULT_TIMEOUT)
  const guarded: FetchLike = outbound.fetchWith({
    destination: "user",
    timeout,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  })
  const fetch = options.wrapFetch ? options.wrapFetch(guarded) : guarded
  return yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: async (signal) => {
        const { Client, StreamableHTTPClientTransport } = await mcpSdk()
        const transport = new StreamableHTTPClientTransport(new URL(options.url), {
          fetch,
          redirectPolicy: "follow",
          requestInit: { headers: { ...options.headers } }
        })
        const client = new Client({ name: "orgplane", version: VERSION }, { capabilities: {} })
        await client.connect(transport, { timeout: Duration.toMillis(timeout), signal })
        return client
      },
      catch: (cause) => McpSessionError.of("initialize", cause)
    }),
    (client) => Effect.promise(() => client.close().catch(() => undefined))
  )
})

/** Runs one SDK call on an open client; a rejection becomes `McpSessionError` (stage `request`). */
export const request = <A>(call: (signal: AbortSignal) => Promise<A>): Effect.Effect<A, McpSessionError> =>
  Effect.tryPromise({ try: call, catch: (cause) => McpSessionError.of("request", cause) })

/** Whether the server completes an MCP `initialize` with these settings (the check at create and update). */
export const check = (options: SessionOptions): Effect.Effect<void, McpSessionError, Outbound> =>
  Effect.scoped(Effect.asVoid(open(options)))
