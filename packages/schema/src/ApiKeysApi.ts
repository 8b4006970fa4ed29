/** API keys: organization keys for scripts and integrations, managed by owners and admins. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { ApiKeyPage, CreateApiKeyRequest, CreatedApiKey } from "./ApiKeys.js"
import { ApiKeyId } from "./Ids.js"
import { PageQuery } from "./Pagination.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/v1/api-keys")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreatedApiKey, { status: 201 })
      .pipe(requires("apiKeys.manage"))
      .annotate(
        OpenApi.Description,
        "Issues a key for the active organization. The key acts as the member who created it and stops working when that member leaves. The plaintext key is returned only here."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/api-keys")
      .setUrlParams(PageQuery)
      .addSuccess(ApiKeyPage)
      .pipe(requires("apiKeys.manage"))
      .annotate(OpenApi.Description, "Lists the organization's keys, newest first. Keys themselves are never shown again.")
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/api-keys/:apiKeyId")
      .setPath(Schema.Struct({ apiKeyId: ApiKeyId }))
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .pipe(requires("apiKeys.manage"))
      .annotate(OpenApi.Description, "Deletes a key; it stops working at once. 404 `api_key_not_found`.")
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "API Keys")
  .annotate(OpenApi.Description, "Keys of the caller's organization, managed by its owners and admins.")
{}
