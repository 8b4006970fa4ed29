/**
 * Resolving what an admin typed to an MCP server (the reference's §1.3): classify the query (URL, bare host, IP
 * address, product name), match a curated preset, otherwise build at most 5 candidate endpoints in order of preference,
 * discover them all at once (each bounded by the probe timeout), and answer the first in order of preference,
 * not the first to answer, that qualifies. The rules are pure functions, tested one by one; `resolve` runs them.
 */
import { type MemberContext, type McpDiscovery, type McpPreset, type McpResolveResult, SECRET_QUERY_MEMBERS } from "@orgplane/schema"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Net from "node:net"
import { Outbound } from "../platform/Outbound.js"
import { authorize } from "../platform/Principal.js"
import { McpPresets, McpProbeSettings } from "./PresetsConfig.js"
import * as Requirements from "./Requirements.js"

export const MAX_QUERY_LENGTH = 200
export const MAX_CANDIDATES = 5

export type Classified =
  | { readonly kind: "url"; readonly url: string }
  | { readonly kind: "domain"; readonly host: string }
  /** An IP address in any form URL parsing reads as one (`127.1`, `0x7f.1`, `[::1]`, `::1`), as a URL host: `127.0.0.1`, `[::1]`. */
  | { readonly kind: "address"; readonly host: string }
  | { readonly kind: "name"; readonly slug: string }
  | { readonly kind: "invalid"; readonly reason: string }

export const messages = {
  empty: "Type a server URL or a product name.",
  tooLong: `Queries are limited to ${MAX_QUERY_LENGTH} characters.`,
  unparsableUrl: "That URL could not be parsed.",
  scheme: "An MCP server URL must use HTTP or HTTPS.",
  credentials: "An MCP server URL cannot contain credentials or a fragment.",
  secret: "An MCP server URL cannot carry a secret in its query (access_token, api_key, client_secret, token, refresh_token, id_token, code_verifier).",
  unparsableHost: "That host could not be parsed."
} as const

/** Dot-separated DNS labels (letters, digits, inner hyphens), at least two. */
const HOST = /^(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/
/** A product name: a letter or digit, then at most 63 letters, digits, spaces, `&`, `_`, `'` or `-`. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9 &_'-]{0,63}$/

const parse = (text: string) => (URL.canParse(text) ? new URL(text) : undefined)

/** A host typed without a scheme, as an https URL; an IPv6 address typed without its brackets gets them. */
const parseBare = (text: string) => parse(`https://${Net.isIPv6(text) ? `[${text}]` : text}`)

/**
 * Text that may be a host: it has a dot (or a character URL parsing reads as one, such as `．`) or a colon. Without
 * one it is a name, even a number URL parsing would read as an address (`42`, `0x`: products, not `0.0.0.42`).
 */
const hostLike = /[.:\u3002\uff0e\uff61]/

/** Whether a parsed URL's host is an IP address (URL parsing has normalized every IPv4 form to dotted decimal). */
const isAddress = (hostname: string) => hostname.startsWith("[") || Net.isIPv4(hostname)
const carriesSecret = (url: URL) => [...url.searchParams.keys()].some((name) => SECRET_QUERY_MEMBERS.includes(name.toLowerCase()))

/** Lower case, letters and digits only: how names and preset ids are compared. */
export const normalize = (text: string) => text.toLowerCase().replace(/[^a-z0-9]/g, "")

/**
 * What the query is. A host typed with a path or a query (`example.com/mcp`) is read as that https URL. An IP address
 * is a host too, never a name (`mcp.127.0.0.1` is no host at all): whatever URL parsing reads as one, full-width
 * digits, octal, hexadecimal and shortened forms included, as long as it looks like a host (`hostLike`).
 */
export const classify = (query: string): Classified => {
  const text = query.trim()
  if (text === "") return { kind: "invalid", reason: messages.empty }
  if (text.length > MAX_QUERY_LENGTH) return { kind: "invalid", reason: messages.tooLong }
  if (/^https?:\/\//i.test(text)) {
    const url = parse(text)
    if (url === undefined) return { kind: "invalid", reason: messages.unparsableUrl }
    if (url.protocol !== "http:" && url.protocol !== "https:") return { kind: "invalid", reason: messages.scheme }
    if (url.username !== "" || url.password !== "" || url.hash !== "" || text.includes("#")) return { kind: "invalid", reason: messages.credentials }
    if (carriesSecret(url)) return { kind: "invalid", reason: messages.secret }
    return { kind: "url", url: url.href }
  }
  if (hostLike.test(text) && !/\s/.test(text)) {
    const url = parseBare(text)
    const address = url !== undefined && isAddress(url.hostname)
    // The host as typed, not as decoded: `exa%41mple.com` is not a host someone types.
    const typedHost = text.split(/[/?#]/, 1)[0]!
    if (
      url === undefined || url.username !== "" || url.password !== "" || url.hash !== "" || text.includes("#") || typedHost.includes("%") ||
      (!address && !HOST.test(url.hostname))
    ) {
      return { kind: "invalid", reason: messages.unparsableHost }
    }
    if (url.port !== "" || url.pathname !== "/" || url.search !== "") {
      if (carriesSecret(url)) return { kind: "invalid", reason: messages.secret }
      return { kind: "url", url: url.href }
    }
    return address ? { kind: "address", host: url.hostname } : { kind: "domain", host: url.hostname }
  }
  if (NAME.test(text)) {
    const slug = normalize(text)
    return slug === "" ? { kind: "invalid", reason: messages.empty } : { kind: "name", slug }
  }
  return { kind: "invalid", reason: messages.empty }
}

const hostOf = (text: string) => (parse(text) ?? parse(`https://${text}`))?.hostname.toLowerCase()

/** The first preset (in list order) whose id or name is the query (ignoring case and punctuation), or whose URL's host is the query's. */
export const matchPreset = (presets: ReadonlyArray<McpPreset>, query: string): McpPreset | undefined => {
  const text = query.trim()
  const normalized = normalize(text)
  const host = hostOf(text)
  return presets.find((preset) =>
    (normalized !== "" && (normalized === normalize(preset.presetId) || normalized === normalize(preset.displayName))) ||
    (host !== undefined && host !== "" && host === hostOf(preset.url))
  )
}

/** The endpoints worth trying, in order of preference, each once, at most `MAX_CANDIDATES`. */
export const candidatesOf = (classified: Classified): ReadonlyArray<string> => {
  const urls: Array<string> = []
  switch (classified.kind) {
    case "invalid":
      return []
    case "url": {
      const url = new URL(classified.url)
      urls.push(url.href)
      if (url.pathname === "/" && url.search === "") urls.push(`${url.origin}/mcp`)
      break
    }
    case "domain": {
      const host = classified.host
      urls.push(`https://${host}/`, `https://${host}/mcp`)
      if (!host.startsWith("mcp.")) urls.push(`https://mcp.${host}/mcp`)
      break
    }
    case "address":
      urls.push(`https://${classified.host}/`, `https://${classified.host}/mcp`)
      break
    case "name": {
      const slug = classified.slug
      urls.push(`https://mcp.${slug}.com/mcp`, `https://mcp.${slug}.com/`, `https://mcp.${slug}.dev/mcp`, `https://mcp.${slug}.io/mcp`, `https://mcp.${slug}.ai/mcp`)
      break
    }
  }
  // Serialized as URL parsing does; a guess that is no URL at all is no candidate (never a failure).
  return [...new Set(urls.flatMap((url) => URL.canParse(url) ? [new URL(url).href] : []))].slice(0, MAX_CANDIDATES)
}

/**
 * Whether a discovery shows an MCP server worth answering. A server asking for a credential without OAuth
 * (`manual_bearer`) counts only when the candidate was not guessed from a bare product name: any web server at a
 * guessed host may answer 401.
 */
export const qualifies = (discovery: McpDiscovery | undefined, guessed: boolean): boolean => {
  if (discovery === undefined) return false
  if (discovery.server.initialize === "succeeded") return true
  if (discovery.status === "ready" && discovery.authentication.kind === "oauth") return true
  if (discovery.server.initialize !== "authentication_required") return false
  if (discovery.authentication.kind === "oauth") return true
  if (discovery.authentication.kind === "manual_bearer") return !guessed
  return false
}

/** The index of the first qualifying result in order of preference (whatever finished first), or -1. */
export const winnerOf = (results: ReadonlyArray<McpDiscovery | undefined>, guessed: boolean): number =>
  results.findIndex((result) => qualifies(result, guessed))

/** A connection name from the host: without leading `mcp`, `www` and `api` labels, the first label capitalised. */
export const suggestedName = (url: string): string => {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "")
  if (Net.isIP(host) !== 0) return host
  const labels = host.split(".").filter((label) => label !== "")
  while (labels.length > 1 && ["mcp", "www", "api"].includes(labels[0]!.toLowerCase())) labels.shift()
  const first = labels[0] ?? host
  return first.charAt(0).toUpperCase() + first.slice(1)
}

/** One candidate's probe: its discovery, or why the guard refused it. */
interface Probed {
  readonly discovery?: McpDiscovery
  readonly refused?: string
}

/** One candidate's discovery; a refusal by the guard (kept, to be reported), a timeout or anything unexpected is no answer. */
const probe = (url: string, timeout: Duration.Duration): Effect.Effect<Probed, never, Outbound> =>
  Requirements.discover({ url, timeout }).pipe(
    Effect.map((discovery): Probed => ({ discovery })),
    Effect.catchTag("DiscoveryRefused", (error) => Effect.succeed<Probed>({ refused: error.message })),
    Effect.orElseSucceed((): Probed => ({})),
    Effect.catchDefect((defect) => Effect.as(Effect.logWarning("MCP discovery failed unexpectedly", defect), {}))
  )

/** `refused` for the answer: the candidates the guard refused, when there are any. */
const refusals = (urls: ReadonlyArray<string>, probed: ReadonlyArray<Probed>) => {
  const refused = urls.flatMap((url, i) => (probed[i]?.refused === undefined ? [] : [{ url, reason: probed[i]!.refused! }]))
  return refused.length === 0 ? {} : { refused }
}

/** The whole resolution of a query. Always an answer: a query that cannot be used is `not_found` with `reason`. */
export const resolve = (query: string): Effect.Effect<McpResolveResult, never, Outbound | McpPresets | McpProbeSettings> =>
  Effect.gen(function*() {
    const classified = classify(query)
    if (classified.kind === "invalid") return { resolution: "not_found", attempted: [], reason: classified.reason }
    const presets = yield* McpPresets
    const { timeout } = yield* McpProbeSettings
    const preset = matchPreset(presets, query)
    if (preset !== undefined) {
      const probed = yield* probe(preset.url, timeout)
      const discovery = probed.discovery
      return {
        resolution: "preset",
        attempted: [preset.url],
        ...refusals([preset.url], [probed]),
        preset,
        ...(discovery !== undefined && qualifies(discovery, false)
          ? { match: { url: preset.url, suggestedName: preset.displayName, discovery } }
          : {})
      }
    }
    const candidates = candidatesOf(classified)
    const probed = yield* Effect.forEach(candidates, (url) => probe(url, timeout), { concurrency: "unbounded" })
    const results = probed.map((result) => result.discovery)
    const winner = winnerOf(results, classified.kind === "name")
    if (winner === -1) {
      // `reason`: the guard's refusal of the most preferred candidate it refused (a private address outside private
      // mode, http); `refused`: every refusal, by candidate.
      const first = probed.find((result) => result.refused !== undefined)?.refused
      return { resolution: "not_found", attempted: candidates, ...(first === undefined ? {} : { reason: first }), ...refusals(candidates, probed) }
    }
    const url = candidates[winner]!
    return {
      resolution: "discovered",
      attempted: candidates,
      ...refusals(candidates, probed),
      match: { url, suggestedName: suggestedName(url), discovery: results[winner]! }
    }
  })

const make = Effect.gen(function*() {
  const presets = yield* McpPresets
  return {
    resolve: Effect.fn("McpResolver.resolve")(function*(caller: MemberContext, query: string) {
      yield* authorize(caller, "mcp.resolve")
      return yield* resolve(query)
    }),
    presets: Effect.fn("McpResolver.presets")((caller: MemberContext) =>
      Effect.as(authorize(caller, "mcp.read"), { presets }))
  }
})

/**
 * The MCP discovery operations as the API offers them: the caller's role checked (owners and admins resolve; every
 * member reads the presets), nothing read from or written to the database. `resolve` takes the outbound guard, the
 * presets and the probe timeout from its caller's context (its requirements say so), like the database, rather than
 * from one captured when the service was built.
 */
export class McpResolver extends Context.Service<McpResolver>()("@orgplane/server/mcp/McpResolver", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
