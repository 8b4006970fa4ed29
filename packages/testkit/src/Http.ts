/** Raw HTTP for tests that must see exactly what goes over the wire (the typed client validates before sending). */
export interface RawResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
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

/** Signs up a fresh user (unique email) and returns the token and user. */
export const signUp = async (baseUrl: string, name = "Test User") => {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${Math.random().toString(36).slice(2, 10)}@example.com`
  const response = await request(baseUrl, "POST", "/v1/auth/sign-up", { body: { email, password: "correct horse battery", name } })
  if (response.status !== 201) throw new Error(`sign-up failed: ${response.status} ${response.text}`)
  return { token: response.body.session.token as string, user: response.body.user, email, password: "correct horse battery" }
}

/** A signed-up user who owns a new organization. */
export const owner = async (baseUrl: string, organizationName = "Acme") => {
  const user = await signUp(baseUrl, "Owner")
  const created = await request(baseUrl, "POST", "/v1/organizations", { token: user.token, body: { name: organizationName } })
  if (created.status !== 201) throw new Error(`create organization failed: ${created.status} ${created.text}`)
  return { ...user, organization: created.body.organization, membership: created.body.membership }
}

let invitees = 0

/**
 * A new person who joined the inviter's active organization with `role`, through an invitation accepted by signing
 * up. Returns their session token, user, membership and credentials.
 */
export const join = async (baseUrl: string, inviterToken: string, role: "admin" | "member", name = "Invitee") => {
  const email = `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${++invitees}.${Math.random().toString(36).slice(2, 10)}@example.com`
  const invited = await request(baseUrl, "POST", "/v1/invitations", { token: inviterToken, body: { email, role } })
  if (invited.status !== 201) throw new Error(`invitation failed: ${invited.status} ${invited.text}`)
  const accepted = await request(baseUrl, "POST", "/v1/invitations/accept", {
    body: { token: invited.body.inviteToken, signUp: { name, password: "correct horse battery" } }
  })
  if (accepted.status !== 200) throw new Error(`accepting failed: ${accepted.status} ${accepted.text}`)
  return {
    token: accepted.body.session.token as string,
    user: accepted.body.user,
    membership: accepted.body.membership,
    email,
    password: "correct horse battery"
  }
}

/** An organization with an owner, an admin and a member. */
export const staffed = async (baseUrl: string, organizationName = "Acme") => {
  const ownerUser = await owner(baseUrl, organizationName)
  const admin = await join(baseUrl, ownerUser.token, "admin", "Admin")
  const member = await join(baseUrl, ownerUser.token, "member", "Member")
  return { organizationId: ownerUser.organization.id as string, owner: ownerUser, admin, member }
}
