/** Bootstrap: agent-first provisional workspace setup, claimed later by humans. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { AcceptClaimRequest, AcceptClaimResult, BootstrapWorkspaceRequest, BootstrapWorkspaceResult } from "./Bootstrap.js"
import { ForbiddenResponse, NotFoundResponse, RateLimitedResponse, ServiceUnavailableResponse } from "./Errors.js"
import { Authentication } from "./Security.js"

export class BootstrapApi extends HttpApiGroup.make("bootstrap")
  .add(
    HttpApiEndpoint.post("workspace", "/v1/bootstrap/workspace")
      .setPayload(BootstrapWorkspaceRequest)
      .addSuccess(BootstrapWorkspaceResult, { status: 201 })
      .addError(RateLimitedResponse)
      .addError(ServiceUnavailableResponse)
      .annotate(
        OpenApi.Description,
        "Public. Creates a provisional organization and one-time claim links (one per requested role, valid 24 hours). No credential is issued to the caller: the claim tokens are the only secrets returned. Rate-limited per client address (429 `rate_limited` with `Retry-After`)."
      )
  )
  .add(
    HttpApiEndpoint.post("acceptClaim", "/v1/bootstrap/claims/accept")
      .setPayload(AcceptClaimRequest)
      .addSuccess(AcceptClaimResult)
      .addError(NotFoundResponse)
      .addError(ForbiddenResponse)
      .middleware(Authentication)
      .annotate(
        OpenApi.Description,
        "Redeems a claim token: the signed-in caller joins the organization with the claim's role, and it becomes the session's active organization. 404 `claim_not_found` for an unknown, used or expired token; 403 `membership_removed` when the caller was removed from that organization; 403 `session_required` with an API key."
      )
  )
  .annotate(OpenApi.Title, "Bootstrap")
{}
