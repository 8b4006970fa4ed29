/** Teams: named groups of members, used to grant access and assign policies to many members at once. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import {
  AddTeamMembersRequest,
  CreateTeamRequest,
  TeamListQuery,
  TeamMemberPath,
  TeamPage,
  TeamPath,
  TeamResponse,
  UpdateTeamRequest
} from "./Teams.js"

export class TeamsApi extends HttpApiGroup.make("teams")
  .add(
    HttpApiEndpoint.post("create", "/v1/teams")
      .setPayload(CreateTeamRequest)
      .addSuccess(TeamResponse, { status: 201 })
      .addError(ConflictResponse)
      .addError(NotFoundResponse)
      .pipe(requires("teams.manage"))
      .annotate(
        OpenApi.Description,
        "Creates a team, optionally with members. 409 `team_exists` when the organization has a team of that name (case-insensitive); 404 `member_not_found` when a member id is not an active member of the organization."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/teams")
      .setUrlParams(TeamListQuery)
      .addSuccess(TeamPage)
      .pipe(requires("teams.read"))
      .annotate(OpenApi.Description, "Lists the organization's teams by name.")
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/teams/:teamId")
      .setPath(TeamPath)
      .addSuccess(TeamResponse)
      .addError(NotFoundResponse)
      .pipe(requires("teams.read"))
      .annotate(OpenApi.Description, "One team with its members. 404 `team_not_found`.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/teams/:teamId")
      .setPath(TeamPath)
      .setPayload(UpdateTeamRequest)
      .addSuccess(TeamResponse)
      .addError(ConflictResponse)
      .addError(NotFoundResponse)
      .pipe(requires("teams.manage"))
      .annotate(
        OpenApi.Description,
        "Renames a team and/or replaces its whole membership. 409 `team_exists`; 404 `team_not_found` or `member_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.post("addMembers", "/v1/teams/:teamId/members")
      .setPath(TeamPath)
      .setPayload(AddTeamMembersRequest)
      .addSuccess(TeamResponse)
      .addError(NotFoundResponse)
      .pipe(requires("teams.manage"))
      .annotate(
        OpenApi.Description,
        "Adds members to a team; members already in it stay. 404 `team_not_found` or `member_not_found`."
      )
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/v1/teams/:teamId/members/:memberId")
      .setPath(TeamMemberPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .pipe(requires("teams.manage"))
      .annotate(
        OpenApi.Description,
        "Takes a member out of a team; 204 also when they were not in it. 404 `team_not_found`, or `member_not_found` for an id that is not a member of the organization."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/teams/:teamId")
      .setPath(TeamPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .pipe(requires("teams.manage"))
      .annotate(
        OpenApi.Description,
        "Deletes a team with its memberships and everything assigned to it (access grants, desktop-policy assignments). The members stay in the organization. 404 `team_not_found`."
      )
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Teams")
  .annotate(
    OpenApi.Description,
    "Teams of the caller's active organization. Any member may read them; owners and admins change them."
  )
{}
