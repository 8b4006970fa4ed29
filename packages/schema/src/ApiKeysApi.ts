/** API keys: organization keys for scripts and integrations, managed by owners and admins. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ForbiddenResponse, NotFoundResponse, OrganizationNotFoundResponse } from "./Errors.js"
import { ApiKeyPage, CreateApiKeyRequest, CreatedApiKey } from "./ApiKeys.js"
import { ApiKeyId } from "./Ids.js"
import { PageQuery } from "./Pagination.js"
import { Authentication } from "./Security.js"

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/v1/api-keys")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreatedApiKey, { status: 201 })
      .annotate(
        OpenApi.Description,
        "Issues a key for the active organization. The key acts as the member who created it and stops working when that member leaves. The plaintext key is returned only here."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/api-keys")
      .setUrlParams(PageQuery)
      .addSuccess(ApiKeyPage)
      .annotate(OpenApi.Description, "Lists the organization's keys, newest first. Keys themselves are never shown again.")
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/api-keys/:apiKeyId")
      .setPath(Schema.Struct({ apiKeyId: ApiKeyId }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .annotate(OpenApi.Description, "Deletes a key; it stops working at once. 404 `api_key_not_found`.")
  )
  .addError(ForbiddenResponse)
  .addError(OrganizationNotFoundResponse)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "API Keys")
  .annotate(OpenApi.Description, "Owners and admins only (403 `insufficient_role` for members).")
{}
