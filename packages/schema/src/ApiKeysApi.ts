/** API keys: organization keys for scripts and integrations, managed by owners and admins. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { ApiKeyPage, CreateApiKeyRequest, CreatedApiKey } from "./ApiKeys.js"
import { ApiKeyId } from "./Ids.js"
import { PageQuery } from "./Pagination.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/v1/api-keys", { payload: CreateApiKeyRequest, success: CreatedApiKey.pipe(HttpApiSchema.status(201)), error: [ConflictResponse, ...groupErrors] }).pipe(audits("api_key.create"), requires("apiKeys.manage"))
      .annotate(OpenApi.Summary, "Create an API key")
      .annotate(
        OpenApi.Description,
        "Issues a key for the active organization. The key acts as the member who created it, within its `scopes` (see the request body: without them it takes none of the actions that need a scope naming them, such as managing keys, owners and roles, or inviting admins) and within that member's role at each request; it stops working when that member leaves or is removed. Made with an API key (which needs the `apiKeys.manage` scope), the new key records it as `parentApiKeyId` and is revoked with it. The plaintext key is returned only here. The key records how its maker authenticated: while the organization's SSO enforcement covers the maker (`PUT /v1/sso/policy`), a key made outside its SSO answers 403 `sso_session_required` on every organization route, and only an SSO session makes new keys.\n\nErrors: 400 `invalid_request` on `expiresAt` when it is not in the future, on `scopes` when one exceeds the caller's role or the making key's scopes; 401 `unauthorized` when the making key is revoked meanwhile; 403 `insufficient_scope` for a key without `apiKeys.manage`; 403 `sso_session_required` when this is an API key and the organization's SSO enforcement covers its maker; 409 `api_key_quota_reached` when the caller already has as many unexpired keys in the organization as the instance allows per member (20 by default, `ORGPLANE_API_KEYS_PER_MEMBER`; the message names the setting): revoke one, or have the instance's operator raise it."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/api-keys", { query: PageQuery, success: ApiKeyPage, error: [...groupErrors] }).pipe(requires("apiKeys.manage"))
      .annotate(OpenApi.Summary, "List API keys")
      .annotate(
        OpenApi.Description,
        "The organization's keys, newest first, with their display prefix; the keys themselves are never shown again. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.delete("revoke", "/v1/api-keys/:apiKeyId", { params: Schema.Struct({ apiKeyId: ApiKeyId }), success: HttpApiSchema.NoContent, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("api_key.revoke"), requires("apiKeys.manage"))
      .annotate(OpenApi.Summary, "Revoke an API key")
      .annotate(OpenApi.Description, "Deletes a key and every key made with it (and theirs); they stop working at once, and the invitations they made that are still pending are canceled.\n\nErrors: 404 `api_key_not_found`.")
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "API Keys")
  .annotate(
    OpenApi.Description,
    "Keys of the caller's organization, managed by its owners and admins. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
