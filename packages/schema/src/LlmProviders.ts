/**
 * LLM providers: the model providers an organization registers for its members' agents (from the shipped catalog,
 * a snapshot of models.dev, or custom), their model allow-list, and the write-only credential a granted member's
 * client gets only through the connect read.
 */
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import { Int, Timestamp, TrimmedText } from "./Common.js"
import { urlProblem, type UrlRule, UrlOf } from "./Urls.js"
import { ada, exampleTime } from "./Examples.js"
import { exampleId, LlmProviderId, MembershipId, OrganizationId } from "./Ids.js"
import { Cursor, Page, PageQueryFields } from "./Pagination.js"
import { publishedAs } from "./internal/published.js"

export const LlmApiStyle = Schema.Literals(["openai-compatible", "anthropic"]).annotate({
  identifier: "LlmApiStyle",
  description:
    "How clients talk to the provider: `openai-compatible` (the `openai` SDK: `GET {baseURL}/models`, `POST {baseURL}/chat/completions`, `Authorization: Bearer <key>`) or `anthropic` (the `@anthropic-ai/sdk`: `GET {baseURL}/v1/models`, `POST {baseURL}/v1/messages`, `x-api-key` and `anthropic-version`)."
})
export type LlmApiStyle = typeof LlmApiStyle.Type

/**
 * Prices in US dollars per million tokens, as models.dev gives them; null where unknown. (Finite numbers: Effect 4's
 * `Schema.Number` also takes the strings "Infinity", "-Infinity" and "NaN", which JSON has no numbers for.)
 */
export const LlmModelCost = Schema.Struct({
  input: Schema.NullOr(Schema.Finite),
  output: Schema.NullOr(Schema.Finite),
  cacheRead: Schema.NullOr(Schema.Finite)
}).annotate({ identifier: "LlmModelCost", description: "US dollars per million tokens (input, output, cached input read); null where unknown." })

// ----- The catalog -----

export const LlmCatalogModel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  family: Schema.NullOr(Schema.String),
  contextWindow: Schema.NullOr(Int).annotate({ description: "Tokens of context; null where unknown." }),
  maxOutputTokens: Schema.NullOr(Int),
  cost: Schema.NullOr(LlmModelCost),
  reasoning: Schema.Boolean,
  toolCall: Schema.Boolean
}).annotate({ identifier: "LlmCatalogModel" })
export type LlmCatalogModel = typeof LlmCatalogModel.Type

export const LlmCatalogProvider = Schema.Struct({
  id: Schema.String.check(Schema.isPattern(/^[a-z0-9][a-z0-9._-]{0,63}$/u)).annotate({ description: "The catalog's id of the provider (models.dev's): `openai`, `anthropic`, ..." }),
  name: Schema.String,
  apiStyle: LlmApiStyle,
  baseUrl: Schema.String.check(Schema.makeFilter((text: string) => urlProblem(text, { absolute: "http" }) ?? true)),
  docUrl: Schema.NullOr(Schema.String),
  models: Schema.Array(LlmCatalogModel)
}).annotate({ identifier: "LlmCatalogProvider" })
export type LlmCatalogProvider = typeof LlmCatalogProvider.Type

/** The catalog as shipped (and as an operator's `ORGPLANE_LLM_CATALOG` file holds it). */
export const LlmCatalog = Schema.Struct({
  source: Schema.String,
  revision: Schema.String,
  providers: Schema.Array(LlmCatalogProvider)
}).annotate({ identifier: "LlmCatalog" })
export type LlmCatalog = typeof LlmCatalog.Type

const catalogModelExample = {
  id: "gpt-4o",
  name: "GPT-4o",
  family: "gpt",
  contextWindow: 128000,
  maxOutputTokens: 16384,
  cost: { input: 2.5, output: 10, cacheRead: 1.25 },
  reasoning: false,
  toolCall: true
}
export const LlmCatalogQuery = Schema.Struct({
  provider: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64))).annotateKey({
    description: "Only this catalog provider (its id, such as `openai`) and its models; unknown ids are a 404."
  }),
  q: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))).annotateKey({
    description: "Only models whose id or name contains these characters, in any letter case (`gpt-4o`, `sonnet`)."
  }),
  ...PageQueryFields
}).annotate({ examples: [{ provider: "openai", q: "gpt-4o", limit: 20 }] })
export type LlmCatalogQuery = typeof LlmCatalogQuery.Type

/** A catalog provider without its models, which the catalog's answer pages apart. */
export const LlmCatalogProviderSummary = Schema.Struct({
  id: LlmCatalogProvider.fields.id,
  name: Schema.String,
  apiStyle: LlmApiStyle,
  baseUrl: Schema.String,
  docUrl: Schema.NullOr(Schema.String),
  modelCount: Int.annotate({ description: "How many models the catalog has for it (whatever `q` selects)." })
}).annotate({ identifier: "LlmCatalogProviderSummary" })
export type LlmCatalogProviderSummary = typeof LlmCatalogProviderSummary.Type

/** A catalog model, with the provider it is of. */
export const LlmCatalogModelEntry = Schema.Struct({
  providerId: LlmCatalogProvider.fields.id,
  ...LlmCatalogModel.fields
}).annotate({ identifier: "LlmCatalogModelEntry" })
export type LlmCatalogModelEntry = typeof LlmCatalogModelEntry.Type

export const LlmCatalogResponse = Schema.Struct({
  source: Schema.String.annotate({ description: "Where the catalog comes from: `https://models.dev`, or the operator's file's own `source`." }),
  revision: Schema.String.annotate({ description: "The catalog's revision (the models.dev commit of the shipped snapshot)." }),
  providers: Schema.Array(LlmCatalogProviderSummary).annotate({
    description: "Every catalog provider (or the one `provider` names), without its models, on every page."
  }),
  models: Schema.Array(LlmCatalogModelEntry).annotate({
    description: "A page of the models (of `provider` when given, matching `q` when given), in the catalog's order: `limit` of them, then `nextCursor`."
  }),
  nextCursor: Schema.NullOr(Cursor).annotate({ description: "Send as `cursor` for the next page of models; null on the last." })
}).annotate({
  identifier: "LlmCatalogResponse",
  examples: [{
    source: "https://models.dev",
    revision: "f3fc69229",
    providers: [{ id: "openai", name: "OpenAI", apiStyle: "openai-compatible", baseUrl: "https://api.openai.com/v1", docUrl: "https://platform.openai.com/docs/models", modelCount: 1 }],
    models: [{ providerId: "openai", ...catalogModelExample }],
    nextCursor: null
  }]
})

// ----- Inputs -----

export const LlmProviderName = TrimmedText(1, 255, "The provider's name, unique in the organization (ignoring case)")

const LLM_BASE_URL: UrlRule = { absolute: "http", query: false }
const llmBaseUrlDescription =
  "The API's base URL as the SDKs take it (`https://api.openai.com/v1`, `https://api.anthropic.com`); a trailing `/` is dropped."

/**
 * A base URL orgplane and clients call, under the URL rule, without a query; a trailing `/` is dropped. Its JSON
 * Schema is the wire string's, UrlOf's description and keywords.
 */
export const LlmBaseUrl = UrlOf(LLM_BASE_URL, llmBaseUrlDescription).pipe(
  Schema.decodeTo(Schema.String, {
    decode: SchemaGetter.transform((text: string) => text.replace(/\/+$/, "")),
    encode: SchemaGetter.transform((text: string) => text)
  })
).annotate({ identifier: "LlmBaseUrl" })

/** Header names orgplane sets itself, or that would change how the request travels. */
export const RESERVED_HEADERS = [
  "authorization",
  "x-api-key",
  "anthropic-version",
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "cookie",
  "proxy-authorization"
]

const HEADER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/

/** What is wrong with an extra header's name, if anything. */
const headerNameProblem = (name: string): string | undefined =>
  !HEADER_NAME.test(name)
    ? "is not a header name: 1 to 64 letters, digits or '-'"
    : RESERVED_HEADERS.includes(name.toLowerCase())
    ? `is set by orgplane or the SDK, not by extra headers (${RESERVED_HEADERS.join(", ")})`
    : undefined

export const LlmHeaderValue = Schema.String.check(
  Schema.isPattern(/^[\x20-\x7E]{1,1024}$/u, { message: "must be 1 to 1024 printable ASCII characters (no control characters)" })
)

/** What is wrong with extra headers, name by name (JSON Schema cannot say all of it about a map's keys). */
const headersProblems = (headers: Readonly<Record<string, string>>) => {
  const names = Object.keys(headers)
  if (names.length > 16) return "must have at most 16 headers"
  const issues = names.flatMap((name) => {
    const problem = headerNameProblem(name)
    return problem === undefined ? [] : [{ path: [name], issue: problem }]
  })
  if (issues.length > 0) return issues
  const lower = names.map((name) => name.toLowerCase())
  return new Set(lower).size === lower.length || "must not name a header twice (names ignore case)"
}

/**
 * The rule of extra headers' names (at most 16, each a header name orgplane does not set, once ignoring case), for a
 * list of named headers (an organization document's, whose values are secret references).
 */
export const isLlmHeaderList = <A extends { readonly name: string }>() =>
  Schema.makeFilter((headers: ReadonlyArray<A>) => {
    if (headers.length > 16) return "must have at most 16 headers"
    const issues = headers.flatMap((header, index) => {
      const problem = headerNameProblem(header.name)
      return problem === undefined ? [] : [{ path: [index, "name"], issue: problem }]
    })
    if (issues.length > 0) return issues
    const lower = headers.map((header) => header.name.toLowerCase())
    return new Set(lower).size === lower.length || "must not name a header twice (names ignore case)"
  }, { toJsonSchema: () => ({ maxItems: 16 }) })

export const LlmHeaders = Schema.Record(Schema.String, LlmHeaderValue).annotate({
  description:
    "Extra headers every request to the provider carries (for example `OpenAI-Organization`, `HTTP-Referer`): at most 16, names of 1 to 64 letters, digits or `-` (each once, ignoring case; not `authorization`, `x-api-key`, `anthropic-version`, `host`, `content-*`, `cookie`, ...), values of 1 to 1024 printable ASCII characters. Values are treated as credentials: stored encrypted, never read back (reads list the names only), given out by the connect read."
}).check(
  // The names are checked here (which JSON Schema cannot say of a map's keys): documented with its bound.
  Schema.makeFilter(headersProblems, { toJsonSchema: () => ({ maxProperties: 16 }) })
).annotate({
  identifier: "LlmHeaders",
  // Published as an open object with its bound (its description not written in it).
  ...publishedAs({ type: "object", additionalProperties: true, maxProperties: 16 })
})

// A reference to `Int` with the bounds beside it in the document (OpenApiComponents' `integersAsPublished`).
const Tokens = Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000_000 }))
const Price = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 }))

/** One model of the allow-list, with what overrides the catalog's figures. */
export const LlmModelInput = Schema.Struct({
  id: TrimmedText(1, 255, "The model id clients send (`gpt-4o`); for a catalog provider, one of the catalog's models"),
  name: Schema.optionalKey(TrimmedText(1, 255, "Display name, instead of the catalog's")),
  contextWindow: Schema.optionalKey(Tokens).annotateKey({
    description: "Tokens of context, instead of the catalog's."
  }),
  maxOutputTokens: Schema.optionalKey(Tokens),
  cost: Schema.optionalKey(
    Schema.Struct({
      input: Schema.NullOr(Price),
      output: Schema.NullOr(Price),
      cacheRead: Schema.optionalKey(Schema.NullOr(Price))
    })
  ).annotateKey({ description: "Prices in US dollars per million tokens, instead of the catalog's." })
}).annotate({ identifier: "LlmModelInput" })
export type LlmModelInput = typeof LlmModelInput.Type

// The uniqueness check first: a description goes on the last check, and a check without JSON Schema keywords is left
// out of the JSON Schema with its annotations.
// The description is the last check's, one the document cannot state, so the document describes the list by its
// length's bound.
export const LlmModelInputs = Schema.Array(LlmModelInput).check(
  Schema.isMinLength(1, { message: "must name at least one model" }),
  Schema.isMaxLength(500),
  Schema.makeFilter((models) => {
    const ids = models.map((model) => model.id)
    return new Set(ids).size === ids.length || "must name each model once"
  })
).annotate({ description: "The model allow-list: 1 to 500 models, each once." })

/** A secret as the API takes one: printable ASCII without spaces, 1 to 8192 characters. */
export const LlmSecret = (what: string) => TrimmedText(1, 8192, what, "^[\\x21-\\x7E]+$").check(
  Schema.makeFilter((text: string) => /^[\x21-\x7E]+$/.test(text) || "must be printable ASCII without spaces")
)

export const LlmCredentialInput = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("api_key"),
    apiKey: LlmSecret("The API key")
  }).annotate({ identifier: "LlmApiKeyCredential", examples: [{ type: "api_key" as const, apiKey: "sk-proj-example" }] }),
  Schema.Struct({
    type: Schema.Literal("oauth"),
    accessToken: LlmSecret("The OAuth access token"),
    refreshToken: Schema.optionalKey(LlmSecret("The OAuth refresh token")),
    expiresAt: Schema.optionalKey(Schema.NullOr(Timestamp))
  }).annotate({
    identifier: "LlmOAuthCredential",
    examples: [{ type: "oauth" as const, accessToken: "at-example", refreshToken: "rt-example", expiresAt: exampleTime(600) }]
  })
]).annotate({
  identifier: "LlmCredentialInput",
  description:
    "The credential: an API key (`type: api_key`) or OAuth tokens (`type: oauth`, with an optional refresh token and expiry). Printable ASCII, 1 to 8192 characters. Stored encrypted; never read back."
})
export type LlmCredentialInput = typeof LlmCredentialInput.Type

export const CreateLlmProviderRequest = Schema.Struct({
  name: LlmProviderName,
  catalogProviderId: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(64))).annotateKey({
    description: "A catalog provider to start from (`GET /v1/llm-provider-catalog`): its API style and base URL are the defaults, and every model must be one of its models. Without it the provider is custom: `apiStyle` and `baseUrl` are required."
  }),
  apiStyle: Schema.optionalKey(LlmApiStyle),
  baseUrl: Schema.optionalKey(LlmBaseUrl),
  headers: Schema.optionalKey(LlmHeaders),
  models: LlmModelInputs,
  apiKey: Schema.optionalKey(LlmSecret("The API key, stored encrypted (OAuth tokens: `PUT .../credential`)"))
}).annotate({
  examples: [{
    name: "OpenAI (engineering)",
    catalogProviderId: "openai",
    models: [{ id: "gpt-4o" }, { id: "gpt-4o-mini", name: "GPT-4o mini (default)" }],
    apiKey: "sk-proj-example"
  }]
})
export type CreateLlmProviderRequest = typeof CreateLlmProviderRequest.Type

export const UpdateLlmProviderRequest = Schema.Struct({
  name: Schema.optionalKey(LlmProviderName),
  baseUrl: Schema.optionalKey(LlmBaseUrl),
  headers: Schema.optionalKey(LlmHeaders).annotateKey({ description: "Replaces every extra header (`{}` removes them all)." }),
  // Its own description on the schema, replacing the list's (a key's would sit beside it in allOf).
  models: Schema.optionalKey(LlmModelInputs).annotateKey({ description: "Replaces the whole allow-list." })
}).check(
  Schema.makeFilter((body) => Object.keys(body).length > 0 || "give at least one of name, baseUrl, headers or models", {
    toJsonSchema: () => ({ minProperties: 1 })
  })
).annotate({ examples: [{ models: [{ id: "gpt-4o", contextWindow: 64000 }] }] })
export type UpdateLlmProviderRequest = typeof UpdateLlmProviderRequest.Type

/** The body of `PUT .../credential`: the credential itself (its members carry the examples). */
export const SetLlmCredentialRequest = LlmCredentialInput
export type SetLlmCredentialRequest = typeof SetLlmCredentialRequest.Type

// ----- Reads -----

export const LlmModel = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  contextWindow: Schema.NullOr(Int),
  maxOutputTokens: Schema.NullOr(Int),
  cost: Schema.NullOr(LlmModelCost)
}).annotate({
  identifier: "LlmModel",
  description: "An allowed model with its figures: the override given, else the catalog's, else null."
})
export type LlmModel = typeof LlmModel.Type

export const LlmCredentialSummary = Schema.Struct({
  type: Schema.Literals(["api_key", "oauth"]),
  expiresAt: Schema.NullOr(Timestamp).annotate({ description: "OAuth: when the access token expires, if known." }),
  updatedAt: Timestamp
}).annotate({ identifier: "LlmCredentialSummary", description: "What kind of credential is stored and when; never the secret." })

const modelExample = { id: "gpt-4o", name: "GPT-4o", contextWindow: 128000, maxOutputTokens: 16384, cost: { input: 2.5, output: 10, cacheRead: 1.25 } }

const providerExample = {
  id: exampleId("llp"),
  organizationId: exampleId("org"),
  name: "OpenAI (engineering)",
  source: "catalog" as const,
  catalogProviderId: "openai",
  apiStyle: "openai-compatible" as const,
  baseUrl: "https://api.openai.com/v1",
  headerNames: ["OpenAI-Organization"],
  models: [modelExample],
  credential: { type: "api_key" as const, expiresAt: null, updatedAt: exampleTime(200) },
  canManage: true,
  lastUsedAt: exampleTime(300),
  createdByOrgMembershipId: ada.membershipId,
  createdAt: exampleTime(200),
  updatedAt: exampleTime(200)
}

export class LlmProvider extends Schema.Class<LlmProvider>("LlmProvider")(Schema.Struct({
  id: LlmProviderId,
  organizationId: OrganizationId,
  name: Schema.String,
  source: Schema.Literals(["catalog", "custom"]),
  catalogProviderId: Schema.NullOr(Schema.String),
  apiStyle: LlmApiStyle,
  baseUrl: Schema.String,
  headerNames: Schema.Array(Schema.String).annotate({ description: "The extra headers' names; their values are never read back." }),
  models: Schema.Array(LlmModel),
  credential: Schema.NullOr(LlmCredentialSummary).annotate({ description: "null until a credential is set." }),
  canManage: Schema.Boolean.annotate({ description: "Whether the caller may change, test, grant and delete it (manager access)." }),
  lastUsedAt: Schema.NullOr(Timestamp).annotate({ description: "The last connect read." }),
  createdByOrgMembershipId: Schema.NullOr(MembershipId),
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotate({ examples: [providerExample] })) {}

export const LlmProviderResponse = Schema.Struct({ ok: Schema.Literal(true), item: LlmProvider }).annotate({ identifier: "LlmProviderResponse" })
export const LlmProviderPage = Page(LlmProvider).annotate({ identifier: "LlmProviderPage" })

export const LlmProviderListQuery = Schema.Struct({
  ...PageQueryFields,
  scope: Schema.optionalKey(Schema.Literals(["usable", "manageable"])).annotateKey({
    description:
      "`usable` (default): the providers a grant gives the caller (owners and admins included). `manageable`: every provider for owners and admins; for a member, those they have manager access to (their own)."
  })
}).annotate({ examples: [{ scope: "manageable" }] })
export type LlmProviderListQuery = typeof LlmProviderListQuery.Type

export const LlmProviderPath = Schema.Struct({ llmProviderId: LlmProviderId })

/** Everything an `openai` or `@anthropic-ai/sdk` client needs, the secret included. */
export const LlmConnection = Schema.Struct({
  llmProviderId: LlmProviderId,
  name: Schema.String,
  apiStyle: LlmApiStyle,
  baseURL: Schema.String.annotate({ description: "What the SDK takes as `baseURL`." }),
  apiKey: Schema.NullOr(Schema.String).annotate({ description: "`api_key` credentials: the key (the SDK's `apiKey`)." }),
  accessToken: Schema.NullOr(Schema.String).annotate({ description: "`oauth` credentials: the access token (send as a Bearer token; the `openai` SDK's `apiKey`, the Anthropic SDK's `authToken`)." }),
  expiresAt: Schema.NullOr(Timestamp),
  headers: Schema.Record(Schema.String, Schema.String).annotate({ description: "Extra headers for every request (the SDKs' `defaultHeaders`)." }),
  models: Schema.Array(LlmModel)
}).annotate({
  identifier: "LlmConnection",
  examples: [{
    llmProviderId: exampleId("llp"),
    name: "OpenAI (engineering)",
    apiStyle: "openai-compatible" as const,
    baseURL: "https://api.openai.com/v1",
    apiKey: "sk-proj-example",
    accessToken: null,
    expiresAt: null,
    headers: { "OpenAI-Organization": "org-example" },
    models: [modelExample]
  }]
})
export type LlmConnection = typeof LlmConnection.Type

export const LlmProviderTestResult = Schema.Struct({
  ok: Schema.Boolean.annotate({ description: "Every allowed model is offered by the provider." }),
  present: Schema.Array(Schema.String).annotate({ description: "Allowed models the provider's model list names." }),
  missing: Schema.Array(Schema.String).annotate({ description: "Allowed models it does not name." }),
  upstreamModelCount: Schema.Int.annotate({ description: "How many models the provider listed." })
}).annotate({
  identifier: "LlmProviderTestResult",
  examples: [{ ok: false, present: ["gpt-4o"], missing: ["gpt-3.5-turbo-0301"], upstreamModelCount: 84 }]
})
