/**
 * A session's narrowing (src/agents/McpSessionNarrowing.ts): the headers `initialize` sent hold for the session's
 * later requests, the same values again pass, other values are refused, a request of no known session keeps its own,
 * and the memory of sessions is bounded and forgets an ended one.
 */
import { describe, expect, it } from "vitest"
import * as McpSessionNarrowing from "../../src/agents/McpSessionNarrowing.js"

describe("McpSessionNarrowing", () => {
  it("holds a session to the narrowing it was opened with", () => {
    const sessions = McpSessionNarrowing.make()
    sessions.opened("s1", { "orgplane-read-only": "true", "orgplane-mcp-toolsets": "teams, members" })
    const narrowing = { readOnly: "true", toolsets: "teams, members" }
    expect(sessions.apply({ "mcp-session-id": "s1" })).toEqual({ _tag: "Narrowed", narrowing })
    expect(sessions.apply({ "mcp-session-id": "s1", "orgplane-read-only": "true", "orgplane-mcp-toolsets": "members,teams" })).toEqual({ _tag: "Narrowed", narrowing })
    expect(sessions.apply({ "mcp-session-id": "s1", "orgplane-read-only": "false" })).toMatchObject({ _tag: "Refused", header: "orgplane-read-only" })
    expect(sessions.apply({ "mcp-session-id": "s1", "orgplane-mcp-toolsets": "teams" })).toMatchObject({ _tag: "Refused", header: "orgplane-mcp-toolsets" })
    // A session opened without narrowing is not narrowed later, nor widened: "false" is what it was opened with.
    sessions.opened("s2", {})
    expect(sessions.apply({ "mcp-session-id": "s2", "orgplane-read-only": "false" })).toEqual({ _tag: "Narrowed", narrowing: { readOnly: undefined, toolsets: undefined } })
    expect(sessions.apply({ "mcp-session-id": "s2", "orgplane-read-only": "true" })).toMatchObject({ _tag: "Refused" })
    // No known session: the request's own headers.
    expect(sessions.apply({ "mcp-session-id": "unknown", "orgplane-read-only": "true" })).toEqual({ _tag: "Narrowed", narrowing: { readOnly: "true", toolsets: undefined } })
  })

  it("forgets an ended session, and the oldest past its capacity", () => {
    const sessions = McpSessionNarrowing.make(2)
    sessions.opened("a", { "orgplane-read-only": "true" })
    sessions.opened("b", { "orgplane-read-only": "true" })
    sessions.opened("c", { "orgplane-read-only": "true" })
    expect(sessions.size()).toBe(2)
    expect(sessions.apply({ "mcp-session-id": "a" })).toEqual({ _tag: "Narrowed", narrowing: { readOnly: undefined, toolsets: undefined } })
    sessions.ended("b")
    expect(sessions.size()).toBe(1)
  })
})
