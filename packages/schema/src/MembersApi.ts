/** Members and roles: who belongs to the organization, with which role. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
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

export class MembersApi extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/v1/members")
      .setUrlParams(MemberListQuery)
      .addSuccess(MemberPage)
      .pipe(requires("members.read"))
      .annotate(OpenApi.Summary, "List members")
      .annotate(
        OpenApi.Description,
        "The organization's members, oldest first, optionally filtered by role and by text in name or email; removed members only with `includeRemoved`. Owners and admins see every member's `userId`, `email` and `suspendedAt`; for a plain member (or an API key acting as one) those are absent, and `email` is there only when the organization lets members see emails (`PUT /v1/member-directory`, off by default); their `q` matches names only then. Changes nothing.\n\nErrors: 403 `insufficient_role` for `includeRemoved=true` from a plain member."
      )
  )
  .add(
    HttpApiEndpoint.get("getDirectorySettings", "/v1/member-directory")
      .addSuccess(MemberDirectorySettingsResponse)
      .pipe(requires("members.read"))
      .annotate(OpenApi.Summary, "Get the member directory settings")
      .annotate(OpenApi.Description, "What plain members see of each other. Changes nothing.")
  )
  .add(
    HttpApiEndpoint.put("setDirectorySettings", "/v1/member-directory").pipe(audits("member.directory.update"))
      .setPayload(UpdateMemberDirectorySettingsRequest)
      .addSuccess(MemberDirectorySettingsResponse)
      .pipe(requires("members.manageDirectory"))
      .annotate(OpenApi.Summary, "Set the member directory settings")
      .annotate(
        OpenApi.Description,
        "Chooses whether plain members see each other's emails in the member list (off by default). Owners and admins always see every member's email."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/members/:memberId")
      .setPath(MemberPath)
      .addSuccess(MemberResponse)
      .addError(NotFoundResponse)
      .pipe(requires("members.read"))
      .annotate(OpenApi.Summary, "Get a member")
      .annotate(
        OpenApi.Description,
        "One member, removed ones included (their `removedAt` is set) for owners and admins. A plain member sees what the list shows them, and not removed members.\n\nErrors: 404 `member_not_found` (for a plain member also a removed member)."
      )
  )
  .add(
    HttpApiEndpoint.patch("changeRole", "/v1/members/:memberId").pipe(audits("member.role.update"))
      .setPath(MemberPath)
      .setPayload(ChangeRoleRequest)
      .addSuccess(MemberResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("members.changeRole", "members.manageOwners"))
      .annotate(OpenApi.Summary, "Change a member's role")
      .annotate(
        OpenApi.Description,
        "Sets a member's role and answers the member; setting the role they have changes nothing. Between `member` and `admin` takes `members.changeRole`; making someone an owner, or changing an owner's role, `members.manageOwners`.\n\nErrors: 404 `member_not_found` for an unknown or removed member; 409 `last_owner` when the change would leave the organization without an owner."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/members/:memberId").pipe(audits("member.remove"))
      .setPath(MemberPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("members.leave", "members.remove", "members.manageOwners"))
      .annotate(OpenApi.Summary, "Remove a member")
      .annotate(
        OpenApi.Description,
        "Removes a member: the membership keeps its id and gets `removedAt`; the member leaves every team, the API keys they created are revoked and their sessions no longer reach the organization. Removing oneself (leaving) takes `members.leave`, another member or admin `members.remove`, an owner `members.manageOwners`.\n\nErrors: 404 `member_not_found` for an unknown or already removed member; 409 `last_owner` for the organization's last owner."
      )
  )
  .add(
    HttpApiEndpoint.post("transferOwnership", "/v1/members/:memberId/transfer-ownership").pipe(audits("member.ownership.transfer"))
      .setPath(MemberPath)
      .addSuccess(OwnershipTransfer)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("members.transferOwnership"))
      .annotate(OpenApi.Summary, "Transfer ownership")
      .annotate(
        OpenApi.Description,
        "Makes the given admin an owner and the calling owner an admin, in one step; answers both.\n\nErrors: 404 `member_not_found` for an unknown or removed member; 409 `member_not_admin` unless the target is an admin (make them one first)."
      )
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Members")
  .annotate(
    OpenApi.Description,
    `Members of the caller's active organization (an API key's own organization). Every operation here needs credentials, a session or an API key: 401 \`unauthorized\` without valid ones, 404 \`organization_not_found\` when the caller belongs to no organization (or has just left it).\n\n${RolesDescription}`
  )
{}

export class RolesApi extends HttpApiGroup.make("roles")
  .add(
    HttpApiEndpoint.get("list", "/v1/roles")
      .addSuccess(RoleList)
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
