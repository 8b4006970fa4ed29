/**
 * `orgplane connectors accounts`: the GitHub accounts the organization syncs from, an installation of the server's
 * app or an access token (read from standard input or the environment, never an argument). Owners and admins
 * connect and disconnect; any member lists them.
 */
import {
  CodehostToken,
  type ConnectorAccount,
  ConnectorAccountDetail,
  ConnectorAccountDisplayName,
  ConnectorAccountId,
  ConnectorAccountLogin,
  ConnectorAccountPage,
  ConnectorAccountResponse,
  DisconnectConnectorAccountRequest,
  DisconnectConnectorAccountResponse,
  InstallationId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const accountId = Inputs.argument("accountId", { schema: ConnectorAccountId, description: "The connector account (cac_…)." })

const TOKEN_VARIABLE = CliConfig.CODEHOST_TOKEN_VARIABLE

const readStdin = Effect.mapError(Files.readStdin, (message) => new UsageError({ message: `--token-stdin: ${message}` }))

/**
 * The id's text read as a number (`NaN` too), refused in the words scripts already match ("Unable to decode
 * \"abc\" into a number", packages/cli/test/fixtures/usage/refusals.json), then checked with the API's rule.
 */
const InstallationIdText = Schema.String.pipe(Schema.decodeTo(InstallationId, {
  decode: SchemaGetter.transformEffect((text: string) => {
    const value = text === "NaN" ? Number.NaN : text.trim() === "" ? undefined : Number(text)
    return value === undefined || (Number.isNaN(value) && text !== "NaN")
      ? Effect.fail(new SchemaIssue.InvalidValue({ message: `Unable to decode ${JSON.stringify(text)} into a number` }, text))
      : Effect.succeed(value)
  }),
  encode: SchemaGetter.transform((id: number) => String(id))
}))

/** The token from stdin or the environment, checked with the API's rule; the message never quotes it. */
const readToken = (stdin: boolean) =>
  Effect.gen(function*() {
    const text = stdin ? yield* readStdin : Option.getOrUndefined(yield* Effect.orDie(CliConfig.codehostToken))
    if (text === undefined) {
      return yield* new UsageError({
        message: `give --installation-id <n> for an app installation, or a token with --token-stdin or ${TOKEN_VARIABLE}`
      })
    }
    const value = Redacted.isRedacted(text) ? Redacted.value(text) : text
    return yield* Schema.decodeEffect(CodehostToken)(value).pipe(
      Effect.mapError(() => new UsageError({ message: "the token must be 1 to 1000 characters (surrounding spaces are trimmed)" }))
    )
  })

const describeAccount = (account: ConnectorAccount) =>
  `${account.kind === "token" ? "token" : "app installation"} account ${account.displayName} (${account.id})`

export const connect = Commands.endpoint("connect", {
  examples: [
    ["Connect a GitHub App installation.", ["connectors", "accounts", "connect", "--installation-id", "52817364"]],
  ],
  summary: "Connect a GitHub account: an installation of the server's app, or an access token (owners and admins).",
  details: [
    `The token is read from standard input with --token-stdin, else from ${TOKEN_VARIABLE}; never from an argument, which other local users can see. It is stored encrypted and never shown again. Nothing is read from GitHub when connecting.`
  ],
  inputs: {
    installationId: Inputs.optional(Inputs.text("installation-id", {
      placeholder: "<n>",
      description: "The GitHub App installation id (the server must be configured with the app).",
      schema: InstallationIdText
    })),
    tokenStdin: Inputs.boolean("token-stdin", { description: `Read an access token from standard input (else ${TOKEN_VARIABLE}).` }),
    displayName: Inputs.optional(Inputs.text("display-name", {
      placeholder: "<name>",
      schema: ConnectorAccountDisplayName
    })),
    login: Inputs.optional(Inputs.text("login", {
      placeholder: "<login>",
      schema: ConnectorAccountLogin
    }))
  },
  call: (client, { displayName, installationId, login, tokenStdin }) =>
    Effect.gen(function*() {
      if (Option.isSome(installationId) && tokenStdin) {
        return yield* new UsageError({ message: "give --installation-id or --token-stdin, not both" })
      }
      const names = { ...Inputs.ifSome("displayName", displayName), ...Inputs.ifSome("accountLogin", login) }
      // One call per kind: the request body is a union, one member per `kind`.
      if (Option.isSome(installationId)) {
        return yield* client.connectorAccounts.create({ payload: { kind: "app_installation", installationId: installationId.value, ...names } })
      }
      return yield* client.connectorAccounts.create({ payload: { kind: "token", token: yield* readToken(tokenStdin), ...names } })
    }),
  output: ConnectorAccountResponse,
  human: ({ item }) => `Connected ${describeAccount(item)}.`
})

export const accountsList = Commands.list("list", {
  summary: "List the organization's connected accounts, newest first (any member may).",
  noun: "accounts",
  inputs: {},
  call: (client, _, page) => client.connectorAccounts.list({ query: page }),
  output: ConnectorAccountPage,
  columns: [
    ["id", (account) => account.id],
    ["kind", (account) => account.kind],
    ["name", (account) => account.displayName],
    ["login", (account) => account.externalAccountRef ?? "-"],
    ["installation", (account) => account.remoteId ?? "-"],
    ["status", (account) => account.status],
    ["created", (account) => Output.date(account.createdAt)]
  ]
})

export const accountsGet = Commands.endpoint("get", {
  summary: "Show a connected account (never its token).",
  inputs: { accountId },
  call: (client, { accountId }) => client.connectorAccounts.get({ params: { connectorAccountId: accountId } }),
  output: ConnectorAccountDetail,
  human: ({ item }) =>
    Output.fields([
      ["id", item.id],
      ["kind", item.kind],
      ["name", item.displayName],
      ["login", item.externalAccountRef ?? "-"],
      ["installation", item.remoteId ?? "-"],
      ["status", item.status],
      ["created by", item.createdByOrgMembershipId ?? "-"],
      ["created", Output.date(item.createdAt)],
      ["updated", Output.date(item.updatedAt)]
    ])
})

export const disconnect = Commands.endpoint("disconnect", {
  summary: "Disconnect an account: remove every instance of it as 'instances remove' does, then delete it and its credential.",
  inputs: {
    accountId,
    reason: Inputs.optional(Inputs.text("reason", { schema: DisconnectConnectorAccountRequest.fields.reason.schema }))
  },
  call: (client, { accountId, reason }) =>
    client.connectorAccounts.disconnect({ params: { connectorAccountId: accountId }, payload: Inputs.ifSome("reason", reason) }),
  output: DisconnectConnectorAccountResponse,
  human: ({ item }) =>
    `Disconnected account ${item.disconnectedAccountId}: deleted ${item.deletedConnectorInstanceCount} instance(s), ${item.deletedConfigObjectCount} config object(s), ${item.deletedConnectorMappingCount} mapping(s), ${item.deletedPluginCount} plugin(s) and ${item.deletedMarketplaceCount} marketplace(s).`
})

export const accounts = Commands.group("accounts", "Connect, list and disconnect GitHub accounts (owners and admins connect).", [
  accountsList,
  accountsGet,
  connect,
  disconnect
])
