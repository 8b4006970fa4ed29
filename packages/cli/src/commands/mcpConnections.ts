/**
 * `orgplane mcp connections create | list | get | update | delete | grant | grants | revoke | tool-policy get|set`
 * (and `connect | disconnect`, from mcpAuthorization.ts): the organization's external MCP connections. A connection is named by its id (emc_…) or its name (any case).
 * Secrets (API keys, OAuth client secrets) come from standard input or the environment, never from an argument.
 */
import {
  AccessRole,
  ExternalMcpConnectionId,
  type McpConnection,
  McpConnectionAccessGrantId,
  McpConnectionAccessGrantPage,
  McpApiKey,
  McpConnectionAccessGrantResponse,
  McpConnectionName,
  McpConnectionPage,
  McpConnectionResponse,
  McpOAuthInput,
  McpScope,
  McpServerUrl,
  McpToolName,
  McpToolPolicy,
  UpdateMcpConnectionRequest
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { grantColumns, grantee, granteeInputs, granteePayload } from "./access.js"
import { connect, disconnect } from "./mcpAuthorization.js"
import { connection, resolveConnection } from "./mcpConnectionArgument.js"
// The `<connection>` argument lives in mcpConnectionArgument.ts (mcpAuthorization.ts uses it too, without a cycle).
export { connection, resolveConnection } from "./mcpConnectionArgument.js"

/** A secret from standard input (when `stdin`) or `fallback` (an environment variable), checked with the API's rule. */
const readSecret = (
  what: string,
  flag: string,
  stdin: boolean,
  fallback: Effect.Effect<Option.Option<Redacted.Redacted>, unknown> | undefined,
  schema: Schema.Codec<string, string>
) =>
  Effect.gen(function*() {
    const text = stdin
      ? yield* Effect.mapError(Files.readStdin, (message) => new UsageError({ message: `${flag}: ${message}` }))
      : fallback === undefined
      ? undefined
      : Option.getOrUndefined(Option.map(yield* Effect.orDie(fallback), Redacted.value))
    if (text === undefined) return undefined
    return yield* Schema.decodeEffect(schema)(text.trim()).pipe(
      Effect.mapError(() => new UsageError({ message: `${what}: not a valid value (its length is limited; it is never shown)` }))
    )
  })

const OAuthFields = McpOAuthInput.fields

const oauthInputs = {
  clientId: Inputs.optional(Inputs.text("client-id", {
    placeholder: "<id>",
    description: "An OAuth client registered with the authorization server (`oauth`).",
    schema: OAuthFields.clientId.schema
  })),
  clientSecretStdin: Inputs.boolean("client-secret-stdin", {
    description: `Read the OAuth client's secret from standard input (create: else ${CliConfig.MCP_CLIENT_SECRET_VARIABLE}).`
  }),
  issuer: Inputs.optional(Inputs.text("issuer", {
    placeholder: "<url>",
    description: "The authorization server to use when the MCP server names several (`oauth`).",
    schema: OAuthFields.authorizationServerIssuer.schema
  })),
  scopes: Inputs.repeatedText("scope", {
    placeholder: "<scope>",
    description: "An OAuth scope to ask for (`oauth`; repeat it). Default: the preset's scopes for the URL, if any.",
    schema: Schema.Array(McpScope)
  })
}

/** The `oauth` member of a body from the OAuth flags; undefined when none is given. */
const oauthPayload = (
  input: {
    readonly clientId: Option.Option<string>
    readonly issuer: Option.Option<string>
    readonly scopes: ReadonlyArray<string>
  },
  clientSecret: string | undefined
) => {
  const oauth = {
    ...Inputs.ifSome("clientId", input.clientId),
    ...(clientSecret === undefined ? {} : { clientSecret }),
    ...Inputs.ifSome("authorizationServerIssuer", input.issuer),
    ...(input.scopes.length > 0 ? { requestedScopes: input.scopes } : {})
  }
  return Object.keys(oauth).length === 0 ? undefined : oauth
}

const apiKeyStdin = Inputs.boolean("api-key-stdin", {
  description: `Read the API key (\`apikey\`) from standard input (create: else ${CliConfig.MCP_API_KEY_VARIABLE}).`
})

/** Standard input holds one secret: a usage error when both secrets are asked from it. */
const oneStdin = (input: { readonly apiKeyStdin: boolean; readonly clientSecretStdin: boolean }) =>
  input.apiKeyStdin && input.clientSecretStdin
    ? Effect.fail(new UsageError({ message: "--api-key-stdin and --client-secret-stdin cannot both read standard input" }))
    : Effect.void

const ApiKey = McpApiKey
const ClientSecret = OAuthFields.clientSecret.schema

/** One line per connection state: connected for me, ready or why not. */
const describe = (item: McpConnection) =>
  [
    `MCP connection ${item.name} (${item.id}): ${item.url}`,
    `  auth: ${item.authType}, ${item.credentialMode === "per_member" ? "each member connects their own account" : "shared credential"}`,
    `  connected: ${item.connected ? "yes" : "no"}; for you: ${item.connectedForMe ? "yes" : "no"}; health: ${item.credentialHealth}`,
    `  ready: ${item.ready ? "yes" : `no: ${item.notReadyReason ?? ""}`}`,
    ...(item.oauth === null
      ? []
      : [
        `  OAuth client: ${item.oauth.clientId ?? "none"}${item.oauth.registrationSource ? ` (${item.oauth.registrationSource})` : ""}${
          item.oauthClientRequired && !item.oauth.clientConfigured ? "; this provider needs one registered by an admin" : ""
        }`,
        `  scopes: ${item.oauth.requestedScopes.length > 0 ? item.oauth.requestedScopes.join(" ") : "none"}`
      ]),
    `  tool policy: ${policyLine(item.toolPolicy)}`
  ].join("\n")

const policyLine = (policy: McpToolPolicy) =>
  policy.allDisabled
    ? "every tool disabled"
    : policy.disabledTools.length > 0
    ? `disabled: ${policy.disabledTools.join(", ")}`
    : "every tool enabled"

export const create = Commands.endpoint("create", {
  summary: "Register a remote MCP server (owners and admins); `none` and `apikey` servers are checked live first.",
  details: [
    `The API key comes from standard input with --api-key-stdin, else from ${CliConfig.MCP_API_KEY_VARIABLE}; an OAuth client secret from standard input with --client-secret-stdin, else from ${CliConfig.MCP_CLIENT_SECRET_VARIABLE}. Neither is ever an argument; both are stored encrypted and never shown. Nobody may use the new connection until it is granted ('mcp connections grant').`
  ],
  inputs: {
    name: Inputs.argument("name", { schema: McpConnectionName, description: "Its name, unique in the organization (any case)." }),
    url: Inputs.text("mcp-url", { placeholder: "<url>", description: "The MCP endpoint (https; often ending in /mcp). (--url names the orgplane server.)", schema: McpServerUrl }),
    auth: Inputs.choice("auth", ["none", "apikey", "oauth"], { description: "How the server authenticates: none, apikey (a Bearer key) or oauth." }),
    perMember: Inputs.boolean("per-member", { description: "Each member connects their own account (`oauth` only); default: one shared credential." }),
    apiKeyStdin,
    ...oauthInputs
  },
  call: (client, input) =>
    Effect.gen(function*() {
      yield* oneStdin(input)
      const apiKey = input.auth === "apikey" || input.apiKeyStdin
        ? yield* readSecret("the API key", "--api-key-stdin", input.apiKeyStdin, CliConfig.mcpApiKey, ApiKey)
        : undefined
      const missingKey = new UsageError({ message: `an apikey connection needs its key: --api-key-stdin or ${CliConfig.MCP_API_KEY_VARIABLE}` })
      if (input.auth === "apikey" && apiKey === undefined) return yield* missingKey
      const clientSecret = input.auth === "oauth" && (Option.isSome(input.clientId) || input.clientSecretStdin)
        ? yield* readSecret("the client secret", "--client-secret-stdin", input.clientSecretStdin, CliConfig.mcpClientSecret, ClientSecret)
        : undefined
      const oauth = oauthPayload(input, clientSecret)
      if (input.auth !== "oauth" && (input.perMember || oauth !== undefined)) {
        return yield* new UsageError({ message: "--per-member, --client-id, --client-secret-stdin, --issuer and --scope are only for --auth oauth" })
      }
      if (input.auth !== "apikey" && apiKey !== undefined) return yield* new UsageError({ message: "--api-key-stdin is only for --auth apikey" })
      // One call per `authType`: the request body is a union, one member per type.
      const base = { name: input.name, url: input.url }
      if (input.auth === "oauth") {
        return yield* client.mcpConnections.create({
          payload: {
            ...base,
            authType: "oauth",
            ...(input.perMember ? { credentialMode: "per_member" as const } : {}),
            ...(oauth === undefined ? {} : { oauth })
          }
        })
      }
      if (input.auth === "apikey") {
        return apiKey === undefined ? yield* missingKey : yield* client.mcpConnections.create({ payload: { ...base, authType: "apikey", apiKey } })
      }
      return yield* client.mcpConnections.create({ payload: { ...base, authType: "none" } })
    }),
  output: McpConnectionResponse,
  human: ({ item }) => `Created ${describe(item)}\nGrant it before anyone uses it: orgplane mcp connections grant ${item.id} --org-wide`
})

export const list = Commands.list("list", {
  summary: "List the MCP connections granted to you, oldest first (--manageable: every one, owners and admins).",
  noun: "MCP connections",
  inputs: {
    manageable: Inputs.boolean("manageable", { description: "Every connection of the organization (owners and admins), granted to you or not." })
  },
  call: (client, { manageable }, page) =>
    client.mcpConnections.list({ query: { ...(manageable ? { scope: "manageable" as const } : {}), ...page } }),
  output: McpConnectionPage,
  columns: [
    ["id", (item) => item.id],
    ["name", (item) => item.name],
    ["auth", (item) => `${item.authType}${item.credentialMode === "per_member" ? " (per member)" : ""}`],
    ["ready", (item) => (item.ready ? "yes" : "no")],
    ["url", (item) => item.url],
    ["created", (item) => Output.date(item.createdAt)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show an MCP connection as it is for you: connected, ready or why not (never a secret).",
  inputs: { connection },
  call: (client, input) =>
    Effect.flatMap(resolveConnection(client, input.connection), (connectionId) => client.mcpConnections.get({ params: { connectionId } })),
  output: McpConnectionResponse,
  human: ({ item }) => describe(item)
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Rename a connection.", ["mcp", "connections", "update", "github-mcp", "--name", "GitHub"]],
  ],
  summary: "Rename an MCP connection, move it to another URL, give it a new API key or change its OAuth settings.",
  details: [
    "A new URL or key of a `none` or `apikey` connection is checked live before it is stored; a new URL of an `oauth` connection drops the credentials issued for the old one. Secrets come from standard input only (--api-key-stdin, --client-secret-stdin)."
  ],
  inputs: {
    connection,
    name: Inputs.optional(Inputs.text("name", { placeholder: "<name>", description: "A new name.", schema: McpConnectionName })),
    url: Inputs.optional(Inputs.text("mcp-url", { placeholder: "<url>", description: "A new MCP endpoint.", schema: McpServerUrl })),
    apiKeyStdin,
    ...oauthInputs
  },
  call: (client, input) =>
    Effect.gen(function*() {
      yield* oneStdin(input)
      const apiKey = yield* readSecret("the API key", "--api-key-stdin", input.apiKeyStdin, undefined, ApiKey)
      const clientSecret = yield* readSecret("the client secret", "--client-secret-stdin", input.clientSecretStdin, undefined, ClientSecret)
      const oauth = oauthPayload(input, clientSecret)
      const payload: typeof UpdateMcpConnectionRequest.Type = {
        ...Inputs.ifSome("name", input.name),
        ...Inputs.ifSome("url", input.url),
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(oauth === undefined ? {} : { oauth })
      }
      if (Object.keys(payload).length === 0) {
        return yield* new UsageError({ message: "give something to change: --name, --mcp-url, --api-key-stdin, --client-id, --client-secret-stdin, --issuer or --scope" })
      }
      const connectionId = yield* resolveConnection(client, input.connection)
      return yield* client.mcpConnections.update({ params: { connectionId }, payload })
    }),
  output: McpConnectionResponse,
  human: ({ item }) => `Updated ${describe(item)}`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: ExternalMcpConnectionId })

export const del = Commands.endpoint("delete", {
  summary: "Delete an MCP connection with its grants and every stored credential (owners and admins).",
  inputs: { connection },
  call: (client, input) =>
    Effect.gen(function*() {
      const connectionId = yield* resolveConnection(client, input.connection)
      yield* client.mcpConnections.delete({ params: { connectionId } })
      return { ok: true as const, deleted: connectionId }
    }),
  output: Deleted,
  human: ({ deleted }) => `Deleted MCP connection ${deleted} with its grants and credentials.`
})

export const grant = Commands.endpoint("grant", {
  examples: [
    ["Let the whole organization use a connection.", ["mcp", "connections", "grant", "github-mcp", "--org-wide"]],
  ],
  summary: "Let a member, a team or the whole organization use an MCP connection (owners and admins).",
  details: ["Any role lets them use it; owners and admins need a grant too to run its tools. Granting again replaces the role."],
  inputs: {
    connection,
    role: Inputs.withDefault(
      Inputs.choice("role", AccessRole.literals, { description: "Recorded with the grant; any role lets them use the connection. Default viewer." }),
      "viewer"
    ),
    ...granteeInputs
  },
  call: (client, { connection: given, role, ...who }) =>
    Effect.gen(function*() {
      const payload = yield* granteePayload(role, who)
      const connectionId = yield* resolveConnection(client, given)
      return yield* client.mcpConnections.mcpConnectionGrant({ params: { connectionId }, payload })
    }),
  output: McpConnectionAccessGrantResponse,
  human: ({ item }, { connection: given }) => `Granted ${grantee(item)} the use of MCP connection ${given} (grant ${item.id}).`
})

export const grants = Commands.list("grants", {
  summary: "List who may use an MCP connection, newest first (owners and admins).",
  noun: "grants",
  inputs: {
    connection,
    includeRevoked: Inputs.boolean("include-revoked", { description: "Also list revoked grants." })
  },
  call: (client, { connection: given, includeRevoked }, page) =>
    Effect.flatMap(resolveConnection(client, given), (connectionId) =>
      client.mcpConnections.mcpConnectionListAccess({
        params: { connectionId },
        query: { ...(includeRevoked ? { includeRevoked: true } : {}), ...page }
      })),
  output: McpConnectionAccessGrantPage,
  columns: grantColumns
})

const Revoked = Schema.Struct({ ok: Schema.Literal(true), connection: ExternalMcpConnectionId, revoked: McpConnectionAccessGrantId })

export const revoke = Commands.endpoint("revoke", {
  summary: "Revoke a grant of an MCP connection; it stops applying at once (owners and admins).",
  inputs: {
    connection,
    grantId: Inputs.argument("grantId", { schema: McpConnectionAccessGrantId, description: "The grant (emg_…), from 'mcp connections grants'." })
  },
  call: (client, { connection: given, grantId }) =>
    Effect.gen(function*() {
      const connectionId = yield* resolveConnection(client, given)
      yield* client.mcpConnections.mcpConnectionRevoke({ params: { connectionId, grantId } })
      return { ok: true as const, connection: connectionId, revoked: grantId }
    }),
  output: Revoked,
  human: ({ connection: id, revoked }) => `Revoked grant ${revoked} of MCP connection ${id}; it stops applying at once.`
})

const showPolicy = (policy: McpToolPolicy) =>
  `Tool policy: ${policyLine(policy)}${policy.updatedAt === null ? "" : ` (set by ${policy.updatedByOrgMembershipId ?? "the system"} on ${Output.date(policy.updatedAt)})`}.`

export const getToolPolicy = Commands.endpoint("get", {
  summary: "Show which of an MCP connection's tools are disabled, and who set it (owners and admins).",
  inputs: { connection },
  call: (client, input) =>
    Effect.flatMap(resolveConnection(client, input.connection), (connectionId) => client.mcpConnections.getToolPolicy({ params: { connectionId } })),
  output: McpToolPolicy,
  human: showPolicy
})

export const setToolPolicy = Commands.endpoint("set", {
  summary: "Replace an MCP connection's tool policy: --all-disabled, or --disable each tool to refuse (none given: every tool enabled).",
  inputs: {
    connection,
    allDisabled: Inputs.boolean("all-disabled", { description: "Disable every tool of the connection." }),
    disable: Inputs.repeatedText("disable", {
      placeholder: "<tool>",
      description: "A tool to disable, by name (repeat it; at most 500).",
      schema: Schema.Array(McpToolName).check(Schema.isMaxLength(500))
    })
  },
  call: (client, input) =>
    Effect.flatMap(resolveConnection(client, input.connection), (connectionId) =>
      client.mcpConnections.setToolPolicy({
        params: { connectionId },
        payload: { allDisabled: input.allDisabled, disabledTools: input.disable }
      })),
  output: McpToolPolicy,
  human: showPolicy
})

export const toolPolicy = Commands.group("tool-policy", "Read and set which of an MCP connection's tools are disabled (owners and admins).", [
  getToolPolicy,
  setToolPolicy
])

export const connections = Commands.group(
  "connections",
  "Register remote MCP servers, grant their use, and disable their tools (owners and admins; members list and read those granted to them).",
  [create, list, get, update, del, grant, grants, revoke, toolPolicy, connect, disconnect]
)
