/** The connector groups: accounts, instances (with their access grants), targets, mappings. */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import {
  ConnectorInstanceAccessGrantPage,
  ConnectorInstanceAccessGrantResponse,
  ConnectorInstanceGrantPath
} from "./Access.js"
import { accessEndpoints } from "./AccessApi.js"
import { MaxBodyBytes, RawBody } from "./BodyLimit.js"
import {
  ApplyDiscoveryRequest,
  ApplyDiscoveryResponse,
  ConnectorAccountDetail,
  ConnectorAccountListQuery,
  ConnectorAccountPage,
  ConnectorAccountPath,
  ConnectorAccountResponse,
  ConnectorInstanceDetail,
  ConnectorInstanceListQuery,
  ConnectorInstancePage,
  ConnectorInstancePath,
  ConnectorInstanceResponse,
  ConnectorMappingDetail,
  ConnectorMappingListQuery,
  ConnectorMappingPage,
  ConnectorMappingPath,
  ConnectorMappingResponse,
  ConnectorSyncEventDetail,
  ConnectorSyncEventListQuery,
  ConnectorSyncEventPage,
  ConnectorSyncEventPath,
  ConnectorTargetDetail,
  ConnectorTargetListQuery,
  ConnectorTargetPage,
  ConnectorTargetPath,
  ConnectorTargetResponse,
  CreateConnectorAccountRequest,
  CreateConnectorInstanceRequest,
  CreateConnectorMappingRequest,
  CreateConnectorTargetRequest,
  DisconnectConnectorAccountRequest,
  DisconnectConnectorAccountResponse,
  DiscoveryQuery,
  DiscoveryResponse,
  DiscoveryTreeQuery,
  RemoveConnectorInstanceResponse,
  ResyncResponse,
  SyncNowResponse,
  TreeEntryPage,
  UpdateConnectorInstanceRequest,
  UpdateConnectorMappingRequest,
  UpdateConnectorTargetRequest,
  WebhookResponse
} from "./Connectors.js"
import {
  CodeHostApiErrorResponse,
  ConflictResponse,
  ForbiddenResponse,
  NotFoundResponse,
  ServiceUnavailableResponse,
  WebhookRejectedResponse,
  storedCredentialUnreadable,
  StoredCredentialUnreadableResponse
} from "./Errors.js"
import { requires } from "./Policy.js"
import { MemberAuthentication } from "./Security.js"
import { audits, notAudited } from "./AuditCatalog.js"

const shared =
  "Every operation here needs credentials, a session or an API key: 401 `unauthorized` without valid ones, 404 `organization_not_found` when the caller belongs to no organization; another organization's connector resources answer 404 like missing ones."

export class ConnectorAccountsApi extends HttpApiGroup.make("connectorAccounts")
  .add(
    HttpApiEndpoint.post("create", "/v1/connector-accounts", { payload: CreateConnectorAccountRequest, success: ConnectorAccountResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, ConflictResponse] }).pipe(audits("connector_account.create"), requires("connectors.manage"))
      .annotate(OpenApi.Summary, "Connect a code-host account")
      .annotate(
        OpenApi.Description,
        "Records a GitHub account the organization syncs from: an installation of the server's GitHub App (`kind: app_installation`, by installation id; the server must be configured with `ORGPLANE_CODEHOST_APP_ID` and its private key), or an access token (`kind: token`, stored encrypted with `ORGPLANE_ENCRYPTION_KEYS`, never returned). Nothing is read from GitHub when connecting.\n\nErrors: 409 `connector_account_exists` when the installation is already connected to this organization."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/connector-accounts", { query: ConnectorAccountListQuery, success: ConnectorAccountPage, error: [ForbiddenResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "List code-host accounts")
      .annotate(OpenApi.Description, "The organization's connected accounts, newest first. Changes nothing.\n\nErrors: none beyond the group's.")
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/connector-accounts/:connectorAccountId", { params: ConnectorAccountPath, success: ConnectorAccountDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "Get a code-host account")
      .annotate(OpenApi.Description, "One connected account. Changes nothing.\n\nErrors: 404 `connector_account_not_found`.")
  )
  .add(
    HttpApiEndpoint.post("disconnect", "/v1/connector-accounts/:connectorAccountId/disconnect", { params: ConnectorAccountPath, payload: DisconnectConnectorAccountRequest, success: DisconnectConnectorAccountResponse, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits("connector_account.disconnect"), requires("connectors.manage"))
      .annotate(OpenApi.Summary, "Disconnect a code-host account")
      .annotate(
        OpenApi.Description,
        "Removes every connector instance of the account exactly as `remove` does (in one transaction), then deletes the account and its stored credential, and answers the counts. The body may be `{}`.\n\nErrors: 404 `connector_account_not_found`."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Connector accounts")
  .annotate(
    OpenApi.Description,
    `Code-host (GitHub) accounts the organization syncs repositories from. Any member reads them; owners and admins connect and disconnect them. ${shared}`
  )
{}

const access = accessEndpoints({
  name: "connectorInstance",
  kind: "connector instance",
  base: "/v1/connector-instances/:connectorInstanceId",
  path: ConnectorInstancePath,
  grantPath: ConnectorInstanceGrantPath,
  grant: ConnectorInstanceAccessGrantResponse,
  page: ConnectorInstanceAccessGrantPage
})

const instanceNotFound = "404 `connector_instance_not_found`"

const lifecycle = <const Name extends "enable" | "disable">(name: Name, summary: string, description: string) =>
  HttpApiEndpoint.post(name, `/v1/connector-instances/:connectorInstanceId/${name}`, { params: ConnectorInstancePath, success: ConnectorInstanceResponse, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits(`connector_instance.${name}`), requires("connectors.read"))
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, `${description} Needs editor access on the instance. No body.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}.`)

export class ConnectorInstancesApi extends HttpApiGroup.make("connectorInstances")
  .add(
    HttpApiEndpoint.post("create", "/v1/connector-instances", { payload: CreateConnectorInstanceRequest, success: ConnectorInstanceResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("connector_instance.create"), requires("connectors.manage"))
      .annotate(OpenApi.Summary, "Create a connector instance")
      .annotate(
        OpenApi.Description,
        "Links one repository (`remoteId`, `owner/name`) of a connected account to the organization. Add a target (the branch) next, then mappings. The creator gets manager access.\n\nErrors: 404 `connector_account_not_found`; 409 `connector_instance_exists` (names are unique in the organization, compared case-insensitively), `connector_account_disconnected`."
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/connector-instances", { query: ConnectorInstanceListQuery, success: ConnectorInstancePage, error: [ForbiddenResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "List connector instances")
      .annotate(
        OpenApi.Description,
        "The instances the caller can view (owners and admins: all), newest first. Changes nothing.\n\nErrors: none beyond the group's."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/connector-instances/:connectorInstanceId", { params: ConnectorInstancePath, success: ConnectorInstanceDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "Get a connector instance")
      .annotate(OpenApi.Description, `One instance. Needs viewer access. Changes nothing.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}.`)
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/connector-instances/:connectorInstanceId", { params: ConnectorInstancePath, payload: UpdateConnectorInstanceRequest, success: ConnectorInstanceResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("connector_instance.update"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Update a connector instance")
      .annotate(
        OpenApi.Description,
        `Changes the repository (\`remoteId\`), the name and/or the settings (\`config\` replaces \`instanceConfigJson\` whole). None of the three is required on its own; at least one must be given. Needs editor access.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}; 409 \`connector_instance_exists\`.`
      )
  )
  .add(lifecycle("enable", "Enable a connector instance", "Sets the instance `active`."))
  .add(lifecycle("disable", "Disable a connector instance", "Sets the instance `disabled`: what it imported stays."))
  .add(
    HttpApiEndpoint.post("remove", "/v1/connector-instances/:connectorInstanceId/remove", { params: ConnectorInstancePath, success: RemoveConnectorInstanceResponse, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits("connector_instance.remove"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Remove a connector instance")
      .annotate(
        OpenApi.Description,
        `Deletes, in one transaction, the instance with its targets, mappings, sync history and grants; every config object it materialized (with versions, grants, plugin memberships and source bindings); the plugins its discovery apply created, unless they hold config objects from elsewhere (those plugins are kept and no longer tied to it); and the marketplaces its apply created, unless they list plugins that are kept. Plugins and marketplaces people created and pointed mappings at are never deleted. Answers the counts. Needs manager access. No body.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}.`
      )
  )
  .add(
    HttpApiEndpoint.get("listTargets", "/v1/connector-instances/:connectorInstanceId/targets", { params: ConnectorInstancePath, query: ConnectorTargetListQuery, success: ConnectorTargetPage, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "List an instance's targets")
      .annotate(OpenApi.Description, `The instance's targets, oldest first (discovery uses the first). Needs viewer access. Changes nothing.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}.`)
  )
  .add(
    HttpApiEndpoint.post("createTarget", "/v1/connector-instances/:connectorInstanceId/targets", { params: ConnectorInstancePath, payload: CreateConnectorTargetRequest, success: ConnectorTargetResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("connector_target.create"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Add a target")
      .annotate(
        OpenApi.Description,
        `Makes the instance follow one branch (\`externalTargetRef\`) of its repository. Needs editor access.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}; 409 \`connector_target_exists\` for a branch the instance already follows.`
      )
  )
  .add(
    HttpApiEndpoint.get("discover", "/v1/connector-instances/:connectorInstanceId/discovery", { params: ConnectorInstancePath, query: DiscoveryQuery, success: DiscoveryResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse, CodeHostApiErrorResponse, StoredCredentialUnreadableResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "Discover plugins in the repository")
      .annotate(
        OpenApi.Description,
        `Reads the head of the target's branch and its whole tree (completing a listing GitHub cut short folder by folder, as \`treeSummary\` reports), reads the manifests it finds, and answers the plugin candidates with how the repository is laid out. The result is kept per commit: asking again before the branch moves reads only the head. Needs viewer access. Changes nothing but that cache.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}, \`connector_target_not_found\`; 409 \`connector_target_required\` (the instance has no target yet), \`codehost_not_configured\` (an app installation account on a server without the app's settings), \`connector_account_disconnected\`; 502 \`codehost_api_error\` (GitHub refused or failed: missing branch, revoked token, rate limit). ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.get("discoveryTree", "/v1/connector-instances/:connectorInstanceId/discovery/tree", { params: ConnectorInstancePath, query: DiscoveryTreeQuery, success: TreeEntryPage, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse, CodeHostApiErrorResponse, StoredCredentialUnreadableResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "Page through the discovered tree")
      .annotate(
        OpenApi.Description,
        `The files and folders of the branch at its head, in path order (byte order), optionally under a \`prefix\`; the same tree discovery scans (and reads it the same way when discovery has not run at this commit). A cursor stays valid for its commit: once the branch moves, a page of the old listing answers 400 on \`cursor\`. Needs viewer access. Changes nothing but the discovery cache.\n\nErrors: 400 \`invalid_request\`; 403 \`insufficient_access\`; ${instanceNotFound}, \`connector_target_not_found\`; 409 as for discovery; 502 \`codehost_api_error\`. ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.post("applyDiscovery", "/v1/connector-instances/:connectorInstanceId/discovery/apply", { params: ConnectorInstancePath, payload: ApplyDiscoveryRequest, success: ApplyDiscoveryResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse, CodeHostApiErrorResponse, StoredCredentialUnreadableResponse] }).pipe(audits("connector_instance.discovery.apply"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Import discovered plugins")
      .annotate(
        OpenApi.Description,
        `Imports the selected candidates of the discovery at the branch head: in one transaction, a plugin per candidate (the one this instance created earlier for the same key is reused), a marketplace listing them for a marketplace repository (reused likewise), and one mapping per component folder or file (with \`autoAddToPlugin\`); then queues a sync (\`apply\`) that materializes the files. Applying the same selection again creates nothing new. Needs editor access.\n\nErrors: 400 \`invalid_request\` for a key that is not a supported candidate (with its index in \`details\`); 403 \`insufficient_access\`; ${instanceNotFound}, \`connector_target_not_found\`; 409 as for discovery, \`connector_instance_disabled\`, \`plugin_exists\` or \`marketplace_exists\` (a name taken by a plugin or marketplace the instance did not create); 502 \`codehost_api_error\`. ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.post("sync", "/v1/connector-instances/:connectorInstanceId/sync", { params: ConnectorInstancePath, success: SyncNowResponse.pipe(HttpApiSchema.status(202)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse, CodeHostApiErrorResponse, StoredCredentialUnreadableResponse] }).pipe(audits("connector_instance.sync"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Sync now")
      .annotate(
        OpenApi.Description,
        `Reads the head of every target's branch and queues a sync (\`sync_now\`) of each; a target whose head is already queued, running or synced answers that event instead (nothing runs twice). The sync runs in the background: follow it with \`GET /v1/connector-sync-events/{id}\`. Needs editor access. No body.\n\nErrors: 403 \`insufficient_access\`; ${instanceNotFound}; 409 \`connector_instance_disabled\`, \`connector_target_required\`, \`codehost_not_configured\`, \`connector_account_disconnected\`; 502 \`codehost_api_error\`. ${storedCredentialUnreadable}`
      )
  )
  .add(
    HttpApiEndpoint.get("listSyncEvents", "/v1/connector-instances/:connectorInstanceId/sync-events", { params: ConnectorInstancePath, query: ConnectorSyncEventListQuery, success: ConnectorSyncEventPage, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "List an instance's syncs")
      .annotate(
        OpenApi.Description,
        `The instance's sync history, newest first, optionally of one target or in one status: each with its state, attempts, last error, summary and times. Needs viewer access. Changes nothing.\n\nErrors: 400 \`invalid_request\`; 403 \`insufficient_access\`; ${instanceNotFound}.`
      )
  )
  .add(access.grant)
  .add(access.listAccess)
  .add(access.revoke)
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Connector instances")
  .annotate(
    OpenApi.Description,
    `Connector instances link one repository to the organization. Owners and admins create them and manage all of them; other members need a grant on the instance (viewer reads, editor changes, manager removes and shares). A member without the access an operation needs gets 403 \`insufficient_access\`. ${shared}`
  )
{}

const targetNotFound = "404 `connector_target_not_found`"

export class ConnectorTargetsApi extends HttpApiGroup.make("connectorTargets")
  .add(
    HttpApiEndpoint.get("get", "/v1/connector-targets/:connectorTargetId", { params: ConnectorTargetPath, success: ConnectorTargetDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "Get a target")
      .annotate(OpenApi.Description, `One target. Needs viewer access on its instance. Changes nothing.\n\nErrors: 403 \`insufficient_access\`; ${targetNotFound}.`)
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/connector-targets/:connectorTargetId", { params: ConnectorTargetPath, payload: UpdateConnectorTargetRequest, success: ConnectorTargetResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("connector_target.update"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Update a target")
      .annotate(
        OpenApi.Description,
        `Changes the repository, the branch and/or the settings (\`config\` replaces \`targetConfigJson\` whole); at least one. Needs editor access on the instance.\n\nErrors: 403 \`insufficient_access\`; ${targetNotFound}; 409 \`connector_target_exists\`.`
      )
  )
  .add(
    HttpApiEndpoint.get("listMappings", "/v1/connector-targets/:connectorTargetId/mappings", { params: ConnectorTargetPath, query: ConnectorMappingListQuery, success: ConnectorMappingPage, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "List a target's mappings")
      .annotate(
        OpenApi.Description,
        `The target's mappings, most recently updated first, filtered by kind, object type, plugin and text (\`q\`: a case-insensitive substring of the selector or remote id). Pages are keyset pages over an index: a deep page costs what the first does. Needs viewer access on the instance. Changes nothing.\n\nErrors: 400 \`invalid_request\` for a bad query value (a cursor of another list or of other filters included); 403 \`insufficient_access\`; ${targetNotFound}.`
      )
  )
  .add(
    HttpApiEndpoint.post("createMapping", "/v1/connector-targets/:connectorTargetId/mappings", { params: ConnectorTargetPath, payload: CreateConnectorMappingRequest, success: ConnectorMappingResponse.pipe(HttpApiSchema.status(201)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("connector_mapping.create"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Add a mapping")
      .annotate(
        OpenApi.Description,
        `Maps files of the target's branch (\`selector\`) to config objects of one type, optionally in a plugin. Needs editor access on the instance, and editor access on the plugin when one is named.\n\nErrors: 403 \`insufficient_access\`; ${targetNotFound}, \`plugin_not_found\`; 409 \`connector_mapping_exists\` (one mapping per target, selector and object type), \`plugin_deleted\`.`
      )
  )
  .add(
    HttpApiEndpoint.post("resync", "/v1/connector-targets/:connectorTargetId/resync", { params: ConnectorTargetPath, success: ResyncResponse.pipe(HttpApiSchema.status(202)), error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("connector_target.resync"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Resync a target")
      .annotate(
        OpenApi.Description,
        `Queues a full sync (\`resync\`) of the target at its branch head: every mapped file is read and compared again, whatever its blob, so objects edited or deleted by hand are restored. Always a new event. Needs editor access on the instance. No body.\n\nErrors: 403 \`insufficient_access\`; ${targetNotFound}; 409 \`connector_instance_disabled\`.`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Connector targets")
  .annotate(
    OpenApi.Description,
    `The branches connector instances follow, and the mappings from their files to config objects. Access is the instance's. ${shared}`
  )
{}

const mappingNotFound = "404 `connector_mapping_not_found`"

export class ConnectorMappingsApi extends HttpApiGroup.make("connectorMappings")
  .add(
    HttpApiEndpoint.get("get", "/v1/connector-mappings/:connectorMappingId", { params: ConnectorMappingPath, success: ConnectorMappingDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "Get a mapping")
      .annotate(OpenApi.Description, `One mapping. Needs viewer access on its instance. Changes nothing.\n\nErrors: 403 \`insufficient_access\`; ${mappingNotFound}.`)
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/connector-mappings/:connectorMappingId", { params: ConnectorMappingPath, payload: UpdateConnectorMappingRequest, success: ConnectorMappingResponse, error: [ForbiddenResponse, NotFoundResponse, ConflictResponse] }).pipe(audits("connector_mapping.update"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Update a mapping")
      .annotate(
        OpenApi.Description,
        `Changes the selector, object type, plugin, \`autoAddToPlugin\` and/or settings; at least one (the kind cannot change). Needs editor access on the instance, and on the plugin when one is named.\n\nErrors: 403 \`insufficient_access\`; ${mappingNotFound}, \`plugin_not_found\`; 409 \`connector_mapping_exists\`, \`plugin_deleted\`.`
      )
  )
  .add(
    HttpApiEndpoint.delete("delete", "/v1/connector-mappings/:connectorMappingId", { params: ConnectorMappingPath, success: HttpApiSchema.NoContent, error: [ForbiddenResponse, NotFoundResponse] }).pipe(audits("connector_mapping.delete"), requires("connectors.read"))
      .annotate(OpenApi.Summary, "Delete a mapping")
      .annotate(
        OpenApi.Description,
        `Deletes the mapping and the plugin memberships it created. The config objects it materialized stay (no longer synced). Needs editor access on the instance.\n\nErrors: 403 \`insufficient_access\`; ${mappingNotFound}.`
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Connector mappings")
  .annotate(OpenApi.Description, `Mappings one by one. Access is the instance's. ${shared}`)
{}

export class ConnectorSyncEventsApi extends HttpApiGroup.make("connectorSyncEvents")
  .add(
    HttpApiEndpoint.get("get", "/v1/connector-sync-events/:connectorSyncEventId", { params: ConnectorSyncEventPath, success: ConnectorSyncEventDetail, error: [ForbiddenResponse, NotFoundResponse] }).pipe(requires("connectors.read"))
      .annotate(OpenApi.Summary, "Get a sync")
      .annotate(
        OpenApi.Description,
        "One sync: its state, attempts, last error and summary. Needs viewer access on its instance. Changes nothing.\n\nErrors: 403 `insufficient_access`; 404 `connector_sync_event_not_found`."
      )
  )
  .middleware(MemberAuthentication)
  .annotate(OpenApi.Title, "Connector syncs")
  .annotate(OpenApi.Description, `Syncs of connector targets, one by one. Access is the instance's. ${shared}`)
{}

/** GitHub caps webhook payloads at 25 MB; orgplane takes no more. */
export const WEBHOOK_BODY_BYTES = 25 * 1024 * 1024

/**
 * The delivery's headers, as the document's parameters: the handler reads them itself (a missing signature is a 401,
 * a missing event or delivery id a 400 after the signature is checked), so no schema of the endpoint declares them.
 */
const deliveryHeaders = (operation: Record<string, unknown>): Record<string, unknown> => {
  const header = (name: string, description: string, value: string) => ({
    name,
    in: "header",
    required: true,
    description,
    schema: { type: "string" },
    examples: { example: { value } }
  })
  return {
    ...operation,
    parameters: [
      ...(Array.isArray(operation.parameters) ? operation.parameters : []),
      header(
        "X-Hub-Signature-256",
        "`sha256=` and the hex HMAC-SHA256 of the raw body with the webhook secret. Without it, or when it does not match, 401.",
        "sha256=8a4f1c2e9b7d3a6f5e0c1b2a3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60"
      ),
      header("X-GitHub-Event", "The event (`push`, `installation`, ...). Without it, 400.", "push"),
      header("X-GitHub-Delivery", "The delivery's id, unique per delivery. Without it, 400.", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
    ]
  }
}

export class WebhooksApi extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.post("codehost", "/v1/webhooks/connectors/codehost", { success: WebhookResponse, error: [WebhookRejectedResponse, ServiceUnavailableResponse] }).pipe(notAudited("a code host's delivery, signed by the code host and not a member's action; it starts syncs of the instances it concerns"))
      .annotate(MaxBodyBytes, WEBHOOK_BODY_BYTES)
      .annotate(RawBody, true)
      .annotate(OpenApi.Transform, deliveryHeaders)
      .annotate(OpenApi.Summary, "Receive a GitHub App webhook")
      .annotate(
        OpenApi.Description,
        "GitHub's deliveries for the app (`ORGPLANE_CODEHOST_WEBHOOK_SECRET`). The `X-Hub-Signature-256` header (HMAC-SHA256 of the raw body with the secret, compared in constant time) is checked before anything is parsed; the body is GitHub's JSON payload, the event is `X-GitHub-Event` and the delivery id `X-GitHub-Delivery`. No credentials. The body is taken as sent (no NUL or nesting checks: GitHub signed it as it is).\n\nRelevant deliveries: `push` to a branch a target follows, of an active instance whose account is the delivery's installation (queues a sync of that commit; a commit already queued for the target is not queued again); `installation` `deleted` (disconnects the installation's accounts and disables their instances); `installation_repositories` `removed` (disables the instances of the removed repositories); `repository` `renamed` (renames the repository in the installation's instances and targets). Those answer `accepted: true`; anything else `accepted: false` with a `reason` (nothing changed, the delivery not recorded). Webhooks concern app installations only: an account connected with a token has no installation, so its instances sync with `POST /v1/connector-instances/{id}/sync`. A delivery id already handled answers `accepted: true` again without doing the work twice. Bodies up to 25 MiB.\n\nErrors: 401 `{ok: false, error: \"missing signature\"}` or `{ok: false, error: \"invalid signature\"}`; 400 `invalid_request` for a signed body that is not a JSON object or lacks the delivery headers; 413 over 25 MiB; 503 `service_unavailable` when the server has no webhook secret configured (nothing can be verified) or its database is down."
      )
  )
  .annotate(OpenApi.Title, "Webhooks")
  .annotate(OpenApi.Description, "Inbound webhooks, authenticated by their signatures rather than by credentials.")
{}
