/** The 503 answer: which failures deserve it, its body (the API's, or SCIM's), and its `Retry-After`. */
import {
  ScimMediaType,
  ScimServiceUnavailable,
  ScimServiceUnavailableResponse,
  ServiceUnavailable,
  ServiceUnavailableResponse
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { reportUnavailable } from "./DatabaseStatus.js"
import { classify, concurrencyMessage, isSqlError, unavailableMessage } from "./Sql.js"

/** Seconds a client should wait after a 503: about what a database restart or failover takes. */
export const retryAfterSeconds = 5

const encode = Schema.encodeSync(ServiceUnavailableResponse)
const encodeScim = Schema.encodeSync(ScimServiceUnavailableResponse)

export const response = (error: ServiceUnavailable) =>
  HttpServerResponse.jsonUnsafe(encode(error), { status: 503, headers: { "retry-after": String(retryAfterSeconds) } })

/** The SCIM protocol's 503: a SCIM error body, and `Retry-After`, which Okta and Entra honour before retrying. */
export const scimResponse = (error: ScimServiceUnavailable) =>
  HttpServerResponse.jsonUnsafe(encodeScim(error), {
    status: 503,
    contentType: ScimMediaType,
    headers: { "retry-after": String(retryAfterSeconds) }
  })

/**
 * The 503 for a failure that reached the edge, if it deserves one: a ServiceUnavailable, or a storage failure that
 * no unit of work settled (repositories that still die on them) and that says the database is unavailable.
 */
export const responseFor = (error: unknown): Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>> => {
  if (error instanceof ServiceUnavailable) return Effect.succeedSome(response(error))
  if (error instanceof ScimServiceUnavailable) return Effect.succeedSome(scimResponse(error))
  if (!isSqlError(error)) return Effect.succeedNone
  const verdict = classify(error)
  if (verdict === "bug") return Effect.succeedNone
  const answer = Option.some(response(new ServiceUnavailable({ message: verdict === "unavailable" ? unavailableMessage : concurrencyMessage })))
  return verdict === "unavailable" ? Effect.as(reportUnavailable(error), answer) : Effect.succeed(answer)
}
