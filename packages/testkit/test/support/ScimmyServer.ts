/**
 * A reference SCIM 2.0 server for testing the conformance suite itself: SCIMMY 1.3.5 (resources, schemas, filter,
 * PatchOp, ListResponse, error messages) behind a small node:http adapter with an in-memory store, and what HTTP is
 * the adapter's (SCIMMY has no HTTP layer): ETags with `If-Match` and `If-None-Match`, the 401's `WWW-Authenticate`,
 * the 405's `Allow`; on 127.0.0.1. `flaws` make it wrong in one known way each, so the suite can show that the
 * matching checks fail. (scimmy-routers needs express, which is not a dependency here.)
 */
import * as NodeCrypto from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import SCIMMY from "scimmy"

const BASE = "/scim/v2"

export interface Flaws {
  /** An advertised User attribute the store silently drops (say `title`). */
  readonly dropsAttribute?: string
  /** An unknown URL answers 200 with an HTML page instead of a SCIM 404. */
  readonly unknownUrlIsHtml?: boolean
  /** `If-Match` is advertised (etag.supported) but ignored. */
  readonly ignoresIfMatch?: boolean
  /** `startIndex` read as 0-based. */
  readonly zeroBasedPaging?: boolean
  /** A duplicate userName is stored instead of refused. */
  readonly allowsDuplicateUserName?: boolean
  /** `If-None-Match` is ignored: a GET answers 200 and the body whatever the version. */
  readonly ignoresIfNoneMatch?: boolean
  /** A 401 without the `WWW-Authenticate` challenge. */
  readonly noChallenge?: boolean
  /** A 405 as a plain JSON body, not a SCIM error. */
  readonly plainMethodNotAllowed?: boolean
}

/** What the store sets on every resource: its id and meta (with the revision counter its ETags come from). */
interface Kept {
  readonly id: string
  readonly meta: { readonly created: Date; readonly lastModified: Date; readonly revision: number }
}

/** A resource as the store keeps it: the JSON of SCIMMY's instance of the kind's schema, and what the store sets. */
type Stored = Kept & Readonly<Record<string, unknown>>
type Kind = "Users" | "Groups"

interface Store {
  readonly flaws: Flaws
  readonly resources: { readonly [K in Kind]: Map<string, Stored> }
}

type Handed<S> = Omit<S, SCIMMY.Types.Resource.ShadowAttributes>

/** A stored User as SCIMMY's handlers hand it back (SCIMMY required its userName on the way in). */
const asUser = (stored: Stored): Handed<SCIMMY.Schemas.User> => ({ ...stored, userName: String(stored.userName) })
/** A stored Group as SCIMMY's handlers hand it back (SCIMMY required its displayName on the way in). */
const asGroup = (stored: Stored): Handed<SCIMMY.Schemas.Group> => ({ ...stored, displayName: String(stored.displayName) })

/** A SCIMMY error; no `scimType` is "" (SCIMMY's error message omits a falsy one, as it does null). */
const scimError = (status: number, scimType: string | undefined, detail: string) => new SCIMMY.Types.Error(status, scimType ?? "", detail)

/** What a request asks of a resource (filter, attributes, paging): SCIMMY checks each parameter's type itself. */
type Query = NonNullable<ConstructorParameters<typeof SCIMMY.Types.Resource>[1]>
const query = (params: Readonly<Record<string, unknown>>): Query => params as Query

/** A PatchOp message as sent: SCIMMY checks its schemas and Operations itself (a 400 invalidSyntax otherwise). */
type PatchMessage = Parameters<InstanceType<typeof SCIMMY.Resources.User>["patch"]>[0]
const patchMessage = (body: unknown): PatchMessage => body as PatchMessage

/** The stored resource of `kind` answered by SCIMMY's egress (by id, or the filtered list). */
const egress = (kind: Kind) => (resource: SCIMMY.Types.Resource, store: Store): Stored | ReadonlyArray<Stored> => {
  const all = [...store.resources[kind].values()]
  if (resource.id !== undefined) {
    const found = store.resources[kind].get(resource.id)
    if (found === undefined) throw scimError(404, undefined, `Resource ${resource.id} not found`)
    return structuredClone(found)
  }
  return structuredClone(resource.filter === undefined ? all : resource.filter.match(all))
}

const ingress = (kind: Kind) => (resource: SCIMMY.Types.Resource, instance: SCIMMY.Types.Schema, store: Store): Stored => {
  const map = store.resources[kind]
  const existing = resource.id === undefined ? undefined : map.get(resource.id)
  if (resource.id !== undefined && existing === undefined) throw scimError(404, undefined, `Resource ${resource.id} not found`)
  const data: Record<string, unknown> = JSON.parse(JSON.stringify(instance))
  delete data.meta
  const unique = kind === "Users" ? "userName" : "displayName"
  const clash = [...map.values()].find((r) => r.id !== resource.id && String(r[unique]).toLowerCase() === String(data[unique]).toLowerCase())
  if (clash !== undefined && !(kind === "Users" && store.flaws.allowsDuplicateUserName)) throw scimError(409, "uniqueness", `${unique} is taken`)
  if (kind === "Users" && store.flaws.dropsAttribute !== undefined) delete data[store.flaws.dropsAttribute]
  const now = new Date()
  const stored: Stored = {
    ...data,
    id: existing?.id ?? NodeCrypto.randomUUID(),
    meta: { created: existing?.meta.created ?? now, lastModified: now, revision: (existing?.meta.revision ?? 0) + 1 }
  }
  map.set(stored.id, stored)
  return structuredClone(stored)
}

const degress = (kind: Kind) => (resource: SCIMMY.Types.Resource, store: Store) => {
  if (!store.resources[kind].delete(resource.id ?? "")) throw scimError(404, undefined, `Resource ${resource.id} not found`)
}

const isList = (found: Stored | ReadonlyArray<Stored>): found is ReadonlyArray<Stored> => Array.isArray(found)

let declared = false
const declare = () => {
  if (declared) return
  declared = true
  SCIMMY.Config.set({
    documentationUri: "https://example.com/scim",
    patch: true,
    filter: 200,
    etag: true,
    sort: false,
    bulk: false,
    changePassword: false,
    authenticationSchemes: [{ type: "oauthbearertoken", name: "OAuth Bearer Token", description: "A bearer token in the Authorization header" }]
  })
  const users = { ingress: ingress("Users"), egress: egress("Users") }
  const groups = { ingress: ingress("Groups"), egress: egress("Groups") }
  SCIMMY.Resources.declare(SCIMMY.Resources.User.extend(SCIMMY.Schemas.EnterpriseUser, false))
    .ingress((resource, instance, store: Store) => asUser(users.ingress(resource, instance, store)))
    .egress((resource, store: Store) => {
      const found = users.egress(resource, store)
      return isList(found) ? found.map(asUser) : asUser(found)
    })
    .degress(degress("Users"))
  SCIMMY.Resources.declare(SCIMMY.Resources.Group)
    .ingress((resource, instance, store: Store) => asGroup(groups.ingress(resource, instance, store)))
    .egress((resource, store: Store) => {
      const found = groups.egress(resource, store)
      return isList(found) ? found.map(asGroup) : asGroup(found)
    })
    .degress(degress("Groups"))
  for (const resource of [SCIMMY.Resources.User, SCIMMY.Resources.Group, SCIMMY.Resources.Schema, SCIMMY.Resources.ResourceType, SCIMMY.Resources.ServiceProviderConfig]) {
    resource.basepath(BASE)
  }
}

/** A weak ETag from what identifies a version: the id and the revision counter the store keeps. */
const versionOf = (store: Store, kind: "Users" | "Groups", id: string) => {
  const found = store.resources[kind].get(id)
  return found === undefined ? undefined : `W/"${found.meta.revision}-${NodeCrypto.createHash("sha1").update(found.id).digest("hex").slice(0, 8)}"`
}

export interface ScimmyServer {
  readonly baseUrl: string
  readonly token: string
  readonly close: () => Promise<void>
}

export const start = async (flaws: Flaws = {}): Promise<ScimmyServer> => {
  declare()
  const store: Store = { flaws, resources: { Users: new Map(), Groups: new Map() } }
  const token = `ref-${NodeCrypto.randomBytes(12).toString("hex")}`
  let origin = ""

  const send = (response: Http.ServerResponse, status: number, body?: unknown, headers: Record<string, string | undefined> = {}) => {
    response.writeHead(status, { ...(body === undefined ? {} : { "content-type": "application/scim+json" }), ...headers })
    response.end(body === undefined ? undefined : JSON.stringify(body))
  }
  /** A resource as sent: absolute location, meta.version from the store. */
  const outgoing = (kind: "Users" | "Groups", resource: unknown) => {
    const json: Record<string, unknown> = JSON.parse(JSON.stringify(resource))
    const meta = json.meta
    let location: string | undefined
    if (typeof meta === "object" && meta !== null) {
      const sent: Record<string, unknown> = { ...meta }
      if (typeof sent.location === "string" && sent.location.startsWith("/")) sent.location = `${origin}${sent.location}`
      sent.version = versionOf(store, kind, String(json.id))
      delete sent.revision
      json.meta = sent
      location = typeof sent.location === "string" ? sent.location : undefined
    }
    return { json, location, version: versionOf(store, kind, String(json.id)) }
  }

  /** A list read's answer (a read without an id is always one). */
  const listed = (read: unknown) => {
    if (!(read instanceof SCIMMY.Messages.ListResponse)) throw new Error("SCIMMY answered a list read with a single resource")
    return read
  }

  const handle = async (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const url = new URL(request.url ?? "/", origin)
    if (request.headers.authorization !== `Bearer ${token}`) {
      const challenge: Record<string, string> = flaws.noChallenge ? {} : { "www-authenticate": 'Bearer realm="scimmy"' }
      return send(response, 401, new SCIMMY.Messages.Error({ status: 401, detail: "Bearer token required" }), challenge)
    }
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    let body: unknown = undefined
    if (text !== "") {
      try {
        body = JSON.parse(text)
      } catch {
        return send(response, 400, new SCIMMY.Messages.Error({ status: 400, scimType: "invalidSyntax", detail: "Body is not JSON" }))
      }
    }
    const segments = url.pathname.startsWith(`${BASE}/`) ? url.pathname.slice(BASE.length + 1).split("/").map(decodeURIComponent) : []
    const [endpoint, id, extra] = segments
    const method = request.method ?? "GET"
    const params: Record<string, unknown> = {}
    for (const [key, value] of url.searchParams) params[key] = ["startIndex", "count"].includes(key) ? Number(value) : value
    if (flaws.zeroBasedPaging && typeof params.startIndex === "number") params.startIndex += 1
    const readOnly = (value: unknown) => {
      if (method === "GET") return send(response, 200, value)
      if (flaws.plainMethodNotAllowed) {
        response.writeHead(405, { "content-type": "application/json", allow: "GET" })
        return response.end(JSON.stringify({ error: "method_not_allowed" }))
      }
      // SCIMMY's error message takes only the statuses RFC 7644 §3.12 tabulates, which 405 is not.
      return send(response, 405, { schemas: ["urn:ietf:params:scim:api:messages:2.0:Error"], status: "405", detail: "Method not allowed" }, { allow: "GET" })
    }

    if (endpoint === "ServiceProviderConfig" && id === undefined) return readOnly(await new SCIMMY.Resources.ServiceProviderConfig().read())
    if (endpoint === "Schemas" && extra === undefined) return readOnly(await (id === undefined ? new SCIMMY.Resources.Schema() : new SCIMMY.Resources.Schema(id)).read())
    if (endpoint === "ResourceTypes" && extra === undefined) return readOnly(await (id === undefined ? new SCIMMY.Resources.ResourceType() : new SCIMMY.Resources.ResourceType(id)).read())
    if ((endpoint === "Users" || endpoint === "Groups") && extra === undefined) {
      const Resource = endpoint === "Users" ? SCIMMY.Resources.User : SCIMMY.Resources.Group
      if (id === ".search" && method === "POST") {
        const search: Record<string, unknown> = {}
        if (typeof body === "object" && body !== null) for (const [key, value] of Object.entries(body)) if (key !== "schemas") search[key] = value
        const list = listed(await new Resource(undefined, query(search)).read(store))
        return send(response, 200, { ...list, Resources: list.Resources.map((r) => outgoing(endpoint, r).json) })
      }
      if (id === undefined && method === "GET") {
        const list = listed(await new Resource(undefined, query(params)).read(store))
        return send(response, 200, { ...list, Resources: list.Resources.map((r) => outgoing(endpoint, r).json) })
      }
      if (id === undefined && method === "POST") {
        const created = outgoing(endpoint, await new Resource(undefined, query(params)).write(body, store))
        return send(response, 201, created.json, { location: created.location, etag: created.version })
      }
      if (id !== undefined) {
        const ifMatch = request.headers["if-match"]
        if (ifMatch !== undefined && method !== "GET" && !flaws.ignoresIfMatch) {
          const current = versionOf(store, endpoint, id)
          if (current === undefined) throw scimError(404, undefined, `Resource ${id} not found`)
          if (ifMatch !== "*" && ifMatch !== current) throw scimError(412, undefined, `If-Match ${ifMatch} is not the current version ${current}`)
        }
        const resource = new Resource(id, query(params))
        if (method === "GET") {
          const found = outgoing(endpoint, await resource.read(store)).json
          const version = versionOf(store, endpoint, id)!
          const ifNoneMatch = request.headers["if-none-match"]
          if (!flaws.ignoresIfNoneMatch && ifNoneMatch !== undefined && (ifNoneMatch === "*" || ifNoneMatch.split(",").some((tag) => tag.trim() === version))) {
            return send(response, 304, undefined, { etag: version })
          }
          return send(response, 200, found, { etag: version })
        }
        if (method === "PUT") {
          const replaced = outgoing(endpoint, await resource.write(body, store)).json
          return send(response, 200, replaced, { etag: versionOf(store, endpoint, id)! })
        }
        if (method === "PATCH") {
          const patched = await resource.patch(patchMessage(body), store)
          return patched === undefined ? send(response, 204) : send(response, 200, outgoing(endpoint, patched).json)
        }
        if (method === "DELETE") {
          await resource.dispose(store)
          return send(response, 204)
        }
      }
    }
    if (flaws.unknownUrlIsHtml) {
      response.writeHead(200, { "content-type": "text/html" })
      return response.end("<html><body>Welcome</body></html>")
    }
    return send(response, 404, new SCIMMY.Messages.Error({ status: 404, detail: `No endpoint ${method} ${url.pathname}` }))
  }

  const server = Http.createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (error instanceof SCIMMY.Types.Error) return send(response, error.status, new SCIMMY.Messages.Error(error))
      send(response, 500, new SCIMMY.Messages.Error({ status: 500, detail: String(error) }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    baseUrl: `${origin}${BASE}`,
    token,
    close: () => new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
  }
}
