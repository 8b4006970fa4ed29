/** LLM providers: the catalog, registering and changing an organization's providers, granting them, and connecting. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { LlmProviderAccessGrantPage, LlmProviderAccessGrantResponse, LlmProviderGrantPath } from "./Access.js"
import { accessEndpoints } from "./AccessApi.js"
import {
  ConflictResponse,
  ForbiddenResponse,
  InvalidRequestResponse,
  LlmProviderApiErrorResponse,
  NotFoundResponse,
  RateLimitedResponse,
  storedCredentialUnreadable,
  StoredCredentialUnreadableResponse
} from "./Errors.js"
import {
  CreateLlmProviderRequest,
  LlmCatalogQuery,
  LlmCatalogResponse,
  LlmConnection,
  LlmProviderListQuery,
  LlmProviderPage,
  LlmProviderPath,
  LlmProviderResponse,
  LlmProviderTestResult,
  SetLlmCredentialRequest,
  UpdateLlmProviderRequest
} from "./LlmProviders.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

const notFound = "404 `llm_provider_not_found` (also for another organization's provider, and for a member no grant on it reaches)"
const manager =
  "Needs manager access on the provider: owners and admins have it on every provider, its creator and members granted `manager` on theirs (403 `insufficient_access` otherwise)."
const urlRule =
  "The base URL is checked as every user-supplied outbound URL: unless private destinations are allowed (`ORGPLANE_OUTBOUND_ALLOW_PRIVATE`), https only, and a host that is an IP address or resolves to an address that is not public is a 400 on `baseUrl` (\"The outbound URL is not allowed: …\")."
const secrets =
  "The credential and the extra headers' values are stored encrypted (the server's envelope keys) and never answered by any read but connect; reads give the headers' names and the credential's kind."

const access = accessEndpoints({
  name: "llmProvider",
  kind: "LLM provider",
  base: "/v1/llm-providers/:llmProviderId",
  path: LlmProviderPath,
  grantPath: LlmProviderGrantPath,
  grant: LlmProviderAccessGrantResponse,
  page: LlmProviderAccessGrantPage,
  action: "llmProviders.use",
  who:
    "Needs manager access on the provider (owners, admins, its creator, members granted `manager`); an organization-wide grant also needs an owner or admin (`catalog.grantOrgWide`). A grant of any role lets the member use the provider (list it as usable, read it, connect); `manager` also lets them change, test, grant and delete it.",
  refusal: "403 `insufficient_access` without manager access, `insufficient_role` for an organization-wide grant by a member"
})

// Each endpoint lists 403 (Effect 4 has no group-wide error).
export class LlmProvidersApi extends HttpApiGroup.make("llmProviders")
  .add(
    HttpApiEndpoint.get("catalog", "/v1/llm-provider-catalog", {
      query: LlmCatalogQuery,
      success: LlmCatalogResponse,
      error: [InvalidRequestResponse, NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "Read the LLM provider catalog")
      .annotate(
        OpenApi.Description,
        "The providers orgplane knows (id, name, API style, base URL, documentation, how many models) and, a page at a time, their models' context windows, output limits and prices: the snapshot of the public models.dev catalog shipped with the server (15 well-known providers), or the operator's catalog file (`ORGPLANE_LLM_CATALOG`). Served from memory: works offline. `provider` narrows it to one provider, `q` the models to those whose id or name contains it; `limit` models a page (50 by default), then `cursor`. Changes nothing.\n\nErrors: 400 `invalid_request` on `cursor` when it is not one this catalog answered; 404 `llm_catalog_provider_not_found` for a `provider` the catalog does not have."
      )
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/llm-providers", {
      payload: CreateLlmProviderRequest,
      success: LlmProviderResponse.pipe(HttpApiSchema.status(201)),
      error: [ConflictResponse, ForbiddenResponse]
    }).pipe(audits("llm_provider.create"), requires("llmProviders.create"))
      .annotate(OpenApi.Summary, "Register an LLM provider")
      .annotate(
        OpenApi.Description,
        `Registers a model provider for the organization, from the catalog (\`catalogProviderId\`: its API style and base URL are the defaults, each allowed model must be one of its models and takes its figures, which \`name\`, \`contextWindow\`, \`maxOutputTokens\` and \`cost\` override) or custom (\`apiStyle\` and \`baseUrl\` required, figures as given). The creator gets a \`manager\` grant: they keep access. An API key may come now (\`apiKey\`) or later, and OAuth tokens only later (\`PUT .../credential\`). Nothing is contacted: \`POST .../test\` checks the credential. ${urlRule} ${secrets}\n\nErrors: 400 on \`catalogProviderId\` for a provider the catalog does not have, on \`models\` for a model it does not list, on \`apiStyle\`/\`baseUrl\` when a custom provider lacks them; 409 \`llm_provider_exists\` when the organization has a provider of that name (ignoring case).`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/llm-providers", {
      query: LlmProviderListQuery,
      success: LlmProviderPage,
      error: [ForbiddenResponse]
    }).pipe(requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "List LLM providers")
      .annotate(
        OpenApi.Description,
        "The organization's LLM providers, oldest first, in pages. `scope=usable` (default): those a grant reaches the caller through (their own, a team's, the organization-wide one; owners and admins are not exempt: managing a provider is not using it). `scope=manageable`: every provider for owners and admins, those the caller has manager access to for a member. Never the secret. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/llm-providers/:llmProviderId", {
      params: LlmProviderPath,
      success: LlmProviderResponse,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "Get an LLM provider")
      .annotate(
        OpenApi.Description,
        `One provider, for owners, admins and members a grant reaches. Never the secret. Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/llm-providers/:llmProviderId", {
      params: LlmProviderPath,
      payload: UpdateLlmProviderRequest,
      success: LlmProviderResponse,
      error: [NotFoundResponse, ConflictResponse, ForbiddenResponse]
    }).pipe(audits("llm_provider.update"), requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "Update an LLM provider")
      .annotate(
        OpenApi.Description,
        `Changes the name, the base URL, the extra headers (replaced as a whole) or the model allow-list (replaced as a whole, with the same rules as on create). The API style, the catalog provider and the credential stay (\`PUT .../credential\` replaces the credential). ${manager} ${urlRule}\n\nErrors: 400 as on create; 403 \`insufficient_access\`; ${notFound}; 409 \`llm_provider_exists\`.`
      )
  )
  .add(
    HttpApiEndpoint.put("setCredential", "/v1/llm-providers/:llmProviderId/credential", {
      params: LlmProviderPath,
      payload: SetLlmCredentialRequest,
      success: LlmProviderResponse,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(audits("llm_provider.credential.set"), requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "Replace an LLM provider's credential")
      .annotate(
        OpenApi.Description,
        `Replaces the credential: an API key (\`type: api_key\`) or OAuth tokens (\`type: oauth\`, with an optional refresh token and expiry); write-only, stored encrypted, never read back. The answer shows the credential's kind and expiry only. ${manager}\n\nErrors: 403 \`insufficient_access\`; ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/llm-providers/:llmProviderId", {
      params: LlmProviderPath,
      success: HttpApiSchema.NoContent,
      error: [NotFoundResponse, ForbiddenResponse]
    }).pipe(audits("llm_provider.delete"), requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "Delete an LLM provider")
      .annotate(
        OpenApi.Description,
        `Deletes the provider for good, with its encrypted credential and its grants (a hard delete: a secret is not kept for a provider nobody can use; register it again to bring it back). 204. ${manager}\n\nErrors: 403 \`insufficient_access\`; ${notFound}.`
      )
  )
  .add(access.grant)
  .add(access.listAccess)
  .add(access.revoke)
  .add(
    HttpApiEndpoint.get("connect", "/v1/llm-providers/:llmProviderId/connect", {
      params: LlmProviderPath,
      success: LlmConnection,
      error: [NotFoundResponse, ConflictResponse, RateLimitedResponse, StoredCredentialUnreadableResponse, ForbiddenResponse]
    }).pipe(audits("llm_provider.credential.read"), requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "Connect to an LLM provider")
      .annotate(
        OpenApi.Description,
        `The only read that gives out the secret: everything an \`openai\` or \`@anthropic-ai/sdk\` client needs (\`baseURL\`, the API key or access token, the extra headers, the API style and the allowed models), for a caller a grant reaches (owners and admins included: managing is not using). Records the time as the provider's \`lastUsedAt\`. Limited per member (\`ORGPLANE_LLM_CONNECT_PER_MINUTE\`, default 60 per minute, over all providers). The answer is \`Cache-Control: no-store\`.\n\nErrors: 403 \`insufficient_access\` when no grant reaches the caller; ${notFound}; 409 \`llm_provider_no_credential\` before a credential is set; 429 \`rate_limited\` with \`Retry-After\`; ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.post("test", "/v1/llm-providers/:llmProviderId/test", {
      params: LlmProviderPath,
      success: LlmProviderTestResult,
      error: [NotFoundResponse, ConflictResponse, LlmProviderApiErrorResponse, StoredCredentialUnreadableResponse, ForbiddenResponse]
    }).pipe(audits("llm_provider.test"), requires("llmProviders.use"))
      .annotate(OpenApi.Summary, "Test an LLM provider")
      .annotate(
        OpenApi.Description,
        `Lists the provider's models with the stored credential, through the outbound guard (\`openai-compatible\`: \`GET {baseUrl}/models\` with \`Authorization: Bearer\`; \`anthropic\`: \`GET {baseUrl}/v1/models\` with \`x-api-key\` (or a Bearer access token) and \`anthropic-version\`; the extra headers on both), and says which allowed models it offers and which it does not. Changes nothing. ${manager}\n\nErrors: 403 \`insufficient_access\`; ${notFound}; 409 \`llm_provider_no_credential\`; 502 \`llm_provider_api_error\` when the provider refuses (its status and the start of its answer, the credential scrubbed), fails, answers something that is not a model list, or cannot be reached (\`retryable\` says whether to try again); ${storedCredentialUnreadable}`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "LLM Providers")
  .annotate(
    OpenApi.Description,
    "Model providers the organization's members' agents may use (`llp_`): from the shipped catalog (a models.dev snapshot) or custom, with a model allow-list and per-model overrides, a write-only credential (an API key or OAuth tokens, encrypted at rest), and grants to members and teams. Owners and admins register providers and manage every one; members use the providers granted to them and manage those they have manager access to. A member's client gets the secret only through the connect read, which is rate-limited and recorded. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization; 403 `insufficient_role` when the caller's role does not allow the operation."
  )
{}
