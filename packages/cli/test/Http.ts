/**
 * The few raw HTTP calls the tests make to set a server up (a user, an owner, an organization with staff), over
 * `fetch`, so the setup goes through the wire as any client's would.
 */
import { PASSWORD } from "./Harness.js"

export interface RawResponse {
  readonly status: number
  /** The parsed JSON body (`undefined` when there is none), read with `at`. */
  readonly body: unknown
}

/** The member at `path` of a parsed JSON value, or undefined. */
export const at = (value: unknown, ...path: ReadonlyArray<string>): unknown =>
  path.reduce<unknown>((current, key) => typeof current === "object" && current !== null ? Object.getOwnPropertyDescriptor(current, key)?.value : undefined, value)

/** The text at `path`, or a thrown error naming the path. */
export const textAt = (value: unknown, ...path: ReadonlyArray<string>): string => {
  const found = at(value, ...path)
  if (typeof found !== "string") throw new Error(`no text at ${path.join(".")} in ${JSON.stringify(value)}`)
  return found
}

export const request = async (
  baseUrl: string,
  method: string,
  path: string,
  options: { readonly token?: string; readonly apiKey?: string; readonly body?: unknown } = {}
): Promise<RawResponse> => {
  const headers: Record<string, string> = {}
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.apiKey !== undefined) headers["x-api-key"] = options.apiKey
  if (options.body !== undefined) headers["content-type"] = "application/json"
  const response = await fetch(new URL(path, baseUrl), {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  let body: unknown = undefined
  try {
    body = text === "" ? undefined : JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, body }
}

const expecting = async (what: string, status: number, pending: Promise<RawResponse>) => {
  const response = await pending
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`)
  return response.body
}

let count = 0
const emailFor = (name: string) => `${name.toLowerCase().replace(/[^a-z0-9]+/g, ".")}.${++count}.${Math.random().toString(36).slice(2, 10)}@example.com`

/** A new user with a session. */
export const signUp = async (baseUrl: string, name = "Test User") => {
  const email = emailFor(name)
  const body = await expecting("sign-up", 201, request(baseUrl, "POST", "/v1/auth/sign-up", { body: { email, password: PASSWORD, name } }))
  return { token: textAt(body, "session", "token"), userId: textAt(body, "user", "id"), email, password: PASSWORD }
}

/** A signed-up user who owns a new organization. */
export const owner = async (baseUrl: string, organizationName = "Acme") => {
  const user = await signUp(baseUrl, "Owner")
  const created = await expecting("create organization", 201, request(baseUrl, "POST", "/v1/organizations", { token: user.token, body: { name: organizationName } }))
  return {
    ...user,
    organization: { id: textAt(created, "organization", "id"), name: textAt(created, "organization", "name") },
    membership: { id: textAt(created, "membership", "id"), role: textAt(created, "membership", "role") }
  }
}

/** A new account that joined the inviter's active organization with `role`, and its session. */
export const join = async (baseUrl: string, inviterToken: string, role: "admin" | "member", name = "Invitee") => {
  const email = emailFor(name)
  const invited = await expecting("invitation", 201, request(baseUrl, "POST", "/v1/invitations", { token: inviterToken, body: { email, role } }))
  const accepted = await expecting(
    "accepting",
    200,
    request(baseUrl, "POST", "/v1/invitations/accept", { body: { token: textAt(invited, "inviteToken"), signUp: { name, password: PASSWORD } } })
  )
  return {
    token: textAt(accepted, "session", "token"),
    email,
    userId: textAt(accepted, "user", "id"),
    membership: { id: textAt(accepted, "membership", "id"), role: textAt(accepted, "membership", "role") }
  }
}

/** An organization with an owner, an admin and a member. */
export const staffed = async (baseUrl: string, organizationName = "Acme") => {
  const ownerUser = await owner(baseUrl, organizationName)
  const admin = await join(baseUrl, ownerUser.token, "admin", "Admin")
  const member = await join(baseUrl, ownerUser.token, "member", "Member")
  return { organizationId: ownerUser.organization.id, owner: ownerUser, admin, member }
}

/** The setup token the tests' servers are started with (`ORGPLANE_SETUP_TOKEN`), as testkit's test servers are. */
export const SETUP_TOKEN = "opsetup_testkit-setup-token-0123456789abcdefghij"

/** An owner whose new organization operates the instance: an `owner`, then the setup token redeemed. */
export const operator = async (baseUrl: string, organizationName = "Operator", setupToken = SETUP_TOKEN) => {
  const made = await owner(baseUrl, organizationName)
  await expecting("claim the operator", 200, request(baseUrl, "POST", "/v1/admin/operator", { token: made.token, body: { setupToken } }))
  return made
}
