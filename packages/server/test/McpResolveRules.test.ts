/**
 * The pure rules of MCP resolve: how a query is classified (with the reference's messages), which presets it
 * matches, which candidates are tried in which order, which discovery qualifies (the "guessed" rule), which
 * candidate wins, the suggested name; how a presets file is read and an issuer compared; and, over generated odd
 * queries, that resolving any of them answers (never a defect, always a result its schema encodes).
 */
import { McpDiscovery, McpPreset, McpResolveResult } from "@orgplane/schema"
import * as EffectVitest from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Fiber from "effect/Fiber"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/testing/TestClock"
// fast-check itself: Effect 4 bundles none.
import * as FastCheck from "fast-check"
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Wait from "../../../packages/testkit/src/Wait.js"
import * as Fs from "node:fs"
import * as Net from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { BUILT_IN } from "../src/mcp/Presets.js"
import { parsePresets } from "../src/mcp/PresetsConfig.js"
import { discover, resourceMatches, sameIssuer } from "../src/mcp/Requirements.js"
import * as AddressGuard from "../src/platform/AddressGuard.js"
import * as Outbound from "../src/platform/Outbound.js"
import { McpPresets, McpProbeSettings } from "../src/mcp/PresetsConfig.js"
import { candidatesOf, classify, matchPreset, messages, qualifies, resolve, suggestedName, winnerOf } from "../src/mcp/McpResolver.js"

describe("classifying a query", () => {
  it("reads http(s) URLs as URLs, in their serialized form (a bare origin gains /)", () => {
    expect(classify("https://mcp.example.com/mcp")).toEqual({ kind: "url", url: "https://mcp.example.com/mcp" })
    expect(classify("  HTTPS://MCP.Example.com  ")).toEqual({ kind: "url", url: "https://mcp.example.com/" })
    expect(classify("http://127.0.0.1:8080/x?y=1")).toEqual({ kind: "url", url: "http://127.0.0.1:8080/x?y=1" })
  })

  it("refuses URLs it cannot use, with the reference's messages", () => {
    expect(classify("https://")).toEqual({ kind: "invalid", reason: messages.unparsableUrl })
    expect(classify("http://exa mple.com")).toEqual({ kind: "invalid", reason: messages.unparsableUrl })
    expect(classify("https://user:pw@example.com/mcp")).toEqual({ kind: "invalid", reason: messages.credentials })
    expect(classify("https://user@example.com/mcp")).toEqual({ kind: "invalid", reason: messages.credentials })
    expect(classify("https://example.com/mcp#top")).toEqual({ kind: "invalid", reason: messages.credentials })
    expect(classify("https://example.com/mcp#")).toEqual({ kind: "invalid", reason: messages.credentials })
    // A URL carrying a secret in its query is refused here: it could never be registered.
    expect(classify("https://example.com/mcp?api_key=abc")).toEqual({ kind: "invalid", reason: messages.secret })
    expect(classify("example.com/mcp?Token=abc")).toEqual({ kind: "invalid", reason: messages.secret })
    expect(classify("ftp://example.com")).toEqual({ kind: "invalid", reason: "That host could not be parsed." })
  })

  it("reads a bare host as a domain, and a host with a path, query or port as that https URL", () => {
    expect(classify("Example.COM")).toEqual({ kind: "domain", host: "example.com" })
    expect(classify("mcp.example.co.uk")).toEqual({ kind: "domain", host: "mcp.example.co.uk" })
    expect(classify("example.com/")).toEqual({ kind: "domain", host: "example.com" })
    expect(classify("example.com/v1/mcp")).toEqual({ kind: "url", url: "https://example.com/v1/mcp" })
    expect(classify("example.com:8443")).toEqual({ kind: "url", url: "https://example.com:8443/" })
    expect(classify("bücher.de")).toEqual({ kind: "domain", host: "xn--bcher-kva.de" })
    expect(classify("example.com/a%20b")).toEqual({ kind: "url", url: "https://example.com/a%20b" })
  })

  it("reads an IP address, in any form URL parsing reads as one, as an address (a host), never as a name", () => {
    for (const query of ["127.0.0.1", "127.1", "0177.0.0.1", "0x7f.1", "0x7f000001.", "１２７.０.０.１", "１２７．０．０．１", "2130706433."]) {
      expect([query, classify(query)]).toEqual([query, { kind: "address", host: "127.0.0.1" }])
    }
    for (const query of ["::1", "[::1]", "[0:0::1]", "::0:1"]) {
      expect([query, classify(query)]).toEqual([query, { kind: "address", host: "[::1]" }])
    }
    expect(classify("::ffff:127.0.0.1")).toEqual({ kind: "address", host: "[::ffff:7f00:1]" })
    expect(classify("8.8.8.8")).toEqual({ kind: "address", host: "8.8.8.8" })
    // With a port, a path or a query: that https URL, as for a named host.
    expect(classify("127.1:8080")).toEqual({ kind: "url", url: "https://127.0.0.1:8080/" })
    expect(classify("[::1]/mcp")).toEqual({ kind: "url", url: "https://[::1]/mcp" })
    expect(classify("::1/mcp")).toEqual({ kind: "invalid", reason: messages.unparsableHost })
    // Without a dot or a colon it is a name, even a number URL parsing would read as an address.
    expect(classify("42")).toEqual({ kind: "name", slug: "42" })
    expect(classify("0x")).toEqual({ kind: "name", slug: "0x" })
    // Not addresses: too many parts, a part too large, a zone, a percent-encoded host.
    for (const query of ["1.2.3.4.5", "256.256.256.256", "[fe80::1%eth0]", "127.0.0.%31", "[::1"]) {
      expect([query, classify(query).kind]).toEqual([query, "invalid"])
    }
  })

  it("refuses hosts that are not DNS labels", () => {
    for (const query of ["bad_host.example.com", "-bad.example.com", "example.", ".example.com", "user@example.com", "a..b", "exa%41mple.com"]) {
      expect([query, classify(query)]).toEqual([query, { kind: "invalid", reason: messages.unparsableHost }])
    }
  })

  it("reads names as a slug of letters and digits", () => {
    expect(classify("Linear")).toEqual({ kind: "name", slug: "linear" })
    expect(classify("  Acme & Co's Tools_2-go ")).toEqual({ kind: "name", slug: "acmecostools2go" })
    expect(classify("Context7")).toEqual({ kind: "name", slug: "context7" })
    expect(classify("a".repeat(64))).toEqual({ kind: "name", slug: "a".repeat(64) })
  })

  it("refuses everything else: empty, too long, odd characters", () => {
    expect(classify("")).toEqual({ kind: "invalid", reason: messages.empty })
    expect(classify(" \t\n")).toEqual({ kind: "invalid", reason: messages.empty })
    expect(classify("x".repeat(201))).toEqual({ kind: "invalid", reason: messages.tooLong })
    expect(classify("a".repeat(65))).toEqual({ kind: "invalid", reason: messages.empty })
    for (const query of ["!!!", "-linear", "lin/ear", "linear?", "ünïcode", "two  words\u0000", "a b.c"]) {
      expect([query, classify(query)]).toEqual([query, { kind: "invalid", reason: messages.empty }])
    }
    expect(messages).toMatchObject({
      empty: "Type a server URL or a product name.",
      tooLong: "Queries are limited to 200 characters.",
      unparsableUrl: "That URL could not be parsed.",
      credentials: "An MCP server URL cannot contain credentials or a fragment.",
      unparsableHost: "That host could not be parsed."
    })
  })
})

describe("candidates", () => {
  const of = (query: string) => candidatesOf(classify(query))

  it("a URL with a path: only itself", () => {
    expect(of("https://mcp.example.com/v1/mcp")).toEqual(["https://mcp.example.com/v1/mcp"])
    expect(of("https://example.com/?x=1")).toEqual(["https://example.com/?x=1"])
  })

  it("a bare origin: itself, then /mcp", () => {
    expect(of("https://example.com")).toEqual(["https://example.com/", "https://example.com/mcp"])
    expect(of("http://127.0.0.1:4000/")).toEqual(["http://127.0.0.1:4000/", "http://127.0.0.1:4000/mcp"])
  })

  it("a domain: the origin, /mcp, then mcp.<host>/mcp unless the host starts with mcp.", () => {
    expect(of("example.com")).toEqual(["https://example.com/", "https://example.com/mcp", "https://mcp.example.com/mcp"])
    expect(of("mcp.example.com")).toEqual(["https://mcp.example.com/", "https://mcp.example.com/mcp"])
  })

  it("an IP address: the origin, then /mcp; no mcp. guess, which would be no host", () => {
    expect(of("127.1")).toEqual(["https://127.0.0.1/", "https://127.0.0.1/mcp"])
    expect(of("::1")).toEqual(["https://[::1]/", "https://[::1]/mcp"])
  })

  it("a name: five guesses in order", () => {
    expect(of("Acme")).toEqual([
      "https://mcp.acme.com/mcp",
      "https://mcp.acme.com/",
      "https://mcp.acme.dev/mcp",
      "https://mcp.acme.io/mcp",
      "https://mcp.acme.ai/mcp"
    ])
  })

  it("each once, at most five; none for an invalid query", () => {
    expect(candidatesOf({ kind: "url", url: "https://example.com/" })).toEqual(["https://example.com/", "https://example.com/mcp"])
    expect(candidatesOf({ kind: "domain", host: "mcp.mcp.io" })).toEqual(["https://mcp.mcp.io/", "https://mcp.mcp.io/mcp"])
    for (const query of ["Acme", "example.com", "https://x.example.com"]) {
      const candidates = of(query)
      expect(new Set(candidates).size).toBe(candidates.length)
      expect(candidates.length).toBeLessThanOrEqual(5)
    }
    expect(of("!!!")).toEqual([])
  })
})

describe("presets", () => {
  it("match by id or display name, ignoring case and punctuation", () => {
    expect(matchPreset(BUILT_IN, "linear")?.presetId).toBe("linear")
    expect(matchPreset(BUILT_IN, " CONTEXT-7 ")?.presetId).toBe("context7")
    expect(matchPreset(BUILT_IN, "Slack")?.presetId).toBe("slack")
    expect(matchPreset(BUILT_IN, "linea")).toBeUndefined()
  })

  it("match by the host of the preset's URL, whatever the path", () => {
    expect(matchPreset(BUILT_IN, "mcp.notion.com")?.presetId).toBe("notion")
    expect(matchPreset(BUILT_IN, "https://mcp.sentry.dev/other")?.presetId).toBe("sentry")
    expect(matchPreset(BUILT_IN, "MCP.STRIPE.COM")?.presetId).toBe("stripe")
    expect(matchPreset(BUILT_IN, "notion.com")).toBeUndefined()
  })

  it("the first in list order wins", () => {
    const first = new McpPreset({ presetId: "one", displayName: "Tools", description: "", url: "https://a.example.com/mcp", authType: "none", requiresOAuthClient: false })
    const second = new McpPreset({ presetId: "two", displayName: "Tools", description: "", url: "https://a.example.com/mcp", authType: "none", requiresOAuthClient: false })
    expect(matchPreset([first, second], "tools")?.presetId).toBe("one")
    expect(matchPreset([second, first], "a.example.com")?.presetId).toBe("two")
  })

  it("are read from JSON or YAML, decoded with the schema, each id once and each URL usable", () => {
    const preset = { presetId: "acme", displayName: "Acme", description: "d", url: "https://mcp.acme.com/mcp", authType: "oauth", requiresOAuthClient: true, defaultOAuthScopes: ["a"] }
    const json = parsePresets(JSON.stringify([preset]))
    expect(Result.isSuccess(json) && json.success[0]).toEqual(Schema.decodeUnknownSync(McpPreset)(preset))
    const yaml = parsePresets("- presetId: acme\n  displayName: Acme\n  description: d\n  url: https://mcp.acme.com/mcp\n  authType: none\n  requiresOAuthClient: false\n")
    expect(Result.isSuccess(yaml) && yaml.success.map((p) => p.authType)).toEqual(["none"])
    const error = (text: string) => Result.match(parsePresets(text), { onFailure: (message) => message, onSuccess: () => "accepted" })
    expect(error("{ not: [yaml")).toMatch(/^not JSON or YAML/)
    expect(error(JSON.stringify({ presetId: "x" }))).toMatch(/^not an array of MCP presets/)
    expect(error(JSON.stringify([{ ...preset, authType: "magic" }]))).toMatch(/authType/)
    expect(error(JSON.stringify([{ ...preset, extra: 1 }]))).toMatch(/extra/)
    expect(error(JSON.stringify([{ ...preset, url: "ftp://x" }]))).toBe("[0].url is not an http(s) MCP server URL without credentials, fragment or secret")
    expect(error(JSON.stringify([preset, preset]))).toBe("[1].presetId \"acme\" appears twice")
    expect(error("[]")).toBe("accepted")
  })

  it("as the server README's example shows them", () => {
    const readme = Fs.readFileSync(new URL("../../../packages/server/README.md", import.meta.url), "utf8")
    const example = /## Resolving MCP servers[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(example).toBeDefined()
    const parsed = parsePresets(example!)
    expect(Result.isSuccess(parsed) && parsed.success.map((preset) => [preset.presetId, preset.defaultOAuthScopes])).toEqual([["acme", ["tools:read"]]])
  })
})

const discovery = (fields: {
  initialize: "succeeded" | "authentication_required" | "failed"
  status: "ready" | "manual_action_required" | "unreachable" | "unsupported"
  kind: "none" | "oauth" | "manual_bearer" | "unknown"
}) =>
  new McpDiscovery({
    server: { url: "https://example.com/mcp", initialize: fields.initialize },
    status: fields.status,
    authentication: {
      kind: fields.kind,
      authorizationServers: [],
      requiredScopes: [],
      recommendedScopes: [],
      availableRegistrationMethods: ["pre_registered"],
      recommendedRegistrationMethod: "pre_registered",
      refreshSupport: "unknown"
    },
    tools: { visibility: "unavailable" },
    manualRequirements: [],
    warnings: []
  })

describe("qualifying and the winner", () => {
  const open = discovery({ initialize: "succeeded", status: "ready", kind: "none" })
  const oauth = discovery({ initialize: "authentication_required", status: "ready", kind: "oauth" })
  const oauthManual = discovery({ initialize: "authentication_required", status: "manual_action_required", kind: "oauth" })
  const bearer = discovery({ initialize: "authentication_required", status: "manual_action_required", kind: "manual_bearer" })
  const unknownAuth = discovery({ initialize: "authentication_required", status: "unsupported", kind: "unknown" })
  const failed = discovery({ initialize: "failed", status: "unsupported", kind: "unknown" })
  const unreachable = discovery({ initialize: "failed", status: "unreachable", kind: "unknown" })
  const readyOauthFailed = discovery({ initialize: "failed", status: "ready", kind: "oauth" })

  it("qualifies MCP answers and OAuth; a bare credential only when not guessed", () => {
    for (const guessed of [false, true]) {
      expect(qualifies(open, guessed)).toBe(true)
      expect(qualifies(oauth, guessed)).toBe(true)
      expect(qualifies(oauthManual, guessed)).toBe(true)
      expect(qualifies(readyOauthFailed, guessed)).toBe(true)
      expect(qualifies(unknownAuth, guessed)).toBe(false)
      expect(qualifies(failed, guessed)).toBe(false)
      expect(qualifies(unreachable, guessed)).toBe(false)
      expect(qualifies(undefined, guessed)).toBe(false)
    }
    expect(qualifies(bearer, false)).toBe(true)
    expect(qualifies(bearer, true)).toBe(false)
  })

  it("is the first qualifying result in order of preference", () => {
    expect(winnerOf([undefined, failed, oauth, open], false)).toBe(2)
    expect(winnerOf([bearer, open], true)).toBe(1)
    expect(winnerOf([bearer, open], false)).toBe(0)
    expect(winnerOf([failed, unreachable, undefined], false)).toBe(-1)
    expect(winnerOf([], false)).toBe(-1)
  })
})

describe("the suggested name", () => {
  it("drops leading mcp, www and api labels and capitalises the first left", () => {
    expect(suggestedName("https://mcp.vercel.com/mcp")).toBe("Vercel")
    expect(suggestedName("https://www.api.mcp.acme.io/")).toBe("Acme")
    expect(suggestedName("https://linear.app/mcp")).toBe("Linear")
    expect(suggestedName("https://mcp.mcp/")).toBe("Mcp")
    expect(suggestedName("http://127.0.0.1:4000/mcp")).toBe("127.0.0.1")
    expect(suggestedName("http://[::1]:4000/mcp")).toBe("::1")
  })
})

describe("issuers", () => {
  it("are the same but for a trailing slash, or the resource and its origin for a server that is its own", () => {
    expect(sameIssuer("https://auth.example.com", "https://auth.example.com/", undefined)).toBe(true)
    expect(sameIssuer("https://auth.example.com/", "https://auth.example.com", undefined)).toBe(true)
    expect(sameIssuer("https://auth.example.com", "https://evil.example.com", undefined)).toBe(false)
    expect(sameIssuer("https://mcp.example.com", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp")).toBe(true)
    expect(sameIssuer("https://mcp.example.com/mcp", "https://mcp.example.com", "https://mcp.example.com/mcp")).toBe(true)
    expect(sameIssuer("https://auth.example.com", "https://mcp.example.com", "https://mcp.example.com/mcp")).toBe(false)
    expect(sameIssuer("https://auth.example.com", "https://mcp.example.com/mcp", "https://mcp.example.com/mcp")).toBe(false)
  })
})

describe("protected-resource metadata", () => {
  it("is used only for its own resource: same origin, the endpoint's path within the resource's", () => {
    expect(resourceMatches("https://mcp.example.com/mcp", "https://mcp.example.com/mcp")).toBe(true)
    expect(resourceMatches("https://mcp.example.com/mcp", "https://mcp.example.com")).toBe(true)
    expect(resourceMatches("https://mcp.example.com/mcp", "https://mcp.example.com/other")).toBe(false)
    expect(resourceMatches("https://mcp.example.com/mcp", "https://evil.example.com/mcp")).toBe(false)
    expect(resourceMatches("https://mcp.example.com/mcp", "not a url")).toBe(false)
  })
})

describe("discovery of one endpoint", () => {
  const guard = Outbound.layer({ allowPrivate: true, timeout: "1 second" }).pipe(Layer.provide(AddressGuard.systemLayer))

  it("reports an endpoint that answers, but not MCP, and one that does not answer at all", async () => {
    const failing = await FakeMcp.start()
    failing.setMode({ _tag: "status", status: 500 })
    try {
      const unsupported = await Effect.runPromise(discover({ url: failing.url, timeout: "2 seconds" }).pipe(Effect.provide(guard)))
      expect(unsupported.server).toEqual({ url: failing.url, initialize: "failed" })
      expect(unsupported.status).toBe("unsupported")
      expect(unsupported.authentication.kind).toBe("unknown")
      expect(unsupported.tools).toEqual({ visibility: "unavailable" })
      expect(unsupported.warnings).toEqual([{ code: "mcp_http_500", message: "The MCP server failed (HTTP 500)." }])
    } finally {
      await failing.close()
    }
    const unreachable = await Effect.runPromise(discover({ url: "http://127.0.0.1:9/mcp", timeout: "2 seconds" }).pipe(Effect.provide(guard)))
    expect(unreachable.status).toBe("unreachable")
    expect(unreachable.warnings.map((warning) => warning.code)).toEqual(["mcp_unreachable"])
  })

  EffectVitest.it.effect("gives up on a candidate that hangs when the probe timeout passes, not before", () =>
    Effect.gen(function*() {
      const hanging = yield* Effect.acquireRelease(Effect.promise(() => FakeMcp.start()), (fake) => Effect.promise(fake.close))
      hanging.setMode({ _tag: "hang" })
      // An hour on the test clock: no real timer (the MCP SDK's own) comes near it while the test runs.
      const settings = Layer.mergeAll(
        Outbound.layer({ allowPrivate: true, timeout: "1 day" }).pipe(Layer.provide(AddressGuard.systemLayer)),
        Layer.succeed(McpPresets, BUILT_IN),
        Layer.succeed(McpProbeSettings, { timeout: Duration.hours(1) })
      )
      const resolving = yield* Effect.forkChild(resolve(hanging.url).pipe(Effect.provide(settings)))
      // Real waits (Node's timers, not the test clock): the request reaching the fake, then pending work running.
      yield* Effect.promise(() => Wait.until(() => hanging.requests.length > 0, "the probe's first request"))
      yield* TestClock.adjust(Duration.minutes(59))
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      expect(resolving.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(Duration.minutes(1))
      expect(yield* Fiber.join(resolving)).toEqual({ resolution: "not_found", attempted: [hanging.url] })
    }))

  it("refuses to look at a URL that is not http(s), or carries credentials or a fragment", async () => {
    for (const url of ["ftp://example.com/mcp", "not a url", "https://u:p@example.com/mcp", "https://example.com/mcp#x"]) {
      const result = await Effect.runPromise(Effect.result(discover({ url, timeout: "1 second" })).pipe(Effect.provide(guard)))
      expect([url, Result.isFailure(result) && result.failure._tag]).toEqual([url, "DiscoveryRefused"])
    }
  })
})

describe("odd queries", () => {
  /** Pieces of hosts, addresses, URLs and names, in every order: the shapes that trip a classifier. */
  const piece = FastCheck.constantFrom(
    ".", ":", "::", "[", "]", "/", "?", "#", "%", "%31", "@", "-", "_", " ", "0", "1", "7f", "0x", "0177", "127", "255", "256",
    "4294967296", "ffff", "１", "２７", "．", "。", "e", "mcp", "example", "com", "xn--", "é", "ü", "\u0000", "https://", "http://",
    "ftp://", ":8080", "?token=x"
  )
  const query = FastCheck.oneof(
    FastCheck.array(piece, { maxLength: 12 }).map((pieces) => pieces.join("")),
    FastCheck.string({ maxLength: 60 }),
    FastCheck.fullUnicodeString({ maxLength: 40 }),
    FastCheck.ipV4Extended(),
    FastCheck.ipV6(),
    FastCheck.ipV6().map((address) => `[${address}]`),
    FastCheck.domain(),
    FastCheck.webUrl()
  )
  const bareHost = (url: string) => new URL(url).hostname.replace(/^\[|\]$/g, "")

  it("are classified without throwing, into at most 5 http(s) candidates; an address is an IP address", () => {
    FastCheck.assert(
      FastCheck.property(query, (text) => {
        const classified = classify(text)
        const candidates = candidatesOf(classified)
        expect(candidates.length).toBeLessThanOrEqual(5)
        for (const candidate of candidates) {
          expect(["http:", "https:"]).toContain(new URL(candidate).protocol)
          expect(typeof suggestedName(candidate)).toBe("string")
        }
        if (classified.kind === "address") expect(Net.isIP(classified.host.replace(/^\[|\]$/g, ""))).not.toBe(0)
        matchPreset(BUILT_IN, text)
      }),
      { numRuns: 3000 }
    )
  })

  // The whole resolution, as the endpoint runs it, offline: names have no address, and queries whose candidates
  // name a public address are left out (they would leave the machine); private ones are the guard's to refuse.
  const offline = ManagedRuntime.make(Layer.mergeAll(
    Outbound.layer({ allowPrivate: false, timeout: "1 second" }).pipe(
      Layer.provide(Layer.succeed(AddressGuard.AddressResolver, { resolve: () => Effect.succeed([]) }))
    ),
    Layer.succeed(McpPresets, BUILT_IN),
    Layer.succeed(McpProbeSettings, { timeout: Duration.seconds(1) })
  ))
  afterAll(() => offline.dispose())
  const encode = Schema.encodeSync(McpResolveResult)

  it("always resolve to an answer its schema encodes, with the guard's reason for a private address", async () => {
    await FastCheck.assert(
      FastCheck.asyncProperty(query, async (text) => {
        const candidates = candidatesOf(classify(text))
        FastCheck.pre(!candidates.some((candidate) => Net.isIP(bareHost(candidate)) !== 0 && AddressGuard.isPublic(bareHost(candidate))))
        const result = await offline.runPromise(resolve(text))
        encode(result)
        if (candidates.length > 0 && Net.isIP(bareHost(candidates[0]!)) !== 0) {
          expect(result).toMatchObject({ resolution: "not_found", attempted: candidates })
          expect(result.reason).toMatch(/^The outbound URL is not allowed: /)
        }
      }),
      { numRuns: 300 }
    )
  })
})
