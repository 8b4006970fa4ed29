/** Organization API keys: for scripts and integrations, acting as the member who created them. */
import * as Schema from "effect/Schema"
import { requestBody, Timestamp, TrimmedText } from "./Common.js"
import { ApiKeyId, exampleId, MembershipId } from "./Ids.js"
import { Page } from "./Pagination.js"
import { ada, exampleTime, exampleToken } from "./Examples.js"

export class ApiKey extends Schema.Class<ApiKey>("ApiKey")(Schema.Struct({
  id: ApiKeyId,
  name: Schema.String,
  prefix: Schema.String.annotations({ description: "The first characters of the key, to recognise it." }),
  createdByOrgMembershipId: MembershipId,
  createdAt: Timestamp,
  expiresAt: Schema.NullOr(Timestamp),
  lastUsedAt: Schema.NullOr(Timestamp)
}).annotations({
  examples: [{
    id: exampleId("apk"),
    name: "CI deploys",
    prefix: exampleToken("opk").slice(0, 12),
    createdByOrgMembershipId: ada.membershipId,
    createdAt: exampleTime(50),
    expiresAt: exampleTime(50 + 90 * 24 * 60),
    lastUsedAt: null
  }]
})) {}

export const CreateApiKeyRequest = Schema.Struct({
  name: TrimmedText(1, 64, "API key name"),
  expiresAt: Schema.optionalWith(Timestamp, { exact: true }).annotations({
    description: "When the key stops working. Omit for a key that does not expire."
  })
}).annotations({ ...requestBody, examples: [{ name: "CI deploys", expiresAt: exampleTime(50 + 90 * 24 * 60) }] })

export const CreatedApiKey = Schema.Struct({
  apiKey: ApiKey,
  key: Schema.String.annotations({ description: "The key itself, sent as `x-api-key`. Shown only once.", examples: [exampleToken("opk")] })
}).annotations({ identifier: "CreatedApiKey" })

export const ApiKeyPage = Page(ApiKey).annotations({ identifier: "ApiKeyPage" })
