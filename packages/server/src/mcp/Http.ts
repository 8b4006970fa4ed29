/**
 * The MCP area's HTTP layer: the Connections, Discovery, Tools and Authorization groups, each over its own service.
 */
import * as Layer from "effect/Layer"
import * as AuthorizationHttp from "./AuthorizationHttp.js"
import * as ConnectionsHttp from "./ConnectionsHttp.js"
import * as DiscoveryHttp from "./DiscoveryHttp.js"
import * as ToolsHttp from "./ToolsHttp.js"

export const layer = Layer.mergeAll(ConnectionsHttp.layer, DiscoveryHttp.layer, ToolsHttp.layer, AuthorizationHttp.layer)
