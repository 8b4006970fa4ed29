/**
 * The narrowing an MCP session is opened with, fixed to it: `Orgplane-Read-Only` and `Orgplane-Mcp-Toolsets` as the
 * `initialize` request sent them hold for every later request of the session. A later request that leaves either
 * header off gets the session's; one that names another value is refused (400), since a session opened read-only
 * that a later request could widen would not be read-only. The credential stays each request's own (a client may
 * present a refreshed token), and it is checked on every request.
 *
 * Kept in this process's memory, as the MCP server keeps its sessions: a session's entry goes when the session is
 * ended (DELETE), or when `capacity` newer sessions were opened after it.
 */
import { mcpToolsetsHeader as toolsetsHeader, readOnlyHeader, readOnlyOf } from "@orgplane/schema"

/** The header carrying a session's id (the MCP server's, Streamable HTTP). */
export const sessionHeader = "mcp-session-id"

type Headers = Readonly<Record<string, string | undefined>>

/** A session's narrowing: the two headers as `initialize` sent them (undefined when it did not). */
export interface Narrowing {
  readonly readOnly: string | undefined
  readonly toolsets: string | undefined
}

/** The toolsets a request names (an empty list without the header). */
export const requestedToolsets = (headers: Headers): ReadonlyArray<string> =>
  (headers[toolsetsHeader] ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "")

/** What a value of each header means, to compare a request's with its session's (a value the API refuses as itself). */
const readOnlyMeaning = (value: string | undefined) => String(readOnlyOf(value) ?? value)
const toolsetsMeaning = (value: string | undefined) => [...new Set(requestedToolsets({ [toolsetsHeader]: value }))].sort().join(",")

/** The outcome for one request: the narrowing it runs with (its session's, else its own), or why it is refused. */
export type Applied =
  | { readonly _tag: "Narrowed"; readonly narrowing: Narrowing }
  | { readonly _tag: "Refused"; readonly header: string; readonly message: string }

export const make = (capacity = 10_000) => {
  const sessions = new Map<string, Narrowing>()
  return {
    /** The narrowing of the session `headers` name, else the request's own (a request of no known session). */
    apply: (headers: Headers): Applied => {
      const id = headers[sessionHeader]
      const fixed = id === undefined ? undefined : sessions.get(id)
      if (fixed === undefined) return { _tag: "Narrowed", narrowing: { readOnly: headers[readOnlyHeader], toolsets: headers[toolsetsHeader] } }
      const readOnly = headers[readOnlyHeader]
      if (readOnly !== undefined && readOnlyMeaning(readOnly) !== readOnlyMeaning(fixed.readOnly)) {
        return {
          _tag: "Refused",
          header: readOnlyHeader,
          message: `Orgplane-Read-Only is fixed for an MCP session when it is opened, and this one was opened with ${readOnlyMeaning(fixed.readOnly)}: leave the header off, or open another session (initialize) with ${readOnly}.`
        }
      }
      const toolsets = headers[toolsetsHeader]
      if (toolsets !== undefined && toolsetsMeaning(toolsets) !== toolsetsMeaning(fixed.toolsets)) {
        return {
          _tag: "Refused",
          header: toolsetsHeader,
          message: `Orgplane-Mcp-Toolsets is fixed for an MCP session when it is opened, and this one was opened with "${toolsetsMeaning(fixed.toolsets)}": leave the header off, or open another session (initialize) with the toolsets you need.`
        }
      }
      return { _tag: "Narrowed", narrowing: fixed }
    },
    /** A session was opened by a request with these headers. */
    opened: (id: string, headers: Headers): void => {
      if (sessions.size >= capacity) {
        const oldest = sessions.keys().next()
        if (oldest.done !== true) sessions.delete(oldest.value)
      }
      sessions.set(id, { readOnly: headers[readOnlyHeader], toolsets: headers[toolsetsHeader] })
    },
    /** A session was ended. */
    ended: (id: string): void => {
      sessions.delete(id)
    },
    /** How many sessions are remembered (for tests). */
    size: () => sessions.size
  }
}
