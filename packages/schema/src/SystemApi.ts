/** System: liveness and readiness probes (public). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { ServiceUnavailableResponse } from "./Errors.js"
import { Health, Ready } from "./System.js"

export class SystemApi extends HttpApiGroup.make("system", { topLevel: false })
  .add(
    HttpApiEndpoint.get("health", "/health", { success: Health })
      .annotate(OpenApi.Summary, "Check liveness")
      .annotate(
        OpenApi.Description,
        "Liveness: answers with the server's version while the process serves requests. It reads nothing, not even the database, so a database outage does not fail it. Public; changes nothing.\n\nErrors: none."
      )
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready", { success: Ready, error: [ServiceUnavailableResponse] })
      .annotate(OpenApi.Summary, "Check readiness")
      .annotate(
        OpenApi.Description,
        "Readiness: runs one query on the database and answers once it does, within 2 seconds. Public; changes nothing.\n\nErrors: 503 `service_unavailable` (with `Retry-After`) when the database does not answer in time."
      )
  )
  .annotate(OpenApi.Title, "System")
  .annotate(
    OpenApi.Description,
    "Probes for load balancers and orchestrators, outside `/v1`: liveness (`/health`) and readiness (`/ready`). Public: they take no credentials and no input."
  )
{}
