/** Teams: named groups of members, used to grant access and assign policies to many members at once. */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
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
import { audits } from "./AuditCatalog.js"

export class TeamsApi extends HttpApiGroup.make("teams")
  .add(
    HttpApiEndpoint.post("create", "/v1/teams").pipe(audits("team.create"))
      .setPayload(CreateTeamRequest)
      .addSuccess(TeamResponse, { status: 201 })
      .addError(ConflictResponse)
      .addError(NotFoundResponse)
      .pipe(requires("teams.manage"))
      .annotate(OpenApi.Summary, "Create a team")
      .annotate(
        OpenApi.Description,
        "Creates a team, optionally with its first members, and answers it with its members.\n\nErrors: 404 `member_not_found` when a member id is not an active member of the organization; 409 `team_exists` when the organization has a team of that name (compared case-insensitively), `team_external_key_taken` when another team has that `externalKey`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/teams")
      .setUrlParams(TeamListQuery)
      .addSuccess(TeamPage)
      .pipe(requires("teams.read"))
      .annotate(OpenApi.Summary, "List teams")
      .annotate(
        OpenApi.Description,
        "The organization's teams by name, optionally only those whose name contains some text or that a given member belongs to. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/teams/:teamId")
      .setPath(TeamPath)
      .addSuccess(TeamResponse)
      .addError(NotFoundResponse)
      .pipe(requires("teams.read"))
      .annotate(OpenApi.Summary, "Get a team")
      .annotate(OpenApi.Description, "One team with its members. Changes nothing.\n\nErrors: 404 `team_not_found`.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/teams/:teamId").pipe(audits("team.update"))
      .setPath(TeamPath)
      .setPayload(UpdateTeamRequest)
      .addSuccess(TeamResponse)
      .addError(ConflictResponse)
      .addError(NotFoundResponse)
      .pipe(requires("teams.manage"))
      .annotate(OpenApi.Summary, "Update a team")
      .annotate(
        OpenApi.Description,
        "Renames a team and/or replaces its whole membership with `memberIds`; answers the team.\n\nErrors: 404 `team_not_found`, or `member_not_found` when a member id is not an active member of the organization; 409 `team_exists` when another team has the new name, `team_external_key_taken` when another team has that `externalKey`, `team_managed_by_directory` when the team's directory (SCIM) manages it and the change renames it or changes its members."
      )
  )
  .add(
    HttpApiEndpoint.post("addMembers", "/v1/teams/:teamId/members").pipe(audits("team.member.add"))
      .setPath(TeamPath)
      .setPayload(AddTeamMembersRequest)
      .addSuccess(TeamResponse)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("teams.manage"))
      .annotate(OpenApi.Summary, "Add members to a team")
      .annotate(
        OpenApi.Description,
        "Adds members to a team and answers it; members already in it stay, so adding one twice changes nothing.\n\nErrors: 404 `team_not_found`, or `member_not_found` when a member id is not an active member of the organization; 409 `team_managed_by_directory` when the organization's directory (SCIM) manages the team."
      )
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/v1/teams/:teamId/members/:memberId").pipe(audits("team.member.remove"))
      .setPath(TeamMemberPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("teams.manage"))
      .annotate(OpenApi.Summary, "Remove a member from a team")
      .annotate(
        OpenApi.Description,
        "Takes a member out of a team; they stay in the organization. 204 also when they were not in it.\n\nErrors: 404 `team_not_found`, or `member_not_found` for an id that never was a member of the organization; 409 `team_managed_by_directory` when the organization's directory (SCIM) manages the team."
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/teams/:teamId").pipe(audits("team.delete"))
      .setPath(TeamPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("teams.manage"))
      .annotate(OpenApi.Summary, "Delete a team")
      .annotate(
        OpenApi.Description,
        "Deletes a team with its memberships; the members stay in the organization.\n\nErrors: 404 `team_not_found`; 409 `team_managed_by_directory` when the organization's directory (SCIM) manages the team."
      )
  )
  .addError(ForbiddenResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Teams")
  .annotate(
    OpenApi.Description,
    "Teams of the caller's active organization. Any member may read them; owners and admins change them. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
