/**
 * The GitHub (and GitHub Enterprise Server) REST client: a repository's head, its tree (whole, even when GitHub
 * truncates the listing), blobs, file contents and comparisons, as an installation of our GitHub App or with a
 * user's token. Every request goes through Outbound; failures say whether trying again later can help.
 */
import { createAppAuth } from "@octokit/auth-app"
import { request as octokitRequest } from "@octokit/request"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Semaphore from "effect/Semaphore"
import { Outbound, OutboundError } from "../../platform/Outbound.js"
import { type CodeHostApp, CodeHostConfig } from "./CodeHostConfig.js"

/** How a request authenticates: as an installation of the app (a short-lived token), or with a stored token. */
export type Credential =
  | { readonly _tag: "Installation"; readonly installationId: number }
  | { readonly _tag: "Token"; readonly token: Redacted.Redacted<string> }

export const Credential = {
  installation: (installationId: number): Credential => ({ _tag: "Installation", installationId }),
  token: (token: string | Redacted.Redacted<string>): Credential => ({ _tag: "Token", token: Redacted.isRedacted(token) ? token : Redacted.make(token) })
}

/**
 * A request GitHub did not answer usefully. `transient`: a rate limit, a server error, a timeout or a network
 * failure, which a later attempt may get past (retrying is the caller's job). Everything else, 404 included,
 * will fail the same way again. `status` is GitHub's, or `null` when no answer came.
 */
export class CodeHostError extends Data.TaggedError("CodeHostError")<{
  readonly status: number | null
  readonly transient: boolean
  readonly message: string
  /** When GitHub said how long to wait (`retry-after`, or the rate limit's reset), in seconds. */
  readonly retryAfterSeconds: number | null
}> {}

/** An installation credential on a server without a GitHub App configured. */
export class CodeHostNotConfigured extends Data.TaggedError("CodeHostNotConfigured")<{ readonly message: string }> {}

export type GitHubError = CodeHostError | CodeHostNotConfigured

export interface Head {
  readonly sha: string
  readonly treeSha: string
}

export interface TreeEntry {
  /** From the repository's root, `/`-separated. */
  readonly path: string
  readonly type: "blob" | "tree"
  readonly sha: string
  /** Bytes, for blobs. */
  readonly size: number | null
  /** A symbolic link (mode 120000): a blob holding its target (connectors/SymbolicLinks.ts follows it). */
  readonly link?: true
  /** An executable file (mode 100755). */
  readonly executable?: true
}

export interface Tree {
  /** Every blob and tree under the root, sorted by path (submodules are left out: they hold no files of ours). */
  readonly entries: ReadonlyArray<TreeEntry>
  /**
   * Whether the recursive listing was incomplete: GitHub cut it (`truncated`), or it was larger than Outbound
   * reads. When true, the entries came from walking the sub-trees.
   */
  readonly truncated: boolean
  /** Listings requested beyond the first, to complete a truncated one. */
  readonly walkedSubtrees: number
}

export type ChangeStatus = "added" | "removed" | "modified" | "renamed" | "copied" | "changed" | "unchanged"

export interface ChangedFile {
  readonly filename: string
  readonly status: ChangeStatus
  /** The blob at `head` (at `base` for a removed file), when GitHub gives one. */
  readonly sha: string | null
  readonly previousFilename: string | null
}

export interface Comparison {
  readonly status: "identical" | "ahead" | "behind" | "diverged"
  readonly aheadBy: number
  readonly behindBy: number
  readonly files: ReadonlyArray<ChangedFile>
  /**
   * False when GitHub may have left files out: it lists at most 300 changed files and says nothing about the
   * rest. Then only a full tree comparison is reliable.
   */
  readonly complete: boolean
}

export interface GitHubService {
  readonly head: (credential: Credential, fullName: string, ref: string) => Effect.Effect<Head, GitHubError>
  readonly tree: (credential: Credential, fullName: string, treeSha: string) => Effect.Effect<Tree, GitHubError>
  /** A blob as text (UTF-8; invalid bytes become U+FFFD). */
  readonly blob: (credential: Credential, fullName: string, sha: string) => Effect.Effect<string, GitHubError>
  readonly blobBytes: (credential: Credential, fullName: string, sha: string) => Effect.Effect<Uint8Array, GitHubError>
  /** A file's text at `ref`; `null` when there is no file at that path (nothing, or a folder). */
  readonly contents: (credential: Credential, fullName: string, path: string, ref: string) => Effect.Effect<string | null, GitHubError>
  /** What changed from `base` to `head` (GitHub's three-dot comparison: since their merge base). */
  readonly compare: (credential: Credential, fullName: string, base: string, head: string) => Effect.Effect<Comparison, GitHubError>
}

/** GitHub lists at most this many files in a comparison. */
export const compareFileLimit = 300

/** Tree listings in flight at once while walking a truncated tree. */
export const walkConcurrency = 8

/** An installation token is used until this long before it expires, so none expires during a request. */
export const tokenRefreshMarginMs = 60_000

// --- Response shapes: only the members we read. -----------------------------------------------------------------

const CommitResponse = Schema.Struct({
  sha: Schema.String,
  commit: Schema.Struct({ tree: Schema.Struct({ sha: Schema.String }) })
})

/** A member of `value` when it is an object, else undefined. */
const member = (value: unknown, key: PropertyKey): unknown => typeof value === "object" && value !== null ? Reflect.get(value, key) : undefined

/**
 * What of an answer did not decode: the first problem's field, and the entry it is in named by its `path` when it
 * has one (a tree entry), so one odd entry is told rather than "unexpected response" for the whole tree.
 */
export const undecodable = (json: unknown, error: Schema.SchemaError): string => {
  const issue = SchemaIssue.makeFormatterStandardSchemaV1()(error.issue).issues[0]
  if (issue === undefined) return "it does not match what orgplane reads"
  const at = (issue.path ?? []).map((key) => typeof key === "object" ? key.key : key)
  let entry: unknown = json
  let named: string | undefined
  for (const [i, key] of at.entries()) {
    if (typeof entry !== "object" || entry === null) break
    entry = member(entry, key)
    const path = i < at.length - 1 ? member(entry, "path") : undefined
    if (typeof path === "string") named = path
  }
  const field = at.map((key) => typeof key === "number" ? `[${key}]` : `.${String(key)}`).join("").replace(/^\./, "")
  return `${named === undefined ? "" : `entry \`${named.slice(0, 200)}\`, `}field \`${field || "(root)"}\`: ${issue.message.slice(0, 200)}`
}

const TreeResponse = Schema.Struct({
  sha: Schema.String,
  truncated: Schema.Boolean,
  tree: Schema.Array(Schema.Struct({
    path: Schema.String,
    type: Schema.Literals(["blob", "tree", "commit"]),
    sha: Schema.String,
    size: Schema.optional(Schema.Number),
    mode: Schema.optional(Schema.String)
  }))
})
type TreeResponse = typeof TreeResponse.Type

const BlobResponse = Schema.Struct({ sha: Schema.String, encoding: Schema.String, content: Schema.String })

const FileContents = Schema.Struct({
  type: Schema.Literal("file"),
  encoding: Schema.String,
  content: Schema.String,
  sha: Schema.String
})
/** A file, or anything else at that path (a folder's listing, a symlink, a submodule), which is not a file to us. */
const ContentsResponse = Schema.Union([FileContents, Schema.Array(Schema.Unknown), Schema.Struct({ type: Schema.String })])

const CompareResponse = Schema.Struct({
  status: Schema.Literals(["identical", "ahead", "behind", "diverged"]),
  ahead_by: Schema.Number,
  behind_by: Schema.Number,
  files: Schema.Array(Schema.Struct({
    filename: Schema.String,
    status: Schema.Literals(["added", "removed", "modified", "renamed", "copied", "changed", "unchanged"]),
    sha: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefault(Effect.succeed(null))),
    previous_filename: Schema.optional(Schema.String)
  })).pipe(Schema.withDecodingDefault(Effect.succeed([])))
})

const GitHubMessage = Schema.Struct({ message: Schema.String })

// --- Errors -------------------------------------------------------------------------------------------------------

const transientStatus = (status: number, headers: Readonly<Record<string, string | undefined>>) =>
  status === 429 || status >= 500 ||
  // GitHub answers an exhausted or secondary rate limit with 403 too; its headers tell it from a refusal.
  (status === 403 && (headers["x-ratelimit-remaining"] === "0" || headers["retry-after"] !== undefined))

const retryAfterSeconds = (headers: Readonly<Record<string, string | undefined>>): number | null => {
  const retryAfter = Number(headers["retry-after"])
  if (headers["retry-after"] !== undefined && Number.isFinite(retryAfter)) return Math.max(0, retryAfter)
  const reset = Number(headers["x-ratelimit-reset"])
  if (headers["x-ratelimit-remaining"] === "0" && Number.isFinite(reset)) return Math.max(0, Math.ceil(reset - Date.now() / 1000))
  return null
}

/** GitHub's own words, shortened: they name the problem ("Not Found", "Bad credentials") and never a secret. */
const quote = (text: string) => text.length > 200 ? `${text.slice(0, 200)}...` : text

const fromStatus = (what: string, status: number, headers: Readonly<Record<string, string | undefined>>, body: string) => {
  const said = Option.match(Schema.decodeUnknownOption(Schema.fromJsonString(GitHubMessage))(body), {
    onNone: () => "",
    onSome: ({ message }) => `: ${quote(message)}`
  })
  return new CodeHostError({
    status,
    transient: transientStatus(status, headers),
    message: `${what} answered ${status}${said}`,
    retryAfterSeconds: retryAfterSeconds(headers)
  })
}

const fromOutbound = (what: string, error: OutboundError) =>
  new CodeHostError({
    status: null,
    transient: error.reason === "timeout" || error.reason === "network",
    message: `${what} failed (${error.reason} at ${error.origin}): ${error.message}`,
    retryAfterSeconds: null
  })

/**
 * A listing larger than Outbound reads (`too_large`). Internal: a recursive listing that is too large is walked
 * folder by folder instead; anywhere else it becomes a CodeHostError.
 */
class TooLarge extends Data.TaggedError("TooLarge")<{ readonly what: string; readonly error: OutboundError }> {}

/** The OutboundError behind an error thrown by an octokit library (RequestError → TypeError → OutboundError). */
const outboundCause = (error: unknown): OutboundError | undefined => {
  for (let current = error, depth = 0; current instanceof Object && depth < 5; current = member(current, "cause"), depth++) {
    if (current instanceof OutboundError) return current
  }
  return undefined
}

/** The headers of a failed octokit request's response, those that are text. */
const headersOf = (response: unknown): Record<string, string> => {
  const headers = member(response, "headers")
  if (typeof headers !== "object" || headers === null) return {}
  return Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === "string"))
}

/** What `@octokit/auth-app` threw while getting an installation token. */
const fromTokenExchange = (installationId: number, error: unknown) => {
  const what = `POST /app/installations/${installationId}/access_tokens`
  const outbound = outboundCause(error)
  if (outbound !== undefined) return fromOutbound(what, outbound)
  const status = member(error, "status")
  if (typeof status === "number") {
    const response = member(error, "response")
    const data = member(response, "data")
    return fromStatus(what, status, headersOf(response), typeof data === "string" ? data : JSON.stringify(data ?? ""))
  }
  // Signing the app's JWT failed: the configured key is unusable, which no retry fixes.
  return new CodeHostError({ status: null, transient: false, message: `${what}: the app's JWT could not be made`, retryAfterSeconds: null })
}

// --- Installation tokens --------------------------------------------------------------------------------------

/**
 * The token cache for `@octokit/auth-app`. Its own cache keeps every token 59 minutes whatever GitHub said; this
 * one keeps a token until `tokenRefreshMarginMs` before the `expires_at` GitHub gave (a GitHub Enterprise Server
 * may issue shorter ones), and lets a token GitHub refused be dropped. auth-app stores
 * `token|createdAt|expiresAt|...` strings under the installation id, and reads an empty string as none cached.
 * `now` is the service's Effect clock, so tests can move past an expiry instead of waiting for it.
 */
export const tokenCache = (now: () => number, maxEntries = 10_000) => {
  const entries = new Map<string, string>()
  return {
    get: (key: string): string => {
      const value = entries.get(key)
      if (value === undefined) return ""
      const expiresAt = Date.parse(value.split("|")[2] ?? "")
      if (!(expiresAt - tokenRefreshMarginMs > now())) {
        entries.delete(key)
        return ""
      }
      return value
    },
    set: (key: string, value: string) => {
      entries.delete(key)
      entries.set(key, value)
      // Oldest first: Map keeps insertion order.
      if (entries.size > maxEntries) entries.delete(entries.keys().next().value!)
    },
    forget: (installationId: number) => {
      entries.delete(String(installationId))
    }
  }
}

const apiHeaders = { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" }

// --- The service -----------------------------------------------------------------------------------------------

const repositoryPath = (fullName: string) => {
  const parts = fullName.split("/")
  return parts.length === 2 && parts[0] !== "" && parts[1] !== "" ? `/repos/${parts.map(encodeURIComponent).join("/")}` : undefined
}

export const make: Effect.Effect<GitHubService, never, CodeHostConfig | Outbound> = Effect.gen(function*() {
  const config = yield* CodeHostConfig
  const outbound = yield* Outbound
  const clock = yield* Clock.Clock
  const cache = tokenCache(() => clock.currentTimeMillisUnsafe())

  const appAuth = (app: CodeHostApp) =>
    createAppAuth({
      appId: app.appId,
      privateKey: Redacted.value(app.privateKey),
      cache,
      // The token exchange goes through the same guard as every other request.
      request: octokitRequest.defaults({ baseUrl: config.apiUrl, headers: { "x-github-api-version": apiHeaders["x-github-api-version"] }, request: { fetch: outbound.fetch } })
    })
  const auth = config.app === undefined ? undefined : appAuth(config.app)

  const authorization = (credential: Credential): Effect.Effect<string, GitHubError> => {
    if (credential._tag === "Token") return Effect.succeed(`Bearer ${Redacted.value(credential.token)}`)
    if (auth === undefined) {
      return Effect.fail(new CodeHostNotConfigured({ message: "no GitHub App is configured (ORGPLANE_CODEHOST_APP_ID, ORGPLANE_CODEHOST_PRIVATE_KEY)" }))
    }
    const { installationId } = credential
    return Effect.tryPromise({
      try: () => auth({ type: "installation", installationId }),
      catch: (error) => fromTokenExchange(installationId, error)
    }).pipe(Effect.map(({ token }) => `Bearer ${token}`))
  }

  /**
   * One GET of a repository's part of the REST API, its JSON decoded with `schema`. An answer larger than
   * Outbound reads fails with `TooLarge`, for the caller to decide (see `get`).
   */
  const getOrTooLarge = <A>(credential: Credential, fullName: string, path: string, schema: Schema.Decoder<A>) =>
    Effect.gen(function*() {
      const base = repositoryPath(fullName)
      if (base === undefined) {
        return yield* new CodeHostError({ status: null, transient: false, message: "a repository is named owner/name", retryAfterSeconds: null })
      }
      const what = `GET ${base}${path.replace(/\?.*$/, "")}`
      const request = HttpClientRequest.get(`${config.apiUrl}${base}${path}`).pipe(
        HttpClientRequest.setHeaders({ ...apiHeaders, authorization: yield* authorization(credential) })
      )
      const response = yield* Effect.mapError(
        outbound.execute(request),
        (error): CodeHostError | TooLarge => error.reason === "too_large" ? new TooLarge({ what, error }) : fromOutbound(what, error)
      )
      const text = new TextDecoder().decode(response.body)
      if (response.status < 200 || response.status > 299) {
        // A refused installation token (revoked, or the installation suspended) is dropped, so the next attempt gets a new one.
        if (response.status === 401 && credential._tag === "Installation") cache.forget(credential.installationId)
        return yield* fromStatus(what, response.status, response.headers, text)
      }
      let json: unknown
      try {
        json = JSON.parse(text)
      } catch {
        return yield* new CodeHostError({ status: response.status, transient: false, message: `${what}: unexpected response (not JSON)`, retryAfterSeconds: null })
      }
      // The refused value is named in the message (`got "symlink"`).
      return yield* Schema.decodeUnknownEffect(schema, { reportInput: true })(json).pipe(
        Effect.mapError((error) =>
          new CodeHostError({
            status: response.status,
            transient: false,
            message: `${what}: unexpected response (${undecodable(json, error)})`,
            retryAfterSeconds: null
          })
        )
      )
    })

  /** One GET; an answer larger than Outbound reads is a CodeHostError that no retry fixes. */
  const get = <A>(credential: Credential, fullName: string, path: string, schema: Schema.Decoder<A>) =>
    getOrTooLarge(credential, fullName, path, schema).pipe(Effect.catchTag("TooLarge", ({ error, what }) => Effect.fail(fromOutbound(what, error))))

  const orNull = <A>(effect: Effect.Effect<A, GitHubError>) =>
    effect.pipe(Effect.catchIf((error: GitHubError) => error._tag === "CodeHostError" && error.status === 404, () => Effect.succeed(null)))

  const head = (credential: Credential, fullName: string, ref: string) =>
    get(credential, fullName, `/commits/${encodeURIComponent(ref)}`, CommitResponse).pipe(
      Effect.map((commit): Head => ({ sha: commit.sha, treeSha: commit.commit.tree.sha }))
    )

  const listing = (credential: Credential, fullName: string, treeSha: string, recursive: boolean) =>
    getOrTooLarge(credential, fullName, `/git/trees/${encodeURIComponent(treeSha)}${recursive ? "?recursive=1" : ""}`, TreeResponse)

  const entriesOf = (listed: TreeResponse, prefix: string): Array<TreeEntry> =>
    listed.tree.flatMap((entry) =>
      entry.type === "commit" ? [] : [{
        path: `${prefix}${entry.path}`,
        type: entry.type,
        sha: entry.sha,
        size: entry.type === "blob" ? entry.size ?? null : null,
        ...(entry.type === "blob" && entry.mode === "120000" ? { link: true as const } : {}),
        ...(entry.type === "blob" && entry.mode === "100755" ? { executable: true as const } : {})
      }]
    )

  const byPath = (a: TreeEntry, b: TreeEntry) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0

  const tree = (credential: Credential, fullName: string, treeSha: string) =>
    Effect.gen(function*() {
      // A recursive listing GitHub cut, or one larger than Outbound reads, is walked folder by folder.
      const root = yield* listing(credential, fullName, treeSha, true).pipe(Effect.catchTag("TooLarge", () => Effect.succeed(undefined)))
      if (root !== undefined && !root.truncated) return { entries: entriesOf(root, "").sort(byPath), truncated: false, walkedSubtrees: 0 } satisfies Tree
      // List each folder by itself and try every sub-folder whole first, as most are small.
      const permits = yield* Semaphore.make(walkConcurrency)
      let walked = 0
      const list = (sha: string, recursive: boolean) =>
        permits.withPermits(1)(Effect.suspend(() => {
          walked++
          return listing(credential, fullName, sha, recursive)
        }))
      // A single folder's own entries are all we can list of it: when even they are too many, the tree cannot be read whole.
      const tooManyEntries = (prefix: string, why: string) =>
        new CodeHostError({
          status: null,
          transient: false,
          message: `the folder ${prefix === "" ? "at the root" : `"${prefix.slice(0, -1)}"`} of ${fullName} has too many entries to list (${why})`,
          retryAfterSeconds: null
        })
      const folder = (sha: string, prefix: string): Effect.Effect<Array<TreeEntry>, GitHubError> =>
        Effect.gen(function*() {
          const children = yield* list(sha, false).pipe(
            Effect.catchTag("TooLarge", ({ error }) => Effect.fail(tooManyEntries(prefix, `its listing is too large: ${error.message}`)))
          )
          if (children.truncated) return yield* tooManyEntries(prefix, "GitHub truncated its listing")
          const below = yield* Effect.forEach(
            children.tree.filter((entry) => entry.type === "tree"),
            (child) => subtree(child.sha, `${prefix}${child.path}/`),
            { concurrency: "unbounded" }
          )
          return [...entriesOf(children, prefix), ...below.flat()]
        })
      const subtree = (sha: string, prefix: string): Effect.Effect<Array<TreeEntry>, GitHubError> =>
        list(sha, true).pipe(
          Effect.catchTag("TooLarge", () => Effect.succeed(undefined)),
          Effect.flatMap((listed) => listed === undefined || listed.truncated ? folder(sha, prefix) : Effect.succeed(entriesOf(listed, prefix)))
        )
      const entries = yield* folder(treeSha, "")
      return { entries: entries.sort(byPath), truncated: true, walkedSubtrees: walked } satisfies Tree
    })

  const blobBytes = (credential: Credential, fullName: string, sha: string) =>
    get(credential, fullName, `/git/blobs/${encodeURIComponent(sha)}`, BlobResponse).pipe(
      Effect.flatMap((blob) =>
        blob.encoding === "base64"
          ? Effect.succeed<Uint8Array>(Buffer.from(blob.content, "base64"))
          : blob.encoding === "utf-8"
          ? Effect.succeed<Uint8Array>(Buffer.from(blob.content, "utf8"))
          : Effect.fail(new CodeHostError({ status: 200, transient: false, message: `blob ${sha}: unknown encoding`, retryAfterSeconds: null }))
      )
    )

  const decodeText = (bytes: Uint8Array) => new TextDecoder().decode(bytes)
  const isFile = Schema.is(FileContents)

  const contents = (credential: Credential, fullName: string, path: string, ref: string) =>
    orNull(get(credential, fullName, `/contents/${path.split("/").map(encodeURIComponent).join("/")}?ref=${encodeURIComponent(ref)}`, ContentsResponse)).pipe(
      Effect.flatMap((found): Effect.Effect<string | null, GitHubError> => {
        if (found === null || !isFile(found)) return Effect.succeed(null)
        // Above 1 MB the contents API leaves the content out (`encoding: "none"`); the blob has it.
        if (found.encoding !== "base64") return Effect.map(blobBytes(credential, fullName, found.sha), decodeText)
        return Effect.succeed(decodeText(Buffer.from(found.content, "base64")))
      })
    )

  const compare = (credential: Credential, fullName: string, base: string, headRef: string) =>
    get(credential, fullName, `/compare/${encodeURIComponent(base)}...${encodeURIComponent(headRef)}`, CompareResponse).pipe(
      Effect.map((comparison): Comparison => ({
        status: comparison.status,
        aheadBy: comparison.ahead_by,
        behindBy: comparison.behind_by,
        files: comparison.files.map((file) => ({
          filename: file.filename,
          status: file.status,
          sha: file.sha,
          previousFilename: file.previous_filename ?? null
        })),
        complete: comparison.files.length < compareFileLimit
      }))
    )

  return {
    head,
    tree,
    blob: (credential, fullName, sha) => Effect.map(blobBytes(credential, fullName, sha), decodeText),
    blobBytes,
    contents,
    compare
  } satisfies GitHubService
})

/** Needs CodeHostConfig and Outbound. */
export class GitHub extends Context.Service<GitHub, GitHubService>()("@orgplane/server/integrations/codehost/GitHub", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}

/** Needs CodeHostConfig and Outbound. */
export const layer = GitHub.layer
