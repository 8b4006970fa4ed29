/**
 * An orgplane API of some of its groups. `Api` is all of them (plus the OpenAPI description); a client of a few
 * groups is built from `apiOf(...)` and carries only their schemas, which keeps a browser bundle small.
 */
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import { allErrors, requestBody } from "./Common.js"
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
 *
 * Effect 4 declares errors on endpoints and middleware only (no API-wide `addError`), so these are an errors-only
 * middleware every endpoint has. The server implements it (it maps a request's schema failure to `InvalidRequest`,
 * `HttpApiMiddleware.layerSchemaErrorTransform`); clients need nothing for it.
 */
export class ApiErrors extends HttpApiMiddleware.Service<ApiErrors>()("@orgplane/schema/ApiErrors", {
  error: [
    InvalidRequestResponse,
    PayloadTooLargeResponse,
    UriTooLongResponse,
    UnsupportedMediaTypeResponse,
    RequestHeaderFieldsTooLargeResponse,
    IdempotencyConflictResponse,
    IdempotencyKeyReusedResponse
  ]
}) {}

/** The API with the errors every operation may answer: call it once its groups are added (it marks those). */
export const withApiErrors = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  api.middleware(ApiErrors)

/**
 * How the API reads requests (Effect 4 takes parse options from the API, its groups or endpoints, and ignores them on
 * a schema): every bad member of a body or query reported, a body member the API does not know refused
 * (`requestBody`, `allErrors` in Common.ts), headers with Schema's defaults (they carry transport headers the
 * endpoints do not declare). An endpoint that reads otherwise (SCIM's, the SAML ACS form) sets its own.
 */
export const withRequestParsing = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) =>
  api.annotate(HttpApi.PayloadParseOptions, requestBody)
    .annotate(HttpApi.QueryParseOptions, allErrors)
    .annotate(HttpApi.ParamsParseOptions, allErrors)
    .annotate(HttpApi.HeadersParseOptions, {})

/**
 * `apiOf(MembersApi, TeamsApi)`: those groups under the API's name, with the errors every operation may answer, read
 * as the whole API reads them.
 */
export const apiOf = <const Groups extends readonly [HttpApiGroup.Constraint, ...Array<HttpApiGroup.Constraint>]>(...groups: Groups) =>
  withRequestParsing(withApiErrors(HttpApi.make("orgplane").add(...groups)))
