/**
 * `orgplane connections suite-a|suite-b connect | status | disconnect | client get|set|delete`: your own account at
 * a suite (the mail suite `suite-a`, the calendar suite `suite-b`), which `mail` and `calendar` act through, and the
 * organization's OAuth client for each (owners and admins). The client secret comes from standard input or the
 * environment, never from an argument.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import {
  type Suite,
  SuiteClient,
  SuiteClientRequest,
  SuiteClientsApi,
  SuiteConnection,
  SuiteConnectionsApi,
  SuiteConnectResult,
  SuiteDisconnectResult,
  SuiteEndpointUrl,
  type SuiteFeature,
  SuiteTenant
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as Commands from "../Commands.js"
import * as CliConfig from "../Config.js"
import { UsageError } from "../Errors.js"
import * as Files from "../Files.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import * as Progress from "../Progress.js"

const SECRET_VARIABLE = CliConfig.SUITE_CLIENT_SECRET_VARIABLE

/** What each suite is, in people's words, and the features it offers (every one is enabled unless --features says otherwise). */
const suites: Record<Suite, { readonly what: string; readonly features: ReadonlyArray<SuiteFeature> }> = {
  "suite-a": { what: "the mail suite (Microsoft 365)", features: ["mailDraft", "mailRead"] },
  "suite-b": { what: "the calendar suite (Google Workspace)", features: ["calendarWrite"] }
}

const yesNo = (value: boolean) => (value ? "yes" : "no")

/** The connection as a readable block: status, features, scopes, when. */
const describeConnection = (connection: SuiteConnection) =>
  [
    `${connection.suite}: ${connection.status.replace(/_/g, " ")}${connection.configured ? "" : " (an admin has not configured this suite)"}`,
    Output.fields([
      ...connection.features.map((state) =>
        [`  ${state.feature}`, `enabled: ${yesNo(state.enabled)}, granted: ${yesNo(state.granted)}`] as const
      ),
      ["  scopes", connection.grantedScopes.length > 0 ? connection.grantedScopes.join(" ") : "none"],
      ["  connected", Output.date(connection.connectedAt)],
      ["  token expires", Output.date(connection.accessTokenExpiresAt)]
    ])
  ].join("\n")

/** The OAuth client as a readable block, with the redirect URI to register first. */
const describeClient = (item: SuiteClient) =>
  [
    `Register this redirect URI with the suite's OAuth client:\n  ${item.redirectUri}`,
    "",
    `${item.suite} OAuth client ${item.clientId}`,
    Output.fields([
      ["  secret", item.hasClientSecret ? "stored (never shown)" : "none (a public client)"],
      ...(item.tenant === null ? [] : [["  tenant", item.tenant] as const]),
      ["  features", item.features.length > 0 ? item.features.join(", ") : "none (nothing can be used or connected)"],
      ["  scopes", item.scopes.join(" ")],
      ["  authorize", item.authorizationEndpoint],
      ["  token", item.tokenEndpoint],
      ["  API", item.apiBaseUrl],
      ["  updated", `${Output.date(item.updatedAt)}${item.updatedByOrgMembershipId === null ? "" : ` by ${item.updatedByOrgMembershipId}`}`]
    ])
  ].join("\n")

/** Waits until a new authorization covers every enabled feature (or gives up after 10 minutes). */
const awaitConnected = (client: OrgplaneApiClient, suite: Suite, before: SuiteConnection) =>
  Progress.awaitAuthorization(Effect.map(client.suiteConnections.get({ params: { suite } }), (now) => {
    const renewed = before.status !== "connected" || now.connectedAt?.getTime() !== before.connectedAt?.getTime()
    return now.status === "connected" && renewed && now.features.every((state) => !state.enabled || state.granted)
  }))

const authorizeText = (url: string | null) => `Open this URL in a browser to authorize (valid 10 minutes):\n${url}`

const connect = (suite: Suite) =>
  Commands.leaf("connect", {
    summary: `Connect your own account at ${suites[suite].what}: prints the URL to open in a browser, or that you are connected.`,
    details: [
      "Asks for the scopes of every feature an admin enabled. The URL is valid 10 minutes, once. With --wait the URL goes to standard error and the command waits until the authorization is completed (up to 10 minutes)."
    ],
    inputs: {
      wait: Inputs.boolean("wait", { description: "Wait until the authorization in the browser completed (up to 10 minutes)." })
    },
    run: (input) =>
      Commands.withClient(input, (client) =>
        Effect.gen(function*() {
          const connected = `Connected: your ${suite} account is connected.`
          const before = input.wait ? yield* client.suiteConnections.get({ params: { suite } }) : undefined
          const result = yield* client.suiteConnections.connect({ params: { suite } })
          if (result.status === "connected" || before === undefined) {
            return yield* Output.emit(input.global, SuiteConnectResult, result, (value) =>
              value.status === "connected" ? connected : authorizeText(value.authorizeUrl))
          }
          yield* Output.note(authorizeText(result.authorizeUrl))
          yield* awaitConnected(client, suite, before)
          yield* Output.emit(input.global, SuiteConnectResult, { status: "connected", authorizeUrl: null, scopes: result.scopes }, () => connected)
        }))
  })

const status = (suite: Suite) =>
  Commands.endpoint("status", {
    summary: `Show your connection to ${suites[suite].what}: its status, each feature enabled and granted, when the token expires.`,
    inputs: {},
    call: (client) => client.suiteConnections.get({ params: { suite } }),
    output: SuiteConnection,
    human: describeConnection
  })

const disconnect = (suite: Suite) =>
  Commands.endpoint("disconnect", {
    summary: `Drop your stored tokens for ${suites[suite].what} (revoke the grant in your account there to end it for good).`,
    inputs: {},
    call: (client) => client.suiteConnections.disconnect({ params: { suite } }),
    output: SuiteDisconnectResult,
    human: ({ removed }) => removed ? `Disconnected your ${suite} account.` : `Nothing to disconnect: your ${suite} account was not connected.`
  })

const getClient = (suite: Suite) =>
  Commands.endpoint("get", {
    summary: `Show the organization's OAuth client for ${suites[suite].what} and the redirect URI to register (owners and admins).`,
    inputs: {},
    call: (client) => client.suiteClients.get({ params: { suite } }),
    output: SuiteClient,
    human: describeClient
  })

const Fields = SuiteClientRequest.fields

/** `--features a,b`: a comma-separated list, checked with the API's rule for `features`. */
const FeatureList = Schema.String.pipe(Schema.decodeTo(Inputs.wordsAs(Fields.features), {
  decode: SchemaGetter.transform((text: string) => text.split(",").map((part) => part.trim()).filter((part) => part !== "")),
  encode: SchemaGetter.transform((parts: ReadonlyArray<string>) => parts.join(","))
}))

const ClientSecret = Fields.clientSecret.schema.members[0]

/** The secret from standard input (with --client-secret-stdin) or the environment; undefined when neither gives one. */
const readSecret = (stdin: boolean) =>
  Effect.gen(function*() {
    const text = stdin
      ? yield* Effect.mapError(Files.readStdin, (message) => new UsageError({ message: `--client-secret-stdin: ${message}` }))
      : Option.getOrUndefined(Option.map(yield* Effect.orDie(CliConfig.suiteClientSecret), Redacted.value))
    if (text === undefined) return undefined
    return yield* Schema.decodeEffect(ClientSecret)(text.trim()).pipe(
      Effect.mapError(() => new UsageError({ message: "the client secret must be 1 to 4096 characters (it is never shown)" }))
    )
  })

const setClient = (suite: Suite) =>
  Commands.endpoint("set", {
    summary: `Configure the organization's OAuth client for ${suites[suite].what}, replacing the whole configuration (owners and admins).`,
    details: [
      `The client secret comes from standard input with --client-secret-stdin, else from ${SECRET_VARIABLE}; never from an argument. It is stored encrypted and never shown. Given neither, the stored secret is kept; --remove-client-secret removes it (a public client).`,
      `Everything else is replaced as given: an endpoint left out is the suite's default, --features left out enables every feature of the suite (${
        suites[suite].features.join(", ")
      }). A new client id, tenant or token endpoint drops every member's connection. Register the redirect URI printed with the suite's client.`
    ],
    inputs: {
      clientId: Inputs.text("client-id", { placeholder: "<id>", schema: Fields.clientId }),
      features: Inputs.optional(Inputs.text("features", {
        placeholder: "<a,b>",
        description: `The features to enable, comma-separated: ${suites[suite].features.join(", ")} (default: all of them).`,
        schema: FeatureList
      })),
      ...(suite === "suite-a"
        ? {
          tenant: Inputs.optional(Inputs.text("tenant", {
            placeholder: "<tenant>",
            description: "The directory tenant whose accounts may connect: its id, a domain, `organizations` (default) or `common`.",
            schema: SuiteTenant
          }))
        }
        : {}),
      authorizationEndpoint: Inputs.optional(Inputs.text("authorization-endpoint", {
        placeholder: "<url>",
        description: "The authorization endpoint (default: the suite's).",
        schema: SuiteEndpointUrl
      })),
      tokenEndpoint: Inputs.optional(Inputs.text("token-endpoint", {
        placeholder: "<url>",
        description: "The token endpoint (default: the suite's).",
        schema: SuiteEndpointUrl
      })),
      apiBaseUrl: Inputs.optional(Inputs.text("api-base-url", {
        placeholder: "<url>",
        description: "The API base URL (default: the suite's public cloud).",
        schema: SuiteEndpointUrl
      })),
      clientSecretStdin: Inputs.boolean("client-secret-stdin", {
        description: `Read the client secret from standard input (else ${SECRET_VARIABLE}; neither: the stored one is kept).`
      }),
      removeClientSecret: Inputs.boolean("remove-client-secret", { description: "Remove the stored client secret (a public client)." })
    },
    call: (client, input) =>
      Effect.gen(function*() {
        if (input.removeClientSecret && input.clientSecretStdin) {
          return yield* new UsageError({ message: "give --client-secret-stdin or --remove-client-secret, not both" })
        }
        const secret = input.removeClientSecret ? null : yield* readSecret(input.clientSecretStdin)
        const tenant = "tenant" in input ? input.tenant as Option.Option<string> : Option.none()
        const payload: SuiteClientRequest = {
          clientId: input.clientId,
          features: Option.getOrElse(input.features, () => suites[suite].features),
          ...(secret === undefined ? {} : { clientSecret: secret }),
          ...Inputs.ifSome("tenant", tenant),
          ...Inputs.ifSome("authorizationEndpoint", input.authorizationEndpoint),
          ...Inputs.ifSome("tokenEndpoint", input.tokenEndpoint),
          ...Inputs.ifSome("apiBaseUrl", input.apiBaseUrl)
        }
        return yield* client.suiteClients.put({ params: { suite }, payload })
      }),
    output: SuiteClient,
    human: describeClient
  })

const Deleted = Schema.Struct({ ok: Schema.Literal(true) })

const deleteClient = (suite: Suite) =>
  Commands.endpoint("delete", {
    summary: `Remove the organization's OAuth client for ${suites[suite].what} with every member's connection (owners and admins).`,
    inputs: {},
    call: (client) => client.suiteClients.delete({ params: { suite } }).pipe(Effect.as({ ok: true as const })),
    output: Deleted,
    human: () => `Removed the ${suite} OAuth client and every member's connection to it.`
  })

const suiteGroup = (suite: Suite) =>
  Commands.group(suite, `Your account at ${suites[suite].what}, and the organization's OAuth client for it.`, [
    connect(suite),
    status(suite),
    disconnect(suite),
    Commands.group("client", `The organization's OAuth client for ${suites[suite].what} (owners and admins).`, [
      getClient(suite),
      setClient(suite),
      deleteClient(suite)
    ])
  ])

export const connections = Commands.group(
  "connections",
  "Connect your own accounts at the mail suite (suite-a) and the calendar suite (suite-b); configure their OAuth clients (owners and admins).",
  [suiteGroup("suite-a"), suiteGroup("suite-b")],
  [SuiteClientsApi, SuiteConnectionsApi]
)
