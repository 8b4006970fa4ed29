/**
 * IdpOidc against the relying-party library the server uses, `openid-client` 6: discovery, the authorization-code
 * flow with PKCE, state and nonce, the ID token validated; then every tampered token, IdP error and lying discovery
 * document refused by openid-client, each with its own error. One IdP for the file.
 */
import * as client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IdpOidc } from "../src/index.js"

const REDIRECT = "http://127.0.0.1:9/sso/callback"
const SECRET = "s3cret-basic"

let idp: IdpOidc.IdpOidc
let startupMs = 0

beforeAll(async () => {
  const started = performance.now()
  idp = await IdpOidc.start({
    clients: [
      { client_id: "orgplane-basic", client_secret: SECRET, redirect_uris: [REDIRECT] },
      { client_id: "orgplane-post", client_secret: "s3cret-post", redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_post" }
    ],
    accounts: {
      "ada@acme.test": {
        sub: "u-ada",
        email: "ada@acme.test",
        email_verified: true,
        name: "Ada Lovelace",
        given_name: "Ada",
        family_name: "Lovelace",
        groups: ["engineering", "admins"]
      },
      "bob@acme.test": { sub: "u-bob", email: "bob@acme.test", email_verified: true, name: "Bob" }
    }
  })
  startupMs = performance.now() - started
})
afterAll(() => idp?.close())

const discover = (clientId = "orgplane-basic", auth: client.ClientAuth = client.ClientSecretBasic(SECRET), issuer = idp.issuer) =>
  client.discovery(new URL(issuer), clientId, undefined, auth, { execute: [client.allowInsecureRequests] })

/** What a relying party keeps between start and callback. */
const startSignIn = async (config: client.Configuration, extra: Record<string, string> = {}) => {
  const verifier = client.randomPKCECodeVerifier()
  const state = client.randomState()
  const nonce = client.randomNonce()
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope: "openid email profile groups",
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
    ...extra
  })
  return { url, verifier, state, nonce }
}

const finish = (config: client.Configuration, callbackUrl: string, flow: { verifier: string; state: string; nonce: string }) =>
  client.authorizationCodeGrant(config, new URL(callbackUrl), { pkceCodeVerifier: flow.verifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true })

/** The error openid-client throws, as `{ name, code, message }`. */
const failure = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    const e = error as Error & { code?: string; error?: string }
    const cause = e.cause instanceof Error ? e.cause.message : undefined
    return { name: e.name, code: e.code, message: e.message, error: e.error, cause }
  }
  throw new Error("expected a failure")
}

describe("IdpOidc with openid-client", () => {
  it("starts on loopback and completes the code flow with PKCE, state and nonce (client_secret_basic)", async () => {
    console.info(`IdpOidc start-up: ${startupMs.toFixed(0)} ms`)
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const config = await discover()
    expect(config.serverMetadata().issuer).toBe(idp.issuer)
    const flow = await startSignIn(config, { login_hint: "ada@acme.test" })
    const callback = await idp.signIn(flow.url)
    expect(callback.url.startsWith(`${REDIRECT}?`)).toBe(true)
    expect(callback).toMatchObject({ state: flow.state, iss: idp.issuer })
    expect(callback.code).toEqual(expect.any(String))
    const tokens = await finish(config, callback.url, flow)
    expect(tokens.claims()).toMatchObject({
      iss: idp.issuer,
      aud: "orgplane-basic",
      sub: "u-ada",
      nonce: flow.nonce,
      email: "ada@acme.test",
      email_verified: true,
      name: "Ada Lovelace",
      given_name: "Ada",
      family_name: "Lovelace",
      groups: ["engineering", "admins"]
    })
    const authorization = idp.authorizations().at(-1)!
    expect(authorization).toMatchObject({ client_id: "orgplane-basic", code_challenge_method: "S256", state: flow.state, nonce: flow.nonce })
    const token = idp.tokenRequests().at(-1)!
    expect(token).toMatchObject({ clientAuthentication: "client_secret_basic", status: 200 })
    expect(token.params).toMatchObject({ grant_type: "authorization_code", code: callback.code, code_verifier: flow.verifier })
    expect(token.params.client_secret).toBeUndefined()
  })

  it("client_secret_post: the secret travels in the form, as tokenRequests() shows", async () => {
    const config = await discover("orgplane-post", client.ClientSecretPost("s3cret-post"))
    const flow = await startSignIn(config, { login_hint: "bob@acme.test" })
    const tokens = await finish(config, (await idp.signIn(flow.url)).url, flow)
    expect(tokens.claims()).toMatchObject({ sub: "u-bob", aud: "orgplane-post", email: "bob@acme.test" })
    expect(idp.tokenRequests().at(-1)).toMatchObject({
      clientAuthentication: "client_secret_post",
      params: { client_id: "orgplane-post", client_secret: "s3cret-post", code_verifier: flow.verifier },
      status: 200
    })
    expect(idp.requests.filter((r) => r.path === "/token").at(-1)!.headers.authorization).toBeUndefined()

    const wrongSecret = await discover("orgplane-post", client.ClientSecretPost("not-the-secret"))
    const second = await startSignIn(wrongSecret, { login_hint: "bob@acme.test" })
    expect(await failure(finish(wrongSecret, (await idp.signIn(second.url)).url, second))).toMatchObject({ code: "OAUTH_RESPONSE_BODY_ERROR", error: "invalid_client" })
    expect(idp.tokenRequests().at(-1)!.status).toBe(401)
  })

  it("signs in as the account `as` names, whatever login_hint the relying party sent (a test completed by another person)", async () => {
    const config = await discover()
    const flow = await startSignIn(config, { login_hint: "ada@acme.test" })
    const tokens = await finish(config, (await idp.signIn(flow.url, { as: "bob@acme.test" })).url, flow)
    expect(tokens.claims()).toMatchObject({ sub: "u-bob", email: "bob@acme.test" })
    expect(idp.authorizations().at(-1)!.login_hint).toBe("ada@acme.test")
  })

  it("requires PKCE: an authorization request without code_challenge comes back with error=invalid_request", async () => {
    const config = await discover()
    const url = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid", state: "no-pkce", login_hint: "ada@acme.test" })
    const callback = await idp.signIn(url)
    expect(callback).toMatchObject({ error: "invalid_request", state: "no-pkce" })
    expect(callback.errorDescription).toContain("PKCE")
    expect(callback.code).toBeUndefined()
    expect(idp.authorizations().at(-1)!.code_challenge).toBeUndefined()
  })

  it("an unknown account or no account at all fails the sign-in loudly; an unregistered redirect URI is not redirected to", async () => {
    const config = await discover()
    await expect(idp.signIn((await startSignIn(config, { login_hint: "zed@acme.test" })).url)).rejects.toThrow("no account with login hint zed@acme.test")
    await expect(idp.signIn((await startSignIn(config)).url)).rejects.toThrow("no account to sign in as")
    const elsewhere = client.buildAuthorizationUrl(config, { redirect_uri: "http://127.0.0.1:9/elsewhere", scope: "openid", code_challenge: "x".repeat(43), code_challenge_method: "S256" })
    await expect(idp.signIn(elsewhere)).rejects.toThrow("redirect_uri did not match")
  })

  it("IdP error: the callback carries error=access_denied and the state; openid-client raises it", async () => {
    const config = await discover()
    const flow = await startSignIn(config, { login_hint: "ada@acme.test" })
    const callback = await idp.signIn(flow.url, { error: "access_denied", errorDescription: "the user is not assigned to this application" })
    expect(callback).toMatchObject({ error: "access_denied", errorDescription: "the user is not assigned to this application", state: flow.state, iss: idp.issuer })
    expect(callback.code).toBeUndefined()
    expect(await failure(finish(config, callback.url, flow))).toMatchObject({
      name: "AuthorizationResponseError",
      code: "OAUTH_AUTHORIZATION_RESPONSE_ERROR",
      error: "access_denied"
    })
  })

  it("a discovery document naming another issuer is refused by discovery", async () => {
    idp.setDiscoveryIssuer("https://login.evil.example")
    try {
      expect(await failure(discover())).toMatchObject({ code: "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED", message: "discovered metadata issuer does not match the expected issuer" })
    } finally {
      idp.setDiscoveryIssuer(undefined)
    }
    expect((await discover()).serverMetadata().issuer).toBe(idp.issuer)
  })

  it("replays: a callback checked against another sign-in's state is refused, and a code works once", async () => {
    const config = await discover()
    const first = await startSignIn(config, { login_hint: "ada@acme.test" })
    const second = await startSignIn(config, { login_hint: "ada@acme.test" })
    const callback = await idp.signIn(first.url)
    const stateMismatch = await failure(finish(config, callback.url, second))
    expect(stateMismatch).toMatchObject({ code: "OAUTH_INVALID_RESPONSE", cause: 'unexpected "state" response parameter value' })
    await finish(config, callback.url, first)
    expect(await failure(finish(config, callback.url, first))).toMatchObject({ code: "OAUTH_RESPONSE_BODY_ERROR", error: "invalid_grant" })
  })

  // One thing wrong each, everything else valid: openid-client names the claim.
  it.each([
    ["wrongIssuer", "OAUTH_JWT_CLAIM_COMPARISON_FAILED", 'unexpected JWT "iss" (issuer) claim value'],
    ["wrongAudience", "OAUTH_JWT_CLAIM_COMPARISON_FAILED", 'unexpected JWT "aud" (audience) claim value'],
    ["expired", "OAUTH_JWT_TIMESTAMP_CHECK_FAILED", 'unexpected JWT "exp" (expiration time) claim value, expiration is past current timestamp'],
    ["wrongNonce", "OAUTH_JWT_CLAIM_COMPARISON_FAILED", 'unexpected ID Token "nonce" claim value'],
    ["unsigned", "OAUTH_INVALID_RESPONSE", 'unexpected JWT "alg" header parameter']
  ] as const)("ID token %s: refused with %s", async (tamper, code, cause) => {
    const config = await discover()
    const flow = await startSignIn(config, { login_hint: "ada@acme.test" })
    const callback = await idp.signIn(flow.url, { idToken: tamper })
    const refused = await failure(finish(config, callback.url, flow))
    expect(refused).toMatchObject({ name: "ClientError", code })
    expect(refused.cause).toBe(cause)
  })

  it.each([
    ["unknownKey", "OAUTH_KEY_SELECTION_FAILED", "error when selecting a JWT verification key, no applicable keys found"],
    ["badSignature", "OAUTH_INVALID_RESPONSE", "JWT signature verification failed"]
  ] as const)(
    "ID token %s: accepted by default (a token-endpoint ID token over TLS needs no signature check, OIDC Core 3.1.3.7), refused with enableNonRepudiationChecks",
    async (tamper, code, cause) => {
      const lenient = await discover()
      const flow = await startSignIn(lenient, { login_hint: "ada@acme.test" })
      const accepted = await finish(lenient, (await idp.signIn(flow.url, { idToken: tamper })).url, flow)
      expect(accepted.claims()).toMatchObject({ sub: "u-ada", iss: idp.issuer })

      const strict = await discover()
      client.enableNonRepudiationChecks(strict)
      const strictFlow = await startSignIn(strict, { login_hint: "ada@acme.test" })
      const refused = await failure(finish(strict, (await idp.signIn(strictFlow.url, { idToken: tamper })).url, strictFlow))
      expect(refused).toMatchObject({ name: "ClientError", code })
      expect(refused.cause).toBe(cause)

      // The same check passes on an untampered token: the refusal is the tamper's doing.
      const clean = await startSignIn(strict, { login_hint: "ada@acme.test" })
      expect((await finish(strict, (await idp.signIn(clean.url)).url, clean)).claims()?.sub).toBe("u-ada")
    }
  )

  it("ID token withoutEmailVerified: openid-client accepts it (email_verified is the relying party's check) and the claim is absent", async () => {
    const config = await discover()
    const flow = await startSignIn(config, { login_hint: "ada@acme.test" })
    const claims = (await finish(config, (await idp.signIn(flow.url, { idToken: "withoutEmailVerified" })).url, flow)).claims()!
    expect(claims).toMatchObject({ sub: "u-ada", email: "ada@acme.test" })
    expect("email_verified" in claims).toBe(false)
  })

  it("tampers only the sign-in that asked: the next sign-in gets an untouched token", async () => {
    const config = await discover()
    const tampered = await startSignIn(config, { login_hint: "ada@acme.test" })
    const tamperedCallback = await idp.signIn(tampered.url, { idToken: "wrongIssuer" })
    const clean = await startSignIn(config, { login_hint: "ada@acme.test" })
    expect((await finish(config, (await idp.signIn(clean.url)).url, clean)).claims()?.iss).toBe(idp.issuer)
    expect((await failure(finish(config, tamperedCallback.url, tampered))).code).toBe("OAUTH_JWT_CLAIM_COMPARISON_FAILED")
  })
})

describe("IdpOidc with an issuer path", () => {
  it("serves discovery, authorization and token under the path, and openid-client completes the flow", async () => {
    const started = performance.now()
    const withPath = await IdpOidc.start({
      issuerPath: "/realms/acme",
      clients: [{ client_id: "orgplane", client_secret: SECRET, redirect_uris: [REDIRECT] }],
      accounts: { ada: { sub: "u-ada", email: "ada@acme.test", email_verified: true } }
    })
    console.info(`IdpOidc start-up (second in the process): ${(performance.now() - started).toFixed(0)} ms`)
    try {
      expect(withPath.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/realms\/acme$/)
      expect(withPath.discoveryUrl).toBe(`${withPath.issuer}/.well-known/openid-configuration`)
      const config = await discover("orgplane", client.ClientSecretBasic(SECRET), withPath.issuer)
      expect(config.serverMetadata()).toMatchObject({ issuer: withPath.issuer, token_endpoint: `${withPath.issuer}/token` })
      const flow = await startSignIn(config, { login_hint: "ada" })
      const tokens = await finish(config, (await withPath.signIn(flow.url)).url, flow)
      expect(tokens.claims()).toMatchObject({ iss: withPath.issuer, sub: "u-ada" })
      expect(withPath.requests.map((r) => r.path.split("?")[0])).toContain("/realms/acme/token")
      expect((await fetch(new URL("/.well-known/openid-configuration", withPath.issuer))).status).toBe(404)
    } finally {
      await withPath.close()
    }
  })
})
