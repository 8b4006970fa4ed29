/**
 * Directory provisioning, managed: the organization's SCIM connections, their tokens, event log and reconcile
 * (enterprise plan; owners and admins). What directories call is ScimProtocolApi.ts.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { ConflictResponse, ForbiddenResponse, NotFoundResponse, PlanRequiredResponse } from "./Errors.js"
import { requires } from "./Policy.js"
import {
  CreatedScimToken,
  CreateScimConnectionRequest,
  CreateScimTokenRequest,
  ScimConnectionIdPath,
  ScimConnectionListQuery,
  ScimConnectionPage,
  ScimConnectionResponse,
  ScimEventListQuery,
  ScimEventPage,
  ScimReconcileReport,
  ScimTokenListQuery,
  ScimTokenPage,
  ScimTokenPath,
  UpdatedScimConnection,
  UpdateScimConnectionRequest
} from "./ScimConnections.js"
import { MemberAuthentication } from "./Security.js"
import { audits } from "./AuditCatalog.js"

const notFound = "404 `scim_connection_not_found` (also for another organization's connection)"

/** The errors every operation of the group may answer (Effect 4 declares errors on endpoints, not groups). */
const groupErrors = [ForbiddenResponse, PlanRequiredResponse] as const

export class ScimConnectionsApi extends HttpApiGroup.make("scimConnections")
  .add(
    HttpApiEndpoint.post("create", "/v1/scim/connections", { payload: CreateScimConnectionRequest, success: ScimConnectionResponse.pipe(HttpApiSchema.status(201)), error: [ConflictResponse, ...groupErrors] }).pipe(audits("scim.connection.create"), requires("scim.manage"))
      .annotate(OpenApi.Summary, "Create a SCIM connection")
      .annotate(
        OpenApi.Description,
        "Adds a directory (Okta, Entra ID, OneLogin, JumpCloud...) that provisions the organization's members and teams through SCIM 2.0 at the answered `baseUrl`. It does nothing until a token is created for it (`POST /v1/scim/connections/{connectionId}/tokens`). An organization may have several, one per directory. Defaults: `groupMappingMode` `metadata_only`, `defaultRole` `member`, no role rules.\n\nErrors: 409 `scim_connection_exists` when another connection of the organization has that name (compared case-insensitively)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/scim/connections", { query: ScimConnectionListQuery, success: ScimConnectionPage, error: groupErrors }).pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "List SCIM connections")
      .annotate(
        OpenApi.Description,
        "The organization's SCIM connections, oldest first, each with its counts and health. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/scim/connections/:connectionId", { params: ScimConnectionIdPath, success: ScimConnectionResponse, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Get a SCIM connection")
      .annotate(
        OpenApi.Description,
        `One connection with its base URL, counts and health (last successful write, writes refused or failed since). Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/scim/connections/:connectionId", { params: ScimConnectionIdPath, payload: UpdateScimConnectionRequest, success: UpdatedScimConnection, error: [NotFoundResponse, ConflictResponse, ...groupErrors] }).pipe(audits("scim.connection.update"), requires("scim.manage"))
      .annotate(OpenApi.Summary, "Update a SCIM connection")
      .annotate(
        OpenApi.Description,
        `Renames a connection or changes what its directory does. A new \`groupMappingMode\`, \`defaultRole\` or \`roleRules\` applies at once: the organization is reconciled with it in the same transaction (teams created, linked or released; roles set by the rules), and the answer's \`reconciled\` says what changed. While the connection has role rules, every member it provisioned has the role they give (\`defaultRole\` when no rule names one of their groups; owners are never demoted); without rules, \`defaultRole\` is the role of members created from then on, and roles stay as admins set them.\n\nErrors: ${notFound}; 409 \`scim_connection_exists\` when another connection has the new name.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/scim/connections/:connectionId", { params: ScimConnectionIdPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("scim.connection.delete"), requires("scim.manage"))
      .annotate(OpenApi.Summary, "Delete a SCIM connection")
      .annotate(
        OpenApi.Description,
        `Stops the directory: its tokens stop working at once, and its Users, Groups and event log are deleted. The organization keeps its members as they are (a member the directory suspended stays suspended until an admin removes them or another connection restores them) and its teams, which become ordinary teams admins edit.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("createToken", "/v1/scim/connections/:connectionId/tokens", { params: ScimConnectionIdPath, payload: CreateScimTokenRequest, success: CreatedScimToken.pipe(HttpApiSchema.status(201)), error: [NotFoundResponse, ...groupErrors] }).pipe(audits("scim.token.create"), requires("scim.manage"))
      .annotate(OpenApi.Summary, "Create a SCIM token")
      .annotate(
        OpenApi.Description,
        `A bearer token for the directory, answered once (orgplane keeps only its hash), with the base URL to give beside it. A connection may have several tokens at once: to rotate, create a new one, give it to the directory, see it used (\`lastUsedAt\`), then revoke the old one.\n\nErrors: 400 on \`expiresAt\` when it is not in the future; ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.get("listTokens", "/v1/scim/connections/:connectionId/tokens", { params: ScimConnectionIdPath, query: ScimTokenListQuery, success: ScimTokenPage, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "List SCIM tokens")
      .annotate(
        OpenApi.Description,
        `A connection's tokens, newest first, revoked and expired ones included, each with when it was last used. Never the token itself. Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.delete("revokeToken", "/v1/scim/connections/:connectionId/tokens/:tokenId", { params: ScimTokenPath, success: HttpApiSchema.NoContent, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("scim.token.revoke"), requires("scim.manage"))
      .annotate(OpenApi.Summary, "Revoke a SCIM token")
      .annotate(
        OpenApi.Description,
        `The token stops working at once; it stays listed as \`revoked\`. Revoking it again changes nothing (204).\n\nErrors: ${notFound}, \`scim_token_not_found\` for a token of no connection of the organization or of another connection.`
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/v1/scim/connections/:connectionId/events", { params: ScimConnectionIdPath, query: ScimEventListQuery, success: ScimEventPage, error: [NotFoundResponse, ...groupErrors] }).pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "List SCIM provisioning events")
      .annotate(
        OpenApi.Description,
        `The connection's provisioning log, newest first: one event per write the directory sent (method, path without its query, resource, status, outcome and the error it was given) and per reconcile. Reads (GET, \`/.search\`) are not recorded. Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("reconcile", "/v1/scim/connections/:connectionId/reconcile", { params: ScimConnectionIdPath, success: ScimReconcileReport, error: [NotFoundResponse, ...groupErrors] }).pipe(audits("scim.connection.reconcile"), requires("scim.manage"))
      .annotate(OpenApi.Summary, "Reconcile a SCIM connection")
      .annotate(
        OpenApi.Description,
        `Makes the organization agree with what the directory said, where something drifted: memberships suspended, restored or removed by hand, teams missing, holding other members or newly linkable by external key, roles the rules give. One transaction; answers what it compared and each repair, and records an event. No body. Running it again right after repairs nothing.\n\nErrors: ${notFound}.`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "SCIM")
  .annotate(
    OpenApi.Description,
    "The directories that provision the caller's active organization through SCIM 2.0 (the protocol itself is under `/scim/v2/{connectionId}`). Owners and admins only, on the enterprise plan: every operation answers 402 `enterprise_plan_required` with `feature` `scim` otherwise (checked before the role). Every operation needs credentials: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
