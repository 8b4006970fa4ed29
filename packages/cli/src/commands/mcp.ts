/**
 * `orgplane mcp …`: external MCP servers (finding them, the organization's connections to them, running their tools),
 * and `mcp serve`, orgplane's own MCP server for an agent acting with your credential.
 */
import { McpAuthorizationApi, McpConnectionsApi, McpDiscoveryApi, McpToolsApi } from "@orgplane/schema"
import * as Commands from "../Commands.js"
import { connections } from "./mcpConnections.js"
import { call, tools } from "./mcpCall.js"
import { presets, resolve } from "./mcpResolve.js"
import { serve } from "./mcpServe.js"

export const mcp = Commands.group(
  "mcp",
  "External MCP servers: find one and what it requires, register and grant connections, disable their tools, run a tool as a diagnostic; serve your organization to an MCP client.",
  [resolve, presets, connections, call, tools, serve],
  [McpAuthorizationApi, McpConnectionsApi, McpDiscoveryApi, McpToolsApi]
)
