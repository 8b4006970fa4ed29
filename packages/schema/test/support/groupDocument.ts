/**
 * The OpenAPI document Effect 3 gives some of the API's groups, before Api.ts's own steps (`shapeDocument`, the
 * examples, the links): what next/schema's differential tests of the HttpApi groups compare the Effect 4 port with
 * (issue 46, step 3; this file goes with the Effect 3 tree).
 */
import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { apiOf } from "../../src/ApiOf.js"

/** Any Effect 3 group (the type, for the Effect 4 tests that pass one). */
export type AnyGroup = HttpApiGroup.HttpApiGroup.Any

export const groupDocument = <const Groups extends ReadonlyArray<HttpApiGroup.HttpApiGroup.Any>>(...groups: Groups): OpenApi.OpenAPISpec =>
  OpenApi.fromApi(apiOf(...groups))
