/** Members and roles: who belongs to the organization, with which role. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { Authentication, MemberAuthentication } from "./Security.js"
import { ChangeRoleRequest, MemberListQuery, MemberPage, MemberPath, MemberResponse, OwnershipTransfer } from "./Members.js"
import { RoleList, RolesDescription } from "./Roles.js"

export class MembersApi extends HttpApiGroup.make("members")
  .add(
    HttpApiEndpoint.get("list", "/v1/members")
      .setUrlParams(MemberListQuery)
      .addSuccess(MemberPage)
      .pipe(requires("members.read"))
      .annotate(
        OpenApi.Description,
        "Lists the organization's members, oldest first, optionally filtered by role and by text in name or email. Any member may list."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/members/:memberId")
      .setPath(MemberPath)
      .addSuccess(MemberResponse)
      .addError(NotFoundResponse)
      .pipe(requires("members.read"))
      .annotate(
        OpenApi.Description,
        "One member, removed ones included (their `removedAt` is set). Any member may read. 404 `member_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.patch("changeRole", "/v1/members/:memberId")
      .setPath(MemberPath)
      .setPayload(ChangeRoleRequest)
      .addSuccess(MemberResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("members.changeRole", "members.manageOwners"))
      .annotate(
        OpenApi.Description,
        "Changes a member's role. Between `member` and `admin`: `members.changeRole`; making, demoting or changing an owner: `members.manageOwners`. 409 `last_owner` when the change would leave the organization without an owner; 404 `member_not_found` for an unknown or removed member."
      )
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/members/:memberId")
      .setPath(MemberPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("members.leave", "members.remove", "members.manageOwners"))
      .annotate(
        OpenApi.Description,
        "Removes a member: the membership keeps its id and gets `removedAt`; the member leaves every team, the API keys they created are revoked and their sessions no longer reach the organization. Removing oneself (leaving) is `members.leave`, another member or admin `members.remove`, an owner `members.manageOwners`. 409 `last_owner` for the last owner; 404 `member_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("transferOwnership", "/v1/members/:memberId/transfer-ownership")
      .setPath(MemberPath)
      .addSuccess(OwnershipTransfer)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("members.transferOwnership"))
      .annotate(
        OpenApi.Description,
        "Makes the given admin an owner and the calling owner an admin, in one step. 409 `member_not_admin` unless the target is an admin; 404 `member_not_found`."
      )
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Members")
  .annotate(OpenApi.Description, `Members of the caller's active organization (an API key's own organization).\n\n${RolesDescription}`)
{}

export class RolesApi extends HttpApiGroup.make("roles")
  .add(
    HttpApiEndpoint.get("list", "/v1/roles")
      .addSuccess(RoleList)
      .annotate(OpenApi.Description, "The built-in roles, lowest first, with what each may do.")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Roles")
  .annotate(OpenApi.Description, RolesDescription)
{}
