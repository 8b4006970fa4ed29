/**
 * `orgplane mcp serve`: the orgplane MCP server over stdio, for an MCP client that starts it as a subprocess (Claude
 * Code, Claude Desktop). Every tool call is an API request to the target server with the CLI's own credential (flag,
 * environment, then profile), so the server's policy, idempotency and audit apply as to any request. Standard output
 * carries JSON-RPC and nothing else: log lines go to standard error.
 */
import * as Effect from "effect/Effect"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Commands from "../Commands.js"
import { NotAuthenticated, UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Target from "../Target.js"
import { VERSION } from "../Version.js"

const inputs = {
  readOnly: Inputs.boolean("read-only", {
    description:
      "Every request carries Orgplane-Read-Only: true: the server refuses any write with this credential (403), and the tools list only reads."
  }),
  toolsets: Inputs.optional(Inputs.text("toolsets", {
    placeholder: "<groups>",
    description:
      "Comma-separated API groups (teams,members) served as one typed tool per operation, besides find_operations, describe_operation, read_operation and call_operation. An unknown group is refused."
  }))
}

/** `teams, members,` → `["teams", "members"]`. */
const words = (list: string) => list.split(",").map((word) => word.trim()).filter((word) => word !== "")

/** The headers the credential travels in: a session token as a bearer, an API key as `x-api-key` (as the client sends them). */
const credentialHeaders = (credential: Target.Credential): Record<string, string> =>
  credential.kind === "token"
    ? { authorization: `Bearer ${Redacted.value(credential.value)}` }
    : { "x-api-key": Redacted.value(credential.value) }

export const serve = Commands.leaf("serve", {
  summary: "Serve your organization to an MCP client over stdio (Claude Code, Claude Desktop), acting with your credential.",
  details: [
    "The client starts it as a subprocess: for Claude Code, 'claude mcp add orgplane -- orgplane mcp serve'. It serves four tools by default (find_operations, describe_operation, read_operation, call_operation) that reach every API operation your role and credential allow; destructive ones run only with a confirmation token the first call answers. The credential is checked once at start (GET /v1/me). Standard output carries only the MCP protocol; logs go to standard error. See docs/mcp.md."
  ],
  inputs,
  examples: [
    ["Serve only reads (the server refuses writes with this credential)", ["mcp", "serve", "--read-only"]],
    ["Add a typed tool for every operation on teams and members", ["mcp", "serve", "--toolsets", "teams,members"]]
  ],
  run: (input) =>
    Target.run(input.global, (target) =>
      Effect.gen(function*() {
        // The MCP package is loaded only here, as `serve` loads the server: no other command pays for it.
        const { Server, Tools, Transport } = yield* Effect.promise(() => import("@orgplane/mcp"))
        const toolsets = Option.map(input.toolsets, words)
        const options = yield* Tools.decodeOptions({
          ...(input.readOnly ? { readOnly: true } : {}),
          ...(Option.isSome(toolsets) ? { toolsets: toolsets.value } : {})
        }).pipe(Effect.mapError((error) => new UsageError({ message: `--toolsets: ${error.message}` })))
        // A credential the server refuses (or a server that is not there) is told now, in the CLI's words, rather
        // than as a failure of the client's first tool call.
        const client = yield* Target.connect(target, { authenticated: true })
        yield* client.users.me()
        if (Option.isNone(target.credential)) return yield* new NotAuthenticated({ url: target.url, profile: target.profileName })
        // The audit log's `via.userAgent` names this CLI, as its other commands' requests do.
        const http = HttpClient.mapRequest(yield* HttpClient.HttpClient, HttpClientRequest.setHeader("user-agent", `orgplane-cli/${VERSION} (mcp serve)`))
        const transport = yield* Transport.fromHttpClient({ baseUrl: target.url, credential: credentialHeaders(target.credential.value) }).pipe(
          Effect.provideService(HttpClient.HttpClient, http)
        )
        yield* Effect.logDebug(`orgplane MCP server on stdio for ${target.url}`)
        return yield* Layer.launch(Server.layerStdio({ ...options, transport, version: VERSION }))
      }).pipe(
        Effect.provide(FetchHttpClient.layer),
        // Standard output is the protocol's: every log line (the server's, the protocol's errors) goes to stderr.
        Effect.provideService(Logger.LogToStderr, true)
      ))
})
