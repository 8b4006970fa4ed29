/** System: the probes of load balancers and orchestrators (public). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { HealthDownResponse, ServiceUnavailableResponse } from "./Errors.js"
import { Health, HealthReport, Ready } from "./System.js"

/** What the three Kubernetes-style probes share in their descriptions: why they may be public. */
const publicProbe =
  "Public: it takes no credentials and no input, changes nothing, and says nothing sensitive (no versions, no host names, no error texts: a component that is down gives a fixed `reason`; the server's log has the details)."

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
  .add(
    HttpApiEndpoint.get("healthLive", "/health/live", { success: HealthReport })
      .annotate(OpenApi.Summary, "Probe liveness")
      .annotate(
        OpenApi.Description,
        `The liveness probe (Kubernetes \`livenessProbe\`): \`{ "status": "up", "checks": [] }\` while the process serves requests. It checks nothing else, the database least of all: a database outage must not restart the server. ${publicProbe}\n\nErrors: none.`
      )
  )
  .add(
    HttpApiEndpoint.get("healthStarted", "/health/started", { success: HealthReport, error: [HealthDownResponse] })
      .annotate(OpenApi.Summary, "Probe start-up")
      .annotate(
        OpenApi.Description,
        `The start-up probe (Kubernetes \`startupProbe\`): up once the start is finished. The server answers only once its migrations are applied and its routes built, so the one component left to check is \`durable_engine\`, which starts after the server listens. ${publicProbe}\n\nErrors: 503 with \`status\` \`down\` while the durable engine starts, or when it failed to start.`
      )
  )
  .add(
    HttpApiEndpoint.get("healthReady", "/health/ready", { success: HealthReport, error: [HealthDownResponse] })
      .annotate(OpenApi.Summary, "Probe readiness")
      .annotate(
        OpenApi.Description,
        `The readiness probe (Kubernetes \`readinessProbe\`): up when the server can serve now. Checks \`database\` (a statement answers within 2 seconds), \`migrations\` (every migration this build runs is applied) and \`durable_engine\` (started and running), and answers within 2 seconds whatever the database does. ${publicProbe}\n\nErrors: 503 with \`status\` \`down\` and the checks, the ones down with their \`reason\`.`
      )
  )
  .annotate(OpenApi.Title, "System")
  .annotate(
    OpenApi.Description,
    "Probes for load balancers and orchestrators, outside `/v1`: `/health/live`, `/health/started` and `/health/ready` for Kubernetes' three probes (JSON in MicroProfile Health's shape, `{ status, checks: [{ name, status, data? }] }`, with 200 or 503), and the simpler liveness (`/health`) and readiness (`/ready`). Public: they take no credentials and no input."
  )
{}
