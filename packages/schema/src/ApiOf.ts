/**
 * An orgplane API of some of its groups. `Api` is all of them (plus the OpenAPI description); a client of a few
 * groups is built from `apiOf(...)` and carries only their schemas, which keeps a browser bundle small.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import type * as HttpApiError from "@effect/platform/HttpApiError"
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import {
  IdempotencyConflictResponse,
  IdempotencyKeyReusedResponse,
  InvalidRequestResponse,
  PayloadTooLargeResponse,
  RequestHeaderFieldsTooLargeResponse,
  UnsupportedMediaTypeResponse,
  UriTooLongResponse
} from "./Errors.js"

/**
 * The errors any operation may answer, whatever its group: a request that fails its schema, a body too large, a URL
 * or header block too long, a body of a media type the operation does not read; and the answers about an
 * `Idempotency-Key` (only the operations that take one give them: the OpenAPI document says which).
 */
export const withApiErrors = <Id extends string, Groups extends HttpApiGroup.HttpApiGroup.Any, E, R>(
  api: HttpApi.HttpApi<Id, Groups, E, R>
) =>
  api.addError(InvalidRequestResponse)
    .addError(PayloadTooLargeResponse)
    .addError(UriTooLongResponse)
    .addError(UnsupportedMediaTypeResponse)
    .addError(RequestHeaderFieldsTooLargeResponse)
    .addError(IdempotencyConflictResponse)
    .addError(IdempotencyKeyReusedResponse)

/** `apiOf(MembersApi, TeamsApi)`: those groups under the API's name, with the errors every operation may answer. */
export const apiOf = <const Groups extends ReadonlyArray<HttpApiGroup.HttpApiGroup.Any>>(...groups: Groups) => {
  type Of = HttpApi.HttpApi<"orgplane", Groups[number], HttpApiError.HttpApiDecodeError>
  return withApiErrors(groups.reduce<Of>((api, group) => api.add(group), HttpApi.make("orgplane") as Of))
}
