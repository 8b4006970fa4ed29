/**
 * The API this server serves so far: `apiOf` the groups ported to Effect 4 (issue 46). It becomes @orgplane/schema's
 * `Api` (every group, the OpenAPI description) once the schema package has them all.
 */
import { apiOf, SystemApi } from "@orgplane-next/schema"

export const Api = apiOf(SystemApi)
