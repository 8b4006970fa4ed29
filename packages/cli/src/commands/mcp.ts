/** `orgplane mcp …`: external MCP servers: the organization's connections to them. */
import * as Commands from "../Commands.js"
import { connections } from "./mcpConnections.js"

export const mcp = Commands.group("mcp", "External MCP servers: register and grant connections, disable their tools.", [
  connections
])
