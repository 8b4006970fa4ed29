/**
 * mcp/HttpClassification.ts: what an MCP server's HTTP status means in a diagnostic (its code, category, whether to
 * retry, who acts, and the words an operator reads). The statuses in context (a session, a challenge, a phase) are
 * McpInspection.test.ts's.
 */
import { describe, expect, it } from "vitest"
import * as Http from "../src/mcp/HttpClassification.js"

describe("an MCP server's HTTP status", () => {
  it("names the credential, the permissions, the URL, a rate limit or the provider's failure", () => {
    const provider = (status: number) => ({
      category: "provider_unavailable",
      code: `MCP_HTTP_${status}`,
      retryable: true,
      httpStatus: status,
      owner: "provider_admin",
      message: `The MCP server failed (HTTP ${status}).`,
      operatorAction: "Retry later; contact the provider if it persists."
    })
    expect(Http.byStatus(401)).toEqual({
      category: "oauth_resource_rejected",
      code: "MCP_HTTP_401",
      retryable: false,
      httpStatus: 401,
      owner: "organization_admin",
      message: "The MCP server refused the credential (HTTP 401).",
      operatorAction: "Check the connection's credential: update the API key or reconnect the account."
    })
    expect(Http.byStatus(403)).toEqual({
      category: "provider_policy_denied",
      code: "MCP_HTTP_403",
      retryable: false,
      httpStatus: 403,
      owner: "provider_admin",
      message: "The MCP server forbade the request (HTTP 403).",
      operatorAction: "Check the permissions of the account or key the connection uses at the provider."
    })
    expect(Http.byStatus(404)).toEqual({
      category: "endpoint_not_found",
      code: "MCP_HTTP_404",
      retryable: false,
      httpStatus: 404,
      owner: "organization_admin",
      message: "No MCP endpoint at this URL (HTTP 404).",
      operatorAction: "Check the connection's URL: it must be the server's MCP endpoint (often ending in /mcp)."
    })
    expect(Http.byStatus(429)).toEqual({
      category: "provider_throttled",
      code: "MCP_HTTP_429",
      retryable: true,
      httpStatus: 429,
      owner: "provider_admin",
      message: "The MCP server is rate-limiting requests (HTTP 429).",
      operatorAction: "Wait and retry; ask the provider for a higher limit if it persists."
    })
    for (const status of [500, 502, 503, 504]) expect(Http.byStatus(status)).toEqual(provider(status))
  })

  it("answers any other status as a failure to check the connection by, retrying only a timeout (408)", () => {
    for (const status of [200, 202, 204, 301, 400, 405, 406, 408, 409, 415, 422]) {
      expect(Http.byStatus(status), String(status)).toEqual({
        category: "http_failure",
        code: `MCP_HTTP_${status}`,
        retryable: status === 408,
        httpStatus: status,
        owner: "organization_admin",
        message: `The MCP server answered HTTP ${status}.`,
        operatorAction: "Check the connection's URL and settings."
      })
    }
  })
})
