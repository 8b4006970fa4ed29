/** Worker Activity: a worker's recent heartbeats and its transitions between online and offline. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { WorkerActivityPage, WorkerActivityQuery } from "./WorkerActivity.js"
import { WorkerPath } from "./Workers.js"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class WorkerActivityApi extends HttpApiGroup.make("workerActivity")
  .add(
    HttpApiEndpoint.get("list", "/v1/workers/:id/activity", { params: WorkerPath, query: WorkerActivityQuery, success: WorkerActivityPage, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("workers.readActivity"))
      .annotate(OpenApi.Summary, "List a worker's activity")
      .annotate(
        OpenApi.Description,
        "A worker's heartbeats (the last 100 recorded are kept; a late heartbeat, not newer than the last, is not recorded) and its transitions between `online` and `offline` (`kind: transition`, kept for good), newest first, optionally only one kind. A transition to `online` is recorded by the heartbeat that brings the worker back (or its first); one to `offline` by a check that runs every minute once no heartbeat arrived for `ORGPLANE_WORKER_OFFLINE_AFTER`, once, whatever the number of server processes. The worker's creator, owners and admins may. Changes nothing.\n\nErrors: 403 `insufficient_access` for another member's worker; 404 `worker_not_found` (also for another organization's worker, a deleted one, and an id that is not a worker id)."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Worker Activity")
  .annotate(
    OpenApi.Description,
    "What a worker's runtime reported and when it came and went, for the worker's creator, owners and admins. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
