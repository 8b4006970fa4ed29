/** Admin: instance operation, reserved to owners and admins of the operator organization. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import * as Schema from "effect/Schema"
import { AdminMetricsResponse } from "./AdminMetrics.js"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import {
  AdminOrganizationListQuery,
  AdminOrganizationPage,
  ChangePlanRequest,
  ClaimOperatorRequest,
  Organization,
  OrganizationDeletionResponse,
  OrganizationPath,
  OrganizationResponse
} from "./Organizations.js"
import { OrganizationId } from "./Ids.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("claimOperator", "/v1/admin/operator").pipe(audits("instance.operator.claim"))
      .setPayload(ClaimOperatorRequest)
      .addSuccess(Schema.Struct({ organization: Organization }))
      .addError(ConflictResponse)
      .pipe(requires("admin.claimOperator"))
      .annotate(OpenApi.Summary, "Make your organization the instance's operator")
      .annotate(
        OpenApi.Description,
        "Redeems the instance's one-time setup token: the caller's organization becomes the operator organization, whose owners and admins change plans and read the instance's metrics. The token is `ORGPLANE_SETUP_TOKEN`, or, when that is unset, the one the server logs at each start while no organization operates the instance (valid 24 hours). It works once: afterwards, or when `ORGPLANE_OPERATOR_ORGANIZATION_ID` names the operator, every claim is refused. No organization becomes the operator any other way (not the first one created).\n\nErrors: 403 `setup_token_invalid` for a token that is not the instance's (or expired), `insufficient_role` for anyone but an owner; 409 `operator_exists` when an organization already operates the instance, `operator_not_eligible` for a workspace made by `POST /v1/bootstrap/workspace` (its claim links were an anonymous agent's to hand out: make an organization with `POST /v1/organizations`)."
      )
  )
  .add(
    HttpApiEndpoint.patch("setPlan", "/v1/admin/organizations/:organizationId/plan").pipe(audits("organization.plan.update"))
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
  .add(
    HttpApiEndpoint.get("metrics", "/v1/admin/metrics")
      .addSuccess(AdminMetricsResponse)
      .pipe(requires("admin.readMetrics"))
      .annotate(OpenApi.Summary, "Read the instance's usage metrics")
      .annotate(
        OpenApi.Description,
        "Computes the instance's usage metrics on each call (no caching) and answers `{summary, generatedAt}`. Days are UTC calendar days (`YYYY-MM-DD`); today is the day of `generatedAt`.\n\nDefinitions:\n- `totalUsers`, `totalOrganizations`: every account and every organization that is not deleted (provisional ones included).\n- `verifiedUsers`: the instance has no email verification, so a person counts as verified when their email's domain is the verified SSO domain of an organization they are an active member of.\n- `recentUsers7d` / `recentUsers30d`: accounts created at or after now − 7 days / now − 30 days (signups, not activity).\n- `totalWorkers`, `cloudWorkers`, `localWorkers`: workers not deleted, split by destination; `usersWithWorkers`: distinct creators of those workers; `usersWithoutWorkers`: totalUsers − usersWithWorkers, at least 0.\n- `paidUsers`: people with an active membership in an organization on the `team` or `enterprise` plan that is not deleted; `unpaidUsers`: everyone else; `billingUnavailableUsers` is 0 and `billingLoaded` true, since plans are stored on the instance.\n- `adminCount`: owners and admins (active memberships) of the operator organization, who are the instance's admins.\n- Activity of a person on a day: (A) a session created that day, (B) any telemetry event that day, (C, task activity) a `task.started`, `task.completed` or `task.failed` telemetry event with a session id that day. `activeUsers1d`/`7d`/`30d`: distinct people with A or B activity today / on the last 7 days (today included) / on the 30 days of the series; `realActiveUsers1d`/`7d`/`30d`: the same with C only.\n- `recurringUsers`: people with activity (A, B or C) on at least 2 distinct days of the last 90 (today included).\n- `inviters`: distinct people who ever created an invitation, in any organization; `medianHoursToFirstInvite`: for each inviter, the hours from their account's creation to their first invitation, floored at 0 and rounded to 0.1, then the median (an even count averages the two middle values; the result is rounded to 0.01); 0 while there are no inviters.\n- `activitySeries`: 30 points, oldest first, from 29 days ago to today: `activeUsers` (A or B), `realActiveUsers` (C) and `signups` (accounts created that day).\n\nErrors: only those of the group (403 `operator_only` for anyone but the operator organization's owners and admins)."
      )
  )
  .add(
    HttpApiEndpoint.get("listOrganizations", "/v1/admin/organizations")
      .setUrlParams(AdminOrganizationListQuery)
      .addSuccess(AdminOrganizationPage)
      .pipe(requires("admin.readOrganizations"))
      .annotate(OpenApi.Summary, "List the instance's organizations")
      .annotate(
        OpenApi.Description,
        "Every organization of the instance, oldest first (keyset pages): name, plan, whether it is a provisional workspace, member count, and for a deleted one when it was deleted and when the purge may remove it (an unclaimed provisional workspace shows when it expires). Purged organizations are gone. `q` filters by name, `deleted` by state.\n\nErrors: 400 `invalid_request` for a cursor of another list or of other filters."
      )
  )
  .add(
    HttpApiEndpoint.del("deleteOrganization", "/v1/admin/organizations/:organizationId").pipe(audits("organization.delete"))
      .setPath(OrganizationPath)
      .addSuccess(OrganizationDeletionResponse)
      .addError(ConflictResponse)
      .pipe(requires("admin.deleteOrganizations"))
      .annotate(OpenApi.Summary, "Delete any organization")
      .annotate(
        OpenApi.Description,
        "Deletes an organization of the instance as `DELETE /v1/organization` does for its owners: it stops serving at once, its owners or the operator may restore it until `purgeAfter` (`ORGPLANE_ORGANIZATION_DELETION_GRACE`, 7 days), then the purge removes every row of it. The operator organization's audit log records it. Needs a recent sign-in for a session (`ORGPLANE_RECENT_AUTHENTICATION`); an API key needs the `admin.deleteOrganizations` scope.\n\nErrors: 403 `recent_authentication_required`, `insufficient_scope`; 404 `organization_not_found` for an unknown organization or one already deleted; 409 `organization_operates_instance` for the operator organization itself."
      )
  )
  .add(
    HttpApiEndpoint.post("restoreOrganization", "/v1/admin/organizations/:organizationId/restore").pipe(audits("organization.restore"))
      .setPath(OrganizationPath)
      .addSuccess(OrganizationResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("admin.deleteOrganizations"))
      .annotate(OpenApi.Summary, "Restore any deleted organization")
      .annotate(
        OpenApi.Description,
        "Restores a deleted organization of the instance before its purge: it serves again as it was. Needs a recent sign-in for a session.\n\nErrors: 403 `recent_authentication_required`, `insufficient_scope`; 404 `organization_not_found` for an unknown organization or one whose grace period is over; 409 `organization_not_deleted` when it is not deleted."
      )
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Admin")
  .annotate(
    OpenApi.Description,
    "Instance operation, for owners and admins of the operator organization only (`ORGPLANE_OPERATOR_ORGANIZATION_ID`, else the one whose owner redeemed the instance's one-time setup token with `POST /v1/admin/operator`); anyone else gets 403 `operator_only`. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
