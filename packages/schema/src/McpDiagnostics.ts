/**
 * What the server tells an admin about an exchange with an external MCP server: the diagnostic of a failure (what
 * failed, whose move it is, whether retrying can help) and the inspection of the actual `tools/call` HTTP request
 * and response, with credential and session headers redacted.
 */
import * as Schema from "effect/Schema"
import { Int, Timestamp } from "./Common.js"
import { exampleTime } from "./Examples.js"

/**
 * The diagnostic of a failed exchange. `category` and `code` are machine-readable (the server README lists the
 * values); `operatorAction` says what to do; `outbound` names where the request went without its path (hashed:
 * paths can carry identifiers).
 */
export const McpDiagnostic = Schema.Struct({
  referenceId: Schema.String.annotate({ description: "The request id of the call that failed: quote it to find the server's log line." }),
  category: Schema.String.annotate({
    description: "What kind of failure, for example `security_blocked`, `network_failure`, `request_timeout`, `endpoint_not_found`, `oauth_resource_rejected`, `provider_throttled`, `provider_unavailable`, `provider_tool_error`, `mcp_tool_input_invalid`, `mcp_protocol_failure`, `response_too_large`."
  }),
  code: Schema.String.annotate({ description: "The precise failure, for example `MCP_URL_BLOCKED`, `MCP_HTTP_429`, `MCP_PROVIDER_TOOL_ERROR`." }),
  operatorAction: Schema.String.annotate({ description: "What to do about it, in a sentence." }),
  message: Schema.String,
  retryable: Schema.Boolean.annotate({ description: "Whether the same request may succeed later unchanged." }),
  phase: Schema.optionalKey(Schema.String).annotateKey({
    description: "Where in the exchange it failed, for example `NETWORK_DNS`, `AUTH_TOKEN_ACQUISITION`, `MCP_INITIALIZE`, `MCP_TOOL_EXECUTION`."
  }),
  connectUrl: Schema.optionalKey(Schema.String).annotateKey({
    description: "Where to (re)connect the credential, when that is the fix."
  }),
  providerRequestId: Schema.optionalKey(Schema.String),
  providerCode: Schema.optionalKey(Schema.String),
  httpStatus: Schema.optionalKey(Int).annotateKey({ description: "The MCP server's HTTP status." }),
  providerStatus: Schema.optionalKey(Int).annotateKey({
    description: "The status the tool reported from the provider behind it (a tool error's own status)."
  }),
  payloadBytes: Schema.optionalKey(Int),
  jsonRpcCode: Schema.optionalKey(Int),
  outbound: Schema.optionalKey(Schema.Struct({
    origin: Schema.String,
    pathHash: Schema.String.annotate({ description: "`sha256:` and the first 16 hex digits of the SHA-256 of the URL's path." })
  }))
}).annotate({ identifier: "McpDiagnostic" })
export type McpDiagnostic = typeof McpDiagnostic.Type

export const InspectedHeader = Schema.Struct({
  name: Schema.String,
  value: Schema.String.annotate({ description: "The value; `[redacted]` (after the scheme, for `authorization`) when redacted." }),
  redacted: Schema.Boolean
}).annotate({ identifier: "InspectedHeader" })

export const InspectedBody = Schema.Struct({
  text: Schema.String.annotate({ description: "The body as UTF-8, at most 512 KiB." }),
  bytes: Schema.Int.annotate({ description: "The body's whole size in bytes." }),
  truncated: Schema.Boolean,
  unavailable: Schema.Boolean.annotate({ description: "Whether the body could not be read (it is then empty)." })
}).annotate({ identifier: "InspectedBody" })

export const ToolInspection = Schema.Struct({
  diagnosis: Schema.Struct({
    summary: Schema.String.annotate({ description: "Where the call ended, in a sentence." })
  }),
  request: Schema.optionalKey(Schema.Struct({
    method: Schema.String,
    url: Schema.String.annotate({ description: "Without credentials or fragment; every query value is `[redacted]`." }),
    startedAt: Timestamp,
    headers: Schema.Array(InspectedHeader),
    body: InspectedBody
  })).annotateKey({ description: "The `tools/call` request as sent; absent when none was sent." }),
  response: Schema.optionalKey(Schema.Struct({
    status: Int,
    statusText: Schema.String,
    durationMs: Int,
    headers: Schema.Array(InspectedHeader),
    body: InspectedBody
  })).annotateKey({ description: "The response as received; absent when none came." })
}).annotate({
  identifier: "ToolInspection",
  examples: [{
    diagnosis: { summary: "The tool ran and answered." },
    request: {
      method: "POST",
      url: "https://mcp.linear.app/mcp",
      startedAt: exampleTime(620),
      headers: [
        { name: "authorization", value: "Bearer [redacted]", redacted: true },
        { name: "content-type", value: "application/json", redacted: false }
      ],
      body: {
        text: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_issues","arguments":{"team":"Platform","limit":2}}}`,
        bytes: 116,
        truncated: false,
        unavailable: false
      }
    },
    response: {
      status: 200,
      statusText: "OK",
      durationMs: 412,
      headers: [{ name: "content-type", value: "application/json", redacted: false }],
      body: {
        text: `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"PLT-12 Rotate staging credentials"}]}}`,
        bytes: 108,
        truncated: false,
        unavailable: false
      }
    }
  }]
})
export type ToolInspection = typeof ToolInspection.Type
