/** `orgplane mcp …`: external MCP servers: finding them, the organization's connections to them, running their tools. */
import { McpAuthorizationApi, McpConnectionsApi, McpDiscoveryApi, McpToolsApi } from "@orgplane-next/schema"
import * as Commands from "../Commands.js"
import { connections } from "./mcpConnections.js"
import { call, tools } from "./mcpCall.js"
import { presets, resolve } from "./mcpResolve.js"

export const mcp = Commands.group(
  "mcp",
  "External MCP servers: find one and what it requires, register and grant connections, disable their tools, run a tool as a diagnostic.",
  [resolve, presets, connections, call, tools],
  [McpAuthorizationApi, McpConnectionsApi, McpDiscoveryApi, McpToolsApi]
)
