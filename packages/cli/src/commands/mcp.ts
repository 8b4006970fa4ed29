/** `orgplane mcp …`: external MCP servers. */
import * as Commands from "../Commands.js"
import { presets, resolve } from "./mcpResolve.js"

export const mcp = Commands.group("mcp", "Find external MCP servers and what connecting to them requires.", [resolve, presets])
