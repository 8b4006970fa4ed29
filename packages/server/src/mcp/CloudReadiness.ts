/**
 * The MCP servers a plugin's `mcp` config objects declare, matched to the organization's external MCP connections
 * by URL, for a resolved marketplace's `cloudReadiness.connections` (pure: the payloads and connections are read by
 * the caller, in a fixed number of statements whatever the number of plugins).
 */
import type { CloudConnection, ConfigObjectId, McpAuthType, McpConnection } from "@orgplane/schema"
import * as Presets from "./Presets.js"

/** A remote server an `mcp` object declares (servers run by `command` are local: no connection serves them). */
export interface DeclaredServer {
  readonly serverName: string
  readonly url: string
  /** The auth type the definition asks for, when it names one (`authType`). */
  readonly authType: McpAuthType | undefined
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const authTypes: ReadonlySet<string> = new Set(["none", "apikey", "oauth"])

const declared = (serverName: string, value: unknown): ReadonlyArray<DeclaredServer> => {
  if (!isObject(value) || typeof value.url !== "string" || !URL.canParse(value.url.trim())) return []
  const authType = typeof value.authType === "string" && authTypes.has(value.authType) ? value.authType as McpAuthType : undefined
  return [{ serverName, url: value.url.trim(), authType }]
}

/**
 * The remote servers of an MCP definition, as catalog/Parsing.ts accepts it: servers by name under `mcpServers`
 * (or `mcp`), or the definition itself when it has a url (named `title`).
 */
export const serversOf = (payload: unknown, title: string): ReadonlyArray<DeclaredServer> => {
  if (!isObject(payload)) return []
  const containers = (["mcpServers", "mcp"] as const).filter((key) => isObject(payload[key]))
  if (containers.length === 0) return declared(title, payload)
  return containers.flatMap((key) => Object.entries(payload[key] as Record<string, unknown>).flatMap(([name, value]) => declared(name, value)))
}

/**
 * The form URLs are compared in: scheme and host lower-cased, default port dropped (the URL parser does both),
 * without a trailing slash or fragment; the query kept.
 */
export const normalizeUrl = (url: string): string => {
  if (!URL.canParse(url)) return url
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}${parsed.search}`
}

/** Each declared server with the connection serving its URL (the oldest, if several do), as the reader sees it. */
export const match = (
  configObjectId: ConfigObjectId,
  servers: ReadonlyArray<DeclaredServer>,
  connections: ReadonlyArray<McpConnection>
): Array<typeof CloudConnection.Type> =>
  servers.map((server) => {
    const url = normalizeUrl(server.url)
    const connection = connections.find((candidate) => normalizeUrl(candidate.url) === url)
    if (connection === undefined) {
      return {
        configObjectId,
        id: null,
        name: server.serverName,
        serverName: server.serverName,
        url: server.url,
        authTypeMismatch: false,
        connectedForMe: false,
        oauthClientConfigured: false,
        oauthClientRequired: Presets.forUrl(Presets.BUILT_IN, server.url)?.requiresOAuthClient === true
      }
    }
    return {
      configObjectId,
      id: connection.id,
      name: connection.name,
      serverName: server.serverName,
      url: server.url,
      authTypeMismatch: server.authType !== undefined && server.authType !== connection.authType,
      connectedForMe: connection.connectedForMe,
      oauthClientConfigured: connection.oauth?.clientConfigured === true,
      oauthClientRequired: connection.oauthClientRequired
    }
  })
