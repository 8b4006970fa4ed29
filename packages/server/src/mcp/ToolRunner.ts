/**
 * Runs one tool of an external MCP server for an admin, diagnostically: a fresh session (initialize, then
 * `tools/call`) through the outbound guard, the `tools/call` exchange recorded by the inspector, and any failure
 * (including a result with `isError: true`) turned into a diagnostic. Nothing is stored; the provider's text of a
 * tool error goes to the log only.
 *
 * Limits: the tool call `ORGPLANE_MCP_TOOL_TIMEOUT` (120 s), every other request of the session 30 s (or the tool
 * timeout, if shorter), the whole run the tool timeout plus 30 s; answers at most 4 MiB as JSON and 16 MiB as an
 * event stream (the guard caps at the larger, and the wrapper here refuses a JSON answer over the smaller).
 */
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { McpDiagnostic, ToolInspection } from "@orgplane/schema"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Outbound, OutboundError, originOf } from "../platform/Outbound.js"
import { type CredentialContext, deadline, type DiagnosticContext, toDiagnostic } from "./Diagnostics.js"
import * as Inspection from "./Inspection.js"
import * as Session from "./Session.js"
import { classifySessionError } from "./SessionErrors.js"
import { diagnose } from "./ToolCallDiagnosis.js"
import { ToolConfig } from "./ToolConfig.js"
import { fromToolResult } from "./ToolErrors.js"

/** Largest JSON answer read. */
export const JSON_CAP = 4 * 1024 * 1024
/** Largest event-stream (SSE) answer read. */
export const SSE_CAP = 16 * 1024 * 1024
/** Longest any request of the session but `tools/call` may take. */
export const REQUEST_TIMEOUT = Duration.seconds(30)
/** What the whole run may take beyond the tool timeout (initialize and closing). */
export const LIFECYCLE_MARGIN = Duration.seconds(30)

export interface RunInput {
  /** The MCP endpoint. */
  readonly url: string
  /** Credential headers (`Credentials.headersFor`); sent with every request, redacted in the inspection. */
  readonly headers: Readonly<Record<string, string>>
  readonly toolName: string
  readonly arguments: Readonly<Record<string, unknown>>
  /** The request id, quoted in the diagnostic and the log. */
  readonly referenceId: string
  /** Whether the credential is the organization's (a member cannot fix it): decides whose move a credential failure is. */
  readonly sharedCredential: boolean
  /** The connection's auth type, for the operator action's wording; default `none`. */
  readonly authType?: "none" | "apikey" | "oauth" | undefined
}

export interface ToolRun {
  readonly referenceId: string
  readonly durationMs: number
  /** The MCP `CallToolResult` as the server sent it. */
  readonly result: unknown
  readonly inspection: ToolInspection
}

/** The call failed: at the server, on the way, or the tool answered an error. */
export class ToolRunFailed extends Data.TaggedError("ToolRunFailed")<{
  readonly diagnostic: McpDiagnostic
  readonly inspection: ToolInspection
  readonly durationMs: number
}> {
  override get message() {
    return this.diagnostic.message
  }
}

const failFetch = (reason: "timeout" | "too_large", url: string, message: string) =>
  new TypeError(`fetch failed: ${message}`, { cause: new OutboundError({ reason, origin: originOf(url), message }) })

/**
 * The runner's limits around the guarded fetch: requests other than `tools/call` end after `requestMs` (an
 * `Effect.timeoutOrElse` whose interruption aborts the fetch through its signal), and a non-event-stream answer over
 * `JSON_CAP` is refused (`too_large`), as the guard would have. The SDK calls it as a Promise; a failure rejects with
 * the error itself (the SDK's own abort included), as a fetch would.
 */
export const limits = (requestMs: number) => (fetch: FetchLike): FetchLike => (input, init) => {
  const url = input instanceof URL ? input.href : String(input)
  const isCall = Inspection.rpcMethodOf(init?.body) === "tools/call"
  const send = Effect.tryPromise({
    try: async (signal) => {
      const given = init?.signal ?? undefined
      const response = await fetch(input, { ...init, signal: given === undefined ? signal : AbortSignal.any([given, signal]) })
      if (response.body === null || Inspection.mediaTypeOf(response.headers.get("content-type")) === "text/event-stream") return response
      const bytes = new Uint8Array(await response.arrayBuffer())
      if (bytes.length > JSON_CAP) throw failFetch("too_large", url, `response body larger than ${JSON_CAP} bytes`)
      const copy = new Response(bytes, { status: response.status, statusText: response.statusText, headers: response.headers })
      Object.defineProperty(copy, "url", { value: response.url })
      return copy
    },
    catch: (error) => error
  })
  const limited = isCall ? send : Effect.timeoutOrElse(send, {
    duration: Duration.millis(requestMs),
    orElse: () => Effect.fail(failFetch("timeout", url, `no complete answer within ${Math.round(requestMs / 1000)}s`))
  })
  return Effect.runPromiseExit(limited).then((exit) => Exit.isSuccess(exit) ? exit.value : Promise.reject(Cause.squash(exit.cause)))
}

/** Runs the tool; fails with `ToolRunFailed` (diagnostic and inspection) for anything but a successful result. */
export const run = Effect.fn("ToolRunner.run")(function*(input: RunInput): Effect.fn.Return<ToolRun, ToolRunFailed, Outbound | ToolConfig> {
  const { toolTimeout } = yield* ToolConfig
  const clock = yield* Clock.Clock
  const now = () => clock.currentTimeMillisUnsafe()
  const toolMs = Duration.toMillis(toolTimeout)
  const requestMs = Math.min(Duration.toMillis(REQUEST_TIMEOUT), toolMs)
  const started = now()
  const inspector = Inspection.make({ now })
  const credential: CredentialContext = {
    mode: input.sharedCredential ? "shared" : "per_member",
    authType: input.authType ?? "none"
  }
  const context = (): DiagnosticContext => ({
    referenceId: input.referenceId,
    url: input.url,
    exchange: inspector.current().last,
    credential
  })

  const call = Effect.scoped(
    Effect.flatMap(
      Session.open({
        url: input.url,
        headers: input.headers,
        timeout: toolTimeout,
        maxBodyBytes: SSE_CAP,
        wrapFetch: (fetch) => inspector.wrap(limits(requestMs)(fetch))
      }),
      (client) =>
        Session.request((signal) =>
          // The SDK's own timeout a little after the guard's, so the guard's (with its reason) is the one seen.
          client.callTool({ name: input.toolName, arguments: { ...input.arguments } }, undefined, { signal, timeout: toolMs + 1000 })
        )
    )
  )
  const outcome = yield* call.pipe(
    Effect.timeoutOrElse({ duration: Duration.sum(toolTimeout, LIFECYCLE_MARGIN), orElse: () => Effect.fail("deadline" as const) }),
    Effect.result
  )
  const capture = yield* Effect.promise(() => inspector.settle())
  const durationMs = Math.max(0, Math.round(now() - started))

  let failure: ReturnType<typeof classifySessionError> | undefined
  let providerText: string | undefined
  if (outcome._tag === "Failure") {
    failure = outcome.failure === "deadline" ? deadline(context()) : classifySessionError(outcome.failure, context())
  } else if (outcome.success.isError === true) {
    const diagnosis = fromToolResult(outcome.success, context())
    failure = diagnosis.diagnostic
    providerText = diagnosis.providerText
  }

  const diagnostic = failure === undefined ? undefined : toDiagnostic(failure)
  const { layer, summary } = diagnose(capture, diagnostic)
  const inspection: ToolInspection = {
    diagnosis: { summary },
    ...(capture.request === undefined ? {} : { request: capture.request }),
    ...(capture.response === undefined ? {} : { response: capture.response })
  }

  if (failure === undefined || diagnostic === undefined) {
    yield* Effect.logDebug("MCP tool call succeeded").pipe(Effect.annotateLogs({ referenceId: input.referenceId, durationMs }))
    return { referenceId: input.referenceId, durationMs, result: outcome._tag === "Success" ? outcome.success : null, inspection }
  }
  yield* Effect.logWarning("MCP tool call failed").pipe(
    Effect.annotateLogs({
      referenceId: input.referenceId,
      code: diagnostic.code,
      category: diagnostic.category,
      phase: diagnostic.phase ?? "",
      actionOwner: failure.owner,
      layer,
      ...(providerText === undefined || providerText === "" ? {} : { providerText })
    })
  )
  return yield* new ToolRunFailed({ diagnostic, inspection, durationMs })
})

/** Bounds of a tool catalog read (the reference's): pages, tools, and the size of what one tool may carry. */
export const CATALOG_LIMITS = {
  pages: 20,
  tools: 2000,
  nameBytes: 512,
  titleBytes: 4 * 1024,
  descriptionBytes: 64 * 1024,
  schemaBytes: 512 * 1024,
  cursorBytes: 16 * 1024
} as const

export interface ListInput extends Omit<RunInput, "toolName" | "arguments"> {}

/** One tool as listed: what a client needs to call it. */
export interface ListedTool {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: unknown
  readonly annotations?: Readonly<Record<string, unknown>>
}

export interface ToolCatalog {
  readonly referenceId: string
  readonly tools: ReadonlyArray<ListedTool>
  /** Whether the server had more than `CATALOG_LIMITS` let this read. */
  readonly truncated: boolean
}

/** The catalog could not be read. */
export class ToolCatalogReadFailed extends Data.TaggedError("ToolCatalogReadFailed")<{ readonly diagnostic: McpDiagnostic }> {
  override get message() {
    return this.diagnostic.message
  }
}

const bytes = (value: unknown) => Buffer.byteLength(typeof value === "string" ? value : JSON.stringify(value) ?? "", "utf8")

/** A tool's text cut to `max` bytes (on a character boundary). */
const cut = (text: string, max: number) => (bytes(text) <= max ? text : Inspection.inspectBody(text, max).text)

/**
 * Reads the server's tool list (`tools/list`, page by page): at most `CATALOG_LIMITS.pages` pages and `tools`
 * tools (then `truncated`); a tool whose name is too long or whose input schema is too large is left out, and a
 * title or description too long is cut. Requests get 30 seconds each (or the tool timeout, if shorter).
 */
export const listTools = Effect.fn("ToolRunner.listTools")(function*(input: ListInput): Effect.fn.Return<ToolCatalog, ToolCatalogReadFailed, Outbound | ToolConfig> {
  const { toolTimeout } = yield* ToolConfig
  const requestMs = Math.min(Duration.toMillis(REQUEST_TIMEOUT), Duration.toMillis(toolTimeout))
  const clock = yield* Clock.Clock
  const inspector = Inspection.make({ now: () => clock.currentTimeMillisUnsafe() })
  const read = Effect.scoped(
    Effect.flatMap(
      Session.open({
        url: input.url,
        headers: input.headers,
        timeout: Duration.millis(requestMs),
        maxBodyBytes: SSE_CAP,
        wrapFetch: (fetch) => inspector.wrap(limits(requestMs)(fetch))
      }),
      (client) =>
        Effect.gen(function*() {
          const tools: Array<ListedTool> = []
          let cursor: string | undefined
          let truncated = false
          for (let page = 0; ; page++) {
            if (page >= CATALOG_LIMITS.pages) {
              truncated = true
              break
            }
            const answer = yield* Session.request((signal) =>
              client.listTools(cursor === undefined ? {} : { cursor }, { signal, timeout: requestMs + 1000 })
            )
            for (const tool of answer.tools) {
              if (tools.length >= CATALOG_LIMITS.tools) {
                truncated = true
                break
              }
              if (bytes(tool.name) > CATALOG_LIMITS.nameBytes || bytes(tool.inputSchema) > CATALOG_LIMITS.schemaBytes) continue
              tools.push({
                name: tool.name,
                ...(tool.title === undefined ? {} : { title: cut(tool.title, CATALOG_LIMITS.titleBytes) }),
                ...(tool.description === undefined ? {} : { description: cut(tool.description, CATALOG_LIMITS.descriptionBytes) }),
                inputSchema: tool.inputSchema,
                ...(tool.annotations === undefined ? {} : { annotations: { ...tool.annotations } })
              })
            }
            cursor = answer.nextCursor
            if (truncated || cursor === undefined || cursor === "") break
            if (bytes(cursor) > CATALOG_LIMITS.cursorBytes) {
              truncated = true
              break
            }
          }
          return { referenceId: input.referenceId, tools, truncated }
        })
    )
  )
  const outcome = yield* Effect.result(read)
  if (outcome._tag === "Success") return outcome.success
  const failure = classifySessionError(outcome.failure, {
    referenceId: input.referenceId,
    url: input.url,
    exchange: inspector.current().last,
    credential: { mode: input.sharedCredential ? "shared" : "per_member", authType: input.authType ?? "none" }
  })
  yield* Effect.logWarning("MCP tool list failed").pipe(
    Effect.annotateLogs({ referenceId: input.referenceId, code: failure.code, category: failure.category, phase: failure.phase ?? "", actionOwner: failure.owner })
  )
  return yield* new ToolCatalogReadFailed({ diagnostic: toDiagnostic(failure) })
})
