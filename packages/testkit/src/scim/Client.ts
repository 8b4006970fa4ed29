/**
 * The one request helper of the SCIM conformance suite: bearer token, `application/scim+json`, the parsed body, and
 * what a check needs to say when it fails (method, path, status and the body as sent back).
 */
export interface Target {
  /** The SCIM base URL, e.g. `http://127.0.0.1:4000/scim/v2/scc_…` (no trailing slash needed). */
  readonly baseUrl: string
  readonly token: string
  readonly fetch?: typeof globalThis.fetch
}

export interface ScimResponse {
  readonly method: string
  readonly path: string
  readonly status: number
  readonly headers: Headers
  readonly contentType: string
  /** The parsed JSON body; undefined when empty or not JSON. */
  readonly body: unknown
  readonly text: string
}

export interface RequestOptions {
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** Another bearer token than the target's, or null for none (a 401 check). */
  readonly token?: string | null
}

export const SCIM_JSON = "application/scim+json"

export const URN = {
  user: "urn:ietf:params:scim:schemas:core:2.0:User",
  group: "urn:ietf:params:scim:schemas:core:2.0:Group",
  enterpriseUser: "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User",
  serviceProviderConfig: "urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig",
  resourceType: "urn:ietf:params:scim:schemas:core:2.0:ResourceType",
  schema: "urn:ietf:params:scim:schemas:core:2.0:Schema",
  listResponse: "urn:ietf:params:scim:api:messages:2.0:ListResponse",
  patchOp: "urn:ietf:params:scim:api:messages:2.0:PatchOp",
  error: "urn:ietf:params:scim:api:messages:2.0:Error"
} as const

export interface Client {
  readonly request: (method: string, path: string, options?: RequestOptions) => Promise<ScimResponse>
  readonly get: (path: string, options?: RequestOptions) => Promise<ScimResponse>
  readonly post: (path: string, body: unknown, options?: RequestOptions) => Promise<ScimResponse>
  readonly put: (path: string, body: unknown, options?: RequestOptions) => Promise<ScimResponse>
  readonly patch: (path: string, body: unknown, options?: RequestOptions) => Promise<ScimResponse>
  readonly del: (path: string, options?: RequestOptions) => Promise<ScimResponse>
}

export const client = (target: Target): Client => {
  const doFetch = target.fetch ?? globalThis.fetch
  const base = target.baseUrl.replace(/\/+$/, "")
  const request = async (method: string, path: string, options: RequestOptions = {}): Promise<ScimResponse> => {
    const token = options.token === undefined ? target.token : options.token
    const headers: Record<string, string> = { ...(token === null ? {} : { authorization: `Bearer ${token}` }), accept: SCIM_JSON, ...options.headers }
    let body: string | undefined
    if (options.body !== undefined) {
      headers["content-type"] ??= SCIM_JSON
      body = JSON.stringify(options.body)
    }
    const response = await doFetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
    const text = await response.text()
    let parsed: unknown = undefined
    try {
      parsed = text === "" ? undefined : JSON.parse(text)
    } catch {
      parsed = undefined
    }
    const contentType = response.headers.get("content-type") ?? ""
    return { method, path, status: response.status, headers: response.headers, contentType, body: parsed, text }
  }
  return {
    request,
    get: (path, options) => request("GET", path, options),
    post: (path, body, options) => request("POST", path, { ...options, body }),
    put: (path, body, options) => request("PUT", path, { ...options, body }),
    patch: (path, body, options) => request("PATCH", path, { ...options, body }),
    del: (path, options) => request("DELETE", path, options)
  }
}

/** A query string from pairs, percent-encoded the way clients send it (spaces as %20). */
export const query = (params: Record<string, string | number>): string =>
  "?" + Object.entries(params).map(([key, value]) => `${key}=${encodeURIComponent(String(value))}`).join("&")

/** What a failing check says about a response: the request and what came back (cut to a readable length). */
export const describe = (response: ScimResponse): string =>
  `${response.method} ${response.path} → ${response.status} ${response.contentType} ${response.text.slice(0, 600)}`
