/** Admin: instance operation, reserved to owners and admins of the operator organization. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { AccountDeletion } from "./Account.js"
import { AdminMetricsResponse } from "./AdminMetrics.js"
import { AdminUserListQuery, AdminUserPage, AdminUserPath, AdminUserResponse } from "./AdminUsers.js"
import {
  CannotDisableYourselfResponse,
  ConflictResponse,
  ForbiddenResponse,
  LastOwnerOfOrganizationsResponse,
  NotFoundResponse,
  RateLimitedResponse,
  UserNotFoundResponse
} from "./Errors.js"
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
import { PasswordResetLinkResponse, UserPasswordResetPath } from "./Recovery.js"

const userErrors = "404 `user_not_found` for an id that is no account's (a deleted account's included)"

/** The operator's hierarchy over accounts, as the operations on one say it (identity/Operator.ts `requireReach`). */
const hierarchy = "The operator organization's owners and admins are acted on by its owners only (not by its admins)."
const hierarchyError = "`insufficient_role` for an admin of the operator organization acting on its owners or admins"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class AdminApi extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("claimOperator", "/v1/admin/operator", { payload: ClaimOperatorRequest, success: Schema.Struct({ organization: Organization }), error: [ConflictResponse, RateLimitedResponse, ...groupErrors] }).pipe(audits("instance.operator.claim"), requires("admin.claimOperator"))
      .annotate(OpenApi.Summary, "Make your organization the instance's operator")
      .annotate(
        OpenApi.Description,
        "Redeems the instance's one-time setup token: the caller's organization becomes the operator organization, whose owners and admins change plans and read the instance's metrics. The token is `ORGPLANE_SETUP_TOKEN`, or, when that is unset, the one the server logs at each start while no organization operates the instance (valid 24 hours). It works once: afterwards, or when `ORGPLANE_OPERATOR_ORGANIZATION_ID` names the operator, every claim is refused. No organization becomes the operator any other way (not the first one created). Guesses are throttled: 10 attempts an hour from one client address, 100 from all.\n\nErrors: 403 `setup_token_invalid` for a token that is not the instance's (or expired), `insufficient_role` for anyone but an owner; 409 `operator_exists` when an organization already operates the instance, `operator_not_eligible` for a workspace made by `POST /v1/bootstrap/workspace` (its claim links were an anonymous agent's to hand out: make an organization with `POST /v1/organizations`); 429 `rate_limited` past the attempts, with `Retry-After`."
      )
  )
  .add(
    HttpApiEndpoint.patch("setPlan", "/v1/admin/organizations/:organizationId/plan", { params: Schema.Struct({ organizationId: OrganizationId }), payload: ChangePlanRequest, success: Schema.Struct({ organization: Organization }), error: [NotFoundResponse, ...groupErrors] }).pipe(audits("organization.plan.update"), requires("organizations.setPlan"))
      .annotate(OpenApi.Summary, "Change an organization's plan")
      .annotate(
        OpenApi.Description,
        "Sets the plan of any organization on the instance and answers the organization. Needs a recent sign-in (`ORGPLANE_RECENT_AUTHENTICATION`) from a session; an API key needs the `organizations.setPlan` scope.\n\nErrors: 403 `recent_authentication_required` from a session older than that, `insufficient_scope`; 404 `organization_not_found` for an unknown organization."
      )
  )
  .add(
    HttpApiEndpoint.get("metrics", "/v1/admin/metrics", { success: AdminMetricsResponse, error: [...groupErrors] }).pipe(requires("admin.readMetrics"))
      .annotate(OpenApi.Summary, "Read the instance's usage metrics")
      .annotate(
        OpenApi.Description,
        "Computes the instance's usage metrics on each call (no caching) and answers `{summary, generatedAt}`. Days are UTC calendar days (`YYYY-MM-DD`); today is the day of `generatedAt`.\n\nDefinitions:\n- `totalUsers`, `totalOrganizations`: every account (deleted ones not counted) and every organization that is not deleted (provisional ones included).\n- `verifiedUsers`: the instance has no email verification, so a person counts as verified when their email's domain is the verified SSO domain of an organization they are an active member of.\n- `recentUsers7d` / `recentUsers30d`: accounts created at or after now − 7 days / now − 30 days and not deleted (signups, not activity).\n- `totalWorkers`, `cloudWorkers`, `localWorkers`: workers not deleted, split by destination; `usersWithWorkers`: distinct creators of those workers; `usersWithoutWorkers`: totalUsers − usersWithWorkers, at least 0.\n- `paidUsers`: people with an active membership in an organization on the `team` or `enterprise` plan that is not deleted; `unpaidUsers`: everyone else; `billingUnavailableUsers` is 0 and `billingLoaded` true, since plans are stored on the instance.\n- `adminCount`: owners and admins (active memberships) of the operator organization, who are the instance's admins.\n- Activity of a person on a day: (A) a session created that day, (B) any telemetry event that day, (C, task activity) a `task.started`, `task.completed` or `task.failed` telemetry event with a session id that day. `activeUsers1d`/`7d`/`30d`: distinct people with A or B activity today / on the last 7 days (today included) / on the 30 days of the series; `realActiveUsers1d`/`7d`/`30d`: the same with C only.\n- `recurringUsers`: people with activity (A, B or C) on at least 2 distinct days of the last 90 (today included).\n- `inviters`: distinct people who ever created an invitation, in any organization; `medianHoursToFirstInvite`: for each inviter, the hours from their account's creation to their first invitation, floored at 0 and rounded to 0.1, then the median (an even count averages the two middle values; the result is rounded to 0.01); 0 while there are no inviters.\n- `activitySeries`: 30 points, oldest first, from 29 days ago to today: `activeUsers` (A or B), `realActiveUsers` (C) and `signups` (accounts created that day).\n\nErrors: only those of the group (403 `operator_only` for anyone but the operator organization's owners and admins)."
      )
  )
  .add(
    HttpApiEndpoint.get("listUsers", "/v1/admin/users", { query: AdminUserListQuery, success: AdminUserPage, error: [...groupErrors] }).pipe(requires("admin.readUsers"))
      .annotate(OpenApi.Summary, "List the instance's accounts")
      .annotate(
        OpenApi.Description,
        "Every account of the instance, oldest first, in keyset pages: email, name, when it was made, whether its address is proven, when the operator disabled it (null while enabled) and how many organizations it is an active member of. `email` keeps those whose address contains the text (case-insensitive); `disabled` keeps the disabled or the enabled ones. Deleted accounts are not listed. An API key needs the `admin.readUsers` scope. Changes nothing.\n\nErrors: 400 `invalid_request` for a cursor of other filters; 403 `insufficient_scope`."
      )
  )
  .add(
    HttpApiEndpoint.post("disableUser", "/v1/admin/users/:userId/disable", { params: AdminUserPath, success: AdminUserResponse, error: [UserNotFoundResponse, CannotDisableYourselfResponse, ...groupErrors] }).pipe(audits("user.disable"), requires("admin.manageUsers"))
      .annotate(OpenApi.Summary, "Disable an account")
      .annotate(
        OpenApi.Description,
        `Disables an account at once, as Keycloak's \`enabled: false\` and Auth0's \`blocked\` do: every session of the person ends, their API keys (in every organization) are refused with 401 from the next request on, a write of theirs under way fails where it commits, and their password sign-in answers 403 \`account_disabled\` (only once the password is right: a wrong one is a 401, counted by the sign-in throttle as before), as do SSO sign-ins. Memberships, keys and data stay: \`POST /v1/admin/users/{userId}/enable\` undoes it (the ended sessions stay ended; the keys work again). Disabling a disabled account answers it as it is. ${hierarchy} Needs a recent sign-in from a session; an API key needs the \`admin.manageUsers\` scope.\n\nErrors: 403 \`recent_authentication_required\` from a session older than \`ORGPLANE_RECENT_AUTHENTICATION\`, ${hierarchyError}; ${userErrors}; 409 \`cannot_disable_yourself\` for the caller's own account.`
      )
  )
  .add(
    HttpApiEndpoint.post("enableUser", "/v1/admin/users/:userId/enable", { params: AdminUserPath, success: AdminUserResponse, error: [UserNotFoundResponse, ...groupErrors] }).pipe(audits("user.enable"), requires("admin.manageUsers"))
      .annotate(OpenApi.Summary, "Enable an account")
      .annotate(
        OpenApi.Description,
        `Enables a disabled account: the person signs in again (password or SSO) and their API keys work again; the sessions the disable ended stay ended. Enabling an enabled account answers it as it is. ${hierarchy} Needs a recent sign-in from a session; an API key needs the \`admin.manageUsers\` scope.\n\nErrors: 403 \`recent_authentication_required\` from a session older than \`ORGPLANE_RECENT_AUTHENTICATION\`, ${hierarchyError}; ${userErrors}.`
      )
  )
  .add(
    HttpApiEndpoint.delete("deleteUser", "/v1/admin/users/:userId", { params: AdminUserPath, success: AccountDeletion, error: [UserNotFoundResponse, LastOwnerOfOrganizationsResponse, ...groupErrors] }).pipe(audits("user.delete"), requires("admin.manageUsers"))
      .annotate(OpenApi.Summary, "Delete an account")
      .annotate(
        OpenApi.Description,
        `Deletes any account, as \`DELETE /v1/me\` does for one's own (what goes, what stays as a tombstone and a pseudonym, the audit log): the audit event \`user.delete\` is recorded in every organization the person left and in the operator organization. Refused, like the person's own deletion, while the person is the last owner of organizations that have other members: another owner comes first. ${hierarchy} Needs a recent sign-in from a session (for the caller's own account too: the person's own rule, which only a session meets); an API key needs the \`admin.manageUsers\` scope and cannot delete its own maker. Answers what was removed.\n\nErrors: 403 \`recent_authentication_required\` from a session older than \`ORGPLANE_RECENT_AUTHENTICATION\`, \`session_required\` for an API key deleting its own maker, ${hierarchyError}; ${userErrors}; 409 \`last_owner_of_organizations\` (the message names the organizations).`
      )
  )
  .add(
    HttpApiEndpoint.post("issuePasswordReset", "/v1/admin/users/:userId/password-reset", { params: UserPasswordResetPath, success: PasswordResetLinkResponse.pipe(HttpApiSchema.status(201)), error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("user.password.reset_link.create"), requires("admin.resetPasswords"))
      .annotate(OpenApi.Summary, "Issue a password reset link for any account")
      .annotate(
        OpenApi.Description,
        "Makes a one-time password reset token for any account on the instance, an owner of any organization included, and answers it, once: hand it to the person, who sets a new password with it (`POST /v1/auth/password-reset`; every session of the account then ends). Valid `ORGPLANE_PASSWORD_RESET_TTL` (1 hour), once, while the account's password and email stay as they are; another link voids it. The owners and admins of the operator organization are reset by its owners only. Asks for a recent sign-in (`ORGPLANE_RECENT_AUTHENTICATION`). Whoever runs the server recovers without signing in: `orgplane admin reset-password <email>` on it.\n\nErrors: 403 `insufficient_role` for an admin resetting an owner or admin of the operator organization, `recent_authentication_required`; 404 `user_not_found` for an unknown account; 409 `reset_own_password` for the caller's own account (use `POST /v1/me/password`)."

      )
  )
  .add(
    HttpApiEndpoint.get("listOrganizations", "/v1/admin/organizations", { query: AdminOrganizationListQuery, success: AdminOrganizationPage, error: [...groupErrors] }).pipe(requires("admin.readOrganizations"))
      .annotate(OpenApi.Summary, "List the instance's organizations")
      .annotate(
        OpenApi.Description,
        "Every organization of the instance, oldest first (keyset pages): name, plan, whether it is a provisional workspace, member count, and for a deleted one when it was deleted and when the purge may remove it (an unclaimed provisional workspace shows when it expires). Purged organizations are gone. `q` filters by name, `deleted` by state. An API key needs the `admin.readOrganizations` scope.\n\nErrors: 400 `invalid_request` for a cursor of another list or of other filters; 403 `insufficient_scope`."
      )
  )
  .add(
    HttpApiEndpoint.delete("deleteOrganization", "/v1/admin/organizations/:organizationId", { params: OrganizationPath, success: OrganizationDeletionResponse, error: [ConflictResponse, ...groupErrors] }).pipe(audits("organization.delete"), requires("admin.deleteOrganizations"))
      .annotate(OpenApi.Summary, "Delete any organization")
      .annotate(
        OpenApi.Description,
        "Deletes an organization of the instance as `DELETE /v1/organization` does for its owners: it stops serving at once, the operator (not its owners: the operator's deletion is the operator's to undo) may restore it until `purgeAfter` (`ORGPLANE_ORGANIZATION_DELETION_GRACE`, 7 days), then the purge removes every row of it. The operator organization's audit log records it. Needs a recent sign-in for a session (`ORGPLANE_RECENT_AUTHENTICATION`); an API key needs the `admin.deleteOrganizations` scope.\n\nErrors: 403 `recent_authentication_required`, `insufficient_scope`; 404 `organization_not_found` for an unknown organization or one already deleted; 409 `organization_operates_instance` for the operator organization itself."
      )
  )
  .add(
    HttpApiEndpoint.post("restoreOrganization", "/v1/admin/organizations/:organizationId/restore", { params: OrganizationPath, success: OrganizationResponse, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("organization.restore"), requires("admin.deleteOrganizations"))
      .annotate(OpenApi.Summary, "Restore any deleted organization")
      .annotate(
        OpenApi.Description,
        "Restores a deleted organization of the instance before its purge: it serves again as it was. Needs a recent sign-in for a session.\n\nErrors: 403 `recent_authentication_required`, `insufficient_scope`; 404 `organization_not_found` for an unknown organization or one whose grace period is over; 409 `organization_not_deleted` when it is not deleted, `organization_quota_reached` when one of its owners already owns as many organizations as the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`)."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Admin")
  .annotate(
    OpenApi.Description,
    "Instance operation, for owners and admins of the operator organization only (`ORGPLANE_OPERATOR_ORGANIZATION_ID`, else the one whose owner redeemed the instance's one-time setup token with `POST /v1/admin/operator`): plans, metrics, the instance's organizations (list, delete, restore) and accounts (list, disable, enable, delete, password reset links); anyone else gets 403 `operator_only`. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
