/** `orgplane mcp …`: external MCP servers. */
import * as Commands from "../Commands.js"
import { call, tools } from "./mcpCall.js"
import { presets, resolve } from "./mcpResolve.js"

export const mcp = Commands.group(
  "mcp",
  "Find external MCP servers and what connecting to them requires; run the tools of the organization's connections, as a diagnostic.",
  [resolve, presets, call, tools]
)
