/** The whole orgplane control-plane API: every group, the shared errors and the OpenAPI description. */
import { HttpApi, OpenApi } from "@effect/platform"
import { AdminApi } from "./AdminApi.js"
import { ApiKeysApi } from "./ApiKeysApi.js"
import { BootstrapApi } from "./BootstrapApi.js"
import { ConfigObjectsApi } from "./ConfigObjectsApi.js"
import {
  ConnectorAccountsApi,
  ConnectorInstancesApi,
  ConnectorMappingsApi,
  ConnectorSyncEventsApi,
  ConnectorTargetsApi,
  WebhooksApi
} from "./ConnectorsApi.js"
import { InvalidRequestResponse, PayloadTooLargeResponse } from "./Errors.js"
import { InvitationsApi } from "./InvitationsApi.js"
import { MarketplacesApi } from "./MarketplacesApi.js"
import { MembersApi, RolesApi } from "./MembersApi.js"
import { OrganizationsApi } from "./OrganizationsApi.js"
import { PluginsApi } from "./PluginsApi.js"
import { ActionsExtension, describeActions } from "./Policy.js"
import { SsoApi } from "./SsoApi.js"
import { SystemApi } from "./SystemApi.js"
import { TeamsApi } from "./TeamsApi.js"
import { DesktopPoliciesApi } from "./DesktopPoliciesApi.js"
import { UsersApi } from "./UsersApi.js"
import { WorkerRuntimeApi, WorkersApi } from "./WorkersApi.js"
import { CapabilitiesApi, SuiteClientsApi, SuiteConnectionsApi } from "./CapabilitiesApi.js"
import { MemoryApi } from "./MemoryApi.js"
import { TelemetryApi } from "./TelemetryApi.js"
import { McpConnectionsApi } from "./McpConnectionsApi.js"
import { McpDiscoveryApi } from "./McpDiscoveryApi.js"
import { McpToolsApi } from "./McpToolsApi.js"
import { McpAuthorizationApi } from "./McpAuthorizationApi.js"

const description = `The control-plane API of an organization workspace.

Authentication: send a session token as \`Authorization: Bearer <token>\` (from \`POST /v1/auth/sign-up\` or
\`POST /v1/auth/sign-in\`), or an organization API key as \`x-api-key: <key>\` (from \`POST /v1/api-keys\`).
Each operation lists the schemes it accepts; public operations list none.

Errors always have a JSON body. 400 \`invalid_request\` lists every bad field in \`details\` with its path;
401 is \`{"error":"unauthorized"}\`; 403 is \`{reason, message}\`; 404 is \`{error, message}\`, and a resource of
another organization answers 404 exactly like a missing one. Operations that use the database answer 503
\`service_unavailable\` with \`Retry-After\` while it is unavailable. Each operation's description lists its own errors;
its group's description, those all of the group's operations share.

Lists are cursor-paginated: \`{items, nextCursor}\`; pass \`nextCursor\` back as \`cursor\` until it is null. A cursor
the list did not return (or returned for other filters) is 400 on \`cursor\`.`

/** Operations behind `OptionalAuthentication`: credentials are accepted, not required. */
const optionalSecurity = new Set(["invitations.accept"])

/** Methods whose requests the server reads no body of (`HttpMethod.hasBody`): they cannot be too large. */
const bodiless = new Set(["get", "head", "options"])

/**
 * Drops the platform's own decode-error schema (the server answers every decode failure with `invalid_request`),
 * documents 400 only for operations that take input and 413 only for methods with a body (the API declares both
 * once, for every operation), marks optional credentials as such (an empty security requirement), and states the
 * policy actions (with their roles, from the policy table) of every operation that checks some.
 */
const transform = (spec: Record<string, any>): Record<string, any> => {
  for (const path of Object.values<any>(spec.paths ?? {})) {
    for (const [method, operation] of Object.entries<any>(path)) {
      if (optionalSecurity.has(operation.operationId)) operation.security = [...(operation.security ?? []), {}]
      const actions = operation[ActionsExtension]
      if (Array.isArray(actions)) {
        operation.description = [operation.description, describeActions(actions)].filter(Boolean).join("\n\n")
      }
      const responses = operation.responses ?? {}
      const takesInput = (operation.parameters ?? []).length > 0 || operation.requestBody !== undefined
      if (!takesInput) delete responses["400"]
      if (bodiless.has(method)) delete responses["413"]
      const content = responses["400"]?.content?.["application/json"]
      const anyOf = content?.schema?.anyOf
      if (Array.isArray(anyOf)) {
        const kept = anyOf.filter((schema: any) => schema.$ref !== "#/components/schemas/HttpApiDecodeError")
        content.schema = kept.length === 1 ? kept[0] : { anyOf: kept }
      }
    }
  }
  delete spec.components?.schemas?.HttpApiDecodeError
  delete spec.components?.schemas?.Issue
  delete spec.components?.schemas?.PropertyKey
  return spec
}

export class Api extends HttpApi.make("orgplane")
  .add(SystemApi)
  .add(UsersApi)
  .add(OrganizationsApi)
  .add(MembersApi)
  .add(RolesApi)
  .add(TeamsApi)
  .add(InvitationsApi)
  .add(ApiKeysApi)
  .add(ConfigObjectsApi)
  .add(PluginsApi)
  .add(MarketplacesApi)
  .add(ConnectorAccountsApi)
  .add(ConnectorInstancesApi)
  .add(ConnectorTargetsApi)
  .add(ConnectorMappingsApi)
  .add(ConnectorSyncEventsApi)
  .add(WebhooksApi)
  .add(BootstrapApi)
  .add(AdminApi)
  .add(DesktopPoliciesApi)
  .add(SsoApi)
  .add(WorkersApi)
  .add(WorkerRuntimeApi)
  .add(MemoryApi)
  .add(TelemetryApi)
  .add(McpConnectionsApi)
  .add(McpDiscoveryApi)
  .add(McpToolsApi)
  .add(McpAuthorizationApi)
  .add(SuiteClientsApi)
  .add(SuiteConnectionsApi)
  .add(CapabilitiesApi)
  .addError(InvalidRequestResponse)
  .addError(PayloadTooLargeResponse)
  .annotateContext(
    OpenApi.annotations({
      title: "orgplane control-plane API",
      version: "dev",
      description,
      license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
      transform
    })
  )
{}

/** The OpenAPI 3.1 document of the API, with the given `info.version`. */
export const openApiDocument = (version = "dev"): OpenApi.OpenAPISpec => {
  const spec = OpenApi.fromApi(Api)
  return { ...spec, info: { ...spec.info, version } }
}
