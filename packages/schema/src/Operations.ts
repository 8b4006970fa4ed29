/**
 * The API's operations as one list, read from the endpoints by reflection: what each is called, where it lives, what
 * it requires, what it changes. The MCP server (`@orgplane/mcp`) serves its tools from this list, and the server's
 * read-only credentials refuse what it calls a write: one reading of the API, so nothing about an operation is written
 * twice.
 */
import * as Context from "effect/Context"
import * as FindMyWay from "effect/http/FindMyWay"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as SchemaAST from "effect/SchemaAST"
import { type AuditAction, type AuditDeclaration, AuditExtension } from "./AuditCatalog.js"
import { takesIdempotencyKey } from "./Idempotency.js"
import { type Action, ActionsExtension, Policy } from "./Policy.js"
import { SessionOnlyExtension } from "./Security.js"

/** How a caller proves who they are to an operation. */
export type OperationCredential =
  /** Open to anyone (sign-up, sign-in, health, an invitation's preview). */
  | "none"
  /** A person's session token or API key: what an agent acting for a person holds. */
  | "member"
  /** An identity provider's SCIM token. */
  | "scim"
  /** A worker's own token. */
  | "worker"

export interface Operation {
  /** The operation id, as the OpenAPI document names it: `teams.create`. */
  readonly id: string
  /** Its group's identifier: `teams`. */
  readonly group: string
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD" | "OPTIONS"
  /** The path template with `:name` parameters: `/v1/teams/:teamId`. */
  readonly path: string
  readonly summary: string
  readonly description: string
  /** The policy table's actions the operation checks (`requires(...)`); none when any member may. */
  readonly requires: ReadonlyArray<Action>
  /** The audit event its success records, or undefined when it records none (`notAudited`, or a read). */
  readonly audit: AuditAction | undefined
  readonly credential: OperationCredential
  /** Only a person's session may call it (`sessionOnly`): an API key is refused with 403 `session_required`. */
  readonly sessionOnly: boolean
  /** Changes nothing: a GET (or HEAD). Everything else counts as a write, what a read-only credential is refused. */
  readonly readOnly: boolean
  /**
   * Takes something away that a retry cannot give back: a deletion, a revocation, a removal, a disconnection, a
   * deprovisioning, a role or ownership change, an account disabled, audit events purged.
   */
  readonly destructive: boolean
  readonly takesIdempotencyKey: boolean
  /** The path's parameter names, in order. */
  readonly pathParameters: ReadonlyArray<string>
  /**
   * The schema the server decodes the path's parameters with, from strings (`{ teamId: "tem_…" }`); undefined without
   * any. A client decodes a path's arguments with it before sending: the server refuses what it refuses (400).
   */
  readonly params: Schema.Decoder<unknown> | undefined
  /** The query's member names. */
  readonly queryParameters: ReadonlyArray<string>
  /** The JSON body's member names when it is an object of known members; undefined for no body or another shape. */
  readonly bodyMembers: ReadonlyArray<string> | undefined
  /** Whether the operation takes a body at all. */
  readonly takesBody: boolean
  /** A list answered a page at a time (`limit` and `cursor` in its query). */
  readonly paged: boolean
}

const readMethods = new Set(["GET", "HEAD"])

/**
 * Whether a request with this method only reads: GET and HEAD. Every other method counts as a write, whatever the
 * operation does (a search sent as POST too): what a read-only credential is refused, failing closed.
 */
export const isReadOnlyMethod = (method: string): boolean => readMethods.has(method.toUpperCase())

/** The last word of an audit action that takes something away (`api_key.revoke`, `member.remove`). */
const destructiveVerbs = new Set(["delete", "revoke", "remove", "disconnect", "deprovision", "purge", "disable"])

/** Changes that take something away without such a verb: a role or ownership, the audit log's old events, a document's deletes. */
const destructiveActions: ReadonlySet<AuditAction> = new Set<AuditAction>([
  "member.role.update",
  "member.ownership.transfer",
  "organization.plan.update",
  "organization.document.apply",
  "audit.retention.apply",
  "worker.token.rotate",
  "audit.stream.secret.rotate"
])

/** Whether an operation with this method and audit action takes something away (see `Operation.destructive`). */
export const isDestructive = (method: string, audit: AuditAction | undefined): boolean => {
  if (method.toUpperCase() === "DELETE") return true
  if (audit === undefined) return false
  return destructiveActions.has(audit) || destructiveVerbs.has(audit.slice(audit.lastIndexOf(".") + 1))
}

const extensions = (annotations: Context.Context<never>): Record<string, unknown> =>
  Option.getOrElse(Context.getOption(annotations, OpenApi.Override), () => ({}))

const isAction = (value: unknown): value is Action => typeof value === "string" && value in Policy

const actionsOf = (annotations: Context.Context<never>): ReadonlyArray<Action> => {
  const value = extensions(annotations)[ActionsExtension]
  return Array.isArray(value) ? value.filter(isAction) : []
}

/** Whether an endpoint's own annotations mark it session-only (Security.ts `sessionOnly`). */
export const isSessionOnly = (annotations: Context.Context<never>): boolean => extensions(annotations)[SessionOnlyExtension] === true

const auditOf = (annotations: Context.Context<never>): AuditAction | undefined => {
  const declaration = extensions(annotations)[AuditExtension] as AuditDeclaration | undefined
  return declaration !== undefined && declaration.action !== false ? declaration.action : undefined
}

/** The member names of an object schema (through its encoded side and any refinement), or undefined. */
const membersOf = (schema: Schema.Top | undefined): ReadonlyArray<string> | undefined => {
  if (schema === undefined) return undefined
  const ast: SchemaAST.AST = Schema.toEncoded(schema).ast
  if (ast._tag !== "Objects" || ast.indexSignatures.length > 0) return undefined
  return ast.propertySignatures.map((property) => String(property.name))
}

/** The credential the endpoint's security middleware takes (Security.ts, ScimProtocolApi.ts). */
const credentialOf = (middleware: Iterable<HttpApiMiddleware.AnyService>): OperationCredential => {
  let credential: OperationCredential = "none"
  for (const tag of middleware) {
    if (!HttpApiMiddleware.isSecurity(tag)) continue
    const schemes = Object.keys(tag.security)
    if (schemes.includes("scimToken")) return "scim"
    if (schemes.includes("workerToken")) return "worker"
    if (schemes.includes("bearer") || schemes.includes("apiKey")) credential = "member"
  }
  return credential
}

const cache = new WeakMap<object, ReadonlyArray<Operation>>()

/** Every operation of `api`, in the order its groups and endpoints are declared. */
export const operationsOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyArray<Operation> => {
  const cached = cache.get(api)
  if (cached !== undefined) return cached
  const operations: Array<Operation> = []
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, group, mergedAnnotations, middleware }) {
      const id = group.topLevel ? endpoint.identifier : `${group.identifier}.${endpoint.identifier}`
      const audit = auditOf(endpoint.annotations)
      const queryParameters = membersOf(endpoint.query) ?? []
      const payloads = [...endpoint.payload.values()]
      const bodies = payloads.flatMap((payload) => [...payload.schemas])
      const method = endpoint.method as Operation["method"]
      operations.push({
        id,
        group: group.identifier,
        method,
        path: endpoint.path,
        summary: Option.getOrElse(Context.getOption(mergedAnnotations, OpenApi.Summary), () => id),
        description: Option.getOrElse(Context.getOption(mergedAnnotations, OpenApi.Description), () => ""),
        requires: actionsOf(endpoint.annotations),
        audit,
        credential: credentialOf(middleware),
        sessionOnly: isSessionOnly(endpoint.annotations),
        readOnly: readMethods.has(method),
        destructive: isDestructive(method, audit),
        takesIdempotencyKey: takesIdempotencyKey(method, middleware),
        pathParameters: endpoint.path.split("/").filter((segment) => segment.startsWith(":")).map((segment) => segment.slice(1)),
        // The API's path parameters are checked strings (TypeIDs, names, a suite): none needs a service to decode.
        params: endpoint.params === undefined ? undefined : Schema.make<Schema.Decoder<unknown>>(endpoint.params.ast),
        queryParameters,
        bodyMembers: bodies.length === 1 && !readMethods.has(method) ? membersOf(bodies[0]) : undefined,
        takesBody: bodies.length > 0 && !readMethods.has(method),
        paged: queryParameters.includes("limit") && queryParameters.includes("cursor")
      })
    }
  })
  cache.set(api, operations)
  return operations
}

/**
 * The router's settings, the server's and every table matching its paths: path parameters up to 1024 characters, and
 * paths matched in their letter case only (find-my-way's default matches any case).
 */
export const routerConfig = { maxParamLength: 1024, caseSensitive: true } as const

const routers = new WeakMap<object, FindMyWay.Router<string>>()

/**
 * The operation a request's method and path (`/v1/teams/tem_…`, no query) reach, as the server's router matches them
 * (find-my-way with `routerConfig`, a literal segment before a parameter), or undefined for none: what a client checks
 * before sending a request built for one operation, so that it reaches no other.
 */
export const operationAt = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>,
  method: string,
  path: string
): string | undefined => {
  let router = routers.get(api)
  if (router === undefined) {
    const made = FindMyWay.make<string>(routerConfig)
    for (const operation of operationsOf(api)) {
      made.on(operation.method, operation.path.startsWith("/") ? operation.path as `/${string}` : `/${operation.path}`, operation.id)
    }
    routers.set(api, router = made)
  }
  return router.find(method, path)?.handler ?? (method === "HEAD" ? router.find("GET", path)?.handler : undefined)
}
