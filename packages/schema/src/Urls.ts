/**
 * The one rule for every URL a request gives the server (docs/security.md, "URLs"): a field says which absolute URLs
 * it takes (`https`, also `http`, or loopback `http` only) and whether a path on this server is one, and everything
 * else is the same rule, checked by `urlProblem` and stated in the field's OpenAPI description and pattern.
 *
 * Why so strict: a URL is read by more than one parser (the server's, a browser's, a proxy's), and the WHATWG URL
 * parser browsers use reads `\` as `/`, drops tabs and newlines anywhere and white space around, and resolves dot
 * segments, so `/\evil.example/x.png` or `/\t/evil.example` stored as "a path on this server" is another host in the
 * browser that loads it. Nothing of that kind is needed in a URL typed into a form: it is refused, not repaired.
 */
import { trimmedString } from "./internal/trimmed.js"

/** The longest URL a request may give, in characters (after trimming). */
export const MAX_URL_CHARS = 2048

/** What a URL field takes besides the common rule. */
export interface UrlRule {
  /**
   * The absolute URLs it takes: `https`; `http` (https or http: a destination the server calls, whose outbound guard
   * refuses http unless private mode); `loopback` (http to 127.0.0.1, localhost or [::1] on any port, and no other
   * absolute URL: where a browser goes back to a CLI's listener).
   */
  readonly absolute: "https" | "http" | "loopback"
  /** A path on this server (`/logos/acme.png`) too. */
  readonly path?: boolean | undefined
  /** A query (`?a=b`) may follow; default true. */
  readonly query?: boolean | undefined
}

/** The rule as the OpenAPI document and docs/security.md state it (each field adds what it takes). */
export const URL_RULE =
  "The URL rule: at most 2048 characters once leading and trailing white space is removed; no white space, control character or backslash anywhere (the WHATWG URL parser browsers use reads `\\` as `/` and drops tabs and newlines, so `/\\host` is another host); an absolute URL starts with its scheme in lower case and `//`, names a host, and has no `user:password@` and no `#fragment`; a path on this server starts with exactly one `/` (never `//` or `/\\`) and stays on this server once its dot segments are resolved."

/** What one field takes, in words, after the common rule. */
export const describeRule = (rule: UrlRule): string => {
  const absolute = rule.absolute === "https"
    ? "an absolute `https` URL"
    : rule.absolute === "http"
    ? "an absolute `https` URL (`http` only where the server allows private destinations, `ORGPLANE_OUTBOUND_ALLOW_PRIVATE`)"
    : "an `http` URL on a loopback host (`http://127.0.0.1:<port>/…`, `http://localhost:<port>/…`, `http://[::1]:<port>/…`)"
  const path = rule.path === true ? " or a path on this server (`/…`)" : ""
  const query = rule.query === false ? ", without a query" : ""
  return `Takes ${absolute}${path}${query}. ${URL_RULE}`
}

/** White space (Unicode's, as `\s` has it), C0 controls, DEL and the backslash: never in a URL given to the server. */
const FORBIDDEN = /[\s\u0000-\u001f\u007f\\]/

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"])

/** An origin that no real one equals, to resolve a path against and see whether it stays there. */
const BASE = "https://origin.invalid"

const expected = (rule: UrlRule) =>
  `must be ${
    rule.absolute === "https" ? "an https URL" : rule.absolute === "http" ? "an http or https URL" : "a loopback http URL (http://127.0.0.1:<port>/…)"
  }${rule.path === true ? " or a path on this server starting with a single /" : ""}`

/** The rest of the rule, for a URL already read: no fragment, no query where none is taken. */
const tail = (text: string, rule: UrlRule): string | undefined => {
  if (text.includes("#")) return "must not carry a fragment (#…)"
  if (rule.query === false && text.includes("?")) return "must not carry a query (?…)"
  return undefined
}

/**
 * What is wrong with `text` as a URL of a field taking `rule`, if anything (undefined: nothing). `text` is what the
 * server stores: the schema trims it first.
 */
export const urlProblem = (text: string, rule: UrlRule): string | undefined => {
  if (text.length === 0) return expected(rule)
  if (text.length > MAX_URL_CHARS) return `must be at most ${MAX_URL_CHARS} characters`
  if (FORBIDDEN.test(text)) {
    return "must not contain white space, control characters or backslashes (browsers read \\ as /, and drop tabs and newlines)"
  }
  if (text.startsWith("/")) {
    if (rule.path !== true) return expected(rule)
    if (text.startsWith("//")) return "must start with a single / (browsers read //host as another host)"
    const resolved = URL.canParse(text, BASE) ? new URL(text, BASE) : undefined
    if (resolved === undefined || resolved.origin !== BASE || resolved.pathname.startsWith("//")) {
      return "must stay on this server once its dot segments are resolved (it would start with //, another host)"
    }
    return tail(text, rule)
  }
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//.exec(text)?.[1]
  const schemes = rule.absolute === "https" ? ["https"] : rule.absolute === "http" ? ["https", "http"] : ["http"]
  if (scheme === undefined || !schemes.includes(scheme)) return expected(rule)
  const url = URL.canParse(text) ? new URL(text) : undefined
  if (url === undefined || url.host === "") return `${expected(rule)} naming a host`
  const authority = text.slice(scheme.length + 3).split(/[/?#]/, 1)[0]!
  // `https:///host` is `https://host/` to the WHATWG parser, and a path without a host to RFC 3986's.
  if (authority === "") return `${expected(rule)} naming a host after //`
  if (authority.includes("@")) return "must not carry credentials (user:password@)"
  if (rule.absolute === "loopback" && !LOOPBACK_HOSTS.has(url.hostname)) return expected(rule)
  return tail(text, rule)
}

/** Whether `text` is a URL a field taking `rule` accepts. */
export const isUrl = (rule: UrlRule) => (text: string) => urlProblem(text, rule) === undefined

/** A character the rule lets through, in a pattern; `extra` excludes more. */
const allowed = (extra = "") => `[^\\s\\u0000-\\u001f\\u007f\\\\#${extra}]`

/**
 * The rule as a JSON Schema pattern: what it takes, but for the dot-segment resolution of paths, which a pattern
 * cannot follow (so the pattern is a necessary condition, the server's check the whole one).
 */
export const urlPattern = (rule: UrlRule): string => {
  const rest = rule.query === false ? `(?:/${allowed("?")}*)?` : `(?:[/?]${allowed()}*)?`
  const host = `${allowed("/?@")}+`
  const alternatives = [
    rule.absolute === "loopback"
      ? `http://(?:127\\.0\\.0\\.1|localhost|\\[::1\\])(?::[0-9]{1,5})?${rest}`
      : `${rule.absolute === "http" ? "https?" : "https"}://${host}${rest}`,
    ...(rule.path === true ? [`/(?!/)${allowed(rule.query === false ? "?" : "")}*`] : [])
  ]
  return `^(?:${alternatives.join("|")})$`
}

/**
 * A URL member of a request: trimmed, then checked against the rule (`urlProblem`), with the rule in its
 * description and pattern. `description` says what the URL is for.
 */
export const UrlOf = (
  rule: UrlRule,
  description: string,
  options: {
    readonly identifier?: string | undefined
    /** A further check of this field's (an MCP URL's query members), after the rule's. */
    readonly refine?: ((text: string) => string | undefined) | undefined
  } = {}
) => {
  const annotations = urlAnnotations(rule, description)
  // Generated values (`effect/Arbitrary`): URLs the rule takes (a further check of the field's may still refuse some).
  const generated = rule.absolute === "loopback" ? "^http://127\\.0\\.0\\.1:[1-9][0-9]{3}/[a-z]{0,8}$" : "^https://[a-z]{1,10}\\.example/[a-z]{0,10}$"
  const url = trimmedString((text) => urlProblem(text, rule) ?? options.refine?.(text), annotations.jsonSchema, annotations.description, generated)
  return options.identifier === undefined ? url : url.annotate({ identifier: options.identifier })
}

/**
 * The description and JSON Schema keywords of a URL member taking `rule` (for a schema built on `UrlOf`, say a
 * transformation): `jsonSchema` goes to a check's `toJsonSchema`, the description to the wire string's annotations.
 */
export const urlAnnotations = (rule: UrlRule, description: string) => {
  const full = `${description} ${describeRule(rule)}`
  return {
    description: full,
    jsonSchema: {
      format: rule.path === true ? "uri-reference" : "uri",
      minLength: 1,
      maxLength: MAX_URL_CHARS,
      pattern: urlPattern(rule)
    }
  }
}
