/** Teams: named groups of members, used to grant access and assign policies to many members at once. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
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

/** The errors every endpoint of the group may answer (Effect 4 has no group `addError`: each endpoint declares them). */
const groupErrors = [ForbiddenResponse] as const

export class TeamsApi extends HttpApiGroup.make("teams")
  .add(
    HttpApiEndpoint.post("create", "/v1/teams", { payload: CreateTeamRequest, success: TeamResponse.pipe(HttpApiSchema.status(201)), error: [ConflictResponse, NotFoundResponse, ...groupErrors] }).pipe(audits("team.create"), requires("teams.manage"))
      .annotate(OpenApi.Summary, "Create a team")
      .annotate(
        OpenApi.Description,
        "Creates a team, optionally with its first members, and answers it with its members.\n\nErrors: 404 `member_not_found` when a member id is not an active member of the organization; 409 `team_exists` when the organization has a team of that name (compared case-insensitively), `team_external_key_taken` when another team has that `externalKey`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/teams", { query: TeamListQuery, success: TeamPage, error: [...groupErrors] }).pipe(requires("teams.read"))
      .annotate(OpenApi.Summary, "List teams")
      .annotate(
        OpenApi.Description,
        "The organization's teams by name, optionally only those whose name contains some text or that a given member belongs to. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/teams/:teamId", { params: TeamPath, success: TeamResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("teams.read"))
      .annotate(OpenApi.Summary, "Get a team")
      .annotate(OpenApi.Description, "One team with its members. Changes nothing.\n\nErrors: 404 `team_not_found`.")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/teams/:teamId", { params: TeamPath, payload: UpdateTeamRequest, success: TeamResponse, error: [ConflictResponse, NotFoundResponse, ...groupErrors] }).pipe(audits("team.update"), requires("teams.manage"))
      .annotate(OpenApi.Summary, "Update a team")
      .annotate(
        OpenApi.Description,
        "Renames a team and/or replaces its whole membership with `memberIds`; answers the team.\n\nErrors: 404 `team_not_found`, or `member_not_found` when a member id is not an active member of the organization; 409 `team_exists` when another team has the new name, `team_external_key_taken` when another team has that `externalKey`, `team_managed_by_directory` when the team's directory (SCIM) manages it and the change renames it or changes its members."
      )
  )
  .add(
    HttpApiEndpoint.post("addMembers", "/v1/teams/:teamId/members", { params: TeamPath, payload: AddTeamMembersRequest, success: TeamResponse, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("team.member.add"), requires("teams.manage"))
      .annotate(OpenApi.Summary, "Add members to a team")
      .annotate(
        OpenApi.Description,
        "Adds members to a team and answers it; members already in it stay, so adding one twice changes nothing.\n\nErrors: 404 `team_not_found`, or `member_not_found` when a member id is not an active member of the organization; 409 `team_managed_by_directory` when the organization's directory (SCIM) manages the team."
      )
  )
  .add(
    HttpApiEndpoint.delete("removeMember", "/v1/teams/:teamId/members/:memberId", { params: TeamMemberPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("team.member.remove"), requires("teams.manage"))
      .annotate(OpenApi.Summary, "Remove a member from a team")
      .annotate(
        OpenApi.Description,
        "Takes a member out of a team; they stay in the organization. 204 also when they were not in it.\n\nErrors: 404 `team_not_found`, or `member_not_found` for an id that never was a member of the organization; 409 `team_managed_by_directory` when the organization's directory (SCIM) manages the team."
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/teams/:teamId", { params: TeamPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("team.delete"), requires("teams.manage"))
      .annotate(OpenApi.Summary, "Delete a team")
      .annotate(
        OpenApi.Description,
        "Deletes a team with its memberships; the members stay in the organization.\n\nErrors: 404 `team_not_found`; 409 `team_managed_by_directory` when the organization's directory (SCIM) manages the team."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Teams")
  .annotate(
    OpenApi.Description,
    "Teams of the caller's active organization. Any member may read them; owners and admins change them. Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
