/** Admin: instance operation, reserved to owners and admins of the operator organization. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { ChangePlanRequest, Organization } from "./Organizations.js"
import { OrganizationId } from "./Ids.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"

export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.patch("setPlan", "/v1/admin/organizations/:organizationId/plan")
      .setPath(Schema.Struct({ organizationId: OrganizationId }))
      .setPayload(ChangePlanRequest)
      .addSuccess(Schema.Struct({ organization: Organization }))
      .addError(NotFoundResponse)
      .pipe(requires("organizations.setPlan"))
      .annotate(OpenApi.Summary, "Change an organization's plan")
      .annotate(
        OpenApi.Description,
        "Sets the plan of any organization on the instance and answers the organization.\n\nErrors: 404 `organization_not_found` for an unknown organization."
      )
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Admin")
  .annotate(
    OpenApi.Description,
    "Instance operation, for owners and admins of the operator organization only (the configured one, else the first organization created on the instance); anyone else gets 403 `operator_only`. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
