/**
 * A fake GitHub REST API (v3) on 127.0.0.1 serving real git repositories (GitRepo): app JWTs verified for real,
 * installation and personal tokens scoped to repositories, trees (with GitHub's truncation), blobs, contents,
 * compare, injected failures, and webhook deliveries signed like GitHub's. Only the members our client reads,
 * under their real names.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import { type GitRepo, git } from "./GitRepo.js"

export interface Options {
  /** Entries a recursive tree listing returns before it says `truncated: true` (GitHub: 100,000). */
  readonly treeLimit?: number
  /**
   * Bytes a recursive tree listing's entries (their JSON, as sent) may take before it says `truncated: true`
   * (GitHub: 7 MB). A non-recursive listing is never cut, by either limit: GitHub documents its limits for the
   * recursive listing only.
   */
  readonly treeBytesLimit?: number
  /** Files a comparison lists at most (GitHub: 300); the rest are left out without a word, as GitHub does. */
  readonly compareFileLimit?: number
  /** Lifetime of an installation token, in milliseconds (GitHub: one hour). */
  readonly tokenLifetimeMs?: number
  /** A path the API lives under, as on GitHub Enterprise Server (`/api/v3`). */
  readonly basePath?: string
  readonly appId?: number
  readonly webhookSecret?: string
  /** The loopback port to listen on (default: a free one), for a server others are told about in advance. */
  readonly port?: number
}

export interface LoggedRequest {
  readonly method: string
  /** Path and query, without `basePath`. */
  readonly path: string
  /** `null` while unanswered (see `hangNext`). */
  status: number | null
}

export interface DeliverOptions {
  readonly url: string
  /** Defaults to the fake's `webhookSecret`. */
  readonly secret?: string
  readonly deliveryId?: string
  /** Sent instead of the computed signature (a forged or stale one). */
  readonly signature?: string
  /** Sent instead of the JSON of the payload (the signature is computed over this text). */
  readonly rawBody?: string
}

export interface FakeGitHub {
  /** The API's base URL (with `basePath`), as `ORGPLANE_CODEHOST_API_URL` takes it. */
  readonly url: string
  readonly appId: number
  /** The app's private key, PKCS#1 PEM like the ones GitHub hands out. */
  readonly privateKeyPem: string
  readonly webhookSecret: string
  /** Serves `gitRepo` as `fullName` (`owner/name`); its repository id. */
  readonly addRepository: (fullName: string, gitRepo: GitRepo, options?: { readonly id?: number; readonly private?: boolean }) => number
  readonly repositoryId: (fullName: string) => number
  /** Deletes the repository: 404 from now on, for every token. */
  readonly removeRepository: (fullName: string) => void
  /** The new name answers; the old one redirects (301) to `/repositories/{id}`, as GitHub does. */
  readonly renameRepository: (from: string, to: string) => void
  /** An installation of the app with access to these repositories (by id, so a rename keeps its access). */
  readonly addInstallation: (installationId: number, fullNames: ReadonlyArray<string>) => void
  readonly removeFromInstallation: (installationId: number, fullNames: ReadonlyArray<string>) => void
  /** Uninstalls the app: its tokens answer 401, new token requests 404. */
  readonly removeInstallation: (installationId: number) => void
  /** A personal (or fine-grained) access token seeing these repositories. */
  readonly addToken: (token: string, fullNames: ReadonlyArray<string>) => void
  /**
   * Answers the next `count` API or token requests with `status`. A 429 or 403 comes as GitHub's rate limits do:
   * with `retry-after` (default 60) and `x-ratelimit-remaining: 0`.
   */
  readonly failNext: (count: number, status: number, options?: { readonly retryAfter?: number }) => void
  /** Leaves the next `count` API or token requests unanswered (until `close`). */
  readonly hangNext: (count: number) => void
  readonly requests: ReadonlyArray<LoggedRequest>
  /** Installation tokens issued so far. */
  readonly tokensIssued: () => number
  /** POSTs a webhook the way GitHub does; the receiver's status and body text. */
  readonly deliver: (event: string, payload: unknown, options: DeliverOptions) => Promise<{ readonly status: number; readonly body: string }>
  readonly close: () => Promise<void>
}

// ---------------------------------------------------------------------------------------------------------------
// Reading git objects: one long-lived `git cat-file --batch` per repository, so a blob costs no process start.

interface GitObject {
  readonly sha: string
  readonly type: string
  readonly content: Buffer
}

const gitEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", LC_ALL: "C" })

interface ObjectReader {
  /** The object a name (sha, branch, `rev^{tree}`, `rev:path`) names, or `undefined`. */
  readonly read: (name: string) => Promise<GitObject | undefined>
  readonly close: () => void
}

const objectReader = (dir: string): ObjectReader => {
  let child: ChildProcessWithoutNullStreams | undefined
  let buffer: Buffer = Buffer.alloc(0)
  const waiting: Array<{ readonly resolve: (object: GitObject | undefined) => void; readonly reject: (error: Error) => void }> = []
  // Answers come in request order: `<sha> <type> <size>\n<content>\n`, or `<name> missing\n`.
  const drain = () => {
    while (waiting.length > 0) {
      const newline = buffer.indexOf(10)
      if (newline < 0) return
      const header = buffer.subarray(0, newline).toString("utf8")
      if (header.endsWith(" missing") || header.endsWith(" ambiguous")) {
        buffer = buffer.subarray(newline + 1)
        waiting.shift()!.resolve(undefined)
        continue
      }
      const [sha, type, size] = header.split(" ")
      const end = newline + 1 + Number(size)
      if (buffer.length < end + 1) return
      const content = Buffer.from(buffer.subarray(newline + 1, end))
      buffer = buffer.subarray(end + 1)
      waiting.shift()!.resolve({ sha, type, content })
    }
  }
  const start = () => {
    const process_ = spawn("git", ["cat-file", "--batch"], { cwd: dir, env: gitEnv() })
    process_.stdout.on("data", (chunk: Buffer) => {
      buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
      drain()
    })
    const fail = (error: Error) => {
      child = undefined
      for (const waiter of waiting.splice(0)) waiter.reject(error)
    }
    process_.on("error", fail)
    process_.on("exit", () => fail(new Error("git cat-file exited")))
    return process_
  }
  return {
    read: (name) =>
      new Promise((resolve, reject) => {
        if (/[\n\0]/.test(name)) return resolve(undefined)
        child ??= start()
        waiting.push({ resolve, reject })
        child.stdin.write(`${name}\n`)
      }),
    close: () => {
      child?.stdin.end()
      child = undefined
    }
  }
}

interface TreeEntry {
  readonly path: string
  readonly mode: string
  readonly type: string
  readonly sha: string
  readonly size: number | undefined
}

/** `git ls-tree` of a tree (recursive: every entry, trees included, parents before their contents). */
const listTree = async (dir: string, treeSha: string, recursive: boolean): Promise<Array<TreeEntry>> => {
  const out = await git(dir, ["ls-tree", "-z", "-l", ...(recursive ? ["-r", "-t"] : []), treeSha])
  return out.split("\0").filter((line) => line !== "").map((line) => {
    const tab = line.indexOf("\t")
    const [mode, type, sha, size] = line.slice(0, tab).split(/ +/)
    return { path: line.slice(tab + 1), mode, type, sha, size: size === "-" ? undefined : Number(size) }
  })
}

// ---------------------------------------------------------------------------------------------------------------
// The app's credentials.

const base64url = (value: string) => Buffer.from(value, "base64url").toString("utf8")

/** Checks an app JWT as GitHub does: RS256 by the app's key, `iss` the app, not expired, at most 10 minutes long. */
const verifyAppJwt = (jwt: string, publicKey: NodeCrypto.KeyObject, appId: number): string | undefined => {
  const parts = jwt.split(".")
  if (parts.length !== 3) return "A JSON web token could not be decoded"
  try {
    const header = JSON.parse(base64url(parts[0])) as { alg?: unknown }
    if (header.alg !== "RS256") return "'alg' must be RS256"
    const signed = NodeCrypto.verify("RSA-SHA256", Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, Buffer.from(parts[2], "base64url"))
    if (!signed) return "A JSON web token could not be decoded"
    const claims = JSON.parse(base64url(parts[1])) as { iss?: unknown; iat?: unknown; exp?: unknown }
    const now = Math.floor(Date.now() / 1000)
    if (typeof claims.iat !== "number" || typeof claims.exp !== "number") return "'Issued at' and 'Expiration time' claims are required"
    if (claims.exp <= now) return "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
    if (claims.exp - claims.iat > 600) return "'Expiration time' claim ('exp') is too far in the future"
    if (claims.iat > now + 60) return "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
    if (String(claims.iss) !== String(appId)) return "'Issuer' claim ('iss') must match the app"
    return undefined
  } catch {
    return "A JSON web token could not be decoded"
  }
}

const randomToken = (prefix: string) => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
  return prefix + Array.from(NodeCrypto.randomBytes(36), (byte) => alphabet[byte % alphabet.length]).join("")
}

/** Base64 in lines of 60 characters, as GitHub sends blobs and contents. */
const base64Lines = (content: Buffer) => (content.toString("base64").match(/.{1,60}/g) ?? []).map((line) => `${line}\n`).join("")

const documentationUrl = "https://docs.github.com/rest"

class Reply {
  constructor(readonly status: number, readonly body: unknown, readonly headers: Record<string, string> = {}) {}
}

const notFound = () => new Reply(404, { message: "Not Found", documentation_url: documentationUrl, status: "404" })

// ---------------------------------------------------------------------------------------------------------------

interface Repository {
  readonly id: number
  fullName: string
  readonly private: boolean
  readonly git: GitRepo
  readonly objects: ObjectReader
}

interface IssuedToken {
  readonly expiresAt: number
  readonly installationId: number | undefined
  readonly repositoryIds: () => ReadonlySet<number>
}

export const start = async (options: Options = {}): Promise<FakeGitHub> => {
  const treeLimit = options.treeLimit ?? 100_000
  const treeBytesLimit = options.treeBytesLimit ?? 7 * 1024 * 1024
  const compareFileLimit = options.compareFileLimit ?? 300
  const tokenLifetimeMs = options.tokenLifetimeMs ?? 60 * 60 * 1000
  const basePath = (options.basePath ?? "").replace(/\/+$/, "")
  const appId = options.appId ?? 4242
  const webhookSecret = options.webhookSecret ?? randomToken("whsec_")
  const { privateKey, publicKey } = NodeCrypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
  const privateKeyPem = privateKey.export({ type: "pkcs1", format: "pem" }).toString()

  const repositories = new Map<number, Repository>()
  const byName = new Map<string, number>()
  const renamed = new Map<string, number>()
  const installations = new Map<number, Set<number>>()
  const tokens = new Map<string, IssuedToken>()
  const requests: Array<LoggedRequest> = []
  const hung = new Set<Http.ServerResponse>()
  let failures: { count: number; status: number; retryAfter: number } = { count: 0, status: 500, retryAfter: 60 }
  let hangs = 0
  let nextRepositoryId = 1000
  let issued = 0

  const key = (fullName: string) => fullName.toLowerCase()
  const repositoryNamed = (fullName: string) => {
    const id = byName.get(key(fullName))
    if (id === undefined) throw new Error(`FakeGitHub: no repository ${fullName}`)
    return repositories.get(id)!
  }
  const idsOf = (fullNames: ReadonlyArray<string>) => fullNames.map((fullName) => repositoryNamed(fullName).id)

  let origin = ""
  const apiUrl = (path: string) => `${origin}${basePath}${path}`

  // --- the routes -------------------------------------------------------------------------------------------------

  const issueInstallationToken = (installationId: number, authorization: string | undefined): Reply => {
    const jwt = /^bearer\s+(.+)$/i.exec(authorization ?? "")?.[1]
    if (jwt === undefined) {
      return new Reply(401, { message: "A JSON web token could not be decoded", documentation_url: documentationUrl, status: "401" })
    }
    const problem = verifyAppJwt(jwt, publicKey, appId)
    if (problem !== undefined) return new Reply(401, { message: problem, documentation_url: documentationUrl, status: "401" })
    if (!installations.has(installationId)) return notFound()
    const token = randomToken("ghs_")
    const expiresAt = Date.now() + tokenLifetimeMs
    tokens.set(token, { expiresAt, installationId, repositoryIds: () => installations.get(installationId) ?? new Set() })
    issued++
    return new Reply(201, {
      token,
      expires_at: new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, "Z"),
      permissions: { contents: "read", metadata: "read" },
      repository_selection: "selected"
    })
  }

  /** The repositories a request's token sees, or a 401 reply. */
  const authenticate = (authorization: string | undefined): ReadonlySet<number> | Reply => {
    const token = /^(?:bearer|token)\s+(.+)$/i.exec(authorization ?? "")?.[1]?.trim()
    if (token === undefined) return new Reply(401, { message: "Requires authentication", documentation_url: documentationUrl, status: "401" })
    const found = tokens.get(token)
    const live = found !== undefined && found.expiresAt > Date.now() &&
      (found.installationId === undefined || installations.has(found.installationId))
    if (!live) return new Reply(401, { message: "Bad credentials", documentation_url: documentationUrl, status: "401" })
    return found.repositoryIds()
  }

  const commitReply = async (repository: Repository, ref: string) => {
    const commit = await repository.objects.read(`${ref}^{commit}`)
    if (commit === undefined) return new Reply(422, { message: `No commit found for SHA: ${ref}`, documentation_url: documentationUrl, status: "422" })
    const text = commit.content.toString("utf8")
    const tree = /^tree ([0-9a-f]{40})$/m.exec(text)![1]
    const parents = [...text.matchAll(/^parent ([0-9a-f]{40})$/gm)].map((match) => ({ sha: match[1] }))
    const message = text.slice(text.indexOf("\n\n") + 2)
    return new Reply(200, {
      sha: commit.sha,
      url: apiUrl(`/repos/${repository.fullName}/commits/${commit.sha}`),
      commit: { message, tree: { sha: tree, url: apiUrl(`/repos/${repository.fullName}/git/trees/${tree}`) } },
      parents
    })
  }

  const treeCache = new Map<string, Array<TreeEntry>>()
  const treeReply = async (repository: Repository, treeish: string, recursive: boolean) => {
    const tree = await repository.objects.read(`${treeish}^{tree}`)
    if (tree === undefined) return notFound()
    const cacheKey = `${repository.id}:${tree.sha}:${recursive}`
    let entries = treeCache.get(cacheKey)
    if (entries === undefined) {
      entries = await listTree(repository.git.dir, tree.sha, recursive)
      treeCache.set(cacheKey, entries)
    }
    const listed = entries.map((entry) => ({
      path: entry.path,
      mode: entry.mode,
      type: entry.type,
      sha: entry.sha,
      ...(entry.size === undefined ? {} : { size: entry.size }),
      url: apiUrl(`/repos/${repository.fullName}/git/${entry.type === "tree" ? "trees" : "blobs"}/${entry.sha}`)
    }))
    // Like GitHub: a recursive listing stops at `treeLimit` entries or `treeBytesLimit` bytes of them, whichever comes first.
    let kept = listed.length
    if (recursive) {
      let bytes = 2
      for (let i = 0; i < listed.length; i++) {
        bytes += Buffer.byteLength(JSON.stringify(listed[i])) + (i > 0 ? 1 : 0)
        if (i >= treeLimit || bytes > treeBytesLimit) {
          kept = i
          break
        }
      }
    }
    const truncated = kept < listed.length
    return new Reply(200, {
      sha: tree.sha,
      url: apiUrl(`/repos/${repository.fullName}/git/trees/${tree.sha}`),
      tree: truncated ? listed.slice(0, kept) : listed,
      truncated
    })
  }

  const blobReply = async (repository: Repository, sha: string) => {
    const blob = /^[0-9a-f]{40}$/.test(sha) ? await repository.objects.read(sha) : undefined
    if (blob === undefined || blob.type !== "blob") return notFound()
    return new Reply(200, {
      sha: blob.sha,
      node_id: `B_${blob.sha}`,
      size: blob.content.length,
      url: apiUrl(`/repos/${repository.fullName}/git/blobs/${blob.sha}`),
      content: base64Lines(blob.content),
      encoding: "base64"
    })
  }

  const contentsReply = async (repository: Repository, path: string, ref: string | null) => {
    const at = ref ?? "HEAD"
    const object = await repository.objects.read(`${at}:${path}`)
    if (object === undefined) return notFound()
    if (object.type === "tree") {
      const entries = await listTree(repository.git.dir, object.sha, false)
      return new Reply(200, entries.map((entry) => ({
        type: entry.type === "tree" ? "dir" : entry.type === "commit" ? "submodule" : "file",
        name: entry.path,
        path: `${path}/${entry.path}`,
        sha: entry.sha,
        size: entry.size ?? 0
      })))
    }
    if (object.type !== "blob") return notFound()
    // Like GitHub: above 1 MB the contents API leaves the content out; the blobs API has it.
    const large = object.content.length > 1024 * 1024
    return new Reply(200, {
      type: "file",
      encoding: large ? "none" : "base64",
      size: object.content.length,
      name: path.split("/").at(-1),
      path,
      content: large ? "" : base64Lines(object.content),
      sha: object.sha
    })
  }

  const compareStatus: Record<string, string> = { A: "added", D: "removed", M: "modified", T: "changed", R: "renamed", C: "copied" }
  const compareReply = async (repository: Repository, basehead: string) => {
    const [base, head, ...rest] = basehead.split("...")
    if (head === undefined || rest.length > 0) return notFound()
    const baseCommit = await repository.objects.read(`${base}^{commit}`)
    const headCommit = await repository.objects.read(`${head}^{commit}`)
    if (baseCommit === undefined || headCommit === undefined) return notFound()
    const dir = repository.git.dir
    let mergeBase: string
    try {
      mergeBase = (await git(dir, ["merge-base", baseCommit.sha, headCommit.sha])).trim()
    } catch {
      return new Reply(404, { message: `No common ancestor between ${base} and ${head}.`, documentation_url: documentationUrl, status: "404" })
    }
    const count = async (range: string) => Number((await git(dir, ["rev-list", "--count", range])).trim())
    const aheadBy = await count(`${mergeBase}..${headCommit.sha}`)
    const behindBy = await count(`${mergeBase}..${baseCommit.sha}`)
    const fields = (await git(dir, ["diff", "--raw", "-z", "-M", "--no-abbrev", mergeBase, headCommit.sha])).split("\0")
    const files: Array<Record<string, unknown>> = []
    for (let i = 0; i < fields.length - 1;) {
      const [, , oldSha, newSha, status] = fields[i].slice(1).split(" ")
      const letter = status[0]
      const two = letter === "R" || letter === "C"
      const path = fields[i + 1]
      const target = two ? fields[i + 2] : path
      files.push({
        sha: letter === "D" ? oldSha : newSha,
        filename: target,
        status: compareStatus[letter] ?? "modified",
        ...(two ? { previous_filename: path } : {})
      })
      i += two ? 3 : 2
    }
    return new Reply(200, {
      status: aheadBy === 0 && behindBy === 0 ? "identical" : behindBy === 0 ? "ahead" : aheadBy === 0 ? "behind" : "diverged",
      ahead_by: aheadBy,
      behind_by: behindBy,
      total_commits: aheadBy,
      merge_base_commit: { sha: mergeBase },
      files: files.slice(0, compareFileLimit)
    })
  }

  const repositoryRoute = async (repository: Repository, rest: string, query: URLSearchParams) => {
    let match: RegExpExecArray | null
    if ((match = /^\/commits\/(.+)$/.exec(rest))) return commitReply(repository, decodeURIComponent(match[1]))
    if ((match = /^\/git\/trees\/(.+)$/.exec(rest))) return treeReply(repository, decodeURIComponent(match[1]), query.has("recursive"))
    if ((match = /^\/git\/blobs\/([^/]+)$/.exec(rest))) return blobReply(repository, decodeURIComponent(match[1]))
    if ((match = /^\/contents\/(.+)$/.exec(rest))) {
      return contentsReply(repository, match[1].split("/").map(decodeURIComponent).join("/"), query.get("ref"))
    }
    if ((match = /^\/compare\/(.+)$/.exec(rest))) return compareReply(repository, decodeURIComponent(match[1]))
    return notFound()
  }

  const route = async (request: Http.IncomingMessage, path: string, query: URLSearchParams): Promise<Reply> => {
    const method = request.method ?? "GET"
    const authorization = request.headers.authorization
    let match: RegExpExecArray | null
    if ((match = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(path))) {
      if (method !== "POST") return notFound()
      return issueInstallationToken(Number(match[1]), authorization)
    }
    let repository: Repository | undefined
    let rest: string
    if ((match = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(path))) {
      const fullName = `${decodeURIComponent(match[1])}/${decodeURIComponent(match[2])}`
      rest = match[3] ?? ""
      const moved = renamed.get(key(fullName))
      if (moved !== undefined && !byName.has(key(fullName))) {
        const location = apiUrl(`/repositories/${moved}${rest}${query.size > 0 ? `?${query}` : ""}`)
        return new Reply(301, { message: "Moved Permanently", url: location, documentation_url: documentationUrl }, { location })
      }
      const id = byName.get(key(fullName))
      repository = id === undefined ? undefined : repositories.get(id)
    } else if ((match = /^\/repositories\/(\d+)(\/.*)?$/.exec(path))) {
      repository = repositories.get(Number(match[1]))
      rest = match[2] ?? ""
    } else {
      return notFound()
    }
    const visible = authenticate(authorization)
    if (visible instanceof Reply) return visible
    // Like GitHub: a repository the token cannot see does not exist.
    if (repository === undefined || !visible.has(repository.id)) return notFound()
    if (method !== "GET") return notFound()
    return repositoryRoute(repository, rest, query)
  }

  const send = (response: Http.ServerResponse, reply: Reply) => {
    const body = JSON.stringify(reply.body)
    response.writeHead(reply.status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(body),
      "x-github-media-type": "github.v3; format=json",
      ...reply.headers
    })
    response.end(body)
  }

  const server = Http.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    const inside = url.pathname === basePath || url.pathname.startsWith(`${basePath}/`)
    const path = inside ? url.pathname.slice(basePath.length) : url.pathname
    const logged: LoggedRequest = { method: request.method ?? "GET", path: `${path}${url.search}`, status: null }
    requests.push(logged)
    response.on("finish", () => {
      logged.status = response.statusCode
    })
    // Drain the request body (token requests carry one) before answering.
    request.resume()
    request.on("end", () => {
      const guarded = inside && /^\/(repos|repositories|app\/installations)\//.test(path)
      if (guarded && hangs > 0) {
        hangs--
        hung.add(response)
        return
      }
      if (guarded && failures.count > 0) {
        failures.count--
        const { status, retryAfter } = failures
        const headers: Record<string, string> = status === 429 || status === 403
          ? { "retry-after": String(retryAfter), "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + retryAfter) }
          : {}
        const message = status === 429 ? "API rate limit exceeded" : status >= 500 ? "Server Error" : "Injected failure"
        return send(response, new Reply(status, { message, documentation_url: documentationUrl, status: String(status) }, headers))
      }
      if (!inside) return send(response, notFound())
      route(request, path, url.searchParams).then(
        (reply) => send(response, reply),
        (error: unknown) => send(response, new Reply(500, { message: `FakeGitHub: ${String(error)}` }))
      )
    })
  })
  // Idle connections outlive the client pool's 4 s (as in FakeSuites.ts): no request handed to a socket just closed.
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject)
      resolve()
    })
  })
  origin = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`

  const deliver: FakeGitHub["deliver"] = async (event, payload, deliverOptions) => {
    const body = deliverOptions.rawBody ?? JSON.stringify(payload)
    const secret = deliverOptions.secret ?? webhookSecret
    const signature = deliverOptions.signature ?? `sha256=${NodeCrypto.createHmac("sha256", secret).update(body).digest("hex")}`
    const response = await fetch(deliverOptions.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "GitHub-Hookshot/a1b2c3d",
        "x-github-event": event,
        "x-github-delivery": deliverOptions.deliveryId ?? NodeCrypto.randomUUID(),
        "x-github-hook-id": "1",
        "x-github-hook-installation-target-type": "integration",
        "x-github-hook-installation-target-id": String(appId),
        "x-hub-signature-256": signature
      },
      body
    })
    return { status: response.status, body: await response.text() }
  }

  return {
    url: `${origin}${basePath}`,
    appId,
    privateKeyPem,
    webhookSecret,
    addRepository: (fullName, gitRepo, repositoryOptions = {}) => {
      if (byName.has(key(fullName))) throw new Error(`FakeGitHub: ${fullName} exists`)
      const id = repositoryOptions.id ?? nextRepositoryId++
      repositories.set(id, { id, fullName, private: repositoryOptions.private ?? true, git: gitRepo, objects: objectReader(gitRepo.dir) })
      byName.set(key(fullName), id)
      return id
    },
    repositoryId: (fullName) => repositoryNamed(fullName).id,
    removeRepository: (fullName) => {
      const repository = repositoryNamed(fullName)
      repository.objects.close()
      repositories.delete(repository.id)
      byName.delete(key(fullName))
    },
    renameRepository: (from, to) => {
      const repository = repositoryNamed(from)
      byName.delete(key(from))
      byName.set(key(to), repository.id)
      renamed.set(key(from), repository.id)
      repository.fullName = to
    },
    addInstallation: (installationId, fullNames) => {
      const ids = installations.get(installationId) ?? new Set<number>()
      for (const id of idsOf(fullNames)) ids.add(id)
      installations.set(installationId, ids)
    },
    removeFromInstallation: (installationId, fullNames) => {
      for (const id of idsOf(fullNames)) installations.get(installationId)?.delete(id)
    },
    removeInstallation: (installationId) => {
      installations.delete(installationId)
    },
    addToken: (token, fullNames) => {
      const ids = new Set(idsOf(fullNames))
      tokens.set(token, { expiresAt: Number.POSITIVE_INFINITY, installationId: undefined, repositoryIds: () => ids })
    },
    failNext: (count, status, failOptions = {}) => {
      failures = { count, status, retryAfter: failOptions.retryAfter ?? 60 }
    },
    hangNext: (count) => {
      hangs = count
    },
    requests,
    tokensIssued: () => issued,
    deliver,
    close: async () => {
      for (const repository of repositories.values()) repository.objects.close()
      for (const response of hung) response.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Webhook payloads, with the members GitHub sends that a receiver reads.

const owner = (fullName: string) => fullName.split("/")[0]
const name = (fullName: string) => fullName.split("/").slice(1).join("/")
const sender = { login: "octocat", id: 1, type: "User" }
const account = (login: string) => ({ login, id: 100, type: "Organization" })
const repositorySummary = (fullName: string, id: number) => ({ id, node_id: `R_${id}`, name: name(fullName), full_name: fullName, private: true })

export const pushPayload = (args: {
  readonly fullName: string
  readonly ref: string
  readonly before: string
  readonly after: string
  readonly installationId: number
  readonly repositoryId: number
  readonly defaultBranch?: string
}) => {
  const zero = "0".repeat(40)
  return {
    ref: args.ref,
    before: args.before,
    after: args.after,
    created: args.before === zero,
    deleted: args.after === zero,
    forced: false,
    base_ref: null,
    compare: `https://github.com/${args.fullName}/compare/${args.before.slice(0, 12)}...${args.after.slice(0, 12)}`,
    commits: [],
    head_commit: args.after === zero ? null : { id: args.after, tree_id: null, message: "update" },
    repository: {
      ...repositorySummary(args.fullName, args.repositoryId),
      owner: { login: owner(args.fullName), name: owner(args.fullName), id: 100 },
      default_branch: args.defaultBranch ?? "main",
      master_branch: args.defaultBranch ?? "main"
    },
    pusher: { name: "octocat", email: "octocat@example.test" },
    installation: { id: args.installationId, node_id: `I_${args.installationId}` },
    sender
  }
}

export const installationDeletedPayload = (args: {
  readonly installationId: number
  readonly appId: number
  readonly account: string
  readonly repositories: ReadonlyArray<{ readonly fullName: string; readonly id: number }>
}) => ({
  action: "deleted",
  installation: { id: args.installationId, account: account(args.account), app_id: args.appId, repository_selection: "selected", target_type: "Organization" },
  repositories: args.repositories.map((repository) => repositorySummary(repository.fullName, repository.id)),
  sender
})

export const repositoriesRemovedPayload = (args: {
  readonly installationId: number
  readonly appId: number
  readonly account: string
  readonly removed: ReadonlyArray<{ readonly fullName: string; readonly id: number }>
}) => ({
  action: "removed",
  installation: { id: args.installationId, account: account(args.account), app_id: args.appId, repository_selection: "selected", target_type: "Organization" },
  repository_selection: "selected",
  repositories_added: [],
  repositories_removed: args.removed.map((repository) => repositorySummary(repository.fullName, repository.id)),
  requester: null,
  sender
})

export const repositoryRenamedPayload = (args: {
  readonly installationId: number
  readonly repositoryId: number
  readonly from: string
  readonly to: string
}) => ({
  action: "renamed",
  changes: { repository: { name: { from: name(args.from) } } },
  repository: {
    ...repositorySummary(args.to, args.repositoryId),
    owner: { login: owner(args.to), id: 100 },
    default_branch: "main"
  },
  installation: { id: args.installationId, node_id: `I_${args.installationId}` },
  sender
})
