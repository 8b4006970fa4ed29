/** System: liveness and readiness probes (public). */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { ServiceUnavailableResponse } from "./Errors.js"
import { Health, Ready } from "./System.js"

export class SystemApi extends HttpApiGroup.make("system", { topLevel: false })
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(Health)
      .annotate(OpenApi.Description, "Liveness: answers while the process serves requests.")
  )
  .add(
    HttpApiEndpoint.get("ready", "/ready")
      .addSuccess(Ready)
      .addError(ServiceUnavailableResponse)
      .annotate(OpenApi.Description, "Readiness: checks the database. 503 `service_unavailable` when it does not answer.")
  )
  .annotate(OpenApi.Title, "System")
{}
