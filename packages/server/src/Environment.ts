/** Every environment variable the server reads, `[name, default, description]`, for `serve --help` and the README. */
import * as CodeHostConfig from "./integrations/codehost/CodeHostConfig.js"
import * as DnsConfig from "./integrations/dns/DnsConfig.js"
import * as Config from "./platform/Config.js"
import * as Durable from "./platform/Durable.js"
import * as Tracing from "./platform/Tracing.js"
import * as MemoryRelease from "./platform/MemoryRelease.js"
import * as Metrics from "./platform/Metrics.js"
import * as WorkerActivityConfig from "./workers/ActivityConfig.js"
import * as WorkerRuntimeConfig from "./workers/RuntimeConfig.js"
import * as McpPresetsConfig from "./mcp/PresetsConfig.js"
import * as LlmConfig from "./llm/LlmConfig.js"
import * as McpToolConfig from "./mcp/ToolConfig.js"
import * as CapabilityConfig from "./capabilities/CapabilityConfig.js"
import * as TemplateSchemas from "./templates/SchemaRegistry.js"
import * as SamlRefreshConfig from "./sso/SamlRefreshConfig.js"
import * as AuditStreamConfig from "./audit/StreamConfig.js"
import * as AgentsConfig from "./agents/AgentsConfig.js"

export const environment: ReadonlyArray<readonly [string, string, string]> = [
  ...Config.environment,
  ...Tracing.environment,
  ...CodeHostConfig.environment,
  ...Durable.environment,
  ...DnsConfig.environment,
  ...WorkerRuntimeConfig.environment,
  ...WorkerActivityConfig.environment,
  ...McpPresetsConfig.environment,
  ...McpToolConfig.environment,
  ...CapabilityConfig.environment,
  ...TemplateSchemas.environment,
  ...LlmConfig.environment,
  ...SamlRefreshConfig.environment,
  ...AuditStreamConfig.environment,
  ...Metrics.environment,
  ...MemoryRelease.environment,
  ...AgentsConfig.environment
]
