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
      .annotate(OpenApi.Description, "Changes an organization's plan. 404 `organization_not_found` for an unknown organization.")
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Admin")
  .annotate(
    OpenApi.Description,
    "Owners and admins of the operator organization only (the configured one, else the first organization created on the instance); anyone else gets 403 `operator_only`."
  )
{}
