/** Workers (members' operations) and Worker Runtime (the operations a worker's runtime calls with its token). */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse, RateLimitedResponse, WorkerRuntimeErrorResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication, WorkerAuthentication } from "./Security.js"
import {
  HeartbeatReceipt,
  HeartbeatRequest,
  RegisteredWorker,
  RegisterInstanceRequest,
  RegisterWorkerRequest,
  RuntimeUpgradeRequest,
  RuntimeUpgradeResponse,
  UpdateWorkerRequest,
  WorkerInstanceResponse,
  WorkerListQuery,
  WorkerPage,
  WorkerPath,
  WorkerResponse
} from "./Workers.js"
import { audits, notAudited } from "./AuditCatalog.js"

/** The errors every endpoint of WorkersApi may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class WorkersApi extends HttpApiGroup.make("workers")
  .add(
    HttpApiEndpoint.post("register", "/v1/workers", { payload: RegisterWorkerRequest, success: RegisteredWorker.pipe(HttpApiSchema.status(201)), error: [...groupErrors] }).pipe(audits("worker.register"), requires("workers.register"))
      .annotate(OpenApi.Summary, "Register a worker")
      .annotate(
        OpenApi.Description,
        "Registers a worker (status `provisioning`) and answers it with its first worker token, shown only once: its runtime sends the token to `/v1/worker-runtime/*` to report heartbeats and its instance. The caller becomes the worker's creator.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/workers", { query: WorkerListQuery, success: WorkerPage, error: [...groupErrors] }).pipe(requires("workers.read"))
      .annotate(OpenApi.Summary, "List workers")
      .annotate(
        OpenApi.Description,
        "The organization's workers, oldest first, optionally only the caller's (`mine=true`). Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/workers/:id", { params: WorkerPath, success: WorkerResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("workers.read"))
      .annotate(OpenApi.Summary, "Get a worker")
      .annotate(
        OpenApi.Description,
        "One worker of the organization with its latest instance (the newest its runtime reported, or null). `isMine` says whether the caller registered it. Changes nothing.\n\nErrors: 404 `worker_not_found` (also for another organization's worker, and for an id that is not a worker id)."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/workers/:id", { params: WorkerPath, payload: UpdateWorkerRequest, success: WorkerResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("worker.update"), requires("workers.manage"))
      .annotate(OpenApi.Summary, "Update a worker")
      .annotate(
        OpenApi.Description,
        "Changes a worker's name, description, workspace path or sandbox backend (at least one; null clears the optional ones) and answers it with its latest instance. The worker's creator, owners and admins may.\n\nErrors: 403 `insufficient_access` for another member's worker; 404 `worker_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/workers/:id", { params: WorkerPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("worker.delete"), requires("workers.manage"))
      .annotate(OpenApi.Summary, "Delete a worker")
      .annotate(
        OpenApi.Description,
        "Deletes a worker (it is kept, marked deleted, for the instance's metrics) and revokes its tokens: its runtime gets 401 from then on. The worker's creator, owners and admins may.\n\nErrors: 403 `insufficient_access` for another member's worker; 404 `worker_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("rotateToken", "/v1/workers/:id/tokens", { params: WorkerPath, success: RegisteredWorker.pipe(HttpApiSchema.status(201)), error: [NotFoundResponse, ...groupErrors] }).pipe(audits("worker.token.rotate"), requires("workers.manage"))
      .annotate(OpenApi.Summary, "Rotate a worker's token")
      .annotate(
        OpenApi.Description,
        "Issues a new worker token (shown only once) and revokes every earlier one of the worker: give the new one to its runtime. The worker's creator, owners and admins may.\n\nErrors: 403 `insufficient_access` for another member's worker; 404 `worker_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("upgradeRuntime", "/v1/workers/:id/runtime/upgrade", { params: WorkerPath, payload: RuntimeUpgradeRequest, success: RuntimeUpgradeResponse, error: [NotFoundResponse, ConflictResponse, WorkerRuntimeErrorResponse, ...groupErrors] }).pipe(audits("worker.runtime.upgrade"), requires("workers.manage"))
      .annotate(OpenApi.Summary, "Upgrade a worker's runtime")
      .annotate(
        OpenApi.Description,
        "Forwards the request body, any JSON object (`{}` for the default upgrade; arrays and scalars are 400), as is to the worker's runtime: `POST <instance url>/runtime/upgrade` with `Authorization: Bearer <the credential the runtime registered>`, `Accept` and `Content-Type: application/json`. The instance URL is a user-supplied destination of the outbound guard: unless `ORGPLANE_OUTBOUND_ALLOW_PRIVATE` is on, it must be https and every address of its host public (no loopback, private, link-local or metadata address), and the connection is pinned to the address checked. Redirects are not followed; the runtime has `ORGPLANE_WORKER_RUNTIME_TIMEOUT` (default 30 seconds) to answer in full, at most 1 MiB. The answer is 200 with the runtime's own status and body in an envelope, `{status, body}`, whatever that status (a runtime's 4xx or 5xx included): `body` is its JSON, `{message}` for text that is not JSON, null for nothing. The worker's creator, owners and admins may.\n\nErrors: 403 `insufficient_access` for another member's worker; 404 `worker_not_found`; 409 `worker_runtime_unavailable` when the worker has no instance, or its instance no URL or credential, yet (start its runtime and let it register its instance); 502 `worker_runtime_error` when the runtime cannot be reached, does not answer in time, redirects or answers too much, or its URL is not allowed (\"The outbound URL is not allowed: …\"; nothing is sent)."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Workers")
  .annotate(
    OpenApi.Description,
    "Workers of the caller's active organization: agent runtimes on members' machines or in the cloud. Any member registers workers and reads all of them; a worker's creator, owners and admins change, delete, rotate the token of and upgrade it. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}

export class WorkerRuntimeApi extends HttpApiGroup.make("workerRuntime")
  .add(
    HttpApiEndpoint.post("heartbeat", "/v1/worker-runtime/heartbeat", { payload: HeartbeatRequest, success: HeartbeatReceipt, error: [RateLimitedResponse] }).pipe(notAudited("a worker's periodic report; its online and offline transitions are kept as worker activity"))
      .annotate(OpenApi.Summary, "Report a worker heartbeat")
      .annotate(
        OpenApi.Description,
        "The runtime says it is alive. Heartbeats are ordered by `sentAt` (the runtime's clock; the time of arrival without one): a heartbeat newer than the worker's `lastHeartbeatAt` records its time, the reported status (default `online`), the runtime's version when given, its open sessions and activity (`lastActiveAt` only moves forward), keeps it in the worker's activity (the last 100), and, when the worker was offline or never seen, records its transition to `online`; one that is not newer (late, or repeated) changes nothing and answers `applied: false`. Both answer 200 with the worker's resulting times. A runtime should beat every `heartbeatIntervalSeconds` of the answer (`ORGPLANE_WORKER_HEARTBEAT_INTERVAL`, 30 seconds by default).\n\nErrors: 400 `invalid_request` for a `sentAt` more than 5 minutes ahead of the server's clock (check the runtime's clock) or a `lastActivityAt` after `sentAt`; 429 `rate_limited` with `Retry-After` past `ORGPLANE_WORKER_HEARTBEATS_PER_MINUTE` heartbeats (12 by default) of one worker in a minute."
      )
  )
  .add(
    HttpApiEndpoint.post("registerInstance", "/v1/worker-runtime/instance", { payload: RegisterInstanceRequest, success: WorkerInstanceResponse.pipe(HttpApiSchema.status(201)) }).pipe(audits("worker.instance.register"))
      .annotate(OpenApi.Summary, "Report a worker instance")
      .annotate(
        OpenApi.Description,
        "The runtime reports where it runs (provider, region, URL, status) and the credential the server must present when it calls it; this becomes the worker's latest instance (earlier ones are kept). The credential is stored encrypted and never returned. The URL is a user-supplied destination of the outbound guard, checked now as every upgrade checks it again (DNS may answer otherwise by then): unless `ORGPLANE_OUTBOUND_ALLOW_PRIVATE` is on, https, and every address of its host public. Answers the instance.\n\nErrors: 400 `invalid_request` on `url` when the outbound guard refuses it (\"The outbound URL is not allowed: …\", or its host does not resolve); nothing is stored."
      )
  )
  .middleware(WorkerAuthentication)
  .annotate(OpenApi.Title, "Worker Runtime")
  .annotate(
    OpenApi.Description,
    "Operations a worker's runtime calls with its worker token (`Authorization: Bearer opw_…`), not a person's credentials: 401 `unauthorized` for a missing, unknown or revoked token or a deleted worker."
  )
{}
