/** `orgplane mcp …`: external MCP servers: finding them, and the organization's connections to them. */
import * as Commands from "../Commands.js"
import { connections } from "./mcpConnections.js"
import { presets, resolve } from "./mcpResolve.js"

export const mcp = Commands.group(
  "mcp",
  "External MCP servers: find one and what it requires, register and grant connections, disable their tools.",
  [resolve, presets, connections]
)
