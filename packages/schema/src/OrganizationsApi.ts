/**
 * Organizations: creating one (the creator becomes its owner); reading and changing the active one; deleting it
 * (restorable for a grace period, then purged) and restoring it.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import {
  CreateOrganizationRequest,
  DeleteOrganizationRequest,
  OrganizationDeletionResponse,
  OrganizationDetailsResponse,
  OrganizationPath,
  OrganizationResponse,
  OrganizationWithMembership,
  UpdateOrganizationRequest
} from "./Organizations.js"
import { requires } from "./Policy.js"
import { Authentication, MemberAuthentication, memberAuthenticationErrors, sessionOnly } from "./Security.js"
import { audits } from "./AuditCatalog.js"

export class OrganizationsApi extends HttpApiGroup.make("organizations")
  .add(
    HttpApiEndpoint.post("create", "/v1/organizations", {
      payload: CreateOrganizationRequest,
      success: OrganizationWithMembership.pipe(HttpApiSchema.status(201)),
      error: [ForbiddenResponse, ConflictResponse]
    }).pipe(sessionOnly, audits("organization.create"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Create an organization")
      .annotate(
        OpenApi.Description,
        "Creates an organization with the caller as its owner and makes it the session's active organization; answers both. Any signed-in person, with a session.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key; 409 `organization_quota_reached` when the caller already owns as many organizations as the instance allows (10 by default, `ORGPLANE_ORGANIZATIONS_PER_USER`; the message names the setting): delete or hand over one, or have the instance's operator raise it."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/organization", { success: OrganizationDetailsResponse, error: [ForbiddenResponse, ...memberAuthenticationErrors] })
      .pipe(requires("organizations.read"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Read the active organization")
      .annotate(
        OpenApi.Description,
        "The organization the caller acts in: its name, plan, whether it is a provisional workspace, logo, metadata, member count and dates. Changes nothing.\n\nErrors: 401 `unauthorized` without valid credentials; 404 `organization_not_found` when the caller belongs to no organization (a deleted one is none)."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/organization", {
      payload: UpdateOrganizationRequest,
      success: OrganizationDetailsResponse,
      error: [ForbiddenResponse, ...memberAuthenticationErrors]
    }).pipe(audits("organization.update"), requires("organizations.update"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Change the active organization")
      .annotate(
        OpenApi.Description,
        "Changes the name, logo or metadata of the organization the caller acts in (at least one of them; `metadata` replaces the whole object) and answers it as `GET /v1/organization` does. The audit log records the change with before and after.\n\nErrors: 401 `unauthorized` without valid credentials; 404 `organization_not_found` when the caller belongs to no organization."
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/organization", {
      payload: DeleteOrganizationRequest,
      success: OrganizationDeletionResponse,
      error: [ForbiddenResponse, ConflictResponse, ...memberAuthenticationErrors]
    }).pipe(audits("organization.delete"), requires("organizations.delete"))
      .middleware(MemberAuthentication)
      .annotate(OpenApi.Summary, "Delete the active organization")
      .annotate(
        OpenApi.Description,
        "Deletes the organization the caller acts in, whose name the body repeats. It stops serving at once: its members' sessions act in another of their organizations (or none), and its API keys, SCIM tokens, worker tokens, SSO connections (sign-in, ACS, metadata), audit streams and connector syncs stop; any request for it answers 404 `organization_not_found`. Its owners may restore it (`POST /v1/organizations/{organizationId}/restore`; `GET /v1/me/organizations?deleted=true` lists them) until `purgeAfter`, `ORGPLANE_ORGANIZATION_DELETION_GRACE` (7 days) from now; then a background job removes every row of it from every table and leaves a record in the operator organization's audit log. The answer counts what the purge will remove, per table. Needs a recent sign-in (`ORGPLANE_RECENT_AUTHENTICATION`) for a session; an API key needs the `organizations.delete` scope.\n\nErrors: 400 `invalid_request` when `confirmName` is not the organization's name; 401 `unauthorized` without valid credentials; 403 `recent_authentication_required` for a session that signed in too long ago, `insufficient_scope` for an API key without the scope; 404 `organization_not_found` when the caller belongs to no organization; 409 `organization_operates_instance` for the instance's operator organization (name another one first)."
      )
  )
  .add(
    HttpApiEndpoint.post("restore", "/v1/organizations/:organizationId/restore", {
      params: OrganizationPath,
      success: OrganizationResponse,
      error: [ForbiddenResponse, NotFoundResponse, ConflictResponse]
    }).pipe(sessionOnly, audits("organization.restore"), requires("organizations.delete"))
      .middleware(Authentication)
      .annotate(OpenApi.Summary, "Restore a deleted organization")
      .annotate(
        OpenApi.Description,
        "Restores an organization the caller is an owner of, deleted by one of its owners less than `ORGPLANE_ORGANIZATION_DELETION_GRACE` ago: it serves again as it was (its keys, tokens, connections and streams work again; sessions made by its SSO before the deletion did not survive it) and becomes the session's active organization. A session, signed in recently (`ORGPLANE_RECENT_AUTHENTICATION`): a deleted organization is nobody's active one, so API keys cannot reach this.\n\nErrors: 401 `unauthorized` without a valid session; 403 `session_required` with an API key, `insufficient_role` for a member who is not an owner, `operator_only` when the instance's operator deleted it (or the system did, its last member's account deleted): only the operator restores it, `recent_authentication_required` for a session that signed in too long ago; 404 `organization_not_found` for an organization the caller is not a member of, that does not exist, or whose grace period is over; 409 `organization_not_deleted` when it is not deleted, `organization_quota_reached` when one of its owners already owns as many organizations as the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`)."
      )
  )
  .annotate(OpenApi.Title, "Organizations")
  .annotate(
    OpenApi.Description,
    "Organizations: any signed-in person may create one, and becomes its owner. Its members read it, owners and admins change its name, logo and metadata, and owners delete it and may restore it within the grace period (docs/lifecycle.md). What happens inside one is under Members, Teams, Invitations and API Keys."
  )
{}
