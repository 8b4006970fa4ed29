/**
 * What a caller may say about a request beside its credential: the channel it came through (`Orgplane-Channel`,
 * recorded in the audit event's `via.channel`) and a narrowing of its credential to reads (`Orgplane-Read-Only`).
 * The server refuses a value other than these with 400, before routing: a header a client sent is never ignored.
 */
import * as Schema from "effect/Schema"

/** The header naming the channel a request came through (lower case, as Node reads it). */
export const channelHeader = "orgplane-channel"

/** The header that narrows the request's credential to reads. */
export const readOnlyHeader = "orgplane-read-only"

/**
 * The header naming the toolsets the server's `/mcp` serves besides its catalog tools (`teams,members`). With
 * `Orgplane-Read-Only`, fixed for an MCP session by its `initialize` request.
 */
export const mcpToolsetsHeader = "orgplane-mcp-toolsets"

export const AuditChannel = Schema.Literals(["api", "mcp"]).annotate({
  identifier: "AuditChannel",
  description:
    "The channel the request came through, as the client declared it with `Orgplane-Channel`: `mcp` for an MCP server acting for the caller (the server's own `/mcp` always says so), `api` otherwise (the header absent)."
})
export type AuditChannel = typeof AuditChannel.Type

/** The channel a request declares: `api` without the header; undefined for a value that names none. */
export const channelOf = (value: string | undefined): AuditChannel | undefined =>
  value === undefined ? "api" : value === "api" || value === "mcp" ? value : undefined

/** Whether a request narrows its credential to reads: false without the header; undefined for a value other than `true` or `false`. */
export const readOnlyOf = (value: string | undefined): boolean | undefined =>
  value === undefined || value === "false" ? false : value === "true" ? true : undefined

/** Why a write was refused to a credential narrowed to reads: the 403's message. */
export const readOnlyMessage =
  "This credential was narrowed to reads by the `Orgplane-Read-Only: true` header: only GET and HEAD operations are allowed. Send the request without the header to make a change."
