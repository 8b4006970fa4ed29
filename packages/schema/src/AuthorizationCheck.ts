/**
 * The API's dry authorization: whether the caller may send one request of an operation, answered by the server without
 * running it. An agent asks it before it asks the person to confirm a destructive call, so a confirmation is only
 * ever issued for a call the API authorizes (`POST /v1/authorization-checks`, served beside the API's operations).
 */
import * as Schema from "effect/Schema"

/** Where a check is asked. */
export const authorizationCheckPath = "/v1/authorization-checks"

/**
 * The header every answer of a check carries: `authorized` (204, the request would be run: nothing was) or `refused`
 * (the refusal the request itself would get, its status and body). An answer without it is no check's: a server that
 * does not offer them.
 */
export const authorizationCheckHeader = "orgplane-authorization-check"

/** The request to check, as its operation lays it out; the credential, channel and read-only narrowing are the check's own headers. */
export const AuthorizationCheckRequest = Schema.Struct({
  operation: Schema.String.annotate({ description: "The operation the request is for (`teams.delete`): its path must reach that operation's route." }),
  method: Schema.Literals(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
  path: Schema.String.annotate({ description: "The request's path, its parameters filled in and escaped: `/v1/teams/tem_…`." }),
  query: Schema.optionalKey(Schema.Record(Schema.String, Schema.Union([Schema.String, Schema.Array(Schema.String)]))),
  body: Schema.optionalKey(Schema.Unknown)
}).annotate({ identifier: "AuthorizationCheckRequest" })
export type AuthorizationCheckRequest = typeof AuthorizationCheckRequest.Type
