/** Telemetry ingest: the desktop app and workers post batches of events for the caller's organization and member. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { ForbiddenResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { IngestTelemetryRequest, maxTelemetryEvents } from "./Telemetry.js"
import { notAudited } from "./AuditCatalog.js"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class TelemetryApi extends HttpApiGroup.make("telemetry")
  .add(
    HttpApiEndpoint.post("ingest", "/v1/telemetry/ingest", { payload: IngestTelemetryRequest, success: HttpApiSchema.NoContent, error: [...groupErrors] }).pipe(notAudited("usage telemetry a client sends about itself; kept by the telemetry store with its own retention"), requires("telemetry.ingest"))
      .annotate(OpenApi.Summary, "Ingest telemetry events")
      .annotate(
        OpenApi.Description,
        `Records a batch of 1 to ${maxTelemetryEvents} events for the calling member of the caller's organization (both come from the credentials, never the body) and answers 204 with no body, whether or not events were kept. What is kept:
- events of the types \`user.active\`, \`session.active\`, \`session.started\`, \`session.ended\`, \`task.started\`, \`task.completed\` and \`task.failed\`; other types are dropped;
- events whose \`timestamp\` is inside the retention window (\`ORGPLANE_TELEMETRY_RETENTION_MONTHS\` whole months before the current one, 13 by default) and at most 24 hours ahead of the server's clock; others are dropped, as nothing would keep them;
- \`source\` \`app\` or \`worker\`; any other source is stored as none;
- an event's members not listed in its schema are dropped, never stored (so are unknown top-level members);
- \`dimensions\` only with a \`sessionId\`: one per organization, source (\`unknown\` for other sources), session and type, the latest label and metadata winning. Without a \`value\` the session's previous value of that type is kept, else one is derived: a slug of the label (accents stripped, other characters as \`-\`, \`dimension\` when nothing is left) + \`-\` + the first 10 hex digits of sha256(\`type:lower-cased trimmed label\`).

The batch is written in one transaction (all or nothing). Unlike write failures of a best-effort collector, a database failure is not hidden: 503 \`service_unavailable\` with \`Retry-After\`, and the app retries the batch.

Errors: 400 \`invalid_request\` for a batch of 0 or more than ${maxTelemetryEvents} events, a missing or malformed \`timestamp\` (an ISO 8601 date-time with an offset or \`Z\`), a member of the wrong type or beyond its limits.`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Telemetry")
  .annotate(
    OpenApi.Description,
    "Usage events from the desktop app and workers, stored per organization and member and kept for a configurable number of months. Every operation needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
