/**
 * A real OpenID Provider on 127.0.0.1 for SSO sign-in tests: `oidc-provider` (panva's OpenID Certified OP, not a
 * fake), with its logins completed headlessly and, per sign-in, the ID token tampered with for negative tests.
 *
 * - Discovery at `{issuer}/.well-known/openid-configuration`, JWKS, authorization (code flow only, PKCE S256
 *   required of every client), token (`client_secret_basic` or `client_secret_post`, as each client registered),
 *   userinfo. The issuer may carry a path (`issuerPath: "/realms/acme"`, as Keycloak's and Okta's do).
 * - Accounts are keyed by login hint; their claims (`email`, `email_verified`, `name`, `given_name`,
 *   `family_name`, `groups`) go into the ID token for the scopes asked (`email`, `profile`, `groups`).
 * - `signIn(authorizationUrl, { as })` plays the browser: it follows the URL a relying party produced (cookies
 *   kept), finishes the login for the account `as` names (else the request's `login_hint`) and grants consent
 *   through the provider's own interaction API (`interactionDetails` / `interactionResult`; no form, no
 *   `devInteractions`), and answers the redirect to the relying party's callback (`code`, `state`, `iss`, or an
 *   `error`) without following it: the test sends it, tampers with it or replays it.
 * - Negative cases: `signIn(url, { idToken: "wrongIssuer" })` makes the token endpoint answer, for that sign-in's
 *   code, an ID token with one thing wrong and everything else valid (re-signed with the provider's own key): see
 *   `IdTokenTamper`. `signIn(url, { error: "access_denied" })` ends the login with that error (an IdP that says
 *   no). `setDiscoveryIssuer(other)` makes the discovery document name another issuer.
 * - `requests` records every request (method, path, headers, query and form parameters, status), so a test can
 *   check what the relying party sent (PKCE, client authentication); `authorizations()` lists the parameters of
 *   each authorization request.
 *
 * Use: one IdP per test file, started in `beforeAll` (about 0.5–1.5 s on the 2-core CI machine, most of it
 * importing oidc-provider and making an RSA key; a second IdP in the same process about 0.4 s), shared by its tests:
 *
 *   const idp = await IdpOidc.start({
 *     clients: [{ client_id: "orgplane", client_secret: "s3cret", redirect_uris: [`${server.url}/v1/sso/oidc/callback`] }],
 *     accounts: { "ada@acme.test": { sub: "u-ada", email: "ada@acme.test", email_verified: true, name: "Ada" } }
 *   })
 *   // The server, configured with `idp.issuer`, answered its start URL with a redirect to `location`:
 *   const callback = await idp.signIn(location, { as: "ada@acme.test" })
 *   await fetch(callback.url, { redirect: "manual" }) // the browser's next step, sent by the test
 *   await idp.signIn(otherLocation, { idToken: "wrongIssuer" }) // a negative case: the server must refuse it
 *
 * What openid-client 6 answers (test/IdpOidc.test.ts holds each): a `ClientError` whose `code` and `cause.message`
 * name the check. `wrongIssuer`, `wrongAudience`, `wrongNonce`: OAUTH_JWT_CLAIM_COMPARISON_FAILED (`unexpected
 * JWT "iss" (issuer) claim value`, `... "aud" (audience) ...`, `unexpected ID Token "nonce" claim value`);
 * `expired`: OAUTH_JWT_TIMESTAMP_CHECK_FAILED; `unsigned`: OAUTH_INVALID_RESPONSE (`unexpected JWT "alg" header
 * parameter`); a replayed state: OAUTH_INVALID_RESPONSE (`unexpected "state" response parameter value`); a
 * replayed code: OAUTH_RESPONSE_BODY_ERROR with `error: "invalid_grant"`; an IdP error: an
 * `AuthorizationResponseError` (OAUTH_AUTHORIZATION_RESPONSE_ERROR, `error: "access_denied"`); a discovery
 * document naming another issuer: OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED. `unknownKey` and `badSignature` are
 * ACCEPTED unless the configuration has `enableNonRepudiationChecks` (OIDC Core 3.1.3.7 lets a client skip the
 * signature of an ID token it got from the token endpoint over TLS); with it: OAUTH_KEY_SELECTION_FAILED and
 * OAUTH_INVALID_RESPONSE (`JWT signature verification failed`). `withoutEmailVerified` is accepted: checking
 * `email_verified` is the relying party's job.
 *
 * oidc-provider 9.13 runs on the project's Node 24 (it printed "Unsupported runtime" on Node 20 and worked); it and jose are
 * imported when an IdP starts, so test files that import the kit without using it do not load them.
 */
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type * as Net from "node:net"
import type { Adapter, AdapterPayload, Configuration, KoaContextWithOIDC } from "oidc-provider"

export interface Account {
  /** The subject: stable, unique at this IdP. */
  readonly sub: string
  readonly email?: string
  readonly email_verified?: boolean
  readonly name?: string
  readonly given_name?: string
  readonly family_name?: string
  readonly groups?: ReadonlyArray<string>
}

export interface Client {
  readonly client_id: string
  readonly client_secret: string
  readonly redirect_uris: ReadonlyArray<string>
  /**
   * Default `client_secret_basic`. Announced as the client's method; oidc-provider accepts either secret method
   * from a secret client (so do most IdPs), so a test checks what the relying party sent with `tokenRequests()`.
   */
  readonly token_endpoint_auth_method?: "client_secret_basic" | "client_secret_post"
}

export interface Options {
  readonly clients?: ReadonlyArray<Client>
  /** Accounts by login hint: what `login_hint` or `signIn`'s `as` names. */
  readonly accounts?: Readonly<Record<string, Account>>
  /** A path the issuer ends with (`/realms/acme`); every endpoint lives under it. Default: none. */
  readonly issuerPath?: string
}

/**
 * What is wrong with the ID token the token endpoint answers; everything else is as the provider issued it, and the
 * token is re-signed with the provider's own key unless the tamper is about the signature.
 * - `wrongIssuer`: `iss` is another issuer (`{issuer}/other`).
 * - `wrongAudience`: `aud` is another client.
 * - `expired`: `exp` ten minutes ago (`iat` twenty).
 * - `wrongNonce`: `nonce` is not the one the relying party sent.
 * - `withoutEmailVerified`: no `email_verified` claim (the relying party must not treat the email as verified).
 * - `unsigned`: `alg: none`, no signature.
 * - `unknownKey`: signed by a key the JWKS does not hold (a `kid` it does not list).
 * - `badSignature`: the provider's `kid`, signed by another key.
 */
export type IdTokenTamper =
  | "wrongIssuer"
  | "wrongAudience"
  | "expired"
  | "wrongNonce"
  | "withoutEmailVerified"
  | "unsigned"
  | "unknownKey"
  | "badSignature"

export interface SignInOptions {
  /** The account that signs in (a login hint of `accounts`); default: the request's `login_hint`. */
  readonly as?: string
  /** Ends the login with this error instead (`access_denied`: the person or the IdP refused). */
  readonly error?: string
  readonly errorDescription?: string
  /** Tampers with the ID token the token endpoint answers for this sign-in's code. */
  readonly idToken?: IdTokenTamper
}

/** Where the IdP sends the browser back: the relying party's redirect URI with its parameters, not followed. */
export interface Callback {
  readonly url: string
  readonly code?: string
  readonly state?: string
  /** RFC 9207: the issuer, on every authorization response. */
  readonly iss?: string
  readonly error?: string
  readonly errorDescription?: string
}

export interface RecordedRequest {
  readonly method: string
  /** Path and query, as received (with `issuerPath`). */
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  /** Query parameters, then form or JSON body parameters (strings only). */
  params: Readonly<Record<string, string>>
  /** `null` while unanswered. */
  status: number | null
}

export interface TokenRequest {
  /** `client_secret_basic` (an Authorization header), `client_secret_post` (the secret in the form), or `none`. */
  readonly clientAuthentication: "client_secret_basic" | "client_secret_post" | "none"
  /** The form parameters (`client_secret` included when posted). */
  readonly params: Readonly<Record<string, string>>
  readonly status: number | null
}

export interface IdpOidc {
  /** `http://127.0.0.1:{port}{issuerPath}`. */
  readonly issuer: string
  readonly discoveryUrl: string
  readonly requests: ReadonlyArray<RecordedRequest>
  /** The parameters of each authorization request a relying party sent, oldest first. */
  readonly authorizations: () => ReadonlyArray<Readonly<Record<string, string>>>
  /** Each token request, oldest first, with how the client authenticated and the status answered. */
  readonly tokenRequests: () => ReadonlyArray<TokenRequest>
  readonly addClient: (client: Client) => Promise<void>
  readonly addAccount: (loginHint: string, account: Account) => void
  /** Follows an authorization URL as a browser would, signs in, and answers the redirect to the callback. */
  readonly signIn: (authorizationUrl: string | URL, options?: SignInOptions) => Promise<Callback>
  /** The `issuer` the discovery document names from now on; `undefined` restores the real one. */
  readonly setDiscoveryIssuer: (issuer: string | undefined) => void
  readonly close: () => Promise<void>
}

/** Storage for the provider's models (sessions, interactions, codes, grants, clients), one per IdP. */
const memoryAdapter = () => {
  const records = new Map<string, { payload: AdapterPayload; expiresAt: number }>()
  const secondary = new Map<string, string>() // `${model}:uid:${uid}` and `${model}:userCode:${code}` → key
  const grants = new Map<string, Set<string>>() // grantId → keys
  return (model: string): Adapter => {
    const key = (id: string) => `${model}:${id}`
    const live = (k: string | undefined) => {
      const record = k === undefined ? undefined : records.get(k)
      if (record === undefined) return undefined
      if (record.expiresAt <= Date.now()) {
        records.delete(k!)
        return undefined
      }
      return record.payload
    }
    return {
      upsert: async (id, payload, expiresIn) => {
        const k = key(id)
        records.set(k, { payload, expiresAt: expiresIn === undefined ? Infinity : Date.now() + expiresIn * 1000 })
        if (payload.uid !== undefined) secondary.set(`${model}:uid:${payload.uid}`, k)
        if (payload.userCode !== undefined) secondary.set(`${model}:userCode:${payload.userCode}`, k)
        if (payload.grantId !== undefined) {
          const members = grants.get(payload.grantId) ?? new Set<string>()
          grants.set(payload.grantId, members.add(k))
        }
      },
      find: async (id) => live(key(id)),
      findByUid: async (uid) => live(secondary.get(`${model}:uid:${uid}`)),
      findByUserCode: async (userCode) => live(secondary.get(`${model}:userCode:${userCode}`)),
      consume: async (id) => {
        const payload = live(key(id))
        if (payload !== undefined) payload.consumed = Math.floor(Date.now() / 1000)
      },
      destroy: async (id) => void records.delete(key(id)),
      revokeByGrantId: async (grantId) => {
        for (const k of grants.get(grantId) ?? []) records.delete(k)
        grants.delete(grantId)
      }
    }
  }
}

/** A request as a framework hands it to a provider mounted under a path (express, koa-mount). */
type MountedRequest = Http.IncomingMessage & { originalUrl?: string }

const stringParams = (value: unknown): Record<string, string> => {
  const params: Record<string, string> = {}
  if (value !== null && typeof value === "object") {
    for (const [key, entry] of Object.entries(value)) if (typeof entry === "string") params[key] = entry
  }
  return params
}

/** A browser's cookies for one sign-in: names and values, whatever the path (everything here is one origin). */
const cookieJar = () => {
  const cookies = new Map<string, string>()
  return {
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
    store: (response: Response) => {
      for (const line of response.headers.getSetCookie()) {
        const [pair, ...attributes] = line.split(";")
        const eq = pair.indexOf("=")
        const name = pair.slice(0, eq).trim()
        const value = pair.slice(eq + 1).trim()
        const expires = attributes.map((a) => a.trim()).find((a) => a.toLowerCase().startsWith("expires="))
        const expired = expires !== undefined && Date.parse(expires.slice(8)) <= Date.now()
        if (value === "" || expired) cookies.delete(name)
        else cookies.set(name, value)
      }
    }
  }
}

export const start = async (options: Options = {}): Promise<IdpOidc> => {
  const [{ default: Provider }, Jose] = await Promise.all([import("oidc-provider"), import("jose")])

  const accounts = new Map<string, Account>(Object.entries(options.accounts ?? {}))
  const requests: Array<RecordedRequest> = []
  const tampers = new Map<string, IdTokenTamper>() // authorization code → tamper
  const pendingSignIns = new Map<string, SignInOptions>() // interaction uid → the options of the sign-in driving it
  let discoveryIssuer: string | undefined

  const prefix = (options.issuerPath ?? "").replace(/\/+$/, "")
  if (prefix !== "" && !prefix.startsWith("/")) throw new Error(`IdpOidc: issuerPath must start with "/": ${prefix}`)

  // The port is known once listening; the provider (which needs the issuer) is built then.
  let handler: Http.RequestListener = (_request, response) => {
    response.writeHead(503).end()
  }
  const server = Http.createServer((request, response) => handler(request, response))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const origin = `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}`
  const issuer = `${origin}${prefix}`

  const rsaKey = () =>
    new Promise<NodeCrypto.KeyObject>((resolve, reject) =>
      NodeCrypto.generateKeyPair("rsa", { modulusLength: 2048 }, (error, _publicKey, privateKey) => (error ? reject(error) : resolve(privateKey)))
    )
  const signingKey = await rsaKey()
  // A key the JWKS does not hold, made the first time a tamper needs it.
  let strangerKey: Promise<NodeCrypto.KeyObject> | undefined
  const stranger = () => (strangerKey ??= rsaKey())
  const kid = NodeCrypto.randomBytes(8).toString("hex")
  const accountBySub = (sub: string) => [...accounts.values()].find((account) => account.sub === sub)

  const adapter = memoryAdapter()
  const configuration: Configuration = {
    adapter,
    jwks: { keys: [{ ...signingKey.export({ format: "jwk" }), kid, use: "sig", alg: "RS256" }] },
    cookies: { keys: [NodeCrypto.randomBytes(32).toString("base64url")] },
    findAccount: (_ctx, sub) => {
      const account = accountBySub(sub)
      if (account === undefined) return undefined
      return {
        accountId: sub,
        claims: () => ({
          sub,
          ...(account.email === undefined ? {} : { email: account.email }),
          ...(account.email_verified === undefined ? {} : { email_verified: account.email_verified }),
          ...(account.name === undefined ? {} : { name: account.name }),
          ...(account.given_name === undefined ? {} : { given_name: account.given_name }),
          ...(account.family_name === undefined ? {} : { family_name: account.family_name }),
          ...(account.groups === undefined ? {} : { groups: [...account.groups] })
        })
      }
    },
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "given_name", "family_name"],
      groups: ["groups"]
    },
    scopes: ["openid", "offline_access", "email", "profile", "groups"],
    // The claims of the scopes asked go into the ID token itself, as most enterprise IdPs do.
    conformIdTokenClaims: false,
    responseTypes: ["code"],
    // Explicit lifetimes (seconds), as oidc-provider asks of a deployment; a sign-in test takes far less.
    ttl: { AccessToken: 3600, AuthorizationCode: 60, Grant: 3600, IdToken: 3600, Interaction: 600, Session: 3600 },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `${prefix}/interaction/${interaction.uid}` },
    renderError: (ctx, out) => {
      ctx.type = "application/json"
      ctx.body = out
    }
  }
  const provider = new Provider(issuer, configuration)

  /** Finishes the interaction in progress the way a login page and a consent page would. */
  const interact = async (ctx: KoaContextWithOIDC, uid: string) => {
    const signIn = pendingSignIns.get(uid)
    if (signIn === undefined) {
      ctx.status = 400
      ctx.body = { error: "invalid_request", error_description: `IdpOidc: no sign-in is driving interaction ${uid}; use signIn()` }
      return
    }
    const details = await provider.interactionDetails(ctx.req, ctx.res)
    let result: Parameters<typeof provider.interactionResult>[2]
    if (signIn.error !== undefined) {
      result = { error: signIn.error, ...(signIn.errorDescription === undefined ? {} : { error_description: signIn.errorDescription }) }
    } else if (details.prompt.name === "login") {
      const hint = signIn.as ?? (typeof details.params.login_hint === "string" ? details.params.login_hint : undefined)
      const account = hint === undefined ? undefined : accounts.get(hint)
      if (account === undefined) {
        ctx.status = 400
        ctx.body = {
          error: "unknown_account",
          error_description: hint === undefined ? "IdpOidc: no account to sign in as (no `as`, no login_hint)" : `IdpOidc: no account with login hint ${hint}`
        }
        return
      }
      result = { login: { accountId: account.sub } }
    } else if (details.prompt.name === "consent") {
      const grant =
        details.grantId === undefined
          ? new provider.Grant({ accountId: details.session!.accountId, clientId: String(details.params.client_id) })
          : (await provider.Grant.find(details.grantId))!
      const missing = details.prompt.details as { missingOIDCScope?: Array<string>; missingOIDCClaims?: Array<string>; missingResourceScopes?: Record<string, Array<string>> }
      if (missing.missingOIDCScope !== undefined) grant.addOIDCScope(missing.missingOIDCScope.join(" "))
      if (missing.missingOIDCClaims !== undefined) grant.addOIDCClaims(missing.missingOIDCClaims)
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) grant.addResourceScope(indicator, scopes.join(" "))
      result = { consent: { grantId: await grant.save() } }
    } else {
      ctx.status = 501
      ctx.body = { error: "server_error", error_description: `IdpOidc: unexpected prompt ${details.prompt.name}` }
      return
    }
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: true })
    ctx.status = 303
    ctx.redirect(returnTo)
  }

  const resign = async (idToken: string, tamper: IdTokenTamper): Promise<string> => {
    const header = Jose.decodeProtectedHeader(idToken)
    const claims: Record<string, unknown> = { ...Jose.decodeJwt(idToken) }
    const now = Math.floor(Date.now() / 1000)
    switch (tamper) {
      case "wrongIssuer":
        claims.iss = `${issuer}/other`
        break
      case "wrongAudience":
        claims.aud = "another-client"
        break
      case "expired":
        claims.iat = now - 1200
        claims.exp = now - 600
        break
      case "wrongNonce":
        claims.nonce = "not-the-nonce-that-was-sent"
        break
      case "withoutEmailVerified":
        delete claims.email_verified
        break
      case "unsigned":
        return `${Jose.base64url.encode(JSON.stringify({ alg: "none", typ: "JWT" }))}.${Jose.base64url.encode(JSON.stringify(claims))}.`
      case "unknownKey":
        return new Jose.SignJWT(claims).setProtectedHeader({ ...header, alg: "RS256", kid: "unknown-key" }).sign(await stranger())
      case "badSignature":
        return new Jose.SignJWT(claims).setProtectedHeader({ ...header, alg: "RS256" }).sign(await stranger())
    }
    return new Jose.SignJWT(claims).setProtectedHeader({ ...header, alg: "RS256" }).sign(signingKey)
  }

  provider.use(async (koaContext, next) => {
    const ctx = koaContext as KoaContextWithOIDC
    const record: RecordedRequest = {
      method: ctx.method,
      path: (ctx.req as MountedRequest).originalUrl ?? ctx.url,
      headers: ctx.headers,
      params: stringParams(ctx.query),
      status: null
    }
    requests.push(record)
    const interaction = /^\/interaction\/([^/]+)$/.exec(ctx.path)
    try {
      if (interaction !== null && ctx.method === "POST") return await interact(ctx, interaction[1])
      await next()
      if (ctx.oidc?.body !== undefined) record.params = { ...record.params, ...stringParams(ctx.oidc.body) }
      const body = ctx.body as Record<string, unknown> | undefined
      if (ctx.path === "/.well-known/openid-configuration" && ctx.status === 200 && discoveryIssuer !== undefined && body !== undefined) {
        body.issuer = discoveryIssuer
      }
      if (ctx.path === "/token" && ctx.status === 200 && typeof body?.id_token === "string") {
        const tamper = tampers.get(record.params.code ?? "")
        if (tamper !== undefined) body.id_token = await resign(body.id_token, tamper)
      }
    } finally {
      record.status = ctx.status
    }
  })

  const callback = provider.callback()
  handler = (request, response) => {
    if (prefix !== "") {
      const url = request.url ?? "/"
      if (url !== prefix && !url.startsWith(`${prefix}/`) && !url.startsWith(`${prefix}?`)) {
        response.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not_found" }))
        return
      }
      // As a framework mounting the provider at `prefix` does: oidc-provider reads the mount path from these.
      ;(request as MountedRequest).originalUrl = url
      request.url = url.slice(prefix.length) || "/"
    }
    void callback(request, response)
  }

  const addClient = async (client: Client) => {
    const metadata = {
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: [...client.redirect_uris],
      grant_types: ["authorization_code"],
      response_types: ["code" as const],
      token_endpoint_auth_method: client.token_endpoint_auth_method ?? "client_secret_basic"
    }
    await provider.Client.validate(metadata)
    // Clients live in the adapter (the provider's `Client` model), as dynamically registered ones do, so they can be
    // added after start.
    await adapter("Client").upsert(client.client_id, metadata)
  }
  for (const client of options.clients ?? []) await addClient(client)

  const isProviderStep = (location: URL) =>
    location.origin === origin && (location.pathname.startsWith(`${prefix}/interaction/`) || location.pathname.startsWith(`${prefix}/auth`))

  const signIn = async (authorizationUrl: string | URL, signInOptions: SignInOptions = {}): Promise<Callback> => {
    const jar = cookieJar()
    let next = new URL(authorizationUrl)
    let method = "GET"
    // Login, consent and their resumes: a handful of hops at most.
    for (let hop = 0; hop < 10; hop += 1) {
      const interaction = new RegExp(`^${prefix}/interaction/([^/]+)$`).exec(next.pathname)
      if (interaction !== null) {
        pendingSignIns.set(interaction[1], signInOptions)
        method = "POST"
      }
      const answer = await fetch(next, { method, redirect: "manual", headers: { cookie: jar.header() } })
      jar.store(answer)
      const location = answer.headers.get("location")
      if (interaction !== null) pendingSignIns.delete(interaction[1])
      if (answer.status < 300 || answer.status >= 400 || location === null) {
        throw new Error(`IdpOidc.signIn: ${method} ${next.pathname} answered ${answer.status}: ${await answer.text()}`)
      }
      await answer.body?.cancel()
      const target = new URL(location, next)
      if (!isProviderStep(target)) {
        const params = target.searchParams
        const code = params.get("code") ?? undefined
        if (code !== undefined && signInOptions.idToken !== undefined) tampers.set(code, signInOptions.idToken)
        const get = (name: string) => params.get(name) ?? undefined
        const found = { code, state: get("state"), iss: get("iss"), error: get("error"), errorDescription: get("error_description") }
        return {
          url: target.toString(),
          ...Object.fromEntries(Object.entries(found).filter(([, value]) => value !== undefined))
        }
      }
      next = target
      method = "GET"
    }
    throw new Error("IdpOidc.signIn: too many redirects")
  }

  return {
    issuer,
    discoveryUrl: `${issuer}/.well-known/openid-configuration`,
    requests,
    authorizations: () => requests.filter((r) => r.method === "GET" && new URL(r.path, origin).pathname === `${prefix}/auth`).map((r) => r.params),
    tokenRequests: () =>
      requests
        .filter((r) => r.method === "POST" && new URL(r.path, origin).pathname === `${prefix}/token`)
        .map((r) => ({
          clientAuthentication: r.headers.authorization?.toLowerCase().startsWith("basic ")
            ? "client_secret_basic"
            : r.params.client_secret !== undefined
              ? "client_secret_post"
              : "none",
          params: r.params,
          status: r.status
        })),
    addClient,
    addAccount: (loginHint, account) => void accounts.set(loginHint, account),
    signIn,
    setDiscoveryIssuer: (value) => {
      discoveryIssuer = value
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
