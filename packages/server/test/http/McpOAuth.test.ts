/**
 * OAuth for MCP connections over HTTP, against the MCP and OAuth fakes on loopback: connect → the authorization
 * server's page (auto-approving, it redirects to our callback) → the callback → the credential stored, for each way
 * of getting an OAuth client (pre-registered, dynamic registration; client ID metadata documents need an https
 * public URL, so their choice is unit-tested), shared and per-member; the state's checks; a denied authorization;
 * refresh before expiry, its compare-and-set under a real race (Postgres), and `invalid_grant`; disconnect.
 */
import * as SqlClient from "effect/sql/SqlClient"
import {
  type CreateMcpConnectionRequest,
  exampleId,
  type ExternalMcpConnectionId,
  McpConnectResult,
  type MemberContext,
  Membership,
  Organization,
  type OrganizationId,
  SessionId,
  User
} from "@orgplane/schema"
import { calls, invalid, ok, refusal } from "../../../../packages/testkit/src/ApiCalls.js"
import * as FakeMcp from "../../../../packages/testkit/src/FakeMcp.js"
import * as FakeOAuth from "../../../../packages/testkit/src/FakeOAuth.js"
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/HttpServer.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as NodeCrypto from "node:crypto"
import * as NodeHttp from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Credentials } from "../../src/mcp/Credentials.js"
import { ConnectionsRepository } from "../../src/mcp/ConnectionsRepository.js"
import * as OAuthChoices from "../../src/mcp/OAuthChoices.js"
import * as OAuthClientMetadata from "../../src/mcp/OAuthClientMetadata.js"
import * as Readiness from "../../src/mcp/Readiness.js"
import * as Session from "../../src/mcp/Session.js"
import * as AddressGuard from "../../src/platform/AddressGuard.js"
import * as Crypto from "../../src/platform/Crypto.js"
import { type Binding, bindTokens, McpMemberTokens, McpSharedTokens, type TokenBindings } from "../../src/platform/SecretColumns.js"
import * as OAuthState from "../../src/platform/OAuthState.js"
import * as Outbound from "../../src/platform/Outbound.js"
import * as PublicUrl from "../../src/platform/PublicUrl.js"

const KEYS = `test:${NodeCrypto.randomBytes(32).toString("base64")}`
const crypto = await Effect.runPromise(Crypto.make({ passwordCost: 10, keys: Crypto.parseKeys(KEYS) }))
const decrypt = (text: string, binding: Binding) => Effect.runSync(crypto.decrypt(text, binding))
/** The access token of a credential read with `sharedCredential` or `memberCredential`. */
const decryptAccess = (credential: { readonly accessTokenCiphertext: string | null; readonly at: TokenBindings } | undefined) =>
  decrypt(credential!.accessTokenCiphertext!, credential!.at.access)

const clock = new TestServer.ShiftedClock()
let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
let org: Awaited<ReturnType<typeof Http.staffed>>
let other: Awaited<ReturnType<typeof Http.staffed>>
const fakes: Array<{ close: () => Promise<void> }> = []

beforeAll(async () => {
  server = await TestServer.startSharingDatabase({ outboundAllowPrivate: true, encryptionKeys: KEYS, clock })
  org = await Http.staffed(server.url, "Acme")
  other = await Http.staffed(server.url, "Other")
})
afterAll(async () => {
  for (const fake of fakes) await fake.close()
  await server.close()
})

const call = (method: string, path: string, options: Http.Options = {}) => Http.request(server.url, method, path, options)
const { mcpAuthorization, mcpConnections, mcpTools } = calls(() => server.url)

const BASE32 = "0123456789abcdefghjkmnpqrstvwxyz"
const newConnectionId = () => `emc_${Math.floor(Math.random() * 8)}${Array.from({ length: 25 }, () => BASE32[Math.floor(Math.random() * 32)]).join("")}`

const startMcp = async (options: FakeMcp.Options = { auth: "oauth" }) => {
  const fake = await FakeMcp.start(options)
  fakes.push(fake)
  return fake
}

interface ConnectionOptions {
  readonly authType?: "oauth" | "apikey" | "none"
  /** OAuth connections only (the others are shared). */
  readonly credentialMode?: "shared" | "per_member"
  readonly client?: { readonly id: string; readonly secret?: string }
  readonly scopes?: ReadonlyArray<string>
  /** Grants the connection to the whole organization (a per-member connection is used only by those granted it). */
  readonly orgWide?: boolean
}

let created = 0

/** A connection created through the API by the owner (`apikey` ones with the key `key-1`). */
const createConnection = async (url: string, options: ConnectionOptions = {}): Promise<string> => {
  const oauth = {
    ...(options.client === undefined ? {} : { clientId: options.client.id }),
    ...(options.client?.secret === undefined ? {} : { clientSecret: options.client.secret }),
    ...(options.scopes === undefined ? {} : { requestedScopes: options.scopes })
  }
  const name = `Connection ${++created}`
  const payload: typeof CreateMcpConnectionRequest.Encoded = options.authType === "apikey"
    ? { name, url, authType: "apikey", apiKey: "key-1" }
    : options.authType === "none"
    ? { name, url, authType: "none" }
    : {
      name,
      url,
      authType: "oauth",
      ...(options.credentialMode === undefined ? {} : { credentialMode: options.credentialMode }),
      ...(Object.keys(oauth).length > 0 ? { oauth } : {})
    }
  const { item } = ok(await mcpConnections.create({ token: org.owner.token, payload }), 201)
  if (options.orgWide === true) {
    ok(await mcpConnections.mcpConnectionGrant({ token: org.owner.token, path: { connectionId: item.id }, payload: { role: "viewer", orgWide: true } }), 201)
  }
  return item.id
}

const view = async (token: string, id: string) => ok(await mcpConnections.get({ token, path: { connectionId: id } }), 200).item

interface CredentialColumns {
  readonly accessTokenCiphertext: string | null
  readonly refreshTokenCiphertext: string | null
  readonly credentialVersion: number
  readonly credentialHealth: string
  readonly credentialHealthReason: string | null
  readonly grantedScopes: ReadonlyArray<string>
  readonly connectedAt: Date | null
}

const sharedCredential = async (id: string) => {
  const rows = await server.sql((sql) =>
    sql<CredentialColumns & { oauthRegistrationSource: string | null; oauthClientId: string | null }>`
      SELECT access_token_ciphertext, refresh_token_ciphertext, credential_version, credential_health, credential_health_reason,
             granted_scopes, connected_at, oauth_registration_source, oauth_client_id
      FROM mcp_connections WHERE organization_id = ${org.organizationId} AND id = ${id}`
  )
  return { ...rows[0]!, at: bindTokens(McpSharedTokens, org.organizationId, id) }
}

const memberCredential = async (id: string, membershipId: string) => {
  const rows = await server.sql((sql) =>
    sql<CredentialColumns>`
      SELECT access_token_ciphertext, refresh_token_ciphertext, credential_version, credential_health, credential_health_reason,
             granted_scopes, connected_at
      FROM mcp_member_credentials
      WHERE organization_id = ${org.organizationId} AND mcp_connection_id = ${id} AND membership_id = ${membershipId}`
  )
  return rows[0] === undefined
    ? undefined
    : { ...(rows[0] as CredentialColumns), at: bindTokens(McpMemberTokens, org.organizationId, id, membershipId) }
}

/** A POST with its own `Host` header (fetch always sends the URL's): how a server reached under another name sees it. */
const postWithHost = (path: string, host: string, token: string) =>
  new Promise<unknown>((resolve, reject) => {
    const request = NodeHttp.request(`${server.url}${path}`, { method: "POST", headers: { host, authorization: `Bearer ${token}` } }, (response) => {
      const chunks: Array<Buffer> = []
      response.on("data", (chunk: Buffer) => chunks.push(chunk))
      response.on("end", () => resolve(JSON.parse(Buffer.concat(chunks).toString("utf8"))))
    })
    request.on("error", reject)
    request.end()
  })

const connect = (token: string, id: string) => mcpAuthorization.connect({ token, path: { connectionId: id } })
const decodeConnectResult = Schema.decodeUnknownSync(Schema.toEncoded(McpConnectResult))
const disconnect = (token: string, id: string) => mcpAuthorization.disconnect({ token, path: { connectionId: id } })
const disconnectMine = (token: string, id: string) => mcpAuthorization.disconnectMine({ token, path: { connectionId: id } })

/** The authorization URL of a connect that needs one (`needs_auth`); throws, naming the answer, otherwise. */
const authorizeUrlOf = (started: typeof McpConnectResult.Encoded) => {
  if (started.authorizeUrl === null) throw new Error(`no authorization URL: ${JSON.stringify(started)}`)
  return started.authorizeUrl
}

/** Opens the authorization URL as a browser would; the callback URL the authorization server redirects to. */
const authorize = async (started: typeof McpConnectResult.Encoded) => {
  const answer = await fetch(authorizeUrlOf(started), { redirect: "manual" })
  expect(answer.status).toBe(302)
  const location = new URL(answer.headers.get("location")!)
  expect(location.origin).toBe(server.url)
  expect(location.pathname).toBe(OAuthClientMetadata.CALLBACK_PATH)
  return location
}

const followCallback = (location: URL) => call("GET", `${location.pathname}${location.search}`)

/** The whole flow for one caller: connect, authorize (auto-approved), callback. */
const connectFully = async (token: string, id: string) => {
  const started = ok(await connect(token, id), 200)
  expect(started.status).toBe("needs_auth")
  const callback = Http.expectStatus("callback", await followCallback(await authorize(started)), 200)
  expect(callback).toEqual({ ok: true, connectionId: id, status: "connected" })
}

const tokenRequests = (oauth: FakeOAuth.FakeOAuth, grant: string) =>
  oauth.requests.filter((request) => request.path === "/token" && request.params.grant_type === grant)

describe("connect, end to end", () => {
  it("with dynamic client registration: the shared credential is stored encrypted and works at the MCP server", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url)
    await connectFully(org.admin.token, id)

    const stored = await sharedCredential(id)
    expect(stored).toMatchObject({ credentialHealth: "ready", oauthRegistrationSource: "dynamic", credentialVersion: 1 })
    expect((await view(org.admin.token, id)).oauth).toMatchObject({
      authorizationServerIssuer: mcp.oauth!.url,
      registrationSource: "dynamic",
      clientConfigured: true
    })
    expect(stored.connectedAt).not.toBeNull()
    const accessToken = decrypt(stored!.accessTokenCiphertext!, stored!.at.access)
    expect(stored.accessTokenCiphertext).not.toContain(accessToken)
    const grant = mcp.oauth!.verifyAccessToken(accessToken)
    expect(grant).toMatchObject({ clientId: stored.oauthClientId, resource: mcp.url })
    expect([...stored.grantedScopes].sort()).toEqual(["mcp:read", "mcp:write"])
    // The registered client carries our callback, and the authorization used PKCE S256.
    const client = mcp.oauth!.clients().get(stored.oauthClientId!)
    expect(client?.redirect_uris).toEqual([`${server.url}${OAuthClientMetadata.CALLBACK_PATH}`])
    const authorizeRequest = mcp.oauth!.requests.find((request) => request.path.startsWith("/authorize"))
    expect(authorizeRequest?.params).toMatchObject({ code_challenge_method: "S256", resource: mcp.url })

    // Connected: the next connect says so, without registering or authorizing again.
    const again = ok(await connect(org.owner.token, id), 200)
    expect(again).toEqual({ status: "connected", authorizeUrl: null })
    expect(mcp.oauth!.requests.filter((request) => request.path === "/register").length).toBe(1)
  })

  it("asks for the scopes the MCP server's challenge names when none were configured", async () => {
    const mcp = await startMcp({ auth: { oauth: { requiredScopes: ["mcp:write"] } } })
    const id = await createConnection(mcp.url)
    await connectFully(org.admin.token, id)
    // The challenge: an initialize without a token, answered 401 with the scope and the metadata's URL.
    expect(mcp.requests.find((request) => request.rpcMethod === "initialize" && request.headers.authorization === undefined)?.status).toBe(401)
    const authorizeRequest = mcp.oauth!.requests.find((request) => request.path.startsWith("/authorize"))
    expect(authorizeRequest?.params.scope).toBe("mcp:write")
    expect((await sharedCredential(id)).grantedScopes).toEqual(["mcp:write"])
  })

  it("after the URL changes, connects through the new server's authorization server", async () => {
    const first = await startMcp()
    const second = await startMcp()
    const id = await createConnection(first.url)
    await connectFully(org.admin.token, id)
    ok(await mcpConnections.update({ token: org.owner.token, path: { connectionId: id }, payload: { url: second.url } }), 200)
    await connectFully(org.admin.token, id)
    const stored = await sharedCredential(id)
    expect(second.oauth!.verifyAccessToken(decrypt(stored!.accessTokenCiphertext!, stored!.at.access))).toMatchObject({ resource: second.url })
    expect(second.oauth!.clients().has(stored.oauthClientId!)).toBe(true)
  })

  it("with a pre-registered confidential client: its secret authenticates the code exchange", async () => {
    const oauth = await FakeOAuth.start({ dynamicRegistration: false })
    fakes.push(oauth)
    const mcp = await startMcp({ auth: { oauth: { authorizationServer: oauth } } })
    oauth.addClient({
      client_id: "orgplane-admin-registered",
      client_secret: "s3cret",
      redirect_uris: [`${server.url}${OAuthClientMetadata.CALLBACK_PATH}`],
      token_endpoint_auth_method: "client_secret_basic"
    })
    const id = await createConnection(mcp.url, { client: { id: "orgplane-admin-registered", secret: "s3cret" }, scopes: ["mcp:read"] })
    await connectFully(org.admin.token, id)

    const stored = await sharedCredential(id)
    expect(stored).toMatchObject({ credentialHealth: "ready", oauthRegistrationSource: "pre_registered", oauthClientId: "orgplane-admin-registered" })
    expect(stored.grantedScopes).toEqual(["mcp:read"])
    expect(oauth.verifyAccessToken(decrypt(stored!.accessTokenCiphertext!, stored!.at.access))?.scopes).toEqual(["mcp:read"])
    const exchange = tokenRequests(oauth, "authorization_code")
    expect(exchange.length).toBe(1)
    expect(exchange[0].status).toBe(200)
    expect(exchange[0].headers.authorization).toMatch(/^Basic /)
  })

  it("without registration or a client: 409 oauth_client_required naming the callback", async () => {
    const mcp = await startMcp({ auth: { oauth: { authorizationServerOptions: { dynamicRegistration: false } } } })
    const id = await createConnection(mcp.url)
    const refused = refusal(await connect(org.admin.token, id), 409)
    expect(refused).toMatchObject({ error: "oauth_client_required", message: expect.stringContaining(`${server.url}${OAuthClientMetadata.CALLBACK_PATH}`) })
  })

  it("per member: each member connects their own account, and one's token is never the other's", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url, { credentialMode: "per_member", orgWide: true })
    await connectFully(org.member.token, id)
    expect(await view(org.member.token, id)).toMatchObject({ connectedForMe: true, ready: true, notReadyReason: null, connected: true })
    expect(await view(org.admin.token, id)).toMatchObject({ connectedForMe: false, ready: false, notReadyReason: "Connect your account before using this MCP's tools." })
    // Another member still has to connect.
    const admin = ok(await connect(org.admin.token, id), 200)
    expect(admin.status).toBe("needs_auth")
    Http.expectStatus("admin callback", await followCallback(await authorize(admin)), 200)

    const mine = await memberCredential(id, org.member.membership.id)
    const theirs = await memberCredential(id, org.admin.membership.id)
    expect(mine?.credentialHealth).toBe("ready")
    expect(theirs?.credentialHealth).toBe("ready")
    expect(decrypt(mine!.accessTokenCiphertext!, mine!.at.access)).not.toBe(decrypt(theirs!.accessTokenCiphertext!, theirs!.at.access))
    // Nothing shared was stored, and the owner is not connected.
    expect((await sharedCredential(id)).accessTokenCiphertext).toBeNull()
    expect(ok(await connect(org.owner.token, id), 200).status).toBe("needs_auth")
    expect(ok(await connect(org.member.token, id), 200).status).toBe("connected")
    expect(await view(org.admin.token, id)).toMatchObject({ connectedForMe: true, ready: true })

    // Disconnecting my account drops mine only.
    expect(ok(await disconnectMine(org.member.token, id), 200)).toEqual({ ok: true, removed: true })
    expect(await memberCredential(id, org.member.membership.id)).toBeUndefined()
    expect((await memberCredential(id, org.admin.membership.id))?.credentialHealth).toBe("ready")
    expect(ok(await connect(org.member.token, id), 200).status).toBe("needs_auth")
    expect(ok(await disconnectMine(org.member.token, id), 200)).toEqual({ ok: true, removed: false })
  })
})

describe("tool calls over OAuth", () => {
  const toolCall = (token: string, id: string) =>
    mcpTools.call({ token, path: { connectionId: id }, payload: { toolName: "add", arguments: { a: 1, b: 2 } } })
  /** The bearer token the MCP server received with the last tools/call. */
  const lastToolCallToken = (mcp: FakeMcp.FakeMcp) =>
    String(mcp.requests.filter((request) => request.rpcMethod === "tools/call").at(-1)?.headers.authorization).replace(/^Bearer /, "")

  it("run with the shared token, and per member with the caller's own token (refreshed when about to expire)", async () => {
    const mcp = await startMcp()
    const shared = await createConnection(mcp.url, { orgWide: true })
    expect((await toolCall(org.admin.token, shared)).body).toMatchObject({ error: "connection_not_ready" })
    await connectFully(org.admin.token, shared)
    const answer = ok(await toolCall(org.admin.token, shared), 200)
    expect(answer.result).toHaveProperty("structuredContent", { sum: 3 })
    const sharedToken = lastToolCallToken(mcp)
    expect(decryptAccess(await sharedCredential(shared))).toBe(sharedToken)
    expect(JSON.stringify(answer)).not.toContain(sharedToken)
    expect(answer.inspection.request?.headers).toContainEqual({ name: "authorization", value: "Bearer [redacted]", redacted: true })

    const perMember = await createConnection(mcp.url, { credentialMode: "per_member", orgWide: true })
    expect((await toolCall(org.owner.token, perMember)).body).toMatchObject({
      error: "connection_not_ready",
      message: "Connect your account before using this MCP's tools."
    })
    await connectFully(org.admin.token, perMember)
    await connectFully(org.owner.token, perMember)
    ok(await toolCall(org.admin.token, perMember), 200)
    const adminToken = lastToolCallToken(mcp)
    ok(await toolCall(org.owner.token, perMember), 200)
    const ownerToken = lastToolCallToken(mcp)
    expect(adminToken).toBe(decryptAccess(await memberCredential(perMember, org.admin.membership.id)))
    expect(ownerToken).toBe(decryptAccess(await memberCredential(perMember, org.owner.membership.id)))
    expect(adminToken).not.toBe(ownerToken)

    // An hour later the admin's token has expired: the call refreshes it first and sends the new one.
    const refreshes = tokenRequests(mcp.oauth!, "refresh_token").length
    clock.offsetMillis += 3600 * 1000
    try {
      ok(await toolCall(org.admin.token, perMember), 200)
    } finally {
      clock.offsetMillis -= 3600 * 1000
    }
    expect(tokenRequests(mcp.oauth!, "refresh_token").length).toBe(refreshes + 1)
    expect(lastToolCallToken(mcp)).not.toBe(adminToken)
    expect(mcp.oauth!.verifyAccessToken(lastToolCallToken(mcp))).toBeDefined()
  })
  it("renew a token the MCP server refuses (401) and retry once; a credential that cannot be renewed needs reconnecting", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url, { orgWide: true })
    await connectFully(org.admin.token, id)
    ok(await toolCall(org.admin.token, id), 200)
    const first = lastToolCallToken(mcp)
    const toolCalls = () => mcp.requests.filter((request) => request.rpcMethod === "tools/call").length
    /** Requests the MCP server refused that carried `token`. */
    const refused = (token: string) => mcp.requests.filter((request) => request.headers.authorization === `Bearer ${token}` && request.status === 401).length

    // The MCP server stops accepting the token (the stored one has an hour left): refreshed, and the call retried.
    mcp.oauth!.expireAccessTokens()
    const calls = toolCalls()
    ok(await toolCall(org.admin.token, id), 200)
    expect(refused(first)).toBeGreaterThan(0)
    expect(toolCalls()).toBe(calls + 1)
    const second = lastToolCallToken(mcp)
    expect(second).not.toBe(first)
    expect(tokenRequests(mcp.oauth!, "refresh_token").length).toBe(1)
    expect(await view(org.admin.token, id)).toMatchObject({ needsReconnect: false, ready: true })

    // Dropped again, and now the refresh is refused too: the call's own failure, and the credential needs reconnecting.
    mcp.oauth!.expireAccessTokens()
    mcp.oauth!.setTokenMode({ _tag: "status", status: 400, error: "invalid_grant" })
    const failed = await toolCall(org.admin.token, id)
    expect(failed.status).toBe(502)
    expect(refusal(failed, 502)).toMatchObject({ diagnostic: { httpStatus: 401, connectUrl: `/v1/mcp-connections/${id}/connect` } })
    expect(refused(second)).toBeGreaterThan(0)
    expect(toolCalls()).toBe(calls + 1)
    expect(await view(org.admin.token, id)).toMatchObject({ needsReconnect: true, credentialHealth: "reconnect_required" })
    expect((await toolCall(org.admin.token, id)).body).toMatchObject({ error: "connection_not_ready" })

    // Connecting again fixes it.
    mcp.oauth!.setTokenMode({ _tag: "ok" })
    await connectFully(org.admin.token, id)
    ok(await toolCall(org.admin.token, id), 200)
  })
})

describe("who may connect", () => {
  it("a member cannot connect a shared connection; another organization's connection is 404", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url)
    expect(refusal(await connect(org.member.token, id), 403)).toMatchObject({ reason: "insufficient_role" })
    expect(refusal(await connect(other.admin.token, id), 404)).toMatchObject({ error: "connection_not_found" })
    expect(refusal(await connect(org.admin.token, newConnectionId()), 404)).toMatchObject({ error: "connection_not_found" })
    expect(refusal(await mcpAuthorization.connect({ path: { connectionId: id } }), 401)).toMatchObject({ error: "unauthorized" })
  })

  it("a per-member connection is connected only by those a grant reaches", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url, { credentialMode: "per_member" })
    const refused = refusal(await connect(org.member.token, id), 403)
    expect(refused).toMatchObject({ reason: "insufficient_access" })
    // Managing a connection is not using it: an admin without a grant has no account to connect either.
    expect(refusal(await connect(org.admin.token, id), 403)).toMatchObject({ reason: "insufficient_access" })
    ok(await mcpConnections.mcpConnectionGrant({
      token: org.owner.token,
      path: { connectionId: id },
      payload: { role: "viewer", orgMembershipId: org.member.membership.id }
    }), 201)
    expect(ok(await connect(org.member.token, id), 200).status).toBe("needs_auth")
  })

  it("stops members when the MCP server names another authorization server, until an admin connects", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url, { credentialMode: "per_member", orgWide: true })
    await connectFully(org.member.token, id)
    // As if the tokens had come from another authorization server than the one the MCP server names now.
    await server.sql((sql) =>
      sql`UPDATE mcp_connections SET oauth_metadata = jsonb_set(oauth_metadata, '{issuer}', '"https://old-as.example"')
          WHERE organization_id = ${org.organizationId} AND id = ${id}`
    )
    ok(await disconnectMine(org.member.token, id), 200)
    const refused = refusal(await connect(org.member.token, id), 409)
    expect(refused).toMatchObject({ error: "oauth_issuer_review_required" })
    expect(await view(org.member.token, id)).toMatchObject({ ready: false, notReadyReason: Readiness.ISSUER_REVIEW })
    expect(refusal(await connect(org.member.token, id), 409)).toMatchObject({ error: "oauth_issuer_review_required" })

    // The admin connecting is the review.
    expect(ok(await connect(org.admin.token, id), 200).status).toBe("needs_auth")
    expect((await view(org.admin.token, id)).oauth?.issuerReviewRequired).toBe(false)
    await connectFully(org.member.token, id)
    expect(await view(org.member.token, id)).toMatchObject({ ready: true })
  })

  it("an API-key connection is not connected through OAuth: 409", async () => {
    const keyed = await startMcp({ auth: { apiKey: "key-1" } })
    const id = await createConnection(keyed.url, { authType: "apikey" })
    expect(refusal(await connect(org.admin.token, id), 409)).toMatchObject({ error: "mcp_connection_not_oauth" })
    expect(refusal(await disconnect(org.admin.token, id), 409)).toMatchObject({ error: "mcp_connection_not_oauth" })
    expect(refusal(await disconnectMine(org.member.token, id), 409)).toMatchObject({ error: "mcp_connection_not_per_member" })
  })
})

describe("the callback", () => {
  it("refuses a tampered, foreign or missing state", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url)
    const started = ok(await connect(org.admin.token, id), 200)
    const location = await authorize(started)
    const state = location.searchParams.get("state")!
    const [orgId, authorizationId, signature] = state.split(".")

    const tampered = new URL(location)
    tampered.searchParams.set("state", `${orgId}.${authorizationId}x.${signature}`)
    const refused = invalid(await followCallback(tampered))
    expect(refused.details[0]).toMatchObject({ path: ["state"] })
    expect(refused.details[0].message).toContain("not one this server issued")

    const otherOrg = new URL(location)
    otherOrg.searchParams.set("state", `${other.organizationId}.${authorizationId}.${signature}`)
    invalid(await followCallback(otherOrg))

    const missing = new URL(location)
    missing.searchParams.delete("state")
    invalid(await followCallback(missing))

    // The genuine one still works, once.
    Http.expectStatus("genuine", await followCallback(location), 200)
    const reused = invalid(await followCallback(location))
    expect(reused.details[0].message).toContain("already used")
    expect(tokenRequests(mcp.oauth!, "authorization_code").length).toBe(1)
  })

  it("refuses an authorization older than 10 minutes", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url)
    const started = ok(await connect(org.admin.token, id), 200)
    const location = await authorize(started)
    const before = clock.offsetMillis
    clock.advance("11 minutes")
    try {
      const refused = invalid(await followCallback(location))
      expect(refused.details[0].message).toContain("expired")
      // The next connect forgets the expired authorization; the new one stays.
      ok(await connect(org.admin.token, id), 200)
    } finally {
      clock.offsetMillis = before
    }
    expect((await sharedCredential(id)).accessTokenCiphertext).toBeNull()
    const pending = await server.sql((sql) =>
      sql<{ id: string }>`SELECT id FROM mcp_oauth_authorizations WHERE organization_id = ${org.organizationId} AND mcp_connection_id = ${id}`
    )
    expect(pending.length).toBe(1)
    expect(location.searchParams.get("state")).not.toContain(pending[0].id)
  })

  it("answers a denied authorization with a clear 400 and spends it", async () => {
    const mcp = await startMcp({ auth: { oauth: { authorizationServerOptions: { autoApprove: false } } } })
    const id = await createConnection(mcp.url)
    const started = ok(await connect(org.admin.token, id), 200)
    const pending = (await (await fetch(authorizeUrlOf(started))).json()) as { pending: string }
    const denied = new URL(mcp.oauth!.deny(pending.pending))
    const refused = invalid(await followCallback(denied))
    expect(refused.details[0]).toMatchObject({ path: ["error"] })
    expect(refused.details[0].message).toContain("access_denied")
    invalid(await followCallback(denied))
    expect((await sharedCredential(id)).credentialHealth).toBe("unknown")
  })

  it("refuses a code the token endpoint rejects", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url)
    const started = ok(await connect(org.admin.token, id), 200)
    const location = await authorize(started)
    location.searchParams.set("code", "code_forged")
    const refused = invalid(await followCallback(location))
    expect(refused.details[0]).toMatchObject({ path: ["code"] })
    expect(refused.details[0].message).toContain("invalid_grant")
  })
})

describe("refresh", () => {
  it("refreshes a token about to expire, with compare-and-set on the credential version", async () => {
    const mcp = await startMcp({ auth: { oauth: { authorizationServerOptions: { accessTokenLifetimeSeconds: 30 } } } })
    const id = await createConnection(mcp.url)
    await connectFully(org.admin.token, id)
    const before = await sharedCredential(id)
    mcp.oauth!.expireAccessTokens()
    expect(mcp.oauth!.verifyAccessToken(decrypt(before!.accessTokenCiphertext!, before!.at.access))).toBeUndefined()

    // 30 s left is inside the refresh window: connect refreshes and answers connected.
    expect(ok(await connect(org.admin.token, id), 200)).toEqual({ status: "connected", authorizeUrl: null })
    const after = await sharedCredential(id)
    expect(after.credentialVersion).toBe(before.credentialVersion + 1)
    expect(tokenRequests(mcp.oauth!, "refresh_token").length).toBe(1)
    expect(mcp.oauth!.verifyAccessToken(decrypt(after!.accessTokenCiphertext!, after!.at.access))).toMatchObject({ resource: mcp.url })
    expect(decrypt(after!.refreshTokenCiphertext!, after!.at.refresh)).not.toBe(decrypt(before!.refreshTokenCiphertext!, before!.at.refresh))
  })

  it("marks the credential reconnect_required when the authorization server answers invalid_grant", async () => {
    const mcp = await startMcp({ auth: { oauth: { authorizationServerOptions: { accessTokenLifetimeSeconds: 30 } } } })
    const id = await createConnection(mcp.url)
    await connectFully(org.admin.token, id)
    mcp.oauth!.setTokenMode({ _tag: "status", status: 400, error: "invalid_grant" })
    const answer = ok(await connect(org.admin.token, id), 200)
    expect(answer.status).toBe("needs_auth")
    expect(await sharedCredential(id)).toMatchObject({ credentialHealth: "reconnect_required", credentialHealthReason: "authorization_rejected" })

    // Reconnecting makes it ready again.
    mcp.oauth!.setTokenMode({ _tag: "ok" })
    Http.expectStatus("callback", await followCallback(await authorize(answer)), 200)
    expect(await sharedCredential(id)).toMatchObject({ credentialHealth: "ready", credentialHealthReason: null })
  })

  it.runIf(TestDatabase.onPostgres)("on Postgres: two concurrent refreshes both end with a working token, and the newest is stored", async () => {
    const mcp = await startMcp({ auth: { oauth: { authorizationServerOptions: { accessTokenLifetimeSeconds: 30 } } } })
    const id = await createConnection(mcp.url)
    await connectFully(org.admin.token, id)
    const before = await sharedCredential(id)
    // The token endpoint is slow, so both requests read the same version and both reach it.
    mcp.oauth!.setTokenMode({ _tag: "slow", ms: 300 })
    const [first, second] = await Promise.all([connect(org.admin.token, id), connect(org.owner.token, id)])
    expect(ok(first, 200)).toEqual({ status: "connected", authorizeUrl: null })
    expect(ok(second, 200)).toEqual({ status: "connected", authorizeUrl: null })
    mcp.oauth!.setTokenMode({ _tag: "ok" })

    const refreshes = tokenRequests(mcp.oauth!, "refresh_token")
    expect(refreshes.length).toBe(2)
    // Rotation: one refresh won, the other's (already used) refresh token was refused.
    expect(refreshes.map((request) => request.status).sort()).toEqual([200, 400])
    const after = await sharedCredential(id)
    expect(after).toMatchObject({ credentialHealth: "ready", credentialVersion: before.credentialVersion + 1 })
    expect(mcp.oauth!.verifyAccessToken(decrypt(after!.accessTokenCiphertext!, after!.at.access))).toBeDefined()
    // The stored refresh token is the newest: it refreshes again.
    expect(ok(await connect(org.admin.token, id), 200).status).toBe("connected")
    expect(tokenRequests(mcp.oauth!, "refresh_token").at(-1)?.status).toBe(200)
  })
})

describe("disconnect", () => {
  it("drops the shared credential (admins only); the client stays registered", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url)
    await connectFully(org.admin.token, id)
    expect(refusal(await disconnect(org.member.token, id), 403)).toMatchObject({ reason: "insufficient_role" })
    expect(refusal(await disconnect(other.owner.token, id), 404)).toMatchObject({ error: "connection_not_found" })
    expect(ok(await disconnect(org.admin.token, id), 200)).toEqual({ ok: true, removed: true })
    const after = await sharedCredential(id)
    expect(after).toMatchObject({ accessTokenCiphertext: null, refreshTokenCiphertext: null, credentialHealth: "unknown", connectedAt: null })
    expect(after.oauthClientId).not.toBeNull()
    expect(ok(await disconnect(org.admin.token, id), 200)).toEqual({ ok: true, removed: false })
    // Reached under another name, the server keeps the callback its client was registered with.
    const port = new URL(server.url).port
    const renamed = decodeConnectResult(await postWithHost(`/v1/mcp-connections/${id}/connect`, `localhost:${port}`, org.admin.token))
    expect(renamed.status).toBe("needs_auth")
    expect(new URL(authorizeUrlOf(renamed)).searchParams.get("redirect_uri")).toBe(`${server.url}${OAuthClientMetadata.CALLBACK_PATH}`)
    expect(mcp.oauth!.requests.filter((request) => request.path === "/register").length).toBe(1)
  })

  it("of a per-member connection, drops every member's credential", async () => {
    const mcp = await startMcp()
    const id = await createConnection(mcp.url, { credentialMode: "per_member", orgWide: true })
    await connectFully(org.member.token, id)
    expect(ok(await disconnect(org.owner.token, id), 200)).toEqual({ ok: true, removed: true })
    expect(await memberCredential(id, org.member.membership.id)).toBeUndefined()
  })
})

describe("the client metadata document", () => {
  it("names its own URL as client id and the callback as redirect URI", async () => {
    const document = ok(await mcpAuthorization.clientMetadata({}), 200)
    expect(document).toEqual({
      client_id: `${server.url}${OAuthClientMetadata.CLIENT_METADATA_PATH}`,
      client_name: "orgplane",
      client_uri: server.url,
      redirect_uris: [`${server.url}${OAuthClientMetadata.CALLBACK_PATH}`],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
      application_type: "web"
    })
  })
})

describe("choices (units)", () => {
  const none = { oauthClientId: null, oauthRegistrationSource: null, oauthMetadata: null, oauthRedirectUri: null } as const
  /** Stored metadata as the SQL client reads it back (member names in camelCase). */
  const storedBy = (issuer: string) => ({ issuer, tokenEndpoint: `${issuer}/token` })
  const callback = `https://orgplane.example${OAuthClientMetadata.CALLBACK_PATH}`

  it("picks the registration: pre-registered, reused, client metadata document (https only), dynamic, else required", () => {
    const everything = { registration_endpoint: "https://as.example/register", client_id_metadata_document_supported: true }
    expect(OAuthChoices.chooseRegistration({ ...none, oauthClientId: "admin", oauthRegistrationSource: "pre_registered" }, "https://as.example", everything, callback, "https://orgplane.example"))
      .toEqual({ _tag: "existing", source: "pre_registered" })
    expect(
      OAuthChoices.chooseRegistration(
        { oauthClientId: "dyn", oauthRegistrationSource: "dynamic", oauthMetadata: storedBy("https://as.example"), oauthRedirectUri: callback },
        "https://as.example",
        everything,
        callback,
        undefined
      )
    ).toEqual({ _tag: "existing", source: "dynamic" })
    // A client registered with another authorization server is not reused.
    expect(
      OAuthChoices.chooseRegistration(
        { oauthClientId: "dyn", oauthRegistrationSource: "dynamic", oauthMetadata: storedBy("https://old.example"), oauthRedirectUri: callback },
        "https://as.example",
        everything,
        callback,
        "https://orgplane.example"
      )
    ).toEqual({ _tag: "client_metadata", clientId: `https://orgplane.example${OAuthClientMetadata.CLIENT_METADATA_PATH}` })
    expect(OAuthChoices.chooseRegistration(none, "https://as.example", everything, callback, "http://orgplane.example")).toEqual({ _tag: "dynamic" })
    expect(OAuthChoices.chooseRegistration(none, "https://as.example", everything, callback, undefined)).toEqual({ _tag: "dynamic" })
    expect(OAuthChoices.chooseRegistration(none, "https://as.example", { client_id_metadata_document_supported: true }, callback, undefined))
      .toEqual({ _tag: "required" })
  })

  it("picks the authorization server: the configured issuer, the single one named, or asks when several", () => {
    expect(OAuthChoices.chooseIssuer("https://chosen.example", { authorization_servers: ["https://a.example", "https://b.example"] }, "https://mcp.example/mcp"))
      .toEqual({ issuer: "https://chosen.example" })
    expect(OAuthChoices.chooseIssuer(null, { authorization_servers: ["https://a.example"] }, "https://mcp.example/mcp")).toEqual({ issuer: "https://a.example" })
    expect(OAuthChoices.chooseIssuer(null, { authorization_servers: ["https://a.example", "https://b.example"] }, "https://mcp.example/mcp"))
      .toEqual({ several: ["https://a.example", "https://b.example"] })
    expect(OAuthChoices.chooseIssuer(null, undefined, "https://mcp.example/mcp")).toEqual({ issuer: "https://mcp.example" })
  })

  it("asks for the configured scopes, else the challenge's, else the metadata's", () => {
    expect(OAuthChoices.scopesToRequest(["a"], "b c", ["d"])).toEqual(["a"])
    expect(OAuthChoices.scopesToRequest([], "b  c", ["d"])).toEqual(["b", "c"])
    expect(OAuthChoices.scopesToRequest([], undefined, ["d"])).toEqual(["d"])
    expect(OAuthChoices.scopesToRequest([], "", undefined)).toEqual([])
  })

  it("signs states and refuses any change to them", () => {
    const key = OAuthState.stateKeyOf(NodeCrypto.randomBytes(32))
    const state = OAuthState.signState(key, "org_1", "moa_abc")
    expect(OAuthState.verifyState(key, state)).toEqual({ organizationId: "org_1", authorizationId: "moa_abc" })
    expect(OAuthState.verifyState(key, state.replace("org_1", "org_2"))).toBeUndefined()
    expect(OAuthState.verifyState(key, `${state}x`)).toBeUndefined()
    expect(OAuthState.verifyState(key, "org_1.moa_abc")).toBeUndefined()
    expect(OAuthState.verifyState(OAuthState.stateKeyOf(NodeCrypto.randomBytes(32)), state)).toBeUndefined()
  })

  it("builds the base URL from ORGPLANE_PUBLIC_URL, else the request's host", () => {
    expect(PublicUrl.baseUrlOf({ publicUrl: "https://orgplane.example/", host: "0.0.0.0", port: 8787, basePath: "" }, "evil.example")).toBe("https://orgplane.example")
    expect(PublicUrl.baseUrlOf({ publicUrl: undefined, host: "0.0.0.0", port: 8787, basePath: "" }, "127.0.0.1:4000")).toBe("http://127.0.0.1:4000")
    expect(PublicUrl.baseUrlOf({ publicUrl: undefined, host: "127.0.0.1", port: 8787, basePath: "" }, "bad host/../x")).toBe("http://127.0.0.1:8787")
  })
})

describe("Credentials.headersFor (the service, on the server's database)", () => {
  const guard = Outbound.layer({ allowPrivate: true, timeout: "5 seconds" }).pipe(Layer.provide(AddressGuard.systemLayer))

  /** The caller as the member middleware gives it, signed in with a session (headersFor reads the membership id). */
  const as = (joined: { readonly user: typeof User.Encoded; readonly membership: typeof Membership.Encoded }): MemberContext => ({
    _tag: "Member",
    user: Schema.decodeUnknownSync(User)(joined.user),
    credential: { _tag: "Session", sessionId: Schema.decodeUnknownSync(SessionId)(exampleId("ses")), ssoConnectionId: null, authenticatedAt: new Date() },
    organization: Schema.decodeUnknownSync(Organization)(org.owner.organization),
    membership: Schema.decodeUnknownSync(Membership)(joined.membership)
  })

  const headersFor = (caller: MemberContext, id: string) =>
    server.sql((sql) =>
      Effect.gen(function*() {
        const connections = yield* ConnectionsRepository
        const credentials = yield* Credentials
        const row = yield* Effect.flatMap(connections.findRow(org.organizationId as OrganizationId, id as ExternalMcpConnectionId), Effect.fromOption)
        return yield* Effect.result(credentials.headersFor(caller, row))
      }).pipe(
        Effect.provide(
          Layer.merge(Credentials.layer, ConnectionsRepository.layer).pipe(
            Layer.provide(Layer.mergeAll(Layer.succeed(Crypto.Crypto, crypto), guard, Layer.succeed(SqlClient.SqlClient, sql)))
          )
        )
      )
    )

  it("gives none nothing, an API key as a Bearer token, and each member their own OAuth token", async () => {
    const open = await startMcp({ auth: "none" })
    expect(await headersFor(as(org.admin), await createConnection(open.url, { authType: "none" }))).toEqual(Result.succeed({}))
    const keyed = await startMcp({ auth: { apiKey: "key-1" } })
    expect(await headersFor(as(org.admin), await createConnection(keyed.url, { authType: "apikey" })))
      .toEqual(Result.succeed({ authorization: "Bearer key-1" }))

    const mcp = await startMcp()
    const id = await createConnection(mcp.url, { credentialMode: "per_member", orgWide: true })
    await connectFully(org.member.token, id)
    const mine = await headersFor(as(org.member), id)
    expect(Result.isSuccess(mine)).toBe(true)
    const header = Result.getOrThrow(mine).authorization!
    expect(header).toBe(`Bearer ${decryptAccess(await memberCredential(id, org.member.membership.id))}`)
    // The token works at the MCP server.
    const checked = await Effect.runPromise(Effect.result(Session.check({ url: mcp.url, headers: { authorization: header } }).pipe(Effect.provide(guard))))
    expect(checked._tag).toBe("Success")

    // Someone who did not connect gets no credential, never the member's.
    const theirs = await headersFor(as(org.admin), id)
    expect(Result.isFailure(theirs)).toBe(true)
    if (Result.isFailure(theirs)) {
      expect(theirs.failure).toMatchObject({ _tag: "ConnectionNotReady" })
      expect((theirs.failure as { message: string }).message).toContain(`/v1/mcp-connections/${id}/connect`)
    }
  })

  it("refreshes a token about to expire before giving it, and refuses a credential the server rejected", async () => {
    const mcp = await startMcp({ auth: { oauth: { authorizationServerOptions: { accessTokenLifetimeSeconds: 30 } } } })
    const id = await createConnection(mcp.url)
    await connectFully(org.admin.token, id)
    mcp.oauth!.expireAccessTokens()
    const headers = Result.getOrThrow(await headersFor(as(org.member), id))
    expect(tokenRequests(mcp.oauth!, "refresh_token").length).toBe(1)
    expect(mcp.oauth!.verifyAccessToken(headers.authorization!.slice("Bearer ".length))).toBeDefined()

    mcp.oauth!.setTokenMode({ _tag: "status", status: 400, error: "invalid_grant" })
    const refused = await headersFor(as(org.member), id)
    expect(Result.isFailure(refused)).toBe(true)
    if (Result.isFailure(refused)) expect((refused.failure as { message: string }).message).toMatch(/invalid_grant.*reconnect/)
    expect(await sharedCredential(id)).toMatchObject({ credentialHealth: "reconnect_required", credentialHealthReason: "authorization_rejected" })
  })
})
