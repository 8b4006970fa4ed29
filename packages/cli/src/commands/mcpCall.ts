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
import { Effect, Option, Schema } from "effect"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { connection as connectionArgument, resolveConnection } from "./mcpConnections.js"

/** The arguments: a JSON object. */
const Arguments = Schema.parseJson(McpToolCallRequest.fields.arguments)
/** The endpoint's body limit: larger arguments would be refused there. */
const MAX_ARGUMENTS_BYTES = 1024 * 1024

const readArguments = (path: string) =>
  Files.readFileOrStdin(path, MAX_ARGUMENTS_BYTES, "1 MiB").pipe(
    Effect.mapError((message) => new UsageError({ message: `--args-file: ${message}` })),
    Effect.flatMap((text) =>
      Effect.mapError(Schema.decode(Arguments)(text), () => new UsageError({ message: `--args-file: ${path} does not hold a JSON object` }))
    )
  )

/** At most this many characters of a body in the human output. */
const EXCERPT = 2000

const excerpt = (body: ToolInspection extends { readonly request?: infer R } ? NonNullable<R> extends { readonly body: infer B } ? B : never : never) => {
  if (body.unavailable) return "  (body not available)"
  if (body.bytes === 0) return "  (empty body)"
  const text = (body.text.length > EXCERPT ? `${body.text.slice(0, EXCERPT)}…` : body.text).replace(/\s+$/, "")
  const cut = body.truncated || body.text.length > EXCERPT ? ` (${body.bytes} bytes, shown in part)` : ` (${body.bytes} bytes)`
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

const showResult = (result: unknown) => {
  const content = (result as { content?: unknown } | null)?.content
  const texts = Array.isArray(content)
    ? content.flatMap((item: unknown) =>
      typeof item === "object" && item !== null && (item as { type?: unknown }).type === "text" && typeof (item as { text?: unknown }).text === "string"
        ? [(item as { text: string }).text]
        : []
    )
    : []
  const structured = (result as { structuredContent?: unknown } | null)?.structuredContent
  return [
    ...texts,
    ...(structured === undefined ? [] : [`structuredContent: ${JSON.stringify(structured, null, 2)}`]),
    ...(texts.length === 0 && structured === undefined ? [JSON.stringify(result, null, 2)] : [])
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
      return yield* client.mcpTools.call({ path: { connectionId }, payload: { toolName: input.toolName, arguments: args } }).pipe(
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
    Effect.flatMap(resolveConnection(client, input.connection), (connectionId) => client.mcpTools.listTools({ path: { connectionId } })),
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
