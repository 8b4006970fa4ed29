/** Bootstrap: agent-first provisional workspace setup, claimed later by humans. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { AcceptClaimRequest, AcceptClaimResult, BootstrapWorkspaceRequest, BootstrapWorkspaceResult } from "./Bootstrap.js"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse, RateLimitedResponse, ServiceUnavailableResponse } from "./Errors.js"
import { Authentication, sessionOnly } from "./Security.js"
import { audits } from "./AuditCatalog.js"

export class BootstrapApi extends HttpApiGroup.make("bootstrap")
  .add(
    HttpApiEndpoint.post("workspace", "/v1/bootstrap/workspace", { payload: BootstrapWorkspaceRequest, success: BootstrapWorkspaceResult.pipe(HttpApiSchema.status(201)), error: [RateLimitedResponse, ServiceUnavailableResponse] }).pipe(audits("workspace.bootstrap"))
      .annotate(OpenApi.Summary, "Bootstrap a workspace")
      .annotate(
        OpenApi.Description,
        "Creates a provisional organization, owned by a placeholder until someone claims it as owner, and one-time claim links: one per requested role (by default one `owner` link), valid 24 hours. No credential is issued to the caller: the claim tokens are the only secrets returned. Public.\n\nErrors: 429 `rate_limited` (with `Retry-After`) past the per-address limit of workspaces per hour (`ORGPLANE_BOOTSTRAP_PER_HOUR`)."
      )
  )
  .add(
    HttpApiEndpoint.post("acceptClaim", "/v1/bootstrap/claims/accept", { payload: AcceptClaimRequest, success: AcceptClaimResult, error: [NotFoundResponse, ForbiddenResponse, ConflictResponse] }).pipe(sessionOnly, audits("workspace.claim.accept"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Claim a workspace")
      .annotate(
        OpenApi.Description,
        "Redeems a claim token: the caller joins the organization with the claim's role (a member already in it is raised to that role, never lowered), and it becomes the session's active organization. An `owner` claim also removes the placeholder owner and makes the organization no longer provisional. Session only.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key, `membership_removed` when the caller was removed from that organization; 404 `claim_not_found` for an unknown, used or expired token; 409 `organization_quota_reached` when an `owner` claim would make the caller own more organizations than the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`)."
      )
  )
  .annotate(OpenApi.Title, "Bootstrap")
  .annotate(
    OpenApi.Description,
    "Agent-first setup: an agent creates a provisional workspace without an account and hands its claim links to people, who sign in and claim it with the link's role."
  )
{}
