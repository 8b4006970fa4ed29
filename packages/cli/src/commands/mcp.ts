/** `orgplane mcp …`: external MCP servers. */
import * as Commands from "../Commands.js"
import { call, tools } from "./mcpCall.js"

export const mcp = Commands.group("mcp", "Run the tools of the organization's MCP connections, as a diagnostic.", [call, tools])
