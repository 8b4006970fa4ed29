/**
 * `orgplane mcp call <connection> <tool> --args '{...}'`: runs one tool of an MCP connection (owners and admins
 * granted the connection) and prints its result, then the `tools/call` exchange as the server inspected it; on
 * failure the diagnostic (code, category, what to do) with the exchange as far as it went.
 */
import {
  type McpDiagnostic,
  McpToolCallRequest,
  McpToolCallResponse,
  McpToolCatalog,
  ToolExecutionFailed,
  type ToolInspection
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { connection as connectionArgument, resolveConnection } from "./mcpConnections.js"

/** The arguments: a JSON object. */
const Arguments = Schema.fromJsonString(McpToolCallRequest.fields.arguments)
/** The endpoint's body limit: larger arguments would be refused there. */
const MAX_ARGUMENTS_BYTES = 1024 * 1024

const readArguments = (path: string) =>
  Files.readFileOrStdin(path, MAX_ARGUMENTS_BYTES, "1 MiB").pipe(
    Effect.mapError((message) => new UsageError({ message: `--args-file: ${message}` })),
    Effect.flatMap((text) =>
      Effect.mapError(Schema.decodeEffect(Arguments)(text), () => new UsageError({ message: `--args-file: ${path} does not hold a JSON object` }))
    )
  )

/** At most this many characters of a body in the human output. */
const EXCERPT = 2000

/** A run this long of base64 characters (an image, a file) is shown as its size: a hex digest (64) stays. */
const BASE64_RUN = /[A-Za-z0-9+/]{100,}={0,2}/g

const excerpt = (body: ToolInspection extends { readonly request?: infer R } ? NonNullable<R> extends { readonly body: infer B } ? B : never : never) => {
  if (body.unavailable) return "  (body not available)"
  if (body.bytes === 0) return "  (empty body)"
  const shown = body.text.replace(BASE64_RUN, (run) => `[${decodedBytes(run)} bytes of base64]`)
  const text = (shown.length > EXCERPT ? `${shown.slice(0, EXCERPT)}…` : shown).replace(/\s+$/, "")
  const cut = body.truncated || shown.length > EXCERPT ? ` (${body.bytes} bytes, shown in part)` : ` (${body.bytes} bytes)`
  return `${text.split("\n").map((line) => `  ${line}`).join("\n")}\n ${cut}`
}

const headerLines = (headers: ReadonlyArray<{ readonly name: string; readonly value: string; readonly redacted: boolean }>) =>
  headers.map((header) => `  ${header.name}: ${header.value}${header.redacted ? "  (redacted)" : ""}`)

/** The inspection, readably: request line, headers, body; response status, duration, headers, body; diagnosis. */
export const showInspection = (inspection: ToolInspection) => {
  const lines: Array<string> = []
  const request = inspection.request
  if (request === undefined) {
    lines.push("Request: none was sent.")
  } else {
    lines.push(`Request: ${request.method} ${request.url}  (at ${Output.date(request.startedAt)})`, ...headerLines(request.headers), excerpt(request.body))
  }
  const response = inspection.response
  if (response === undefined) {
    lines.push("Response: none came.")
  } else {
    lines.push(
      `Response: ${response.status}${response.statusText === "" ? "" : ` ${response.statusText}`} in ${response.durationMs} ms`,
      ...headerLines(response.headers),
      excerpt(response.body)
    )
  }
  lines.push(`Diagnosis: ${inspection.diagnosis.summary}`)
  return lines.join("\n")
}

/** A failure's diagnostic, readably. */
export const showDiagnostic = (diagnostic: McpDiagnostic) =>
  Output.fields([
    ["code", diagnostic.code],
    ["category", diagnostic.category],
    ...(diagnostic.phase === undefined ? [] : [["phase", diagnostic.phase] as const]),
    ["retryable", diagnostic.retryable ? "yes" : "no"],
    ...(diagnostic.httpStatus === undefined ? [] : [["HTTP status", String(diagnostic.httpStatus)] as const]),
    ...(diagnostic.jsonRpcCode === undefined ? [] : [["JSON-RPC code", String(diagnostic.jsonRpcCode)] as const]),
    ...(diagnostic.providerStatus === undefined ? [] : [["provider status", String(diagnostic.providerStatus)] as const]),
    ...(diagnostic.providerCode === undefined ? [] : [["provider code", diagnostic.providerCode] as const]),
    ...(diagnostic.providerRequestId === undefined ? [] : [["provider request", diagnostic.providerRequestId] as const]),
    ["what to do", diagnostic.operatorAction],
    ["reference", diagnostic.referenceId]
  ])

/** How many bytes a base64 string stands for. */
const decodedBytes = (base64: string) => {
  const clean = base64.replace(/\s+/g, "")
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding)
}

const size = (bytes: number) =>
  bytes < 1024 ? `${bytes} bytes` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`

const stringOf = (record: Record<string, unknown>, key: string) => (typeof record[key] === "string" ? record[key] as string : undefined)

/**
 * One item of a tool result's `content`, for a terminal: text as it is; an image, audio or binary resource by its
 * MIME type and size, never its base64; a resource link or embedded resource by its URI (`--json` has it all).
 */
export const showContent = (item: unknown): string => {
  if (typeof item !== "object" || item === null) return JSON.stringify(item)
  const record = item as Record<string, unknown>
  const type = stringOf(record, "type")
  const mime = stringOf(record, "mimeType")
  switch (type) {
    case "text":
      return stringOf(record, "text") ?? ""
    case "image":
    case "audio": {
      const data = stringOf(record, "data") ?? ""
      return `${type} (${mime ?? "no MIME type"}, ${size(decodedBytes(data))})`
    }
    case "resource_link": {
      const name = stringOf(record, "name")
      const title = stringOf(record, "title")
      return `resource link: ${name ?? "-"}${title !== undefined && title !== name ? ` (${title})` : ""} — ${stringOf(record, "uri") ?? "?"}${mime === undefined ? "" : ` (${mime})`}`
    }
    case "resource": {
      const resource = (typeof record.resource === "object" && record.resource !== null ? record.resource : {}) as Record<string, unknown>
      const uri = stringOf(resource, "uri") ?? "?"
      const resourceMime = stringOf(resource, "mimeType")
      const text = stringOf(resource, "text")
      const blob = stringOf(resource, "blob")
      if (text !== undefined) return `resource: ${uri}${resourceMime === undefined ? "" : ` (${resourceMime})`}\n${text}`
      return `resource: ${uri} (${[resourceMime, blob === undefined ? undefined : size(decodedBytes(blob))].filter((part) => part !== undefined).join(", ") || "no content"})`
    }
    default:
      return `${type ?? "content"}: ${JSON.stringify(item).slice(0, 200)}`
  }
}

const showResult = (result: unknown) => {
  const content = (result as { content?: unknown } | null)?.content
  const items = Array.isArray(content) ? content.map(showContent) : []
  const structured = (result as { structuredContent?: unknown } | null)?.structuredContent
  return [
    ...items,
    ...(structured === undefined ? [] : [`structuredContent: ${JSON.stringify(structured, null, 2)}`]),
    ...(items.length === 0 && structured === undefined ? [JSON.stringify(result, null, 2)] : [])
  ].join("\n")
}

export const call = Commands.endpoint("call", {
  summary: "Run one tool of an MCP connection (owners and admins granted it) and show the exchange, credentials redacted.",
  details: [
    "The arguments are a JSON object: --args '{\"text\":\"hi\"}', or --args-file <path> (`-` for standard input); without either, {}.",
    "Prints the tool's result, then the tools/call request and response as the server saw them; on failure, the diagnostic (code, category, what to do) and the exchange as far as it went. The tool runs for real: a destructive tool does what it says."
  ],
  inputs: {
    connection: connectionArgument,
    toolName: Inputs.argument("tool", { schema: McpToolCallRequest.fields.toolName, description: "The tool's name, as the server lists it." }),
    args: Inputs.optional(Inputs.text("args", { placeholder: "<json>", description: "The tool's arguments, a JSON object.", schema: Arguments })),
    argsFile: Inputs.optional(Inputs.text("args-file", { placeholder: "<path>", description: "A file holding the arguments (`-`: standard input)." }))
  },
  call: (client, input) =>
    Effect.gen(function*() {
      if (Option.isSome(input.args) && Option.isSome(input.argsFile)) {
        return yield* new UsageError({ message: "give the arguments with --args or --args-file, not both" })
      }
      const args = Option.isSome(input.argsFile) ? yield* readArguments(input.argsFile.value) : Option.getOrElse(input.args, () => ({}))
      const connectionId = yield* resolveConnection(client, input.connection)
      return yield* client.mcpTools.call({ params: { connectionId }, payload: { toolName: input.toolName, arguments: args } }).pipe(
        Effect.tapError((error) =>
          error instanceof ToolExecutionFailed && !input.global.json
            ? Output.note(`${showDiagnostic(error.diagnostic)}\n\n${showInspection(error.inspection)}\n`)
            : Effect.void
        )
      )
    }),
  output: McpToolCallResponse,
  human: ({ durationMs, inspection, referenceId, result }) =>
    [
      `Result (${durationMs} ms, reference ${referenceId}):`,
      showResult(result),
      "",
      showInspection(inspection)
    ].join("\n")
})

export const tools = Commands.endpoint("tools", {
  summary: "List the tools an MCP connection's server offers, with the ones the organization disables marked (owners and admins granted it).",
  inputs: { connection: connectionArgument },
  call: (client, input) =>
    Effect.flatMap(resolveConnection(client, input.connection), (connectionId) => client.mcpTools.listTools({ params: { connectionId } })),
  output: McpToolCatalog,
  human: ({ tools, truncated }) =>
    tools.length === 0
      ? "The server lists no tools."
      : [
        Output.table(
          ["name", "enabled", "hints", "description"],
          tools.map((tool) => [
            tool.name,
            tool.disabled ? "no (policy)" : "yes",
            Object.entries(tool.annotations ?? {}).filter(([key, value]) => key.endsWith("Hint") && value === true).map(([key]) => key.slice(0, -4)).join(",") || "-",
            (tool.description ?? tool.title ?? "").split("\n")[0]!.slice(0, 80)
          ])
        ),
        ...(truncated ? ["(the server lists more tools than were read: 20 pages, 2000 tools)"] : [])
      ].join("\n")
})
