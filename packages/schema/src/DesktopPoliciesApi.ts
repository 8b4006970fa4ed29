/** Desktop policies (enterprise plan): owners and admins manage them; every member reads their effective policy. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  CreateDesktopPolicyRequest,
  DesktopPolicyListQuery,
  DesktopPolicyPage,
  DesktopPolicyPath,
  DesktopPolicyResponse,
  EffectiveDesktopPolicyResponse,
  UpdateDesktopPolicyRequest
} from "./DesktopPolicies.js"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse, PlanRequiredResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

const assignmentErrors =
  "404 `member_not_found` / `team_not_found` naming every id that is not an active member / a team of the organization"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse, PlanRequiredResponse] as const

export class DesktopPoliciesApi extends HttpApiGroup.make("desktopPolicies")
  .add(
    HttpApiEndpoint.post("create", "/v1/desktop-policies", { payload: CreateDesktopPolicyRequest, success: DesktopPolicyResponse.pipe(HttpApiSchema.status(201)), error: [NotFoundResponse, ...groupErrors] }).pipe(audits("desktop_policy.create"), requires("desktopPolicies.manage"))
      .annotate(OpenApi.Summary, "Create a desktop policy")
      .annotate(
        OpenApi.Description,
        `Creates a desktop policy and answers it as \`{desktopPolicy}\`. \`policyName\` and \`policy\` are required; \`priority\` defaults to 0, \`isEnabled\` to true, \`memberIds\` and \`teamIds\` to none (a repeated id is taken once). The organization's default policy is created with the first use of these operations.\n\nErrors: ${assignmentErrors}.`
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/desktop-policies", { query: DesktopPolicyListQuery, success: DesktopPolicyPage, error: [...groupErrors] }).pipe(requires("desktopPolicies.manage"))
      .annotate(OpenApi.Summary, "List desktop policies")
      .annotate(
        OpenApi.Description,
        "The organization's desktop policies that are not deleted, oldest first (the default policy first). Changes nothing beyond creating the default policy on first use.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/desktop-policies/:desktopPolicyId", { params: DesktopPolicyPath, success: DesktopPolicyResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("desktopPolicies.manage"))
      .annotate(OpenApi.Summary, "Get a desktop policy")
      .annotate(
        OpenApi.Description,
        "One desktop policy with its assignments. Changes nothing.\n\nErrors: 404 `desktop_policy_not_found` (also for a deleted policy or another organization's)."
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/desktop-policies/:desktopPolicyId", { params: DesktopPolicyPath, payload: UpdateDesktopPolicyRequest, success: DesktopPolicyResponse, error: [ConflictResponse, NotFoundResponse, ...groupErrors] }).pipe(audits("desktop_policy.update"), requires("desktopPolicies.manage"))
      .annotate(OpenApi.Summary, "Update a desktop policy")
      .annotate(
        OpenApi.Description,
        `A partial update: only the members sent change, so an empty body changes nothing. \`policy\` replaces the whole document; \`memberIds\` and \`teamIds\`, when sent, replace the assignments. Answers \`{desktopPolicy}\`. The default policy takes a new name and document only: it applies to every member, below every other policy.\n\nErrors: 400 \`invalid_request\` for \`priority\`, \`memberIds\` or \`teamIds\` on the default policy; 404 \`desktop_policy_not_found\`, or ${assignmentErrors}; 409 \`default_policy_required\` for \`isEnabled: false\` on the default policy.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/desktop-policies/:desktopPolicyId", { params: DesktopPolicyPath, success: HttpApiSchema.NoContent, error: [ConflictResponse, NotFoundResponse, ...groupErrors] }).pipe(audits("desktop_policy.delete"), requires("desktopPolicies.manage"))
      .annotate(OpenApi.Summary, "Delete a desktop policy")
      .annotate(
        OpenApi.Description,
        "Soft-deletes a desktop policy: it stops applying and is no longer listed or read; its record is kept.\n\nErrors: 404 `desktop_policy_not_found`; 409 `default_policy_required` for the default policy."
      )
  )
  .add(
    HttpApiEndpoint.get("effective", "/v1/me/desktop-policy", { success: EffectiveDesktopPolicyResponse, error: [...groupErrors] }).pipe(requires("desktopPolicies.readEffective"))
      .annotate(OpenApi.Summary, "Get my effective desktop policy")
      .annotate(
        OpenApi.Description,
        "What the desktop app applies for the calling member, on every plan. Among the enabled policies assigned to the member directly or through a team, for each switch the highest-priority policy that sets it decides (ties: the older policy), then the default policy; the onboarding prompts are decided the same way, with their descriptions. `decidedBy` names the deciding policy of each setting. Without the enterprise plan it answers the built-in defaults (every switch on, no prompts). Changes nothing beyond creating the default policy on first use.\n\nErrors: none beyond the group's (no 402)."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Desktop policies")
  .annotate(
    OpenApi.Description,
    "Desktop-app policies of the caller's active organization, an enterprise-plan feature: without it every management operation answers 402 `enterprise_plan_required` with `feature: \"desktop_policies\"` (checked before the role). Owners and admins manage them; every member reads their own effective policy. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
