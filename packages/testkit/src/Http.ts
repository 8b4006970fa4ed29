/**
 * Raw HTTP for tests that must see exactly what goes over the wire (the typed client validates before sending).
 * The helpers that set things up answer with the API's wire types, so a test that misreads a response fails to
 * compile rather than at run time.
 */
import type {
  AcceptedInvitation,
  AuthResult,
  CreatedApiKey,
  CreatedInvitation,
  CreatedScimToken,
  CreateScimConnectionRequest,
  OrganizationWithMembership,
  ScimConnectionResponse
} from "@orgplane/schema"

export interface RawResponse<Body = unknown> {
  readonly status: number
  readonly headers: Headers
  /** The parsed JSON body (undefined when empty or not JSON): `unknown` unless a helper knows its shape. */
  readonly body: Body
  readonly text: string
}

export interface Options {
  readonly body?: unknown
  readonly rawBody?: string
  readonly token?: string
  readonly apiKey?: string
  readonly headers?: Record<string, string>
}

export const request = async (baseUrl: string, method: string, path: string, options: Options = {}): Promise<RawResponse> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
  let body: string | undefined
  if (options.rawBody !== undefined || options.body !== undefined) {
    headers["content-type"] ??= "application/json"
    body = options.rawBody ?? JSON.stringify(options.body)
  }
  const response = await fetch(new URL(path, baseUrl), { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  let parsed: unknown = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  return { status: response.status, headers: response.headers, body: parsed, text }
}

/** `get`, `post`, `patch` and `del` against a server whose URL is known later (say, after `beforeAll`). */
export const verbs = (baseUrl: () => string) => {
  const verb = (method: string) => (path: string, options: Options = {}) => request(baseUrl(), method, path, options)
  return { get: verb("GET"), post: verb("POST"), patch: verb("PATCH"), del: verb("DELETE") }
}

/** The body of a response that must have `status`; throws, naming `what` and the response, otherwise. */
export const expectStatus = <Body = unknown>(what: string, response: RawResponse, status: number): Body => {
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status} ${response.text}`)
  return response.body as Body
}

/** A request whose success answer has a known wire shape: fails (throws) on any other status. */
const expecting = async <Body>(what: string, status: number, response: Promise<RawResponse>): Promise<Body> => {
  const answered = await response
  if (answered.status !== status) throw new Error(`${what} failed: ${answered.status} ${answered.text}`)
  return answered.body as Body
}

const PASSWORD = "correct horse battery"

/** Signs up a fresh user (unique email) and returns the token and user. */
export const signUp = async (baseUrl: string, name = "Test User") => {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${Math.random().toString(36).slice(2, 10)}@example.com`
  const body = await expecting<typeof AuthResult.Encoded>(
    "sign-up",
    201,
    request(baseUrl, "POST", "/v1/auth/sign-up", { body: { email, password: PASSWORD, name } })
  )
  return { token: body.session.token, user: body.user, email, password: PASSWORD }
}

/** A signed-up user who owns a new organization. */
export const owner = async (baseUrl: string, organizationName = "Acme") => {
  const user = await signUp(baseUrl, "Owner")
  const created = await expecting<typeof OrganizationWithMembership.Encoded>(
    "create organization",
    201,
    request(baseUrl, "POST", "/v1/organizations", { token: user.token, body: { name: organizationName } })
  )
  return { ...user, organization: created.organization, membership: created.membership }
}

/**
 * The setup token test servers are configured with (packages/server's test/support/HttpServer.ts `testSettings`): `operator` redeems it. Nothing
 * makes an organization the instance's operator by itself (see the server's identity/Operator.ts).
 */
export const SETUP_TOKEN = "opsetup_testkit-setup-token-0123456789abcdefghij"

/**
 * An owner whose new organization operates the instance: an `owner`, then the setup token redeemed
 * (`POST /v1/admin/operator`), on a server started with the testkit's settings (or `setupToken`).
 */
export const operator = async (baseUrl: string, organizationName = "Operator", setupToken = SETUP_TOKEN) => {
  const made = await owner(baseUrl, organizationName)
  await expecting("claim the operator", 200, request(baseUrl, "POST", "/v1/admin/operator", { token: made.token, body: { setupToken } }))
  return made
}

let invitees = 0

/**
 * A new person who joined the inviter's active organization with `role`, through an invitation shown to the inviter
 * (whatever the server's mail settings) and accepted by signing up. Returns their session token, user, membership and
 * credentials.
 */
export const join = async (baseUrl: string, inviterToken: string, role: "admin" | "member", name = "Invitee") => {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${++invitees}.${Math.random().toString(36).slice(2, 10)}@example.com`
  const invited = await expecting<typeof CreatedInvitation.Encoded>(
    "invitation",
    201,
    request(baseUrl, "POST", "/v1/invitations", { token: inviterToken, body: { email, role, delivery: "shown" } })
  )
  const accepted = await expecting<typeof AcceptedInvitation.Encoded>(
    "accepting",
    200,
    request(baseUrl, "POST", "/v1/invitations/accept", { body: { token: invited.inviteToken, signUp: { name, password: PASSWORD } } })
  )
  if (accepted.session === null) throw new Error("accepting with signUp returned no session")
  return { token: accepted.session.token, user: accepted.user, membership: accepted.membership, email, password: PASSWORD }
}

/** An organization with an owner, an admin and a member. */
export const staffed = async (baseUrl: string, organizationName = "Acme") => {
  const ownerUser = await owner(baseUrl, organizationName)
  const admin = await join(baseUrl, ownerUser.token, "admin", "Admin")
  const member = await join(baseUrl, ownerUser.token, "member", "Member")
  return { organizationId: ownerUser.organization.id, owner: ownerUser, admin, member }
}

/**
 * A SCIM connection of the caller's active organization (enterprise plan; an owner's or admin's token) and a token of
 * it, made through the management API: what a directory needs, its `base` path and `token`.
 */
export const scimDirectory = async (
  baseUrl: string,
  adminToken: string,
  settings: Partial<typeof CreateScimConnectionRequest.Encoded> = {}
) => {
  const { connection } = await expecting<typeof ScimConnectionResponse.Encoded>(
    "create SCIM connection",
    201,
    request(baseUrl, "POST", "/v1/scim/connections", {
      token: adminToken,
      body: { name: `Directory ${Math.random().toString(36).slice(2, 10)}`, ...settings }
    })
  )
  const issued = await expecting<typeof CreatedScimToken.Encoded>(
    "create SCIM token",
    201,
    request(baseUrl, "POST", `/v1/scim/connections/${connection.id}/tokens`, { token: adminToken, body: { name: "directory" } })
  )
  return { connection, token: issued.token, tokenId: issued.scimToken.id, base: `/scim/v2/${connection.id}` }
}

/** Signs `email` in with `password`: the session's token and the user (fails the test on any other answer). */
export const signIn = async (baseUrl: string, email: string, password = PASSWORD) => {
  const body = await expecting<typeof AuthResult.Encoded>("sign-in", 200, request(baseUrl, "POST", "/v1/auth/sign-in", { body: { email, password } }))
  return { token: body.session.token, user: body.user }
}

/**
 * An API key made by the holder of `token` in its active organization: with `scopes` (actions of the policy table, or
 * `<area>.*`), or the default ones without. The key's secret and its resource.
 */
export const apiKey = async (baseUrl: string, token: string, scopes?: ReadonlyArray<string>, name = "test key") => {
  const body = await expecting<typeof CreatedApiKey.Encoded>(
    "API key",
    201,
    request(baseUrl, "POST", "/v1/api-keys", { token, body: scopes === undefined ? { name } : { name, scopes } })
  )
  return { key: body.key, apiKey: body.apiKey }
}
