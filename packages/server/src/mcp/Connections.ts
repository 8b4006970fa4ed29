/**
 * External MCP connections: registered, changed, deleted, granted and given a tool policy by owners and admins;
 * read by the members a grant reaches. Every answer is computed for its reader (connected for them, ready for them).
 *
 * `none` and `apikey` connections are checked live (an MCP `initialize`) before anything is written, outside any
 * transaction: a transaction may run again, a request to a third party must not.
 */
import {
  type CloudConnection,
  type ConfigObjectId,
  Conflict,
  ConnectionValidationFailed,
  type CreateMcpConnectionRequest,
  type ExternalMcpConnectionId,
  InvalidRequest,
  McpConnection,
  type McpConnectionListQuery,
  type McpOAuthInput,
  type McpPreset,
  McpToolPolicy,
  type UpdateMcpConnectionRequest,
  type UpdateMcpToolPolicyRequest
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as References from "effect/References"
import { randomUUID } from "node:crypto"
import { Access, McpConnectionKind } from "../access/Access.js"
import { ServerConfig } from "../platform/Config.js"
import { Crypto } from "../platform/Crypto.js"
import { bind, type SecretColumn, SecretColumns } from "../platform/SecretColumns.js"
import { makeId } from "../platform/Ids.js"
import { checkUserMember, Outbound } from "../platform/Outbound.js"
import { describeChange } from "../platform/AuditRecorder.js"
import { actingMembershipId, authorize, type Principal } from "../platform/Principal.js"
import { orUnavailable, transaction } from "../platform/Sql.js"
import { now } from "../platform/Time.js"
import { ConnectionsRepository, type McpConnectionRow, type McpConnectionView, type McpMemberCredentialRow, type Reader } from "./ConnectionsRepository.js"
import * as CloudReadiness from "./CloudReadiness.js"
import { metadataOf } from "./Credentials.js"
import * as Presets from "./Presets.js"
import { McpPresets } from "./PresetsConfig.js"
import * as Readiness from "./Readiness.js"
import * as Session from "./Session.js"
import { fromSessionError } from "./SessionErrors.js"

type OAuthInput = typeof McpOAuthInput.Type
type Detail = { readonly path: ReadonlyArray<string>; readonly message: string }

/** The id of the request being served (`RequestLog` annotates its logs with it); a fresh one, logged, outside a request. */
const requestId = Effect.gen(function*() {
  const current = yield* References.CurrentLogAnnotations.useSync((annotations) => annotations["requestId"])
  if (typeof current === "string") return current
  const fresh = randomUUID()
  yield* Effect.logInfo("MCP connection check outside a request").pipe(Effect.annotateLogs("referenceId", fresh))
  return fresh
})

/** The tool policy of a row, as the API answers it. */
export const toolPolicyOf = (
  row: Pick<McpConnectionRow, "toolPolicyAllDisabled" | "toolPolicyDisabledTools" | "toolPolicyUpdatedByMembershipId" | "toolPolicyUpdatedAt">
): McpToolPolicy =>
  new McpToolPolicy({
    allDisabled: row.toolPolicyAllDisabled,
    disabledTools: row.toolPolicyDisabledTools,
    updatedByOrgMembershipId: row.toolPolicyUpdatedByMembershipId,
    updatedAt: row.toolPolicyUpdatedAt
  })

/**
 * The connection as its reader sees it: connected and ready for them, never a secret. `presets`: the server's
 * (`McpPresets`, which `ORGPLANE_MCP_PRESETS_FILE` may replace), for `oauthClientRequired`.
 */
export const present = (
  view: McpConnectionView,
  credential: McpMemberCredentialRow | undefined,
  presets: ReadonlyArray<McpPreset> = Presets.BUILT_IN
): McpConnection => {
  const perMember = view.credentialMode === "per_member"
  const readiness = Readiness.forCaller(view, credential, view.usable)
  const health = perMember ? credential?.credentialHealth ?? "unknown" : view.credentialHealth
  const issuerReview = view.oauthIssuerReviewRequiredAt !== null
  const preset = Presets.forUrl(presets, view.url)
  return new McpConnection({
    id: view.id,
    organizationId: view.organizationId,
    name: view.name,
    url: view.url,
    authType: view.authType,
    credentialMode: view.credentialMode,
    connected: perMember ? view.anyMemberConnected : Readiness.sharedConnected(view),
    connectedAt: perMember ? credential?.connectedAt ?? null : view.connectedAt,
    connectedForMe: Readiness.connectedFor(view, credential),
    ready: readiness.ready,
    notReadyReason: readiness.message,
    credentialHealth: health,
    credentialHealthReason: perMember ? credential?.credentialHealthReason ?? null : view.credentialHealthReason,
    needsReconnect: issuerReview || health === "reconnect_required",
    oauth: view.authType !== "oauth" ? null : {
      clientConfigured: view.oauthClientId !== null,
      clientId: view.oauthClientId,
      registrationSource: view.oauthRegistrationSource,
      // The admin's choice, else the one discovery found (kept with its metadata by the connect flow).
      authorizationServerIssuer: view.oauthIssuer ?? metadataOf(view)?.issuer ?? null,
      requestedScopes: view.oauthRequestedScopes,
      grantedScopes: perMember ? [] : view.grantedScopes,
      issuerReviewRequired: issuerReview
    },
    oauthClientRequired: view.authType === "oauth" && preset?.requiresOAuthClient === true,
    toolPolicy: toolPolicyOf(view),
    createdByOrgMembershipId: view.createdByMembershipId,
    createdAt: view.createdAt,
    updatedAt: view.updatedAt
  }, { disableChecks: true })
}

/** Rows as their reader sees them, with the reader's own credentials on the `per_member` ones read in one statement. */
export const presentViews = Effect.fn("McpConnections.presentViews")(function*(
  connections: ConnectionsRepository["Service"],
  principal: Principal,
  views: ReadonlyArray<McpConnectionView>,
  presets: ReadonlyArray<McpPreset> = Presets.BUILT_IN
) {
  const me = actingMembershipId(principal)
  const perMember = views.filter((view) => view.credentialMode === "per_member").map((view) => view.id)
  const credentials = me === null || perMember.length === 0
    ? []
    : yield* connections.memberCredentials(principal.organization.id, me, perMember)
  const byConnection = new Map(credentials.map((credential) => [credential.mcpConnectionId, credential]))
  return views.map((view) => present(view, byConnection.get(view.id), presets))
})

/**
 * The servers the `mcp` config objects `ids` declare, each matched to a connection the principal can see (for a
 * member, one a grant reaches), by config object: three statements whatever the number of objects.
 */
export const cloudConnections = Effect.fn("McpConnections.cloudConnections")(function*(
  connections: ConnectionsRepository["Service"],
  access: Access["Service"],
  principal: Principal,
  ids: ReadonlyArray<ConfigObjectId>,
  presets: ReadonlyArray<McpPreset> = Presets.BUILT_IN
) {
  const byObject = new Map<string, Array<typeof CloudConnection.Type>>()
  if (ids.length === 0) return byObject
  const definitions = yield* connections.mcpDefinitions(principal.organization.id, ids)
  const usable = access.usable(principal, McpConnectionKind, "c")
  const views = yield* connections.all(principal.organization.id, { usable, visible: access.visible(principal, McpConnectionKind, "c") })
  const visible = yield* presentViews(connections, principal, views, presets)
  for (const definition of definitions) {
    byObject.set(definition.configObjectId, CloudReadiness.match(definition.configObjectId, CloudReadiness.serversOf(definition.payload, definition.title), visible))
  }
  return byObject
})

/**
 * The credential members a change may give, by the connection's stored `authType` (so the schema cannot say them),
 * every broken rule as a detail. A new connection's are the schema's: one union member per `authType`.
 */
const credentialRules = (
  row: Pick<McpConnectionRow, "authType" | "oauthClientId">,
  input: { readonly apiKey?: string | undefined; readonly oauth?: OAuthInput | undefined }
): Array<Detail> => {
  const details: Array<Detail> = []
  if (row.authType !== "apikey" && input.apiKey !== undefined) details.push({ path: ["apiKey"], message: "is only for `authType: apikey`" })
  if (row.authType !== "oauth" && input.oauth !== undefined) details.push({ path: ["oauth"], message: "is only for `authType: oauth`" })
  if (row.authType === "oauth" && input.oauth?.clientSecret !== undefined && input.oauth.clientId === undefined && row.oauthClientId === null) {
    details.push({ path: ["oauth", "clientSecret"], message: "needs a `clientId`" })
  }
  return details
}

const changedMeanwhile = () =>
  new Conflict({
    error: "mcp_connection_changed",
    message: "The connection's URL or key changed while this change was being checked; read it again and retry."
  })

const refuse = (details: ReadonlyArray<Detail>) =>
  details.length === 0 ? Effect.void : Effect.fail(new InvalidRequest({ details }))

const make = Effect.gen(function*() {
  const connections = yield* ConnectionsRepository
  const access = yield* Access
  const crypto = yield* Crypto
  const outbound = yield* Outbound
  const config = yield* ServerConfig
  const presets = yield* McpPresets

  /** Encrypts a secret of connection `id` for `column`: fails only without a configured key (a defect, 500). */
  const encrypt = (plaintext: string, column: SecretColumn, organizationId: string, id: string) =>
    Effect.orDie(crypto.encrypt(plaintext, bind(column, organizationId, id)))

  const notFound = () => McpConnectionKind.notFound()

  /** Usable: a grant reaches the reader. Visible: that, or the reader manages every connection. */
  const readerOf = (principal: Principal, scope: "usable" | "manageable"): Reader => {
    const usable = access.usable(principal, McpConnectionKind, "c")
    return { usable, visible: scope === "usable" ? usable : access.visible(principal, McpConnectionKind, "c") }
  }

  const presentAll = (principal: Principal, views: ReadonlyArray<McpConnectionView>) => presentViews(connections, principal, views, presets)

  /** One connection as the principal sees it (visible: granted, or managed by them), or 404. */
  const read = (principal: Principal, id: ExternalMcpConnectionId) =>
    Effect.gen(function*() {
      const view = yield* connections.viewRow(principal.organization.id, id, readerOf(principal, "manageable"))
      if (Option.isNone(view)) return yield* notFound()
      const [item] = yield* presentAll(principal, [view.value])
      return item!
    })

  /**
   * The URL rule only the server can check: unless private destinations are allowed, https and a host whose every
   * address is public (an IP literal checked as is). A 400 on `url`.
   */
  const checkUrl = (url: string) => checkUserMember(outbound, config.outboundAllowPrivate, ["url"], url)

  /** An MCP `initialize` with these settings, or 502 `connection_validation_failed` with its diagnostic. */
  const liveCheck = (name: string, url: string, apiKey: string | undefined) =>
    Session.check({ url, headers: apiKey === undefined ? undefined : { authorization: `Bearer ${apiKey}` } }).pipe(
      Effect.provideService(Outbound, outbound),
      Effect.catchTag("McpSessionError", (error) =>
        Effect.gen(function*() {
          const referenceId = yield* requestId
          const diagnostic = fromSessionError(error, { referenceId, url, phase: "MCP_INITIALIZE" })
          yield* Effect.logInfo("MCP connection check failed").pipe(
            Effect.annotateLogs({ referenceId, code: diagnostic.code, origin: diagnostic.outbound?.origin ?? "" })
          )
          return yield* new ConnectionValidationFailed({ message: `Could not connect to "${name}": ${diagnostic.message}`, diagnostic })
        }))
    )

  /** Scopes to ask for: those given, else the URL's preset's defaults (Slack's, for example), else none. */
  const scopesFor = (url: string, given: ReadonlyArray<string> | undefined) =>
    given ?? Presets.forUrl(presets, url)?.defaultOAuthScopes

  const oauthChanges = (oauth: OAuthInput | undefined, url: string, defaultScopes: boolean, organizationId: string, id: string) =>
    Effect.gen(function*() {
      const requestedScopes = defaultScopes ? scopesFor(url, oauth?.requestedScopes) : oauth?.requestedScopes
      return {
        clientId: oauth?.clientId,
        clientSecretCiphertext: oauth?.clientSecret === undefined
          ? undefined
          : yield* encrypt(oauth.clientSecret, SecretColumns.mcpOAuthClientSecret, organizationId, id),
        issuer: oauth?.authorizationServerIssuer,
        requestedScopes: requestedScopes === undefined ? undefined : [...new Set(requestedScopes)]
      }
    })

  const create = Effect.fn("McpConnections.create")(function*(principal: Principal, input: CreateMcpConnectionRequest) {
    yield* authorize(principal, "mcp.manage")
    // The schema's union gives each `authType` its credential members, and only those.
    const credentialMode = input.credentialMode ?? "shared"
    const apiKey = input.authType === "apikey" ? input.apiKey : undefined
    yield* checkUrl(input.url)
    const live = input.authType !== "oauth"
    if (live) yield* liveCheck(input.name, input.url, apiKey)
    const checkedAt = live ? yield* now : null
    const organizationId = principal.organization.id
    const id = yield* makeId("emc")
    const apiKeyCiphertext = apiKey === undefined ? null : yield* encrypt(apiKey, SecretColumns.mcpApiKey, organizationId, id)
    const oauth = input.authType === "oauth" ? yield* oauthChanges(input.oauth, input.url, true, organizationId, id) : undefined
    return yield* transaction(
      Effect.gen(function*() {
        const at = yield* now
        yield* connections.insert({
          id,
          organizationId,
          name: input.name,
          url: input.url,
          authType: input.authType,
          credentialMode,
          apiKeyCiphertext,
          connectedAt: checkedAt,
          credentialHealth: live ? "ready" : "unknown",
          credentialCheckedAt: checkedAt,
          createdByMembershipId: actingMembershipId(principal),
          createdAt: at,
          updatedAt: at
        })
        if (oauth !== undefined) yield* connections.setOAuth({ organizationId, id }, at, oauth)
        // Just written in this transaction: a missing row would be a bug.
        return { ok: true as const, item: yield* Effect.catchTag(read(principal, id), "NotFound", Effect.die) }
      })
    )
  })

  const list = Effect.fn("McpConnections.list")(function*(principal: Principal, query: McpConnectionListQuery) {
    yield* authorize(principal, "mcp.read")
    const scope = query.scope ?? "usable"
    if (scope === "manageable") yield* authorize(principal, "mcp.manage")
    return yield* orUnavailable(
      Effect.gen(function*() {
        const page = yield* connections.list(principal.organization.id, query, readerOf(principal, scope))
        return { items: yield* presentAll(principal, page.items), nextCursor: page.nextCursor }
      })
    )
  })

  const get = Effect.fn("McpConnections.get")(function*(principal: Principal, id: ExternalMcpConnectionId) {
    yield* authorize(principal, "mcp.read")
    return yield* orUnavailable(Effect.map(read(principal, id), (item) => ({ ok: true as const, item })))
  })

  /** The row of a connection an owner or admin changes, read outside a transaction (checks come before writes). */
  const managed = (principal: Principal, id: ExternalMcpConnectionId) =>
    Effect.gen(function*() {
      yield* authorize(principal, "mcp.manage")
      const row = yield* orUnavailable(connections.findRow(principal.organization.id, id))
      if (Option.isNone(row)) return yield* notFound()
      return row.value
    })

  const update = Effect.fn("McpConnections.update")(function*(principal: Principal, id: ExternalMcpConnectionId, input: UpdateMcpConnectionRequest) {
    const row = yield* managed(principal, id)
    // The stored `authType` decides which credential members apply (the schema refuses an empty change).
    yield* refuse(credentialRules(row, input))
    const url = input.url ?? row.url
    const urlChanged = input.url !== undefined && input.url !== row.url
    if (urlChanged) yield* checkUrl(url)
    const live = row.authType !== "oauth" && (urlChanged || input.apiKey !== undefined)
    if (live) {
      const apiKey = input.apiKey ??
        (row.apiKeyCiphertext === null
          ? undefined
          : yield* crypto.decrypt(row.apiKeyCiphertext, bind(SecretColumns.mcpApiKey, principal.organization.id, row.id)))
      yield* liveCheck(input.name ?? row.name, url, apiKey)
    }
    const checkedAt = live ? yield* now : undefined
    const apiKeyCiphertext = input.apiKey === undefined
      ? undefined
      : yield* encrypt(input.apiKey, SecretColumns.mcpApiKey, principal.organization.id, row.id)
    const oauth = row.authType === "oauth" && input.oauth !== undefined
      ? yield* oauthChanges(input.oauth, url, false, principal.organization.id, row.id)
      : undefined
    const scoped = { organizationId: principal.organization.id, id: row.id }
    return yield* transaction(
      Effect.gen(function*() {
        const locked = yield* connections.lockRow(scoped.organizationId, scoped.id)
        if (Option.isNone(locked)) return yield* notFound()
        // What was checked (or decided on) must still be what is stored: another change may have come between.
        if ((live || urlChanged) && (locked.value.url !== row.url || locked.value.apiKeyCiphertext !== row.apiKeyCiphertext)) {
          return yield* changedMeanwhile()
        }
        const before = yield* read(principal, scoped.id)
        const at = yield* now
        yield* connections.update(scoped, at, { name: input.name, url: input.url, apiKeyCiphertext, checkedAt })
        if (row.authType === "oauth" && urlChanged) yield* connections.forgetServer(scoped, at)
        if (oauth !== undefined) yield* connections.setOAuth(scoped, at, oauth)
        const after = yield* read(principal, scoped.id)
        // The API key and the OAuth client's secret are never shown: a change of them is named, not stored.
        const secrets = [...(input.apiKey === undefined ? [] : ["apiKey"]), ...(input.oauth?.clientSecret === undefined ? [] : ["oauth.clientSecret"])]
        yield* describeChange(McpConnection, before, after, { secrets })
        return { ok: true as const, item: after }
      })
    )
  })

  const remove = Effect.fn("McpConnections.remove")(function*(principal: Principal, id: ExternalMcpConnectionId) {
    yield* authorize(principal, "mcp.manage")
    const deleted = yield* transaction(connections.remove({ organizationId: principal.organization.id, id }))
    if (!deleted) return yield* notFound()
  })

  const getToolPolicy = Effect.fn("McpConnections.getToolPolicy")((principal: Principal, id: ExternalMcpConnectionId) => Effect.map(managed(principal, id), toolPolicyOf))

  const setToolPolicy = Effect.fn("McpConnections.setToolPolicy")(function*(principal: Principal, id: ExternalMcpConnectionId, input: typeof UpdateMcpToolPolicyRequest.Type) {
    yield* authorize(principal, "mcp.manage")
    const organizationId = principal.organization.id
    return yield* transaction(
      Effect.gen(function*() {
        const locked = yield* connections.lockRow(organizationId, id)
        if (Option.isNone(locked)) return yield* notFound()
        const policy = new McpToolPolicy({
          allDisabled: input.allDisabled,
          disabledTools: [...new Set<string>(input.disabledTools)],
          updatedByOrgMembershipId: actingMembershipId(principal),
          updatedAt: yield* now
        })
        yield* connections.setToolPolicy({ organizationId, id }, policy.updatedAt!, {
          allDisabled: policy.allDisabled,
          disabledTools: policy.disabledTools,
          updatedBy: policy.updatedByOrgMembershipId
        })
        yield* describeChange(McpToolPolicy, toolPolicyOf(locked.value), policy)
        return policy
      })
    )
  })

  /** Grants go through `Access` like every shared kind, behind the organization policy: owners and admins only. */
  const grant = Effect.fn("McpConnections.grant")(function*(principal: Principal, id: ExternalMcpConnectionId, input: Parameters<typeof access.grant>[3]) {
    yield* authorize(principal, "mcp.manage")
    return yield* access.grant(principal, McpConnectionKind, id, input)
  })

  const listGrants = Effect.fn("McpConnections.listGrants")(function*(principal: Principal, id: ExternalMcpConnectionId, query: Parameters<typeof access.listGrants>[3]) {
    yield* authorize(principal, "mcp.manage")
    return yield* access.listGrants(principal, McpConnectionKind, id, query)
  })

  const revoke = Effect.fn("McpConnections.revoke")(function*(principal: Principal, id: ExternalMcpConnectionId, grantId: string) {
    yield* authorize(principal, "mcp.manage")
    return yield* access.revoke(principal, McpConnectionKind, id, grantId)
  })

  return { create, list, get, update, remove, getToolPolicy, setToolPolicy, grant, listGrants, revoke } as const
})

export class Connections extends Context.Service<Connections>()("@orgplane/server/mcp/Connections", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      ConnectionsRepository.layer,
      Access.layer
    ])
  )
}
