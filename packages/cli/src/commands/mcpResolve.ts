/**
 * `orgplane mcp resolve <query>` and `orgplane mcp presets`: find the MCP server a URL, host or product name points
 * at, with what connecting to it requires, before registering it; and the curated presets resolve matches.
 */
import { type McpDiscovery, McpPresetList, type McpRefusedCandidate, McpResolveResult, ResolveMcpRequest } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Commands from "../Commands.js"
import { CommandFailed } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const list = (values: ReadonlyArray<string>) => (values.length === 0 ? "-" : values.join(", "))

/** What an admin needs to decide: where, how it authenticates, what it asks for, and what must be done by hand. */
const requirements = (discovery: McpDiscovery): ReadonlyArray<readonly [string, string]> => {
  const { authentication, tools } = discovery
  const registration = authentication.availableRegistrationMethods.map((method) =>
    method === authentication.recommendedRegistrationMethod ? `${method} (recommended)` : method
  )
  return [
    ["status", discovery.status],
    ["initialize", discovery.server.initialize + (discovery.server.protocolVersion === undefined ? "" : ` (protocol ${discovery.server.protocolVersion})`)],
    ["authentication", authentication.kind],
    ["required scopes", list(authentication.requiredScopes)],
    ["recommended scopes", list(authentication.recommendedScopes)],
    ["registration", authentication.kind === "oauth" ? list(registration) : "-"],
    ["authorization servers", list(authentication.authorizationServers.map((server) => server.issuer))],
    ["tools", tools.count === undefined ? tools.visibility : String(tools.count)],
    ...discovery.manualRequirements.map((requirement) =>
      ["manual", `${requirement.label}${requirement.required ? " (required)" : ""}: ${requirement.reason}`] as const
    ),
    ...discovery.warnings.map((warning) => ["warning", `${warning.code}: ${warning.message}`] as const)
  ]
}

const refusedRows = (result: typeof McpResolveResult.Type) =>
  (result.refused ?? []).map((candidate) => ["refused", `${candidate.url}: ${candidate.reason}`] as const)

const human = (result: typeof McpResolveResult.Type, query: string): string => {
  const tried = ["tried", list(result.attempted)] as const
  if (result.match !== undefined) {
    const heading = result.resolution === "preset" ? `Preset ${result.preset?.presetId ?? ""}: ${result.match.url}` : `Found: ${result.match.url}`
    return [heading, Output.fields([["name", result.match.suggestedName], ...requirements(result.match.discovery), tried, ...refusedRows(result)])].join("\n")
  }
  if (result.preset !== undefined) {
    return `Preset ${result.preset.presetId} (${result.preset.url}) did not answer as an MCP server.`
  }
  return result.reason !== undefined
    ? `No MCP server found for "${query.trim().slice(0, 100)}": ${result.reason}`
    : [`No MCP server found for "${query.trim().slice(0, 100)}".`, Output.fields([tried])].join("\n")
}

/** The guard's reasons that the operator's private mode lifts (plain http, loopback, private and link-local addresses). */
const PRIVATE_MODE_LIFTS = /https is required|loopback|private|link-local/

/** Nothing found because the server would not contact what was asked: an error, saying what and why. */
const refusal = (refused: ReadonlyArray<McpRefusedCandidate>) =>
  new CommandFailed({
    error: "destination_refused",
    message: [
      `the server's outbound guard refused to contact ${refused.map((candidate) => `${candidate.url} (${candidate.reason.replace(/^The outbound URL is not allowed: /, "")})`).join(", ")}`,
      refused.some((candidate) => PRIVATE_MODE_LIFTS.test(candidate.reason))
        ? " — on a trusted network its operator can allow private addresses and plain http with ORGPLANE_OUTBOUND_ALLOW_PRIVATE"
        : ""
    ].join("")
  })

export const resolve = Commands.leaf("resolve", {
  summary: "Find the MCP server a URL, host or product name points at, and what connecting to it requires (owners and admins).",
  details: [
    "Matches the curated presets, otherwise probes at most 5 likely endpoints at once and prints the first that answers as MCP or asks for OAuth (or, unless you typed a bare name, for a credential): its URL, a suggested name, how it authenticates, the scopes it asks for, how an OAuth client can be registered, what must be done by hand and how many tools it lists. Nothing is registered or stored."
  ],
  inputs: {
    query: Inputs.argument("query", {
      schema: ResolveMcpRequest.fields.query,
      description: "A server URL (https://mcp.example.com/mcp), a host (example.com) or a product name (Linear); 1 to 200 characters."
    })
  },
  // Found, or nothing answered: the result (exit 0). Nothing found and a candidate refused by the guard: an error
  // saying so (exit 1); with --json the API's answer is still printed first.
  run: (input) =>
    Commands.withClient(input, (client) =>
      Effect.gen(function*() {
        const result = yield* client.mcpDiscovery.resolve({ payload: { query: input.query } })
        const refused = result.match === undefined ? result.refused ?? [] : []
        if (refused.length === 0 || input.global.json) {
          yield* Output.emit(input.global, McpResolveResult, result, (value) => human(value, input.query))
        }
        if (refused.length > 0) return yield* refusal(refused)
      }))
})

export const presets = Commands.endpoint("presets", {
  summary: "List the curated MCP servers `mcp resolve` matches by name or host.",
  inputs: {},
  call: (client) => client.mcpDiscovery.presets(),
  output: McpPresetList,
  human: ({ presets }) =>
    presets.length === 0
      ? "No presets."
      : Output.table(
        ["preset", "name", "auth", "url"],
        presets.map((preset) => [preset.presetId, preset.displayName, preset.authType + (preset.requiresOAuthClient ? " (client required)" : ""), preset.url])
      )
})
