/**
 * `orgplane llm-providers catalog | list | get | create | update | set-credential | delete | grant | grants | revoke
 * | test | connect`: the organization's LLM providers. A provider is named by its id (llp_…) or its name (any case).
 * Credentials and header values come from standard input, a file or the environment, never from an argument; only
 * `connect` shows a credential, and only with --show-secret or --json.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import {
  AccessRole,
  LlmApiStyle,
  LlmBaseUrl,
  LlmCatalogResponse,
  LlmConnection,
  LlmCredentialInput as CredentialSchema,
  LlmHeaders,
  type LlmModelInput,
  LlmModelInput as ModelSchema,
  type LlmProvider,
  LlmProviderAccessGrantId,
  LlmProviderAccessGrantPage,
  LlmProviderAccessGrantResponse,
  LlmProviderId,
  LlmProviderName,
  LlmProviderPage,
  LlmProviderResponse,
  LlmProvidersApi,
  LlmProviderTestResult,
  type UpdateLlmProviderRequest
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

const provider = Inputs.argument("provider", { placeholder: "<provider>", description: "The LLM provider: its id (llp_…) or its name (any case)." })

const isProviderId = Schema.is(LlmProviderId)

/** Every page of a list, in order. */
const everyPage = (client: OrgplaneApiClient, scope: "usable" | "manageable") =>
  Effect.gen(function*() {
    const items: Array<LlmProvider> = []
    let cursor: string | undefined
    do {
      const page = yield* client.llmProviders.list({ query: { scope, limit: 100, ...(cursor === undefined ? {} : { cursor }) } })
      items.push(...page.items)
      cursor = page.nextCursor ?? undefined
    } while (cursor !== undefined)
    return items
  })

/** The id a provider argument names: an id as is, else the provider of that name among those the caller manages or uses. */
const resolveProvider = (client: OrgplaneApiClient, given: string) =>
  Effect.gen(function*() {
    if (isProviderId(given)) return given
    const wanted = given.trim().toLowerCase()
    const managed = (yield* everyPage(client, "manageable")).find((item) => item.name.toLowerCase() === wanted)
    const found = managed ?? (yield* everyPage(client, "usable")).find((item) => item.name.toLowerCase() === wanted)
    if (found === undefined) {
      return yield* new UsageError({ message: `<provider>: no LLM provider is named "${given.slice(0, 100)}" (give its name or its id, llp_…)` })
    }
    return found.id
  })

/** 64 KiB: far above a credential or 16 headers. */
const MAX_SECRET_FILE = 64 * 1024

const readSource = (flag: string, path: string) =>
  Effect.mapError(Files.readFileOrStdin(path, MAX_SECRET_FILE, "64 KiB"), (message) => new UsageError({ message: `${flag}: ${message}` }))

const credentialInputs = {
  apiKeyStdin: Inputs.boolean("api-key-stdin", { description: `Read the API key from standard input (else ${CliConfig.LLM_API_KEY_VARIABLE}, when set).` }),
  credentialFile: Inputs.optional(Inputs.text("credential-file", {
    placeholder: "<file|->",
    description: "A JSON credential: {\"type\":\"api_key\",\"apiKey\":…} or {\"type\":\"oauth\",\"accessToken\":…,\"refreshToken\":…,\"expiresAt\":…} (- reads standard input)."
  }))
}

/** The credential from the flags or the environment; undefined when none is given. */
const credentialOf = (input: { readonly apiKeyStdin: boolean; readonly credentialFile: Option.Option<string> }, useEnvironment: boolean) =>
  Effect.gen(function*() {
    if (input.apiKeyStdin && Option.isSome(input.credentialFile)) {
      return yield* new UsageError({ message: "give --api-key-stdin or --credential-file, not both" })
    }
    const invalid = () => new UsageError({ message: "the credential: not valid (printable ASCII without spaces, at most 8192 characters; it is never shown)" })
    if (Option.isSome(input.credentialFile)) {
      const text = yield* readSource("--credential-file", input.credentialFile.value)
      return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(CredentialSchema))(text).pipe(Effect.mapError(invalid))
    }
    const key = input.apiKeyStdin
      ? yield* Effect.mapError(Files.readStdin, (message) => new UsageError({ message: `--api-key-stdin: ${message}` }))
      : useEnvironment
      ? Option.getOrUndefined(Option.map(yield* Effect.orDie(CliConfig.llmApiKey), Redacted.value))
      : undefined
    if (key === undefined) return undefined
    return yield* Schema.decodeUnknownEffect(CredentialSchema)({ type: "api_key", apiKey: key.trim() }).pipe(Effect.mapError(invalid))
  })

const headersFile = Inputs.optional(Inputs.text("headers-file", {
  placeholder: "<file|->",
  description: "A JSON object of extra headers sent with every request (values are kept like credentials); {} removes them on update."
}))

const headersOf = (file: Option.Option<string>) =>
  Option.isNone(file)
    ? Effect.succeed(undefined)
    : Effect.flatMap(readSource("--headers-file", file.value), (text) =>
      Schema.decodeUnknownEffect(Schema.fromJsonString(LlmHeaders))(text).pipe(
        Effect.mapError(() =>
          new UsageError({ message: "--headers-file: not a JSON object of at most 16 headers (names of letters, digits and '-', not authorization or x-api-key; printable values up to 1024 characters)" })
        )
      ))

const modelInputs = {
  models: Inputs.repeatedText("model", { placeholder: "<model id>", description: "An allowed model (repeat it); for a catalog provider, one of its models." }),
  modelsFile: Inputs.optional(Inputs.text("models-file", {
    placeholder: "<file|->",
    description: "A JSON array of models with overrides: [{\"id\":…,\"name\":…,\"contextWindow\":…,\"maxOutputTokens\":…,\"cost\":{\"input\":…,\"output\":…}}]."
  }))
}

const modelsOf = (input: { readonly models: ReadonlyArray<string>; readonly modelsFile: Option.Option<string> }) =>
  Effect.gen(function*() {
    if (input.models.length > 0 && Option.isSome(input.modelsFile)) return yield* new UsageError({ message: "give --model or --models-file, not both" })
    if (Option.isSome(input.modelsFile)) {
      const text = yield* readSource("--models-file", input.modelsFile.value)
      return yield* Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Array(ModelSchema)))(text).pipe(
        Effect.mapError(() => new UsageError({ message: "--models-file: not a JSON array of models ({\"id\": …} with optional name, contextWindow, maxOutputTokens, cost)" }))
      )
    }
    return input.models.length === 0 ? undefined : input.models.map((id): LlmModelInput => ({ id }))
  })

const describe = (item: LlmProvider) =>
  [
    `LLM provider ${item.name} (${item.id}): ${item.apiStyle} at ${item.baseUrl}`,
    `  source: ${item.source === "catalog" ? `catalog (${item.catalogProviderId})` : "custom"}`,
    `  credential: ${item.credential === null ? "none yet" : `${item.credential.type}${item.credential.expiresAt === null ? "" : `, expires ${Output.date(item.credential.expiresAt)}`}`}`,
    `  headers: ${item.headerNames.length === 0 ? "none" : item.headerNames.join(", ")}`,
    `  models: ${item.models.map((model) => model.id).join(", ")}`,
    `  last used: ${item.lastUsedAt === null ? "never" : Output.date(item.lastUsedAt)}; you ${item.canManage ? "manage it" : "may use it"}`
  ].join("\n")

export const catalog = Commands.endpoint("catalog", {
  summary: "Show the LLM provider catalog (a models.dev snapshot shipped with the server, or the operator's).",
  inputs: {
    providerId: Inputs.optional(Inputs.text("provider", { placeholder: "<catalog id>", description: "Only this catalog provider (openai, anthropic, …), with its models." }))
  },
  // Every page of models, one answer: the catalog is in the server's memory, and a provider's models are few.
  call: (client, { providerId }) =>
    Effect.gen(function*() {
      const first = yield* client.llmProviders.catalog({ query: { ...Inputs.ifSome("provider", providerId), limit: 100 } })
      const models = [...first.models]
      let cursor = first.nextCursor
      while (cursor !== null) {
        const page = yield* client.llmProviders.catalog({ query: { ...Inputs.ifSome("provider", providerId), limit: 100, cursor } })
        models.push(...page.models)
        cursor = page.nextCursor
      }
      return { ...first, models, nextCursor: null }
    }),
  output: LlmCatalogResponse,
  human: ({ models, providers, revision }, { providerId }) =>
    Option.isSome(providerId) && providers.length === 1
      ? Output.table(
        ["model", "name", "context", "input $/M", "output $/M"],
        models.map((model) => [
          model.id,
          model.name,
          model.contextWindow === null ? "" : String(model.contextWindow),
          model.cost?.input == null ? "" : String(model.cost.input),
          model.cost?.output == null ? "" : String(model.cost.output)
        ])
      )
      : `${Output.table(
        ["id", "name", "api style", "base url", "models"],
        providers.map((item) => [item.id, item.name, item.apiStyle, item.baseUrl, String(item.modelCount)])
      )}\n(models.dev ${revision.slice(0, 9)})`
})

export const list = Commands.list("list", {
  summary: "List the LLM providers granted to you, oldest first (--manageable: those you manage; owners and admins: every one).",
  noun: "LLM providers",
  inputs: { manageable: Inputs.boolean("manageable", { description: "The providers you manage instead of those granted to you." }) },
  call: (client, { manageable }, page) => client.llmProviders.list({ query: { ...(manageable ? { scope: "manageable" as const } : {}), ...page } }),
  output: LlmProviderPage,
  columns: [
    ["id", (item) => item.id],
    ["name", (item) => item.name],
    ["style", (item) => item.apiStyle],
    ["models", (item) => String(item.models.length)],
    ["credential", (item) => item.credential?.type ?? "none"],
    ["last used", (item) => Output.date(item.lastUsedAt)]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show an LLM provider (never its credential).",
  inputs: { provider },
  call: (client, input) => Effect.flatMap(resolveProvider(client, input.provider), (llmProviderId) => client.llmProviders.get({ params: { llmProviderId } })),
  output: LlmProviderResponse,
  human: ({ item }) => describe(item)
})

export const create = Commands.endpoint("create", {
  examples: [
    ["Start from the catalog's OpenAI, with one model (the key from ORGPLANE_LLM_API_KEY).", ["llm-providers", "create", "OpenAI", "--catalog", "openai", "--model", "gpt-4o"]],
  ],
  summary: "Register an LLM provider from the catalog (--catalog) or custom (--api-style and --base-url) (owners and admins).",
  details: [
    `The API key comes from standard input (--api-key-stdin) or ${CliConfig.LLM_API_KEY_VARIABLE}; it may also be set later, and OAuth tokens only then ('llm-providers set-credential --credential-file'). You keep access to what you create; grant it to others with 'llm-providers grant'.`
  ],
  inputs: {
    name: Inputs.argument("name", { schema: LlmProviderName, description: "The provider's name, unique in the organization." }),
    catalogId: Inputs.optional(Inputs.text("catalog", { placeholder: "<catalog id>", description: "Start from this catalog provider (openai, anthropic, …)." })),
    apiStyle: Inputs.optional(Inputs.choice("api-style", LlmApiStyle.literals, { description: "How clients talk to it (custom providers)." })),
    baseUrl: Inputs.optional(Inputs.text("base-url", { placeholder: "<url>", description: "The API's base URL (custom providers; overrides the catalog's).", schema: LlmBaseUrl })),
    ...modelInputs,
    headersFile,
    apiKeyStdin: credentialInputs.apiKeyStdin
  },
  call: (client, input) =>
    Effect.gen(function*() {
      const models = yield* modelsOf(input)
      if (models === undefined) return yield* new UsageError({ message: "give at least one --model (or --models-file)" })
      const headers = yield* headersOf(input.headersFile)
      const credential = yield* credentialOf({ apiKeyStdin: input.apiKeyStdin, credentialFile: Option.none() }, true)
      return yield* client.llmProviders.create({
        payload: {
          name: input.name,
          ...Inputs.ifSome("catalogProviderId", input.catalogId),
          ...Inputs.ifSome("apiStyle", input.apiStyle),
          ...Inputs.ifSome("baseUrl", input.baseUrl),
          models,
          ...(headers === undefined ? {} : { headers }),
          ...(credential?.type === "api_key" ? { apiKey: credential.apiKey } : {})
        }
      })
    }),
  output: LlmProviderResponse,
  human: ({ item }) => `Created ${describe(item)}`
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Change the models it allows.", ["llm-providers", "update", "openai", "--model", "gpt-4o", "--model", "gpt-4o-mini"]],
  ],
  summary: "Rename an LLM provider, move its base URL, or replace its models or extra headers (manager access).",
  inputs: {
    provider,
    name: Inputs.optional(Inputs.text("name", { placeholder: "<name>", description: "A new name.", schema: LlmProviderName })),
    baseUrl: Inputs.optional(Inputs.text("base-url", { placeholder: "<url>", description: "A new base URL.", schema: LlmBaseUrl })),
    ...modelInputs,
    headersFile
  },
  call: (client, input) =>
    Effect.gen(function*() {
      const models = yield* modelsOf(input)
      const headers = yield* headersOf(input.headersFile)
      const payload: typeof UpdateLlmProviderRequest.Type = {
        ...Inputs.ifSome("name", input.name),
        ...Inputs.ifSome("baseUrl", input.baseUrl),
        ...(models === undefined ? {} : { models }),
        ...(headers === undefined ? {} : { headers })
      }
      if (Object.keys(payload).length === 0) return yield* new UsageError({ message: "give something to change: --name, --base-url, --model, --models-file or --headers-file" })
      const llmProviderId = yield* resolveProvider(client, input.provider)
      return yield* client.llmProviders.update({ params: { llmProviderId }, payload })
    }),
  output: LlmProviderResponse,
  human: ({ item }) => `Updated ${describe(item)}`
})

export const setCredential = Commands.endpoint("set-credential", {
  examples: [
    ["Set the credential a file holds.", ["llm-providers", "set-credential", "openai", "--credential-file", "credential.json"]],
  ],
  summary: "Replace an LLM provider's credential: an API key from standard input, or a JSON credential file (manager access).",
  inputs: { provider, ...credentialInputs },
  call: (client, input) =>
    Effect.gen(function*() {
      const credential = yield* credentialOf(input, true)
      if (credential === undefined) {
        return yield* new UsageError({ message: `give the credential: --api-key-stdin, --credential-file or ${CliConfig.LLM_API_KEY_VARIABLE}` })
      }
      const llmProviderId = yield* resolveProvider(client, input.provider)
      return yield* client.llmProviders.setCredential({ params: { llmProviderId }, payload: credential })
    }),
  output: LlmProviderResponse,
  human: ({ item }) => `Stored a new ${item.credential?.type ?? ""} credential for LLM provider ${item.name} (${item.id}).`
})

const Deleted = Schema.Struct({ ok: Schema.Literal(true), deleted: LlmProviderId })

export const del = Commands.endpoint("delete", {
  summary: "Delete an LLM provider with its credential and grants, for good (manager access).",
  inputs: { provider },
  call: (client, input) =>
    Effect.gen(function*() {
      const llmProviderId = yield* resolveProvider(client, input.provider)
      yield* client.llmProviders.delete({ params: { llmProviderId } })
      return { ok: true as const, deleted: llmProviderId }
    }),
  output: Deleted,
  human: ({ deleted }) => `Deleted LLM provider ${deleted} with its credential and grants.`
})

export const grant = Commands.endpoint("grant", {
  examples: [
    ["Let a team use a provider.", ["llm-providers", "grant", "openai", "--team", "tem_01m6dsg7e0f6xbks25eta8m5bm"]],
  ],
  summary: "Let a member, a team or the whole organization use an LLM provider (manager access).",
  details: ["Any role lets them use it (read it, connect); manager also lets them change, test, grant and delete it. Granting again replaces the role."],
  inputs: {
    provider,
    role: Inputs.withDefault(Inputs.choice("role", AccessRole.literals, { description: "viewer or editor: use it; manager: also manage it. Default viewer." }), "viewer"),
    ...granteeInputs
  },
  call: (client, { provider: given, role, ...who }) =>
    Effect.gen(function*() {
      const payload = yield* granteePayload(role, who)
      const llmProviderId = yield* resolveProvider(client, given)
      return yield* client.llmProviders.llmProviderGrant({ params: { llmProviderId }, payload })
    }),
  output: LlmProviderAccessGrantResponse,
  human: ({ item }, { provider: given }) => `Granted ${grantee(item)} ${item.role} on LLM provider ${given} (grant ${item.id}).`
})

export const grants = Commands.list("grants", {
  summary: "List who may use an LLM provider, newest first (manager access).",
  noun: "grants",
  inputs: { provider, includeRevoked: Inputs.boolean("include-revoked", { description: "Also list revoked grants." }) },
  call: (client, { includeRevoked, provider: given }, page) =>
    Effect.flatMap(resolveProvider(client, given), (llmProviderId) =>
      client.llmProviders.llmProviderListAccess({ params: { llmProviderId }, query: { ...(includeRevoked ? { includeRevoked: true } : {}), ...page } })),
  output: LlmProviderAccessGrantPage,
  columns: grantColumns
})

const Revoked = Schema.Struct({ ok: Schema.Literal(true), provider: LlmProviderId, revoked: LlmProviderAccessGrantId })

export const revoke = Commands.endpoint("revoke", {
  summary: "Revoke a grant of an LLM provider; it stops applying at once (manager access).",
  inputs: {
    provider,
    grantId: Inputs.argument("grantId", { schema: LlmProviderAccessGrantId, description: "The grant (lpg_…), from 'llm-providers grants'." })
  },
  call: (client, { grantId, provider: given }) =>
    Effect.gen(function*() {
      const llmProviderId = yield* resolveProvider(client, given)
      yield* client.llmProviders.llmProviderRevoke({ params: { llmProviderId, grantId } })
      return { ok: true as const, provider: llmProviderId, revoked: grantId }
    }),
  output: Revoked,
  human: ({ provider: id, revoked }) => `Revoked grant ${revoked} of LLM provider ${id}; it stops applying at once.`
})

export const test = Commands.endpoint("test", {
  summary: "List the provider's models with its stored credential and say which allowed models it offers (manager access).",
  inputs: { provider },
  call: (client, input) => Effect.flatMap(resolveProvider(client, input.provider), (llmProviderId) => client.llmProviders.test({ params: { llmProviderId } })),
  output: LlmProviderTestResult,
  human: (result) =>
    [
      result.ok ? "OK: the provider offers every allowed model." : "Some allowed models are missing at the provider.",
      `  present: ${result.present.length === 0 ? "none" : result.present.join(", ")}`,
      `  missing: ${result.missing.length === 0 ? "none" : result.missing.join(", ")}`,
      `  the provider lists ${result.upstreamModelCount} models`
    ].join("\n")
})

export const connect = Commands.endpoint("connect", {
  summary: "Show what a client needs to use an LLM provider granted to you; the credential only with --show-secret (or in --json).",
  details: ["Each connect is recorded (the provider's last use) and limited per member. --json always carries the credential: it is what scripts read."],
  inputs: { provider, showSecret: Inputs.boolean("show-secret", { description: "Print the API key or access token too." }) },
  call: (client, input) => Effect.flatMap(resolveProvider(client, input.provider), (llmProviderId) => client.llmProviders.connect({ params: { llmProviderId } })),
  output: LlmConnection,
  human: (connection, { showSecret }) => {
    const secret = connection.apiKey ?? connection.accessToken
    return Output.fields([
      ["provider", `${connection.name} (${connection.llmProviderId})`],
      ["api style", connection.apiStyle],
      ["base url", connection.baseURL],
      [connection.apiKey === null ? "access token" : "api key", secret === null ? "" : showSecret ? secret : "(hidden: --show-secret or --json prints it)"],
      ["headers", Object.keys(connection.headers).length === 0 ? "none" : showSecret ? JSON.stringify(connection.headers) : Object.keys(connection.headers).join(", ")],
      ["models", connection.models.map((model) => model.id).join(", ")]
    ])
  }
})

export const llmProviders = Commands.group(
  "llm-providers",
  "Register the organization's LLM providers (owners and admins), grant their use, and connect to the ones granted to you.",
  [catalog, list, get, create, update, setCredential, del, grant, grants, revoke, test, connect],
  [LlmProvidersApi]
)
