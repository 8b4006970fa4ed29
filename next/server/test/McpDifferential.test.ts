/**
 * The MCP area's pure rules held to their Effect 3 originals on the same inputs: resolve's classification, candidates,
 * preset match and suggested name over generated odd queries; the HTTP table by status and by answer; the phase of
 * a request; redaction; provider tool errors; the OAuth choices; URL comparison of declared servers.
 */
import * as FastCheck from "effect-3/FastCheck"
import { describe, expect, it } from "vitest"
import * as OriginalCloudReadiness from "../../../packages/server/src/mcp/CloudReadiness.js"
import * as OriginalPhase from "../../../packages/server/src/mcp/ExchangePhase.js"
import * as OriginalHttp from "../../../packages/server/src/mcp/HttpClassification.js"
import * as OriginalInspection from "../../../packages/server/src/mcp/Inspection.js"
import * as OriginalResolver from "../../../packages/server/src/mcp/McpResolver.js"
import * as OriginalChoices from "../../../packages/server/src/mcp/OAuthChoices.js"
import * as OriginalPresets from "../../../packages/server/src/mcp/Presets.js"
import * as OriginalToolErrors from "../../../packages/server/src/mcp/ToolErrors.js"
import * as CloudReadiness from "../src/mcp/CloudReadiness.js"
import * as Phase from "../src/mcp/ExchangePhase.js"
import * as Http from "../src/mcp/HttpClassification.js"
import type { Exchange } from "../src/mcp/Inspection.js"
import * as Inspection from "../src/mcp/Inspection.js"
import * as Resolver from "../src/mcp/McpResolver.js"
import * as Choices from "../src/mcp/OAuthChoices.js"
import * as Presets from "../src/mcp/Presets.js"
import * as ToolErrors from "../src/mcp/ToolErrors.js"

const piece = FastCheck.constantFrom(
  ".", ":", "::", "[", "]", "/", "?", "#", "%", "%31", "@", "-", "_", " ", "0", "1", "7f", "0x", "0177", "127", "255", "256",
  "１", "．", "。", "mcp", "example", "com", "sentry", "stripe", "é", "https://", "http://", "ftp://", ":8080", "?token=x", "?a=1&b"
)
const query = FastCheck.oneof(
  FastCheck.array(piece, { maxLength: 12 }).map((pieces) => pieces.join("")),
  FastCheck.string({ maxLength: 60 }),
  FastCheck.ipV4Extended(),
  FastCheck.ipV6(),
  FastCheck.domain(),
  FastCheck.webUrl({ withQueryParameters: true, withFragments: true })
)

describe("resolve's rules", () => {
  it("classify, candidates, the preset matched and the suggested name are the original's", () => {
    expect(Presets.BUILT_IN.map((preset) => ({ ...preset }))).toEqual(OriginalPresets.BUILT_IN.map((preset) => ({ ...preset })))
    FastCheck.assert(
      FastCheck.property(query, (text) => {
        const classified = Resolver.classify(text)
        expect(classified).toEqual(OriginalResolver.classify(text))
        const candidates = Resolver.candidatesOf(classified)
        expect(candidates).toEqual(OriginalResolver.candidatesOf(OriginalResolver.classify(text)))
        for (const candidate of candidates) expect(Resolver.suggestedName(candidate)).toBe(OriginalResolver.suggestedName(candidate))
        expect(Resolver.matchPreset(Presets.BUILT_IN, text)?.presetId).toBe(OriginalResolver.matchPreset(OriginalPresets.BUILT_IN, text)?.presetId)
        expect(Resolver.normalize(text)).toBe(OriginalResolver.normalize(text))
      }),
      { numRuns: 2000 }
    )
  })
})

describe("the HTTP table and phases", () => {
  const statuses = [200, 202, 204, 301, 400, 401, 403, 404, 405, 406, 408, 409, 415, 422, 429, 500, 502, 503, 504]
  const phases = ["MCP_INITIALIZE", "MCP_INITIALIZED", "MCP_TOOL_DISCOVERY", "MCP_TOOL_EXECUTION", "MCP_TRANSPORT", "AUTH_TOKEN_ACQUISITION", "HTTP_ROUTING"]
  const challenges = [undefined, "Bearer", 'Bearer error="invalid_token"', 'Bearer error="insufficient_scope", scope="a b"', 'Basic realm="x"']
  const contentTypes = [undefined, "application/json", "text/event-stream; charset=utf-8", "text/html", "text/plain", ""]

  it("classifies every status, and every answer in every phase, as the original does", () => {
    for (const status of statuses) expect(Http.byStatus(status)).toEqual(OriginalHttp.byStatus(status))
    for (const status of statuses) {
      for (const phase of phases) {
        for (const wwwAuthenticate of challenges) {
          for (const contentType of contentTypes) {
            for (const sentAuthorization of [false, true]) {
              for (const sentSessionId of [false, true]) {
                for (const rpcMethod of [undefined, "tools/list", "tools/call"]) {
                  const exchange: Exchange = {
                    url: "https://mcp.example.com/mcp",
                    method: "POST",
                    rpcMethod,
                    bodyText: undefined,
                    sentAuthorization,
                    sentSessionId,
                    response: { status, contentType, wwwAuthenticate, headers: [] }
                  }
                  expect(Http.byResponse(exchange, phase)).toEqual(OriginalHttp.byResponse(exchange, phase))
                }
              }
            }
          }
        }
      }
    }
  })

  it("names the phase of a request as the original does", () => {
    const endpoint = "https://mcp.example.com/mcp"
    const urls = [
      endpoint,
      "https://mcp.example.com/other",
      "https://mcp.example.com/.well-known/oauth-protected-resource/mcp",
      "https://as.example.com/.well-known/oauth-authorization-server",
      "https://as.example.com/realms/x/.well-known/openid-configuration",
      "https://as.example.com/token",
      "not a url"
    ]
    const bodies = [undefined, "grant_type=authorization_code&code=x", "grant_type=refresh_token", '{"redirect_uris":["x"]}', "x=1"]
    const methods = [undefined, "initialize", "notifications/initialized", "tools/list", "tools/call", "ping"]
    for (const url of urls) {
      for (const bodyText of bodies) {
        for (const rpcMethod of methods) {
          expect(Phase.phaseOf({ url, rpcMethod, bodyText }, endpoint)).toBe(OriginalPhase.phaseOf({ url, rpcMethod, bodyText }, endpoint))
        }
      }
    }
  })
})

describe("redaction and provider tool errors", () => {
  it("redacts headers and URLs as the original does", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.oneof(query, FastCheck.string({ maxLength: 30 })), FastCheck.string({ maxLength: 40 }), (name, value) => {
        expect(Inspection.isRedactedHeader(name)).toBe(OriginalInspection.isRedactedHeader(name))
        expect(Inspection.redactUrl(name)).toBe(OriginalInspection.redactUrl(name))
        const headers: ReadonlyArray<readonly [string, string]> = [["authorization", `Bearer ${value}`], ["x-api-key", value], ["accept", value]]
        expect(Inspection.inspectHeaders(headers)).toEqual(OriginalInspection.inspectHeaders(headers))
        expect(Inspection.inspectBody(value, 7)).toEqual(OriginalInspection.inspectBody(value, 7))
      }),
      { numRuns: 1000 }
    )
  })

  it("reads a tool error as the original does", () => {
    const context = { referenceId: "r", url: "https://mcp.example.com/mcp", credential: { mode: "shared" as const, authType: "oauth" as const } }
    const results: ReadonlyArray<unknown> = [
      null,
      { isError: true, content: [{ type: "text", text: "403 Forbidden: no" }] },
      { isError: true, content: [{ type: "text", text: '{"status": 429, "code": "rate_limited", "requestId": "abc-1"}' }] },
      { isError: true, structuredContent: { error: { statusCode: "403", code: "denied" }, category: "validation_error" } },
      { isError: true, content: [{ type: "text", text: "Input validation error: Invalid arguments for tool x" }] },
      { isError: true, content: [{ type: "text", text: "Bearer sk-secret\u0000 went wrong" }], structuredContent: { requestId: "free text here" } }
    ]
    for (const result of results) expect(ToolErrors.fromToolResult(result, context)).toEqual(OriginalToolErrors.fromToolResult(result, context))
  })
})

describe("OAuth choices and declared servers", () => {
  it("choose issuer, registration and scopes, and keep metadata, as the original does", () => {
    const callback = "https://orgplane.example/v1/mcp-connections/oauth/callback"
    const connections = [
      { oauthClientId: null, oauthRegistrationSource: null, oauthMetadata: null, oauthRedirectUri: null },
      { oauthClientId: "a", oauthRegistrationSource: null, oauthMetadata: null, oauthRedirectUri: null },
      { oauthClientId: "d", oauthRegistrationSource: "dynamic" as const, oauthMetadata: { issuer: "https://as.example", tokenEndpoint: "https://as.example/token" }, oauthRedirectUri: callback },
      { oauthClientId: "d", oauthRegistrationSource: "dynamic" as const, oauthMetadata: '{"issuer":"https://as.example","token_endpoint":"t"}', oauthRedirectUri: callback }
    ]
    const metadatas = [{}, { registration_endpoint: "https://as.example/register" }, { client_id_metadata_document_supported: true }]
    for (const connection of connections) {
      for (const metadata of metadatas) {
        for (const base of [undefined, "https://orgplane.example", "http://orgplane.example"]) {
          expect(Choices.chooseRegistration(connection, "https://as.example", metadata, callback, base))
            .toEqual(OriginalChoices.chooseRegistration(connection, "https://as.example", metadata, callback, base))
        }
      }
    }
    for (const servers of [undefined, { authorization_servers: [] }, { authorization_servers: ["https://a.example"] }, { authorization_servers: ["https://a", "https://b"] }]) {
      for (const configured of [null, "https://chosen.example"]) {
        expect(Choices.chooseIssuer(configured, servers, "https://mcp.example/mcp")).toEqual(OriginalChoices.chooseIssuer(configured, servers, "https://mcp.example/mcp"))
      }
    }
    for (const methods of [undefined, ["none"], ["client_secret_post"], ["client_secret_basic", "client_secret_post"]]) {
      const metadata = { issuer: "https://as.example", authorization_endpoint: "a", token_endpoint: "t", response_types_supported: ["code"], token_endpoint_auth_methods_supported: methods, extra: 1 }
      expect(Choices.authMethodFor(metadata)).toBe(OriginalChoices.authMethodFor(metadata))
      expect(Choices.keptMetadata(metadata)).toEqual(OriginalChoices.keptMetadata(metadata))
    }
    expect(Choices.scopesToRequest([], " a  b ", ["c"])).toEqual(OriginalChoices.scopesToRequest([], " a  b ", ["c"]))
  })

  it("read declared servers and compare URLs as the original does", () => {
    FastCheck.assert(
      FastCheck.property(query, (url) => {
        expect(CloudReadiness.normalizeUrl(url)).toBe(OriginalCloudReadiness.normalizeUrl(url))
        const payload = { mcpServers: { a: { url, authType: "oauth" } }, mcp: { b: { url: ` ${url} ` } } }
        expect(CloudReadiness.serversOf(payload, "T")).toEqual(OriginalCloudReadiness.serversOf(payload, "T"))
        expect(CloudReadiness.serversOf({ url }, "T")).toEqual(OriginalCloudReadiness.serversOf({ url }, "T"))
      }),
      { numRuns: 500 }
    )
  })
})
