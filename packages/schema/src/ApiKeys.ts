/** Organization API keys: for scripts and integrations, acting as the member who created them. */
import { Schema } from "effect"
import { requestBody, Timestamp, TrimmedText } from "./Common.js"
import { ApiKeyId, MembershipId } from "./Ids.js"
import { Page } from "./Pagination.js"

export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: ApiKeyId,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "The first characters of the key, to recognise it." }),
  createdByOrgMembershipId: MembershipId,
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp)
}) {}

export const CreateApiKeyRequest = Schema.Struct({
  name: TrimmedText(1, 64, "API key name"),
  expiresAt: Schema.optionalWith(Timestamp, { exact: true }).annotations({
    description: "When the key stops working. Omit for a key that does not expire."
  })
}).annotations(requestBody)

export const CreatedApiKey = Schema.Struct({
  apiKey: ApiKey,
  key: Schema.String.annotations({ description: "The key itself, sent as `x-api-key`. Shown only once." })
}).annotations({ identifier: "CreatedApiKey" })

export const ApiKeyPage = Page(ApiKey).annotations({ identifier: "ApiKeyPage" })
