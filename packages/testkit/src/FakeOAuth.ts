/**
 * A fake OAuth 2.1 authorization server on 127.0.0.1, the kind an MCP server names in its protected-resource
 * metadata (RFC 9728). Written on `node:http` rather than the SDK's express router (`server/auth/router`): the
 * tests need switches the router has no room for (a token endpoint that fails or hangs, refresh-token rotation
 * that refuses the old token, client ID metadata documents, recorded requests).
 *
 * - Metadata: RFC 8414 at `/.well-known/oauth-authorization-server`, OpenID Connect discovery at
 *   `/.well-known/openid-configuration` (`metadata` picks which ones answer; the other answers 404).
 * - Clients: dynamic registration (RFC 7591) at `POST /register` when `dynamicRegistration` (default on; off: the
 *   metadata names no `registration_endpoint` and `/register` answers 404); client ID metadata documents when
 *   `clientIdMetadataDocuments` (a `client_id` that is an http(s) URL is fetched and must name itself and the
 *   redirect URI; plain http is accepted, this being loopback); pre-registered clients through `addClient`.
 * - `GET /authorize` (authorization code, PKCE S256 required): auto-approves by default (302 to the redirect URI
 *   with `code` and `state`); with `autoApprove: false` it answers 200 `{ "pending": id }` and the test calls
 *   `approve(id)` / `deny(id)`, which return the URL the browser would be sent to. An unknown client or redirect
 *   URI answers 400 (never a redirect, as RFC 6749 §4.1.2.1 asks); other errors redirect with `error`.
 * - `POST /token`: `authorization_code` (single-use code, redirect URI and client checked, wrong PKCE verifier →
 *   `invalid_grant`) and `refresh_token` with rotation: each refresh answers a new refresh token and the old one is
 *   refused from then on (`invalid_grant`). Confidential clients authenticate with `client_secret_basic` or
 *   `client_secret_post` (either, whatever they registered), before the grant is looked at (a failed client
 *   authentication does not spend the code); public clients (`none`) only with PKCE. The `resource` parameter (RFC 8707) is kept on the
 *   token (`verifyAccessToken` answers it) so a resource server can check the audience.
 * - Switches: `setTokenMode` makes the token endpoint answer an error status, answer slowly, or hang;
 *   `expireAccessTokens` ends every access token now (no waiting in tests); `accessTokenLifetimeSeconds`.
 * - `requests` records every request (method, path, headers, form or JSON parameters, the status answered).
 */
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"

export interface Options {
  /** Dynamic client registration (RFC 7591). Default true. */
  readonly dynamicRegistration?: boolean
  /** Accepts URL client IDs whose metadata document it fetches. Default false. */
  readonly clientIdMetadataDocuments?: boolean
  /** Which discovery documents answer. Default "both". */
  readonly metadata?: "oauth" | "oidc" | "both"
  /** Default ["mcp:read", "mcp:write"]; granted when the client asks for no scope. */
  readonly scopesSupported?: ReadonlyArray<string>
  /** Default 3600. */
  readonly accessTokenLifetimeSeconds?: number
  /** Default true: `/authorize` redirects at once. */
  readonly autoApprove?: boolean
}

export type TokenMode =
  | { readonly _tag: "ok" }
  /** Answers `status` with an OAuth error body (`server_error` unless given). */
  | { readonly _tag: "status"; readonly status: number; readonly error?: string }
  /** Waits `ms` before answering normally. */
  | { readonly _tag: "slow"; readonly ms: number }
  /** Never answers (until `close`). */
  | { readonly _tag: "hang" }

export interface RecordedRequest {
  readonly method: string
  /** Path and query. */
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** Query parameters, then form or JSON body parameters (strings only). */
  readonly params: Readonly<Record<string, string>>
  /** `null` while unanswered. */
  status: number | null
}

export interface Client {
  readonly client_id: string
  readonly client_secret?: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly token_endpoint_auth_method: "none" | "client_secret_basic" | "client_secret_post"
  readonly scope?: string
  readonly client_name?: string
}

export interface AccessTokenInfo {
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
  /** The `resource` (RFC 8707) the token was asked for, if any. */
  readonly resource?: string
  /** Milliseconds since the epoch. */
  readonly expiresAt: number
}

export interface FakeOAuth {
  /** The issuer, also the base URL of every endpoint. */
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** Registers a client as an administrator would (pre-registration). */
  readonly addClient: (client: Client) => void
  /** Clients registered so far (any way), by client ID. */
  readonly clients: () => ReadonlyMap<string, Client>
  /** Approves a pending authorization (`autoApprove: false`); the redirect URL with code and state. `scopes` grants fewer or other scopes than asked. */
  readonly approve: (pendingId: string, options?: { readonly scopes?: ReadonlyArray<string> }) => string
  /** Denies a pending authorization; the redirect URL with `error=access_denied`. */
  readonly deny: (pendingId: string) => string
  /** The live access token's grant, or undefined (unknown or expired). What a resource server checks. */
  readonly verifyAccessToken: (token: string) => AccessTokenInfo | undefined
  readonly setTokenMode: (mode: TokenMode) => void
  /** Every access token issued so far expires now. */
  readonly expireAccessTokens: () => void
  /** Tokens answered by `/token` so far. */
  readonly tokensIssued: () => number
  readonly close: () => Promise<void>
}

interface PendingAuthorization {
  readonly clientId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly state: string | undefined
  readonly scopes: ReadonlyArray<string>
  readonly resource: string | undefined
}

interface CodeGrant extends PendingAuthorization {
  readonly expiresAt: number
}

interface RefreshGrant {
  readonly clientId: string
  readonly scopes: ReadonlyArray<string>
  readonly resource: string | undefined
  used: boolean
}

const random = (prefix: string) => `${prefix}_${NodeCrypto.randomBytes(24).toString("base64url")}`

const json = (response: Http.ServerResponse, status: number, body: unknown, headers: Http.OutgoingHttpHeaders = {}) => {
  response.writeHead(status, { "content-type": "application/json", "cache-control": "no-store", ...headers })
  response.end(JSON.stringify(body))
}

const oauthError = (response: Http.ServerResponse, status: number, error: string, description: string, headers: Http.OutgoingHttpHeaders = {}) =>
  json(response, status, { error, error_description: description }, headers)

const readBody = (request: Http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const parseBody = (contentType: string | undefined, body: string): { params: Record<string, string>; json: unknown } => {
  if (body === "") return { params: {}, json: undefined }
  if (contentType?.includes("application/json")) {
    try {
      const parsed: unknown = JSON.parse(body)
      const params: Record<string, string> = {}
      if (parsed !== null && typeof parsed === "object") {
        for (const [key, value] of Object.entries(parsed)) if (typeof value === "string") params[key] = value
      }
      return { params, json: parsed }
    } catch {
      return { params: {}, json: undefined }
    }
  }
  return { params: Object.fromEntries(new URLSearchParams(body)), json: undefined }
}

const s256 = (verifier: string) => NodeCrypto.createHash("sha256").update(verifier).digest("base64url")

const splitScopes = (scope: string | undefined): Array<string> => (scope ?? "").split(" ").filter((s) => s !== "")

const isUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "https:" || url.protocol === "http:"
  } catch {
    return false
  }
}

export const start = async (options: Options = {}): Promise<FakeOAuth> => {
  const dynamicRegistration = options.dynamicRegistration ?? true
  const clientIdMetadataDocuments = options.clientIdMetadataDocuments ?? false
  const metadataKind = options.metadata ?? "both"
  const scopesSupported = options.scopesSupported ?? ["mcp:read", "mcp:write"]
  const accessTokenLifetimeSeconds = options.accessTokenLifetimeSeconds ?? 3600
  const autoApprove = options.autoApprove ?? true

  const requests: Array<RecordedRequest> = []
  const clients = new Map<string, Client>()
  const pending = new Map<string, PendingAuthorization>()
  const codes = new Map<string, CodeGrant>()
  const accessTokens = new Map<string, { clientId: string; scopes: ReadonlyArray<string>; resource: string | undefined; expiresAt: number }>()
  const refreshTokens = new Map<string, RefreshGrant>()
  const timers = new Set<NodeJS.Timeout>()
  let tokenMode: TokenMode = { _tag: "ok" }
  let issued = 0
  let url = ""

  const metadata = () => ({
    issuer: url,
    authorization_endpoint: `${url}/authorize`,
    token_endpoint: `${url}/token`,
    ...(dynamicRegistration ? { registration_endpoint: `${url}/register` } : {}),
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_basic", "client_secret_post"],
    scopes_supported: scopesSupported,
    ...(clientIdMetadataDocuments ? { client_id_metadata_document_supported: true } : {})
  })

  /** The client a `client_id` names: registered, or (when enabled) a client ID metadata document. */
  const findClient = async (clientId: string | undefined): Promise<Client | undefined> => {
    if (clientId === undefined) return undefined
    const known = clients.get(clientId)
    if (known !== undefined) return known
    if (!clientIdMetadataDocuments || !isUrl(clientId)) return undefined
    try {
      const answer = await fetch(clientId, { headers: { accept: "application/json" }, redirect: "error" })
      if (!answer.ok) return undefined
      const document = (await answer.json()) as Record<string, unknown>
      if (document.client_id !== clientId || !Array.isArray(document.redirect_uris)) return undefined
      return {
        client_id: clientId,
        redirect_uris: document.redirect_uris.filter((u): u is string => typeof u === "string"),
        token_endpoint_auth_method: "none",
        ...(typeof document.client_name === "string" ? { client_name: document.client_name } : {})
      }
    } catch {
      return undefined
    }
  }

  const redirectWith = (redirectUri: string, params: Record<string, string | undefined>) => {
    const target = new URL(redirectUri)
    for (const [key, value] of Object.entries(params)) if (value !== undefined) target.searchParams.set(key, value)
    return target.toString()
  }

  const issueCode = (authorization: PendingAuthorization, scopes: ReadonlyArray<string>) => {
    const code = random("code")
    codes.set(code, { ...authorization, scopes, expiresAt: Date.now() + 60_000 })
    return redirectWith(authorization.redirectUri, { code, state: authorization.state, iss: url })
  }

  const issueTokens = (response: Http.ServerResponse, grant: { clientId: string; scopes: ReadonlyArray<string>; resource: string | undefined }) => {
    const accessToken = random("at")
    const refreshToken = random("rt")
    accessTokens.set(accessToken, { ...grant, expiresAt: Date.now() + accessTokenLifetimeSeconds * 1000 })
    refreshTokens.set(refreshToken, { ...grant, used: false })
    issued += 1
    return json(response, 200, {
      access_token: accessToken,
      token_type: "Bearer",
      expires_in: accessTokenLifetimeSeconds,
      refresh_token: refreshToken,
      scope: grant.scopes.join(" ")
    })
  }

  const authenticateClient = async (
    request: Http.IncomingMessage,
    params: Record<string, string>
  ): Promise<{ client: Client } | { error: string; description: string }> => {
    let clientId = params.client_id
    let secret = params.client_secret
    const authorization = request.headers.authorization
    if (authorization?.startsWith("Basic ")) {
      const decoded = Buffer.from(authorization.slice(6), "base64").toString("utf8")
      const colon = decoded.indexOf(":")
      clientId = decodeURIComponent(decoded.slice(0, colon))
      secret = decodeURIComponent(decoded.slice(colon + 1))
    }
    const client = await findClient(clientId)
    if (client === undefined) return { error: "invalid_client", description: "unknown client" }
    if (client.token_endpoint_auth_method !== "none" && (client.client_secret === undefined || secret !== client.client_secret)) {
      return { error: "invalid_client", description: "client authentication failed" }
    }
    return { client }
  }

  const handleAuthorize = async (response: Http.ServerResponse, params: Record<string, string>) => {
    const client = await findClient(params.client_id)
    if (client === undefined) return oauthError(response, 400, "invalid_client", "unknown client_id")
    const redirectUri = params.redirect_uri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined)
    if (redirectUri === undefined || !client.redirect_uris.includes(redirectUri)) {
      return oauthError(response, 400, "invalid_request", "redirect_uri is not registered for this client")
    }
    const fail = (error: string, description: string) => {
      response.writeHead(302, { location: redirectWith(redirectUri, { error, error_description: description, state: params.state }) })
      response.end()
    }
    if (params.response_type !== "code") return fail("unsupported_response_type", "only response_type=code")
    if (params.code_challenge === undefined || params.code_challenge === "") return fail("invalid_request", "PKCE code_challenge is required")
    if (params.code_challenge_method !== "S256") return fail("invalid_request", "code_challenge_method must be S256")
    const requested = splitScopes(params.scope)
    const unknown = requested.filter((s) => !scopesSupported.includes(s))
    if (unknown.length > 0) return fail("invalid_scope", `unknown scopes: ${unknown.join(" ")}`)
    const authorization: PendingAuthorization = {
      clientId: client.client_id,
      redirectUri,
      codeChallenge: params.code_challenge,
      state: params.state,
      scopes: requested.length > 0 ? requested : [...scopesSupported],
      resource: params.resource
    }
    if (autoApprove) {
      response.writeHead(302, { location: issueCode(authorization, authorization.scopes) })
      return response.end()
    }
    const id = random("pending")
    pending.set(id, authorization)
    return json(response, 200, { pending: id })
  }

  const handleToken = async (request: Http.IncomingMessage, response: Http.ServerResponse, params: Record<string, string>) => {
    const authenticated = await authenticateClient(request, params)
    if ("error" in authenticated) return oauthError(response, 401, authenticated.error, authenticated.description)
    const { client } = authenticated
    switch (params.grant_type) {
      case "authorization_code": {
        const grant = params.code === undefined ? undefined : codes.get(params.code)
        if (params.code !== undefined) codes.delete(params.code) // single use, whatever happens next
        if (grant === undefined || grant.expiresAt < Date.now()) return oauthError(response, 400, "invalid_grant", "unknown, used or expired code")
        if (grant.clientId !== client.client_id) return oauthError(response, 400, "invalid_grant", "code issued to another client")
        if (params.redirect_uri !== undefined && params.redirect_uri !== grant.redirectUri) {
          return oauthError(response, 400, "invalid_grant", "redirect_uri differs from the authorization request")
        }
        if (params.code_verifier === undefined || s256(params.code_verifier) !== grant.codeChallenge) {
          return oauthError(response, 400, "invalid_grant", "PKCE verification failed")
        }
        return issueTokens(response, { clientId: client.client_id, scopes: grant.scopes, resource: params.resource ?? grant.resource })
      }
      case "refresh_token": {
        const grant = params.refresh_token === undefined ? undefined : refreshTokens.get(params.refresh_token)
        if (grant === undefined || grant.used) return oauthError(response, 400, "invalid_grant", "unknown or already used refresh token")
        if (grant.clientId !== client.client_id) return oauthError(response, 400, "invalid_grant", "refresh token issued to another client")
        const asked = splitScopes(params.scope)
        if (asked.some((s) => !grant.scopes.includes(s))) return oauthError(response, 400, "invalid_scope", "a refresh cannot widen the grant")
        grant.used = true
        return issueTokens(response, { clientId: client.client_id, scopes: asked.length > 0 ? asked : grant.scopes, resource: params.resource ?? grant.resource })
      }
      default:
        return oauthError(response, 400, "unsupported_grant_type", "authorization_code or refresh_token")
    }
  }

  const handleRegister = (response: Http.ServerResponse, body: unknown) => {
    if (body === null || typeof body !== "object") return oauthError(response, 400, "invalid_client_metadata", "a JSON object is required")
    const metadata = body as Record<string, unknown>
    const redirectUris = metadata.redirect_uris
    if (!Array.isArray(redirectUris) || redirectUris.length === 0 || !redirectUris.every((u) => typeof u === "string" && isUrl(u))) {
      return oauthError(response, 400, "invalid_redirect_uri", "redirect_uris must be a non-empty list of URLs")
    }
    const method = metadata.token_endpoint_auth_method ?? "client_secret_basic"
    if (method !== "none" && method !== "client_secret_basic" && method !== "client_secret_post") {
      return oauthError(response, 400, "invalid_client_metadata", "unsupported token_endpoint_auth_method")
    }
    const client: Client = {
      client_id: random("client"),
      ...(method === "none" ? {} : { client_secret: random("secret") }),
      redirect_uris: redirectUris as Array<string>,
      token_endpoint_auth_method: method,
      ...(typeof metadata.scope === "string" ? { scope: metadata.scope } : {}),
      ...(typeof metadata.client_name === "string" ? { client_name: metadata.client_name } : {})
    }
    clients.set(client.client_id, client)
    return json(response, 201, {
      ...metadata,
      ...client,
      client_id_issued_at: Math.floor(Date.now() / 1000),
      ...(client.client_secret === undefined ? {} : { client_secret_expires_at: 0 })
    })
  }

  const server = Http.createServer((request, response) => {
    void (async () => {
      const body = await readBody(request)
      const target = new URL(request.url ?? "/", "http://127.0.0.1")
      const parsed = parseBody(request.headers["content-type"], body)
      const params = { ...Object.fromEntries(target.searchParams), ...parsed.params }
      const record: RecordedRequest = { method: request.method ?? "", path: request.url ?? "", headers: request.headers, params, status: null }
      requests.push(record)
      response.on("finish", () => {
        record.status = response.statusCode
      })
      const route = `${request.method} ${target.pathname}`
      switch (route) {
        case "GET /.well-known/oauth-authorization-server":
          return metadataKind === "oidc" ? json(response, 404, { error: "not_found" }) : json(response, 200, metadata())
        case "GET /.well-known/openid-configuration":
          return metadataKind === "oauth"
            ? json(response, 404, { error: "not_found" })
            : json(response, 200, {
                ...metadata(),
                jwks_uri: `${url}/jwks`,
                subject_types_supported: ["public"],
                id_token_signing_alg_values_supported: ["RS256"]
              })
        case "GET /jwks":
          return json(response, 200, { keys: [] })
        case "GET /authorize":
          return handleAuthorize(response, params)
        case "POST /register":
          return dynamicRegistration ? handleRegister(response, parsed.json) : json(response, 404, { error: "not_found" })
        case "POST /token": {
          const mode = tokenMode
          switch (mode._tag) {
            case "hang":
              return
            case "status":
              return oauthError(response, mode.status, mode.error ?? "server_error", "the token endpoint was told to fail")
            case "slow":
              await new Promise<void>((resolve) => {
                const timer = setTimeout(() => {
                  timers.delete(timer)
                  resolve()
                }, mode.ms)
                timers.add(timer)
              })
              return handleToken(request, response, params)
            case "ok":
              return handleToken(request, response, params)
          }
          return
        }
        default:
          return json(response, 404, { error: "not_found" })
      }
    })().catch((error: unknown) => {
      if (!response.headersSent) oauthError(response, 500, "server_error", String(error))
    })
  })
  // Idle connections stay open longer than a client's pool keeps them (undici: the server's 5 s hint less 1 s), as
  // orgplane's own server does (65 s): with Node's default of 5 s a busy machine's late event loop could hand a
  // request to a socket this server had just closed, and the call failed as "fetch failed" (CI, 2026-11-30).
  server.keepAliveTimeout = 65_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  url = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`

  const takePending = (id: string) => {
    const authorization = pending.get(id)
    if (authorization === undefined) throw new Error(`FakeOAuth: no pending authorization ${id}`)
    pending.delete(id)
    return authorization
  }

  return {
    url,
    requests,
    addClient: (client) => void clients.set(client.client_id, client),
    clients: () => clients,
    approve: (id, approveOptions) => {
      const authorization = takePending(id)
      return issueCode(authorization, approveOptions?.scopes ?? authorization.scopes)
    },
    deny: (id) => {
      const authorization = takePending(id)
      return redirectWith(authorization.redirectUri, { error: "access_denied", state: authorization.state })
    },
    verifyAccessToken: (token) => {
      const found = accessTokens.get(token)
      if (found === undefined || found.expiresAt <= Date.now()) return undefined
      return { clientId: found.clientId, scopes: found.scopes, expiresAt: found.expiresAt, ...(found.resource === undefined ? {} : { resource: found.resource }) }
    },
    setTokenMode: (mode) => {
      tokenMode = mode
    },
    expireAccessTokens: () => {
      for (const token of accessTokens.values()) token.expiresAt = 0
    },
    tokensIssued: () => issued,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
