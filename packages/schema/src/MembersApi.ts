/** Members and roles: who belongs to the organization, with which role. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { Authentication, MemberAuthentication } from "./Security.js"
import {
  ChangeRoleRequest,
  MemberDirectorySettingsResponse,
  MemberListQuery,
  MemberPage,
  MemberPath,
  MemberResponse,
  OwnershipTransfer,
  UpdateMemberDirectorySettingsRequest
} from "./Members.js"
import { RoleList, RolesDescription } from "./Roles.js"
import { audits } from "./AuditCatalog.js"

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class MembersApi extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/v1/members", { query: MemberListQuery, success: MemberPage, error: [...groupErrors] }).pipe(requires("members.read"))
      .annotate(OpenApi.Summary, "List members")
      .annotate(
        OpenApi.Description,
        "The organization's members, oldest first, optionally filtered by role and by text in name or email; removed members only with `includeRemoved`. Owners and admins see every member's `userId`, `email` and `suspendedAt`; for a plain member (or an API key acting as one) those are absent, and `email` is there only when the organization lets members see emails (`PUT /v1/member-directory`, off by default); their `q` matches names only then. Changes nothing.\n\nErrors: 403 `insufficient_role` for `includeRemoved=true` from a plain member."
      )
  )
  .add(
    HttpApiEndpoint.get("getDirectorySettings", "/v1/member-directory", { success: MemberDirectorySettingsResponse, error: [...groupErrors] }).pipe(requires("members.read"))
      .annotate(OpenApi.Summary, "Get the member directory settings")
      .annotate(OpenApi.Description, "What plain members see of each other. Changes nothing.")
  )
  .add(
    HttpApiEndpoint.put("setDirectorySettings", "/v1/member-directory", { payload: UpdateMemberDirectorySettingsRequest, success: MemberDirectorySettingsResponse, error: [...groupErrors] }).pipe(audits("member.directory.update"), requires("members.manageDirectory"))
      .annotate(OpenApi.Summary, "Set the member directory settings")
      .annotate(
        OpenApi.Description,
        "Chooses whether plain members see each other's emails in the member list (off by default). Owners and admins always see every member's email."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/members/:memberId", { params: MemberPath, success: MemberResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("members.read"))
      .annotate(OpenApi.Summary, "Get a member")
      .annotate(
        OpenApi.Description,
        "One member, removed ones included (their `removedAt` is set) for owners and admins. A plain member sees what the list shows them, and not removed members.\n\nErrors: 404 `member_not_found` (for a plain member also a removed member)."
      )
  )
  .add(
    HttpApiEndpoint.patch("changeRole", "/v1/members/:memberId", { params: MemberPath, payload: ChangeRoleRequest, success: MemberResponse, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("member.role.update"), requires("members.changeRole", "members.manageOwners"))
      .annotate(OpenApi.Summary, "Change a member's role")
      .annotate(
        OpenApi.Description,
        "Sets a member's role and answers the member; setting the role they have changes nothing. Between `member` and `admin` takes `members.changeRole`; making someone an owner, or changing an owner's role, `members.manageOwners`. An API key takes either only when a scope names it (403 `insufficient_scope`).\n\nErrors: 404 `member_not_found` for an unknown or removed member; 409 `last_owner` when the change would leave the organization without an owner, `organization_quota_reached` when a member made an owner already owns as many organizations as the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`)."
      )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/v1/members/:memberId", { params: MemberPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("member.remove"), requires("members.leave", "members.remove", "members.manageOwners"))
      .annotate(OpenApi.Summary, "Remove a member")
      .annotate(
        OpenApi.Description,
        "Removes a member: the membership keeps its id and gets `removedAt`; the member leaves every team, the API keys they created are revoked (and the invitations those keys made that are still pending canceled) and their sessions no longer reach the organization. Removing oneself (leaving) takes `members.leave`, another member or admin `members.remove`, an owner `members.manageOwners`.\n\nErrors: 404 `member_not_found` for an unknown or already removed member; 409 `last_owner` for the organization's last owner."
      )
  )
  .add(
    HttpApiEndpoint.post("transferOwnership", "/v1/members/:memberId/transfer-ownership", { params: MemberPath, success: OwnershipTransfer, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("member.ownership.transfer"), requires("members.transferOwnership"))
      .annotate(OpenApi.Summary, "Transfer ownership")
      .annotate(
        OpenApi.Description,
        "Makes the given admin an owner and the calling owner an admin, in one step; answers both.\n\nErrors: 404 `member_not_found` for an unknown or removed member; 409 `member_not_admin` unless the target is an admin (make them one first), `organization_quota_reached` when the target already owns as many organizations as the instance allows (`ORGPLANE_ORGANIZATIONS_PER_USER`)."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Members")
  .annotate(
    OpenApi.Description,
    `Members of the caller's active organization (an API key's own organization). Every operation here needs credentials, a session or an API key: 401 \`unauthorized\` without valid ones, 404 \`organization_not_found\` when the caller belongs to no organization (or has just left it).\n\n${RolesDescription}`
  )
{}

export class RolesApi extends HttpApiGroup.make("roles")
  .add(
    HttpApiEndpoint.get("list", "/v1/roles", { success: RoleList })
      .annotate(OpenApi.Summary, "List roles")
      .annotate(
        OpenApi.Description,
        "The built-in roles, lowest first, with what each may do (from the policy table). Any signed-in caller, with a session or an API key, even without an organization; changes nothing.\n\nErrors: 401 `unauthorized` without valid credentials."
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Roles")
  .annotate(OpenApi.Description, RolesDescription)
{}
