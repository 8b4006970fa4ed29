/** Organizations: creating one (the creator becomes its owner). */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { ConflictResponse, ForbiddenResponse } from "./Errors.js"
import { CreateOrganizationRequest, OrganizationWithMembership } from "./Organizations.js"
import { Authentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

export class OrganizationsApi extends HttpApiGroup.make("organizations")
  .add(
    HttpApiEndpoint.post("create", "/v1/organizations").pipe(audits("organization.create"))
      .setPayload(CreateOrganizationRequest)
      .addSuccess(OrganizationWithMembership, { status: 201 })
      .addError(ForbiddenResponse)
      .addError(ConflictResponse)
      .annotate(OpenApi.Summary, "Create an organization")
      .annotate(
        OpenApi.Description,
        "Creates an organization with the caller as its owner and makes it the session's active organization; answers both. Any signed-in person, with a session.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key; 409 `organization_quota_reached` when the caller already owns as many organizations as the instance allows (10 by default, `ORGPLANE_ORGANIZATIONS_PER_USER`; the message names the setting): delete or hand over one, or have the instance's operator raise it."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Organizations")
  .annotate(
    OpenApi.Description,
    "Creating an organization: any signed-in person may, and becomes its owner. What happens inside one is under Members, Teams, Invitations and API Keys."
  )
{}
