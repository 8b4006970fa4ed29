/**
 * The API this server serves so far: `apiOf` the groups ported to Effect 4 (issue 46). It becomes @orgplane/schema's
 * `Api` (every group, the OpenAPI description) once the server serves them all.
 */
import {
  ApiKeysApi,
  apiOf,
  AuditApi,
  AuditStreamsApi,
  BootstrapApi,
  CapabilitiesApi,
  LlmProvidersApi,
  McpAuthorizationApi,
  McpConnectionsApi,
  McpDiscoveryApi,
  McpToolsApi,
  MemoryApi,
  OrganizationsApi,
  RecoveryApi,
  SuiteClientsApi,
  SuiteConnectionsApi,
  SystemApi,
  TeamsApi,
  TelemetryApi,
  TemplatesApi,
  UsersApi,
  WorkerActivityApi,
  WorkerRuntimeApi,
  WorkersApi
} from "@orgplane-next/schema"

export const Api = apiOf(
  SystemApi,
  UsersApi,
  OrganizationsApi,
  TeamsApi,
  ApiKeysApi,
  BootstrapApi,
  WorkersApi,
  WorkerRuntimeApi,
  WorkerActivityApi,
  MemoryApi,
  TemplatesApi,
  TelemetryApi,
  McpConnectionsApi,
  LlmProvidersApi,
  McpDiscoveryApi,
  McpToolsApi,
  McpAuthorizationApi,
  SuiteClientsApi,
  SuiteConnectionsApi,
  CapabilitiesApi,
  AuditApi,
  AuditStreamsApi,
  RecoveryApi
)
