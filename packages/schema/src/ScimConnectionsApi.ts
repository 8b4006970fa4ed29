/**
 * Directory provisioning, managed: the organization's SCIM connections, their tokens, event log and reconcile
 * (enterprise plan; owners and admins). What directories call is ScimProtocolApi.ts.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as OpenApi from "@effect/platform/OpenApi"
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

export class ScimConnectionsApi extends HttpApiGroup.make("scimConnections")
  .add(
    HttpApiEndpoint.post("create", "/v1/scim/connections").pipe(audits("scim.connection.create"))
      .setPayload(CreateScimConnectionRequest)
      .addSuccess(ScimConnectionResponse, { status: 201 })
      .addError(ConflictResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Create a SCIM connection")
      .annotate(
        OpenApi.Description,
        "Adds a directory (Okta, Entra ID, OneLogin, JumpCloud...) that provisions the organization's members and teams through SCIM 2.0 at the answered `baseUrl`. It does nothing until a token is created for it (`POST /v1/scim/connections/{connectionId}/tokens`). An organization may have several, one per directory. Defaults: `groupMappingMode` `metadata_only`, `defaultRole` `member`, no role rules.\n\nErrors: 409 `scim_connection_exists` when another connection of the organization has that name (compared case-insensitively)."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/scim/connections")
      .setUrlParams(ScimConnectionListQuery)
      .addSuccess(ScimConnectionPage)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "List SCIM connections")
      .annotate(
        OpenApi.Description,
        "The organization's SCIM connections, oldest first, each with its counts and health. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/scim/connections/:connectionId")
      .setPath(ScimConnectionIdPath)
      .addSuccess(ScimConnectionResponse)
      .addError(NotFoundResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Get a SCIM connection")
      .annotate(
        OpenApi.Description,
        `One connection with its base URL, counts and health (last successful write, writes refused or failed since). Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/scim/connections/:connectionId").pipe(audits("scim.connection.update"))
      .setPath(ScimConnectionIdPath)
      .setPayload(UpdateScimConnectionRequest)
      .addSuccess(UpdatedScimConnection)
      .addError(NotFoundResponse)
      .addError(ConflictResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Update a SCIM connection")
      .annotate(
        OpenApi.Description,
        `Renames a connection or changes what its directory does. A new \`groupMappingMode\`, \`defaultRole\` or \`roleRules\` applies at once: the organization is reconciled with it in the same transaction (teams created, linked or released; roles set by the rules), and the answer's \`reconciled\` says what changed. While the connection has role rules, every member it provisioned has the role they give (\`defaultRole\` when no rule names one of their groups; owners are never demoted); without rules, \`defaultRole\` is the role of members created from then on, and roles stay as admins set them.\n\nErrors: ${notFound}; 409 \`scim_connection_exists\` when another connection has the new name.`
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/v1/scim/connections/:connectionId").pipe(audits("scim.connection.delete"))
      .setPath(ScimConnectionIdPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Delete a SCIM connection")
      .annotate(
        OpenApi.Description,
        `Stops the directory: its tokens stop working at once, and its Users, Groups and event log are deleted. The organization keeps its members as they are (a member the directory suspended stays suspended until an admin removes them or another connection restores them) and its teams, which become ordinary teams admins edit.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("createToken", "/v1/scim/connections/:connectionId/tokens").pipe(audits("scim.token.create"))
      .setPath(ScimConnectionIdPath)
      .setPayload(CreateScimTokenRequest)
      .addSuccess(CreatedScimToken, { status: 201 })
      .addError(NotFoundResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Create a SCIM token")
      .annotate(
        OpenApi.Description,
        `A bearer token for the directory, answered once (orgplane keeps only its hash), with the base URL to give beside it. A connection may have several tokens at once: to rotate, create a new one, give it to the directory, see it used (\`lastUsedAt\`), then revoke the old one.\n\nErrors: 400 on \`expiresAt\` when it is not in the future; ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.get("listTokens", "/v1/scim/connections/:connectionId/tokens")
      .setPath(ScimConnectionIdPath)
      .setUrlParams(ScimTokenListQuery)
      .addSuccess(ScimTokenPage)
      .addError(NotFoundResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "List SCIM tokens")
      .annotate(
        OpenApi.Description,
        `A connection's tokens, newest first, revoked and expired ones included, each with when it was last used. Never the token itself. Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.del("revokeToken", "/v1/scim/connections/:connectionId/tokens/:tokenId").pipe(audits("scim.token.revoke"))
      .setPath(ScimTokenPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(NotFoundResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Revoke a SCIM token")
      .annotate(
        OpenApi.Description,
        `The token stops working at once; it stays listed as \`revoked\`. Revoking it again changes nothing (204).\n\nErrors: ${notFound}, \`scim_token_not_found\` for a token of no connection of the organization or of another connection.`
      )
  )
  .add(
    HttpApiEndpoint.get("listEvents", "/v1/scim/connections/:connectionId/events")
      .setPath(ScimConnectionIdPath)
      .setUrlParams(ScimEventListQuery)
      .addSuccess(ScimEventPage)
      .addError(NotFoundResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "List SCIM provisioning events")
      .annotate(
        OpenApi.Description,
        `The connection's provisioning log, newest first: one event per write the directory sent (method, path without its query, resource, status, outcome and the error it was given) and per reconcile. Reads (GET, \`/.search\`) are not recorded. Changes nothing.\n\nErrors: ${notFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("reconcile", "/v1/scim/connections/:connectionId/reconcile").pipe(audits("scim.connection.reconcile"))
      .setPath(ScimConnectionIdPath)
      .addSuccess(ScimReconcileReport)
      .addError(NotFoundResponse)
      .pipe(requires("scim.manage"))
      .annotate(OpenApi.Summary, "Reconcile a SCIM connection")
      .annotate(
        OpenApi.Description,
        `Makes the organization agree with what the directory said, where something drifted: memberships suspended, restored or removed by hand, teams missing, holding other members or newly linkable by external key, roles the rules give. One transaction; answers what it compared and each repair, and records an event. No body. Running it again right after repairs nothing.\n\nErrors: ${notFound}.`
      )
  )
  .addError(ForbiddenResponse)
  .addError(PlanRequiredResponse)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "SCIM")
  .annotate(
    OpenApi.Description,
    "The directories that provision the caller's active organization through SCIM 2.0 (the protocol itself is under `/scim/v2/{connectionId}`). Owners and admins only, on the enterprise plan: every operation answers 402 `enterprise_plan_required` with `feature` `scim` otherwise (checked before the role). Every operation needs credentials: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization."
  )
{}
