/**
 * Every group of the API, for the client of a group a command did not declare (see Target.ts): loaded then. The
 * groups as the schema package exports them (`Api.groups` holds them with the API's own middleware added, and the
 * client adds that itself: `makeFor`).
 */
import * as Schema from "@orgplane/schema"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"

export const groups: ReadonlyArray<HttpApiGroup.Top> = Object.values<unknown>(Schema).filter(HttpApiGroup.isHttpApiGroup)
