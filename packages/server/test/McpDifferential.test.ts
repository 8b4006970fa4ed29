/**
 * The MCP area's pure rules held to their Effect 3 originals on the same inputs: resolve's classification, candidates,
 * preset match and suggested name over generated odd queries; the HTTP table by status and by answer; the phase of
 * a request; redaction; provider tool errors; the OAuth choices; URL comparison of declared servers.
 *
 * The originals' answers are read from the recorded fixture (test/fixtures/effect3/McpDifferential.json,
 * support/Effect3.ts): what 0.1.0's originals answered. The generated queries are drawn once per run with the fixed
 * seed they were recorded with (fast-check 3.23, the version Effect 3 ships, so the same seed draws the same inputs);
 * each property's original answers are held in the draws' order under one key named by the draws (a different draw
 * is a key never recorded). The HTTP table's 47,880 answers are held compactly: its distinct answers, and for each
 * case in the table's fixed order the index of its answer; each case is compared on its own, so a failure names the
 * first case that differs.
 */
import * as FastCheck from "fast-check"
import { describe, expect, it } from "vitest"
import * as CloudReadiness from "../src/mcp/CloudReadiness.js"
import * as Phase from "../src/mcp/ExchangePhase.js"
import * as Http from "../src/mcp/HttpClassification.js"
import type { Exchange } from "../src/mcp/Inspection.js"
import * as Inspection from "../src/mcp/Inspection.js"
import * as Resolver from "../src/mcp/McpResolver.js"
import * as Choices from "../src/mcp/OAuthChoices.js"
import * as Presets from "../src/mcp/Presets.js"
import * as ToolErrors from "../src/mcp/ToolErrors.js"
import * as Recorded from "./support/Effect3.js"

/** The originals' answers, recorded (support/Effect3.ts). */
const effect3 = Recorded.originals("McpDifferential")

/** The seed every property's draws are made with. */
const seed = 42

/** `numRuns` draws of `arbitrary`, the same on every run. */
const draws = <A>(arbitrary: FastCheck.Arbitrary<A>, numRuns: number) => FastCheck.sample(arbitrary, { seed, numRuns })

/** The original's answers for each of `inputs`, in their order, recorded under `name` and the inputs. */
const eachOriginal = <A>(name: string, inputs: ReadonlyArray<unknown>): ReadonlyArray<A> => {
  const answers = effect3<ReadonlyArray<A>>(Recorded.call(name, inputs))
  expect(answers).toHaveLength(inputs.length)
  return answers
}

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
    expect(Presets.BUILT_IN.map((preset) => ({ ...preset }))).toEqual(
      effect3("Presets.BUILT_IN")
    )
    const texts = draws(query, 2000)
    const originals = eachOriginal<{
      readonly classified: ReturnType<typeof Resolver.classify>
      readonly candidates: ReturnType<typeof Resolver.candidatesOf>
      readonly suggestedNames: ReadonlyArray<ReturnType<typeof Resolver.suggestedName>>
      readonly presetId: string | undefined
      readonly normalized: ReturnType<typeof Resolver.normalize>
    }>("resolve", texts)
    for (const [index, text] of texts.entries()) {
      const original = originals[index]!
      const label = JSON.stringify(text)
      const classified = Resolver.classify(text)
      expect(classified, label).toEqual(original.classified)
      const candidates = Resolver.candidatesOf(classified)
      expect(candidates, label).toEqual(original.candidates)
      expect(candidates.map((candidate) => Resolver.suggestedName(candidate)), label).toEqual(original.suggestedNames)
      expect(Resolver.matchPreset(Presets.BUILT_IN, text)?.presetId, label).toBe(original.presetId)
      expect(Resolver.normalize(text), label).toBe(original.normalized)
    }
  })
})

describe("the HTTP table and phases", () => {
  const statuses = [200, 202, 204, 301, 400, 401, 403, 404, 405, 406, 408, 409, 415, 422, 429, 500, 502, 503, 504]
  const phases = ["MCP_INITIALIZE", "MCP_INITIALIZED", "MCP_TOOL_DISCOVERY", "MCP_TOOL_EXECUTION", "MCP_TRANSPORT", "AUTH_TOKEN_ACQUISITION", "HTTP_ROUTING"]
  const challenges = [undefined, "Bearer", 'Bearer error="invalid_token"', 'Bearer error="insufficient_scope", scope="a b"', 'Basic realm="x"']
  const contentTypes = [undefined, "application/json", "text/event-stream; charset=utf-8", "text/html", "text/plain", ""]

  it("classifies every status, and every answer in every phase, as the original does", () => {
    const byStatus = eachOriginal<ReturnType<typeof Http.byStatus>>("byStatus", statuses)
    for (const [index, status] of statuses.entries()) expect(Http.byStatus(status), String(status)).toEqual(byStatus[index])
    /** The table's cases, in its fixed order. */
    const table: Array<{ readonly phase: string; readonly exchange: Exchange }> = []
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
                  table.push({ phase, exchange })
                }
              }
            }
          }
        }
      }
    }
    expect(table).toHaveLength(47_880)
    // The original's answers, compactly: each distinct answer once, and each case's answer as its index in them.
    const recorded = effect3<{ readonly answers: ReadonlyArray<ReturnType<typeof Http.byResponse>>; readonly order: string }>(
      Recorded.call("byResponse", table)
    )
    const order = recorded.order.split(",").map(Number)
    expect(order).toHaveLength(table.length)
    for (const [index, { exchange, phase }] of table.entries()) {
      const label = `case ${index}: ${phase} ${JSON.stringify(exchange)}`
      expect(Http.byResponse(exchange, phase), label).toEqual(recorded.answers[order[index]!])
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
    const requests = urls.flatMap((url) => bodies.flatMap((bodyText) => methods.map((rpcMethod) => ({ url, rpcMethod, bodyText }))))
    const originals = eachOriginal<ReturnType<typeof Phase.phaseOf>>("phaseOf", requests)
    for (const [index, request] of requests.entries()) expect(Phase.phaseOf(request, endpoint), JSON.stringify(request)).toBe(originals[index])
  })
})

describe("redaction and provider tool errors", () => {
  it("redacts headers and URLs as the original does", () => {
    const headersOf = (value: string): ReadonlyArray<readonly [string, string]> => [["authorization", `Bearer ${value}`], ["x-api-key", value], ["accept", value]]
    const pairs = draws(FastCheck.tuple(FastCheck.oneof(query, FastCheck.string({ maxLength: 30 })), FastCheck.string({ maxLength: 40 })), 1000)
    const originals = eachOriginal<{
      readonly isRedactedHeader: boolean
      readonly redactUrl: ReturnType<typeof Inspection.redactUrl>
      readonly inspectHeaders: ReturnType<typeof Inspection.inspectHeaders>
      readonly inspectBody: ReturnType<typeof Inspection.inspectBody>
    }>("redaction", pairs)
    for (const [index, [name, value]] of pairs.entries()) {
      const original = originals[index]!
      const label = JSON.stringify([name, value])
      expect(Inspection.isRedactedHeader(name), label).toBe(original.isRedactedHeader)
      expect(Inspection.redactUrl(name), label).toBe(original.redactUrl)
      expect(Inspection.inspectHeaders(headersOf(value)), label).toEqual(original.inspectHeaders)
      expect(Inspection.inspectBody(value, 7), label).toEqual(original.inspectBody)
    }
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
    for (const result of results) {
      expect(ToolErrors.fromToolResult(result, context)).toEqual(
        effect3(Recorded.call("fromToolResult", result, context))
      )
    }
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
          expect(Choices.chooseRegistration(connection, "https://as.example", metadata, callback, base)).toEqual(
            effect3(Recorded.call("chooseRegistration", connection, "https://as.example", metadata, callback, base))
          )
        }
      }
    }
    for (const servers of [undefined, { authorization_servers: [] }, { authorization_servers: ["https://a.example"] }, { authorization_servers: ["https://a", "https://b"] }]) {
      for (const configured of [null, "https://chosen.example"]) {
        expect(Choices.chooseIssuer(configured, servers, "https://mcp.example/mcp")).toEqual(
          effect3(Recorded.call("chooseIssuer", configured, servers, "https://mcp.example/mcp"))
        )
      }
    }
    for (const methods of [undefined, ["none"], ["client_secret_post"], ["client_secret_basic", "client_secret_post"]]) {
      const metadata = { issuer: "https://as.example", authorization_endpoint: "a", token_endpoint: "t", response_types_supported: ["code"], token_endpoint_auth_methods_supported: methods, extra: 1 }
      expect(Choices.authMethodFor(metadata)).toBe(effect3(Recorded.call("authMethodFor", metadata)))
      expect(Choices.keptMetadata(metadata)).toEqual(effect3(Recorded.call("keptMetadata", metadata)))
    }
    expect(Choices.scopesToRequest([], " a  b ", ["c"])).toEqual(
      effect3(Recorded.call("scopesToRequest", [], " a  b ", ["c"]))
    )
  })

  it("read declared servers and compare URLs as the original does", () => {
    const payloadOf = (url: string) => ({ mcpServers: { a: { url, authType: "oauth" } }, mcp: { b: { url: ` ${url} ` } } })
    const urls = draws(query, 500)
    const originals = eachOriginal<{
      readonly normalizeUrl: ReturnType<typeof CloudReadiness.normalizeUrl>
      readonly serversOfPayload: ReturnType<typeof CloudReadiness.serversOf>
      readonly serversOfUrl: ReturnType<typeof CloudReadiness.serversOf>
    }>("declaredServers", urls)
    for (const [index, url] of urls.entries()) {
      const original = originals[index]!
      const label = JSON.stringify(url)
      expect(CloudReadiness.normalizeUrl(url), label).toBe(original.normalizeUrl)
      expect(CloudReadiness.serversOf(payloadOf(url), "T"), label).toEqual(original.serversOfPayload)
      expect(CloudReadiness.serversOf({ url }, "T"), label).toEqual(original.serversOfUrl)
    }
  })
})
