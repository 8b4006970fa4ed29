/**
 * Organization as code: the organization's document (@orgplane/schema's OrganizationDocument), read from storage
 * (LiveDocuments) once the caller may read each of its parts, and changed through the services that own each part
 * (organizations, members, invitations, teams), so each change is checked and recorded as its own operation is.
 *
 * An apply plans the document again inside one transaction, under a lock of the organization's document, and makes
 * the plan's changes only when that plan is the one the caller reviewed (its `planHash`); each change is one call of
 * its service, recorded as its own audit event naming the plan (AuditRecorder `recordStep`). A service's own
 * transaction is then a savepoint of the apply's, so one refusal rolls everything back. The applied document is kept:
 * drift is measured against it (LiveDocuments `driftOf`, Drift.ts).
 */
import {
  AppliedPlan,
  Conflict,
  type DocumentChange,
  DocumentDrift,
  type DocumentGrant,
  Forbidden,
  type NotFound,
  OrganizationNotFound,
  type ServiceUnavailable,
  type Unauthorized,
  InvalidRequest,
  OrganizationPlan,
  type MarketplaceId,
  type MemberContext,
  type ConfigObjectId,
  type PluginId,
  type ExportedDocument,
  LlmHeaderValue,
  LlmSecret,
  McpApiKey,
  McpOAuthInput,
  OidcSettingsInput,
  type ConnectionValidationFailed,
  type StoredCredentialUnreadable,
  type PlanRequired,
  OrganizationDocument,
  type SecretReference
} from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import {
  Access,
  type ActiveGrant,
  ConfigObjectKind,
  ConnectorInstanceKind,
  type Kind,
  LlmProviderKind,
  MarketplaceKind,
  McpConnectionKind,
  PluginKind,
  TemplateKind
} from "../access/Access.js"
import { Audit } from "../audit/Audit.js"
import { Streams } from "../audit/Streams.js"
import { StreamWake } from "../audit/StreamWake.js"
import { Marketplaces } from "../catalog/Marketplaces.js"
import { ConfigObjects } from "../catalog/ConfigObjects.js"
import { Plugins } from "../catalog/Plugins.js"
import { ApiKeys } from "../identity/ApiKeys.js"
import { Organizations } from "../identity/Organizations.js"
import { ServerConfig } from "../platform/Config.js"
import { Outbound } from "../platform/Outbound.js"
import { now } from "../platform/Time.js"
import { DocumentsRepository } from "./DocumentsRepository.js"
import { LiveDocuments } from "./LiveDocuments.js"
import { AuditRecorder, describe } from "../platform/AuditRecorder.js"
import type { IdGenerator } from "../platform/Ids.js"
import type { CursorKey } from "../platform/Keyset.js"
import { lockLimit, orUnavailable, transactionThen } from "../platform/Sql.js"
import { Invitations } from "../invitations/Invitations.js"
import { LlmProviders } from "../llm/LlmProviders.js"
import { Connections } from "../mcp/Connections.js"
import { Connections as ScimConnections } from "../scim/Connections.js"
import { DirectoryTeams } from "../teams/DirectoryTeams.js"
import { DesktopPolicies } from "../policies/DesktopPolicies.js"
import { Templates } from "../templates/Templates.js"
import { Policy as SsoPolicy } from "../sso/Policy.js"
import { Saml } from "../sso/Saml.js"
import { Sso } from "../sso/Sso.js"

/** The SSO service, with the SAML engine that reads a connection's IdP settings (as the SSO group's own layer has it). */
const ssoLayer = Sso.layer.pipe(Layer.provide(Saml.layer))
import { Members } from "../members/Members.js"
import { authorize } from "../platform/Principal.js"
import { Teams } from "../teams/Teams.js"
import * as Plan from "./Plan.js"

/** The document's JSON text, as the export answers it: what a plan's `liveHash` is the hash of. */
const encodeDocument = Schema.encodeSync(OrganizationDocument)
const documentText = (document: ExportedDocument) => JSON.stringify(encodeDocument(document))

/** A plan's hash: of the live state's hash and the changes, so it names one state and one set of changes. */
const planHashOf = (liveHash: string, changes: ReadonlyArray<DocumentChange>) => Plan.hashOf(`${liveHash}\n${JSON.stringify(changes)}`)

/**
 * The order an apply makes a plan's changes in, so that no step is refused for the want of a later one: the
 * profile and directory; members made owners before other roles change (the organization keeps an owner); invitations
 * cancelled before others are sent (the quota); teams deleted, then changed, then created (a name freed first);
 * resources deleted before others change or are made, config objects before the plugins that hold them, marketplaces
 * after the plugins they list; members removed last.
 */
const applyOrder = (change: DocumentChange): number => {
  switch (change.kind) {
    case "organization":
    case "directory":
    case "audit":
      return 0
    case "domain":
      // Claimed before the connections that serve them change; given up after.
      return change.action === "delete" ? 8.8 : 7.8
    case "ssoPolicy":
      // Required once the connections are as the document has them; no longer required before any is deleted.
      return change.fields.some((field) => field.field === "requireSso" && field.after === true) ? 8.9 : 7.9
    case "member":
      return change.action === "delete" ? 9 : change.fields.some((field) => field.field === "role" && field.after === "owner") ? 1 : 2
    case "invitation":
      return change.action === "delete" ? 3 : 4
    case "team":
      return change.action === "delete" ? 5 : change.action === "update" ? 6 : 7
    case "llmProvider":
    case "mcpConnection":
    case "scimConnection":
    case "desktopPolicy":
    case "template":
    case "plugin":
    case "ssoConnection":
    case "auditStream":
    case "apiKey":
      return change.action === "delete" ? 8 : 8.5
    case "configObject":
      return change.action === "delete" ? 8 : 8.4
    case "marketplace":
      return change.action === "delete" ? 8 : 8.75
    case "connector":
      return 8.5
  }
}

/** What a change's service may refuse it with. */
type StepError =
  | Forbidden
  | Conflict
  | NotFound
  | OrganizationNotFound
  | Unauthorized
  | ServiceUnavailable
  | InvalidRequest
  | ConnectionValidationFailed
  | StoredCredentialUnreadable
  | PlanRequired
  | SqlError

/** A document's list by `Plan.matchKey` of each item's name (none for a list it leaves out). */
const byKey = <A>(items: ReadonlyArray<A> | undefined, name: (item: A) => string) =>
  new Map((items ?? []).map((item) => [Plan.matchKey(name(item)), item]))

/** Roles from the least to the most. */
const rank = { member: 0, admin: 1, owner: 2 } as const

/** A service's refusal of one change, its message naming the change. */
const naming = (change: DocumentChange) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.mapError(effect, (error) => {
    const where = `${change.kind} "${change.name}" (${change.action})`
    if (error instanceof Conflict) return new Conflict({ error: error.error, message: `${where}: ${error.message}` })
    if (error instanceof Forbidden) return new Forbidden({ reason: error.reason, message: `${where}: ${error.message}` })
    if (error instanceof InvalidRequest) return new InvalidRequest({ details: error.details.map((detail) => ({ ...detail, message: `${where}: ${detail.message}` })) })
    return error
  })

/** The parts of the document and the actions that read them (see `mayRead`). */
const readsOf = [
  "organizations.export",
  "organizations.read",
  "members.read",
  "members.readDirectory",
  "invitations.manage",
  "teams.read",
  "audit.read",
  "llmProviders.create",
  "mcp.manage",
  "scim.manage",
  "desktopPolicies.manage",
  "templates.read",
  "catalog.read",
  "sso.manage",
  "apiKeys.manage"
] as const

/** What each secret field takes, by kind and field (`Plan.secretFields`): checked before anything is written. */
const secretValues: Record<string, { readonly fits: (value: string) => boolean; readonly what: string }> = {
  "llmProvider.apiKey": { fits: Schema.is(LlmSecret("The API key")), what: "an API key: printable ASCII without spaces, 1 to 8192 characters" },
  "llmProvider.headers": { fits: Schema.is(LlmHeaderValue), what: "a header value: 1 to 1024 printable ASCII characters" },
  "mcpConnection.apiKey": { fits: Schema.is(McpApiKey), what: "an API key: 1 to 4096 characters, no leading or trailing white space" },
  "ssoConnection.oidc.clientSecret": {
    fits: Schema.is(OidcSettingsInput.fields.clientSecret),
    what: "a client secret: 1 to 1024 characters, no leading or trailing white space"
  },
  "mcpConnection.oauth.clientSecret": {
    fits: Schema.is(McpOAuthInput.fields.clientSecret),
    what: "a client secret: 1 to 2048 characters, no leading or trailing white space"
  }
}

const make = Effect.gen(function*() {
  const organizations = yield* Organizations
  const members = yield* Members
  const invitations = yield* Invitations
  const teams = yield* Teams
  const llm = yield* LlmProviders
  const mcp = yield* Connections
  const access = yield* Access
  const scim = yield* ScimConnections
  const desktop = yield* DesktopPolicies
  const templates = yield* Templates
  const plugins = yield* Plugins
  const configObjects = yield* ConfigObjects
  const marketplaces = yield* Marketplaces
  const sso = yield* Sso
  const ssoPolicy = yield* SsoPolicy
  const streams = yield* Streams
  const apiKeys = yield* ApiKeys
  /** What a stream's URL is checked with (the outbound guard and its settings), as the audit group's handlers have them. */
  const serverConfig = yield* ServerConfig
  const outbound = yield* Outbound
  const checkingUrls = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    effect.pipe(Effect.provideService(ServerConfig, serverConfig), Effect.provideService(Outbound, outbound))
  const recorder = yield* AuditRecorder
  const audit = yield* Audit
  const reader = yield* LiveDocuments
  const documents = yield* DocumentsRepository
  /**
   * What reading the document takes: the export's action, and each part's own read as its operations check it (the
   * profile, the members with their emails, the invitations, the teams).
   */
  const mayRead = (caller: MemberContext) =>
    Effect.forEach(readsOf, (action) => authorize(caller, action), { discard: true })

  /** `GET /v1/organization/document`: the organization the caller acts in, as its document. */
  const exportDocument = Effect.fn("OrganizationDocuments.export")(function*(caller: MemberContext) {
    yield* mayRead(caller)
    return (yield* orUnavailable(reader.live(caller.organization.id))).document
  })

  /** The plan of `document` against the organization's document `current`, or 400 with every problem it has. */
  const planOf = (current: ExportedDocument, document: OrganizationDocument) => {
    const liveHash = Plan.hashOf(documentText(current))
    const { changes, problems } = Plan.plan(current, document, reader.catalog)
    return problems.length > 0
      ? Effect.fail(new InvalidRequest({ details: problems.map(({ message, path }) => ({ message, path })) }))
      : Effect.succeed({ liveHash, changes, planHash: planHashOf(liveHash, changes), secrets: Plan.secretsOf(changes) })
  }

  /**
   * `POST /v1/organization/document/plan`: what applying `document` would change, against the live state as the
   * export writes it (its bytes hashed), or 400 with every problem that keeps it from being planned.
   */
  const plan = Effect.fn("OrganizationDocuments.plan")(function*(caller: MemberContext, document: OrganizationDocument) {
    yield* mayRead(caller)
    const { changes, liveHash, planHash, secrets } = yield* planOf((yield* orUnavailable(reader.live(caller.organization.id))).document, document)
    return new OrganizationPlan({ planHash, liveHash, changes, secrets, markdown: Plan.markdown(liveHash, changes) })
  })

  /**
   * Refuses a plan that removes its applier, lowers their role, or deletes or deactivates the SSO connection their
   * session signed in through: nobody else may be able to undo it.
   */
  const keepsApplier = (
    caller: MemberContext,
    current: ExportedDocument,
    ssoConnections: ReadonlyMap<string, string>,
    apiKeys: ReadonlyMap<string, string>,
    changes: ReadonlyArray<DocumentChange>
  ) => {
    const signedInThrough = caller.credential._tag === "Session" ? caller.credential.ssoConnectionId : null
    const connection = signedInThrough === null ? undefined : [...ssoConnections].find(([, id]) => id === signedInThrough)?.[0]
    const cut = connection === undefined ? undefined : changes.find((change) =>
      change.kind === "ssoConnection" && Plan.matchKey(change.name) === connection &&
      (change.action === "delete" || change.fields.some((field) => field.field === "active" && field.after === false))
    )
    const ownKey = caller.credential._tag === "ApiKey" ? caller.credential.apiKeyId : null
    const keyName = ownKey === null ? undefined : [...apiKeys].find(([, id]) => id === ownKey)?.[0]
    const revokesOwn = keyName === undefined
      ? undefined
      : changes.find((change) => change.kind === "apiKey" && change.action !== "create" && Plan.matchKey(change.name) === keyName)
    if (revokesOwn !== undefined) {
      return Effect.fail(new Conflict({
        error: "document_locks_you_out",
        message: `The document ${revokesOwn.action === "delete" ? "revokes" : "makes again (revoking it)"} the API key you are applying it with (${revokesOwn.name}): apply it with another key or a session.`
      }))
    }
    if (cut !== undefined) {
      return Effect.fail(new Conflict({
        error: "document_locks_you_out",
        message: `The document ${cut.action === "delete" ? "deletes" : "deactivates"} the SSO connection you signed in through (${cut.name}): sign in another way (an owner's password), or have someone else apply it.`
      }))
    }
    const self = current.members.find((member) => Plan.matchKey(member.email) === Plan.matchKey(caller.user.email ?? caller.membership.id))
    const own = self === undefined
      ? undefined
      : changes.find((change) =>
        change.kind === "member" && Plan.matchKey(change.name) === Plan.matchKey(self.email) &&
        (change.action === "delete" ||
          change.fields.some((field) => field.field === "role" && rank[field.after as keyof typeof rank] < rank[self.role]))
      )
    return own === undefined ? Effect.void : Effect.fail(
      new Conflict({
        error: "document_locks_you_out",
        message: `The document ${own.action === "delete" ? "removes you" : "lowers your role"} (${own.name}): change your own membership through the API, or have another owner apply it.`
      })
    )
  }

  /**
   * 400 unless `secrets` holds a value for each source the plan writes, each a value its field takes (an API key,
   * a header's value, a client secret); the values are never echoed.
   */
  const secretsGiven = (changes: ReadonlyArray<DocumentChange>, secrets: Readonly<Record<string, string>>) => {
    const problems = new Map<string, string>()
    for (const change of changes) {
      for (const field of change.fields) {
        if (field.secret === undefined) continue
        const { fits, what } = secretValues[`${change.kind}.${field.field}`]!
        for (const reference of Plan.referencesIn(field.after)) {
          if (problems.has(reference.from)) continue
          const value = secrets[reference.from]
          if (value === undefined) problems.set(reference.from, `is needed: the plan writes ${change.kind} "${change.name}"'s ${field.field} from it (${field.secret})`)
          else if (!fits(value)) problems.set(reference.from, `is not ${what} (for ${change.kind} "${change.name}"'s ${field.field})`)
        }
      }
    }
    return problems.size === 0 ? Effect.void : Effect.fail(
      new InvalidRequest({
        details: [...problems].sort(([left], [right]) => Plan.byText(left, right)).map(([from, message]) => ({ path: ["secrets", from], message }))
      })
    )
  }

  /**
   * Keeps the references each secret the plan wrote came from, with its ciphertext's fingerprint now (so the export
   * reads their versions back until the secret is written outside a document), and forgets those of resources gone.
   */
  const keepSecretSources = Effect.fnUntraced(function*(organizationId: MemberContext["organization"]["id"], changes: ReadonlyArray<DocumentChange>) {
    const written = yield* reader.live(organizationId)
    for (const change of changes) {
      if (change.action === "delete") continue
      const id = change.kind === "llmProvider"
        ? written.llmProviders.get(Plan.matchKey(change.name))
        : change.kind === "mcpConnection"
        ? written.mcpConnections.get(Plan.matchKey(change.name))
        : change.kind === "ssoConnection"
        ? written.ssoConnections.get(Plan.matchKey(change.name))
        : undefined
      for (const field of change.fields) {
        const fingerprint = written.fingerprints.get(Plan.secretKey(change.kind, change.name, field.field))
        if (field.secret === undefined || id === undefined || fingerprint === undefined || fingerprint === null) continue
        yield* documents.saveSecret({ organizationId, resourceId: id, field: field.field, refs: JSON.stringify(field.after), fingerprint })
      }
    }
    yield* documents.forgetSecrets(organizationId, [...written.llmProviders.values(), ...written.mcpConnections.values(), ...written.ssoConnections.values()])
  })

  /**
   * `POST /v1/organization/document/apply`: the plan of `document` whose hash is `planHash`, made in one
   * transaction (see the module comment). Once applied, applying again changes nothing and succeeds.
   */
  const apply = Effect.fn("OrganizationDocuments.apply")(function*(
    caller: MemberContext,
    document: OrganizationDocument,
    planHash: string,
    secrets: Readonly<Record<string, string>>
  ) {
    yield* mayRead(caller)
    yield* describe({ planHash })
    const inviteTokens: Array<{ readonly email: string; readonly inviteToken: string }> = []
    const auditStreamSecrets: Array<{ readonly url: string; readonly secret: string }> = []
    const madeKeys: Array<{ readonly name: string; readonly key: string }> = []
    const applied = yield* transactionThen(Effect.gen(function*() {
      inviteTokens.length = 0
      auditStreamSecrets.length = 0
      madeKeys.length = 0
      yield* lockLimit("organization-document", caller.organization.id)
      const before = yield* reader.live(caller.organization.id)
      const planned = yield* planOf(before.document, document)
      if (planned.planHash !== planHash) {
        if (planned.changes.length === 0) return { changes: [], liveHash: planned.liveHash }
        return yield* new Conflict({
          error: "plan_stale",
          message: `The organization's plan of this document is no longer the one given (its live state is now ${planned.liveHash}, its plan ${planned.planHash}, with ${planned.changes.length} changes): plan again and review it.`
        })
      }
      yield* keepsApplier(caller, before.document, before.ssoConnections, before.apiKeys, planned.changes)
      yield* secretsGiven(planned.changes, secrets)
      const wanted = {
        members: byKey(document.members, (member) => member.email),
        invitations: byKey(document.invitations, (invitation) => invitation.email),
        teams: byKey(document.teams, (team) => team.name),
        llmProviders: byKey(document.llmProviders, (provider) => provider.name),
        mcpConnections: byKey(document.mcpConnections, (connection) => connection.name),
        scimConnections: byKey(document.scimConnections, (connection) => connection.name),
        desktopPolicies: byKey(document.desktopPolicies, (policy) => policy.name),
        templates: byKey(document.templates, (template) => template.name),
        configObjects: byKey(document.configObjects, (object) => object.relativePath),
        plugins: byKey(document.plugins, (plugin) => plugin.name),
        marketplaces: byKey(document.marketplaces, (marketplace) => marketplace.name),
        ssoConnections: byKey(document.ssoConnections, (connection) => connection.name),
        auditStreams: byKey(document.auditStreams, (stream) => stream.url),
        apiKeys: byKey(document.apiKeys, (key) => key.name)
      }
      const valueOf = (reference: SecretReference) => secrets[reference.from]!
      /** Teams' ids once earlier steps ran (a team a grant or policy names may be this apply's); members are not made. */
      const teamsNow = yield* Effect.cached(reader.teamIds(caller.organization.id))
      /** Plugins' ids once the plugins' steps ran (a marketplace may list a plugin this apply made). */
      const pluginsNow = yield* Effect.cached(reader.pluginIds(caller.organization.id))
      /** Config objects' ids once their steps ran (a plugin may hold an object this apply made). */
      const configObjectsNow = yield* Effect.cached(reader.configObjectIds(caller.organization.id))
      /**
       * Makes a resource's grants the change's `grants` (its `after`): each given or its role changed; with `grants`
       * in `authoritative`, every other revoked (on a new resource, its creator's manager grant too).
       */
      const syncGrants = (change: DocumentChange, kind: Kind<string>, resource: string) =>
        grantsTo(change.fields.find((each) => each.field === "grants"), kind, resource)
      /** Makes a resource's grants a field's `after` (see `syncGrants`); none without the field. */
      const grantsTo = (field: DocumentChange["fields"][number] | undefined, kind: Kind<string>, resource: string) =>
        Effect.gen(function*() {
          if (field === undefined) return
          const wantedGrants = (field.after ?? []) as ReadonlyArray<DocumentGrant>
          const teams = yield* teamsNow
          const current = yield* access.activeGrants(caller.organization.id, kind, resource)
          const teamNames = new Map([...teams].map(([name, id]) => [id as string, name]))
          const memberNames = new Map([...before.members].map(([name, id]) => [id as string, name]))
          const keyOf = (grant: ActiveGrant) =>
            grant.orgWide
              ? "organization"
              : grant.teamId !== null
              ? `team:${teamNames.get(grant.teamId) ?? grant.teamId}`
              : `member:${memberNames.get(grant.membershipId ?? "") ?? grant.membershipId}`
          const currentByKey = new Map(current.map((grant) => [keyOf(grant), grant]))
          for (const grant of wantedGrants) {
            if (currentByKey.get(Plan.grantKey(grant))?.role === grant.role) continue
            const target = "organization" in grant
              ? { orgWide: true as const }
              : "team" in grant
              ? { teamId: teams.get(Plan.matchKey(grant.team))! }
              : { orgMembershipId: before.members.get(Plan.matchKey(grant.member))! }
            yield* recorder.recordStep("access.grant", [resource], access.grant(caller, kind, resource, { ...target, role: grant.role }))
          }
          if (!authoritativeGrants) return
          const kept = new Set(wantedGrants.map(Plan.grantKey))
          for (const [key, grant] of currentByKey) {
            if (!kept.has(key)) yield* recorder.recordStep("access.revoke", [resource], access.revoke(caller, kind, resource, grant.id))
          }
        })
      const authoritativeGrants = (document.authoritative ?? []).includes("grants")
      const memberIds = (names: ReadonlyArray<string>) => names.map((name) => before.members.get(Plan.matchKey(name))!)
      const changed = (change: DocumentChange, field: string) => change.fields.some((each) => each.field === field)

      const step = (change: DocumentChange): Effect.Effect<unknown, StepError, SqlClient.SqlClient | IdGenerator | CursorKey> => {
        const key = Plan.matchKey(change.name)
        const organizationId = caller.organization.id
        switch (change.kind) {
          case "organization": {
            const wantedProfile = document.organization!
            return recorder.recordStep("organization.update", [organizationId], organizations.update(caller, {
              ...(changed(change, "name") ? { name: wantedProfile.name } : {}),
              ...(changed(change, "logoUrl") ? { logoUrl: wantedProfile.logoUrl } : {}),
              ...(changed(change, "metadata") ? { metadata: wantedProfile.metadata } : {})
            }))
          }
          case "directory":
            return recorder.recordStep("member.directory.update", [organizationId], members.setDirectorySettings(caller, document.directory!))
          case "audit":
            return recorder.recordStep("audit.settings.update", [organizationId], audit.setSettings(caller, document.audit!))
          case "ssoPolicy":
            return recorder.recordStep("sso.policy.update", [organizationId], ssoPolicy.set(caller, document.ssoPolicy!))
          case "member": {
            const id = before.members.get(key)!
            return change.action === "delete"
              ? recorder.recordStep("member.remove", [id], members.remove(caller, id))
              : recorder.recordStep("member.role.update", [id], members.changeRole(caller, id, wanted.members.get(key)!.role))
          }
          case "invitation": {
            if (change.action === "delete") {
              const id = before.invitations.get(key)!
              return recorder.recordStep("invitation.cancel", [id], invitations.cancel(caller, id))
            }
            const { delivery, email, role } = wanted.invitations.get(key)!
            return Effect.tap(
              recorder.recordStep("invitation.create", [], invitations.create(caller, { email, role, delivery })),
              ({ inviteToken }) => Effect.sync(() => inviteToken === null ? undefined : void inviteTokens.push({ email, inviteToken }))
            )
          }
          case "team": {
            if (change.action === "delete") {
              const id = before.teams.get(key)!
              return recorder.recordStep("team.delete", [id], teams.remove(caller, id))
            }
            const team = wanted.teams.get(key)!
            if (change.action === "create") {
              return recorder.recordStep("team.create", [], teams.create(caller, {
                name: team.name,
                memberIds: memberIds(team.members),
                ...(team.externalKey === null ? {} : { externalKey: team.externalKey })
              }))
            }
            const id = before.teams.get(key)!
            return recorder.recordStep("team.update", [id], teams.update(caller, id, {
              ...(changed(change, "name") ? { name: team.name } : {}),
              ...(changed(change, "externalKey") ? { externalKey: team.externalKey } : {}),
              ...(changed(change, "members") ? { memberIds: memberIds(team.members) } : {})
            }))
          }
          case "llmProvider": {
            if (change.action === "delete") {
              const id = before.llmProviders.get(key)!
              return recorder.recordStep("llm_provider.delete", [id], llm.remove(caller, id))
            }
            const provider = wanted.llmProviders.get(key)!
            const headers = () => Object.fromEntries(provider.headers.map(({ name, value }) => [name, valueOf(value)]))
            if (change.action === "create") {
              const fromCatalog = reader.catalog.providers.find((entry) => entry.id === provider.catalogProviderId)
              return Effect.flatMap(
                recorder.recordStep("llm_provider.create", [], llm.create(caller, {
                  name: provider.name,
                  ...(provider.catalogProviderId === null ? {} : { catalogProviderId: provider.catalogProviderId }),
                  ...(provider.apiStyle === undefined ? {} : { apiStyle: provider.apiStyle }),
                  // The catalog's own base URL is its default: given only when it differs (a URL given is checked).
                  ...(provider.baseUrl === undefined || provider.baseUrl === fromCatalog?.baseUrl ? {} : { baseUrl: provider.baseUrl }),
                  headers: headers(),
                  models: provider.models,
                  ...(provider.apiKey === null ? {} : { apiKey: valueOf(provider.apiKey) })
                })),
                ({ item }) => syncGrants(change, LlmProviderKind, item.id)
              )
            }
            const id = before.llmProviders.get(key)!
            const update = ["name", "baseUrl", "models", "headers"].some((field) => changed(change, field))
              ? recorder.recordStep("llm_provider.update", [id], llm.update(caller, id, {
                ...(changed(change, "name") ? { name: provider.name } : {}),
                ...(changed(change, "baseUrl") && provider.baseUrl !== undefined ? { baseUrl: provider.baseUrl } : {}),
                ...(changed(change, "models") ? { models: provider.models } : {}),
                ...(changed(change, "headers") ? { headers: headers() } : {})
              }))
              : Effect.void
            const credential = changed(change, "apiKey") && provider.apiKey !== null
              ? recorder.recordStep("llm_provider.credential.set", [id], llm.setCredential(caller, id, { type: "api_key", apiKey: valueOf(provider.apiKey) }))
              : Effect.void
            return Effect.andThen(Effect.andThen(update, credential), syncGrants(change, LlmProviderKind, id))
          }
          case "mcpConnection": {
            if (change.action === "delete") {
              const id = before.mcpConnections.get(key)!
              return recorder.recordStep("mcp_connection.delete", [id], mcp.remove(caller, id))
            }
            const connection = wanted.mcpConnections.get(key)!
            const oauth = connection.oauth
            const policy = { allDisabled: connection.toolPolicy.allDisabled, disabledTools: connection.toolPolicy.disabledTools }
            if (change.action === "create") {
              const base = { name: connection.name, url: connection.url }
              const created = connection.authType === "apikey"
                ? mcp.create(caller, { ...base, authType: "apikey", apiKey: valueOf(connection.apiKey!) })
                : connection.authType === "none"
                ? mcp.create(caller, { ...base, authType: "none" })
                : mcp.create(caller, {
                  ...base,
                  authType: "oauth",
                  credentialMode: connection.credentialMode,
                  oauth: {
                    ...(oauth!.clientId === null ? {} : { clientId: oauth!.clientId }),
                    ...(oauth!.clientSecret === null ? {} : { clientSecret: valueOf(oauth!.clientSecret) }),
                    ...(oauth!.authorizationServerIssuer === null ? {} : { authorizationServerIssuer: oauth!.authorizationServerIssuer }),
                    // Given even when empty: a connection made from a document asks for what it says, not a preset's scopes.
                    requestedScopes: oauth!.requestedScopes
                  }
                })
              return Effect.flatMap(recorder.recordStep("mcp_connection.create", [], created), ({ item }) =>
                Effect.andThen(
                  policy.allDisabled || policy.disabledTools.length > 0
                    ? recorder.recordStep("mcp_connection.tool_policy.update", [item.id], mcp.setToolPolicy(caller, item.id, policy))
                    : Effect.void,
                  syncGrants(change, McpConnectionKind, item.id)
                ))
            }
            const id = before.mcpConnections.get(key)!
            const oauthChanges = {
              ...(changed(change, "oauth.clientId") && oauth?.clientId != null ? { clientId: oauth.clientId } : {}),
              ...(changed(change, "oauth.clientSecret") && oauth?.clientSecret != null ? { clientSecret: valueOf(oauth.clientSecret) } : {}),
              ...(changed(change, "oauth.authorizationServerIssuer") && oauth?.authorizationServerIssuer != null
                ? { authorizationServerIssuer: oauth.authorizationServerIssuer }
                : {}),
              ...(changed(change, "oauth.requestedScopes") && oauth !== null ? { requestedScopes: oauth.requestedScopes } : {})
            }
            const settings = {
              ...(changed(change, "name") ? { name: connection.name } : {}),
              ...(changed(change, "url") ? { url: connection.url } : {}),
              ...(changed(change, "apiKey") && connection.apiKey !== null ? { apiKey: valueOf(connection.apiKey) } : {}),
              ...(Object.keys(oauthChanges).length > 0 ? { oauth: oauthChanges } : {})
            }
            const update = Object.keys(settings).length > 0
              ? recorder.recordStep("mcp_connection.update", [id], mcp.update(caller, id, settings))
              : Effect.void
            const toolPolicy = changed(change, "toolPolicy")
              ? recorder.recordStep("mcp_connection.tool_policy.update", [id], mcp.setToolPolicy(caller, id, policy))
              : Effect.void
            return Effect.andThen(Effect.andThen(update, toolPolicy), syncGrants(change, McpConnectionKind, id))
          }
          case "desktopPolicy": {
            if (change.name === "default" && change.action === "update" && !wanted.desktopPolicies.has(key)) {
              // Made on first use: the list makes it, as the API's own list does.
              return Effect.flatMap(desktop.list(caller, { limit: 100 }), ({ items }) => {
                const id = items.find((policy) => policy.isDefault)!.id
                return recorder.recordStep("desktop_policy.update", [id], desktop.update(caller, id, { policy: document.desktopDefaultPolicy! }))
              })
            }
            if (change.action === "delete") {
              const id = before.desktopPolicies.get(key)!
              return recorder.recordStep("desktop_policy.delete", [id], desktop.remove(caller, id))
            }
            const policy = wanted.desktopPolicies.get(key)!
            // Teams this apply created have their ids once it made them.
            const assignments = Effect.map(teamsNow, (teams) => ({
              memberIds: memberIds(policy.members),
              teamIds: policy.teams.map((name) => teams.get(Plan.matchKey(name))!)
            }))
            if (change.action === "create") {
              return Effect.flatMap(assignments, ({ memberIds, teamIds }) =>
                recorder.recordStep("desktop_policy.create", [], Effect.map(desktop.create(caller, {
                  policyName: policy.name,
                  policy: policy.policy,
                  priority: policy.priority,
                  isEnabled: policy.enabled,
                  memberIds,
                  teamIds
                }), ({ desktopPolicy }) => desktopPolicy)))
            }
            const id = before.desktopPolicies.get(key)!
            return Effect.flatMap(assignments, ({ memberIds, teamIds }) =>
              recorder.recordStep("desktop_policy.update", [id], desktop.update(caller, id, {
                ...(changed(change, "name") ? { policyName: policy.name } : {}),
                ...(changed(change, "policy") ? { policy: policy.policy } : {}),
                ...(changed(change, "priority") ? { priority: policy.priority } : {}),
                ...(changed(change, "enabled") ? { isEnabled: policy.enabled } : {}),
                ...(changed(change, "members") ? { memberIds } : {}),
                ...(changed(change, "teams") ? { teamIds } : {})
              })))
          }
          case "template": {
            if (change.action === "delete") {
              const id = before.templates.get(key)!
              return recorder.recordStep("template.delete", [id], templates.remove(caller, id))
            }
            const template = wanted.templates.get(key)!
            if (change.action === "create") {
              return Effect.flatMap(
                recorder.recordStep("template.create", [], templates.create(caller, {
                  name: template.name,
                  description: template.description,
                  kind: template.kind,
                  ...(template.schemaVersion === null ? {} : { schemaVersion: template.schemaVersion }),
                  document: template.document
                })),
                ({ template: made }) => syncGrants(change, TemplateKind, made.id)
              )
            }
            const id = before.templates.get(key)!
            const settings = {
              ...(changed(change, "name") ? { name: template.name } : {}),
              ...(changed(change, "description") ? { description: template.description } : {}),
              ...(changed(change, "kind") ? { kind: template.kind } : {}),
              ...(changed(change, "schemaVersion") ? { schemaVersion: template.schemaVersion } : {}),
              ...(changed(change, "document") ? { document: template.document } : {})
            }
            return Effect.andThen(
              Object.keys(settings).length > 0 ? recorder.recordStep("template.update", [id], templates.update(caller, id, settings)) : Effect.void,
              syncGrants(change, TemplateKind, id)
            )
          }
          case "configObject": {
            if (change.action === "delete") {
              const id = before.configObjects.get(key)!
              return recorder.recordStep("config_object.delete", [id], configObjects.remove(caller, id))
            }
            const object = wanted.configObjects.get(key)!
            const status = (id: ConfigObjectId) =>
              object.status === "archived"
                ? recorder.recordStep("config_object.archive", [id], configObjects.archive(caller, id))
                : recorder.recordStep("config_object.restore", [id], configObjects.restore(caller, id))
            const content = {
              rawSourceText: object.rawSourceText,
              parserMode: object.parserMode,
              schemaVersion: object.schemaVersion,
              ...(object.metadata === null ? {} : { metadata: object.metadata })
            }
            if (change.action === "create") {
              // Brought from a file: `import`, as the API calls what was not written here.
              const input = { objectType: object.objectType, sourceMode: "import" as const, relativePath: object.relativePath, ...content }
              return Effect.flatMap(
                recorder.recordStep("config_object.create", [], configObjects.create(caller, { input })),
                ({ item }) => Effect.andThen(object.status === "archived" ? status(item.id) : Effect.void, syncGrants(change, ConfigObjectKind, item.id))
              )
            }
            const id = before.configObjects.get(key)!
            // A new version, named after the plan that made it (its `sourceRevisionRef`).
            const version = { input: content, reason: `orgplane plan ${planHash}` }
            return Effect.andThen(
              Effect.andThen(
                change.fields.some((field) => Plan.configObjectContent.has(field.field))
                  ? recorder.recordStep("config_object.version.create", [id], configObjects.createVersion(caller, id, version))
                  : Effect.void,
                changed(change, "status") ? status(id) : Effect.void
              ),
              syncGrants(change, ConfigObjectKind, id)
            )
          }
          case "plugin": {
            if (change.action === "delete") {
              const id = before.plugins.get(key)!
              return recorder.recordStep("plugin.delete", [id], plugins.remove(caller, id))
            }
            const plugin = wanted.plugins.get(key)!
            const status = (id: PluginId) =>
              plugin.status === "archived"
                ? recorder.recordStep("plugin.archive", [id], plugins.archive(caller, id))
                : recorder.recordStep("plugin.restore", [id], plugins.restore(caller, id))
            /** Holds the config objects the document names that it does not hold yet, and stops holding the others. */
            const contents = (id: PluginId, held: ReadonlyArray<string>) =>
              !changed(change, "configObjects") ? Effect.void : Effect.flatMap(configObjectsNow, (ids) => {
                const wantedPaths = new Set((plugin.configObjects ?? []).map(Plan.matchKey))
                const heldPaths = new Set(held.map(Plan.matchKey))
                return Effect.andThen(
                  Effect.forEach([...heldPaths].filter((path) => !wantedPaths.has(path)), (path) => {
                    const objectId = before.configObjects.get(path) ?? ids.get(path)!
                    return recorder.recordStep("plugin.config_object.remove", [id, objectId], plugins.removeConfigObject(caller, id, objectId))
                  }, { discard: true }),
                  Effect.forEach([...wantedPaths].filter((path) => !heldPaths.has(path)), (path) => {
                    const objectId = ids.get(path)!
                    return recorder.recordStep("plugin.config_object.add", [id, objectId], plugins.addConfigObject(caller, id, objectId))
                  }, { discard: true })
                )
              })
            if (change.action === "create") {
              return Effect.flatMap(
                recorder.recordStep("plugin.create", [], plugins.create(caller, { name: plugin.name, description: plugin.description })),
                ({ item }) =>
                  Effect.andThen(
                    Effect.andThen(contents(item.id, []), plugin.status === "archived" ? status(item.id) : Effect.void),
                    syncGrants(change, PluginKind, item.id)
                  )
              )
            }
            const id = before.plugins.get(key)!
            const settings = {
              ...(changed(change, "name") ? { name: plugin.name } : {}),
              ...(changed(change, "description") ? { description: plugin.description } : {})
            }
            const held = before.document.plugins.find((each) => Plan.matchKey(each.name) === key)?.configObjects ?? []
            return Effect.andThen(
              Effect.andThen(
                Effect.andThen(
                  Object.keys(settings).length > 0 ? recorder.recordStep("plugin.update", [id], plugins.update(caller, id, settings)) : Effect.void,
                  contents(id, held)
                ),
                changed(change, "status") ? status(id) : Effect.void
              ),
              syncGrants(change, PluginKind, id)
            )
          }
          case "marketplace": {
            if (change.action === "delete") {
              const id = before.marketplaces.get(key)!
              return recorder.recordStep("marketplace.delete", [id], marketplaces.remove(caller, id))
            }
            const marketplace = wanted.marketplaces.get(key)!
            /** Lists the plugins the document names that it does not list yet, and stops listing the others it names. */
            const listings = (id: MarketplaceId, listed: ReadonlyArray<string>) =>
              Effect.flatMap(pluginsNow, (ids) => {
                const wantedNames = new Set(marketplace.plugins.map(Plan.matchKey))
                const listedNames = new Set(listed.map(Plan.matchKey))
                return Effect.andThen(
                  Effect.forEach([...listedNames].filter((name) => !wantedNames.has(name)), (name) => {
                    const pluginId = before.plugins.get(name) ?? ids.get(name)!
                    return recorder.recordStep("marketplace.plugin.remove", [id, pluginId], marketplaces.removePlugin(caller, id, pluginId))
                  }, { discard: true }),
                  Effect.forEach([...wantedNames].filter((name) => !listedNames.has(name)), (name) => {
                    const pluginId = ids.get(name)!
                    return recorder.recordStep("marketplace.plugin.add", [id, pluginId], marketplaces.addPlugin(caller, id, pluginId))
                  }, { discard: true })
                )
              })
            if (change.action === "create") {
              return Effect.flatMap(
                recorder.recordStep("marketplace.create", [], marketplaces.create(caller, {
                  name: marketplace.name,
                  description: marketplace.description,
                  ...(marketplace.logoUrl === null ? {} : { logoUrl: marketplace.logoUrl })
                })),
                ({ item }) => Effect.andThen(listings(item.id, []), syncGrants(change, MarketplaceKind, item.id))
              )
            }
            const id = before.marketplaces.get(key)!
            const settings = {
              ...(changed(change, "name") ? { name: marketplace.name } : {}),
              ...(changed(change, "description") ? { description: marketplace.description } : {}),
              ...(changed(change, "logoUrl") ? { logoUrl: marketplace.logoUrl } : {})
            }
            const listed = before.document.marketplaces.find((each) => Plan.matchKey(each.name) === key)?.plugins ?? []
            return Effect.andThen(
              Effect.andThen(
                Object.keys(settings).length > 0 ? recorder.recordStep("marketplace.update", [id], marketplaces.update(caller, id, settings)) : Effect.void,
                changed(change, "plugins") ? listings(id, listed) : Effect.void
              ),
              syncGrants(change, MarketplaceKind, id)
            )
          }
          case "connector":
            // Only grants: of the connector, and of the plugins and marketplaces it syncs (`Plan.syncedKey`).
            return Effect.forEach(change.fields, (field) => {
              if (field.field === "grants") return grantsTo(field, ConnectorInstanceKind, before.connectors.get(key)!)
              const synced = before.synced.get(Plan.syncedKey(change.name, field.field))!
              return grantsTo(field, field.field.startsWith("plugins/") ? PluginKind : MarketplaceKind, synced)
            }, { discard: true })
          case "ssoConnection": {
            if (change.action === "delete") {
              const id = before.ssoConnections.get(key)!
              return recorder.recordStep("sso.connection.delete", [id], sso.deleteConnection(caller, id))
            }
            const connection = wanted.ssoConnections.get(key)!
            // Teams this apply created have their ids once it made them.
            const named = Effect.map(teamsNow, (teams) => ({
              jit: {
                enabled: connection.jit.enabled,
                defaultRole: connection.jit.defaultRole,
                defaultTeamIds: connection.jit.defaultTeams.map((name) => teams.get(Plan.matchKey(name))!)
              },
              mapping: {
                email: connection.mapping.email,
                name: connection.mapping.name,
                givenName: connection.mapping.givenName,
                familyName: connection.mapping.familyName,
                groups: connection.mapping.groups,
                groupRules: connection.mapping.groupRules.map((rule) => ({ group: rule.group, teamId: teams.get(Plan.matchKey(rule.team))! }))
              }
            }))
            const oidc = connection.oidc
            const oidcSettings = oidc === null ? undefined : {
              issuer: oidc.issuer,
              ...(oidc.endpoints === null ? {} : { endpoints: oidc.endpoints }),
              clientId: oidc.clientId,
              scopes: oidc.scopes,
              tokenEndpointAuthMethod: oidc.tokenEndpointAuthMethod
            }
            if (change.action === "create") {
              return Effect.flatMap(named, ({ jit, mapping }) => {
                const common = { name: connection.name, domains: connection.domains, jit, mapping }
                const input = oidcSettings !== undefined
                  ? { kind: "oidc" as const, ...common, oidc: { ...oidcSettings, clientSecret: valueOf(oidc!.clientSecret!) } }
                  : { kind: "saml" as const, ...common, saml: connection.saml! }
                return recorder.recordStep("sso.connection.create", [], Effect.map(sso.createConnection(caller, input, ""), ({ connection: made }) => made))
              })
            }
            const id = before.ssoConnections.get(key)!
            const activeField = change.fields.find((field) => field.field === "active")
            const deactivate = activeField?.after === false
              ? recorder.recordStep("sso.connection.deactivate", [id], Effect.map(sso.deactivateConnection(caller, id, ""), ({ connection: made }) => made))
              : Effect.void
            const activate = activeField?.after === true
              ? recorder.recordStep("sso.connection.activate", [id], Effect.map(sso.activateConnection(caller, id, ""), ({ connection: made }) => made))
              : Effect.void
            const oidcChanged = change.fields.some((field) => field.field.startsWith("oidc."))
            const update = Effect.flatMap(named, ({ jit, mapping }) => {
              const patch = {
                ...(changed(change, "name") ? { name: connection.name } : {}),
                ...(changed(change, "domains") ? { domains: connection.domains } : {}),
                ...(changed(change, "jit") ? { jit } : {}),
                ...(changed(change, "mapping") ? { mapping } : {}),
                ...(oidcChanged && oidcSettings !== undefined
                  ? { oidc: { ...oidcSettings, ...(changed(change, "oidc.clientSecret") ? { clientSecret: valueOf(oidc!.clientSecret!) } : {}) } }
                  : {}),
                ...(changed(change, "saml") && connection.saml !== null ? { saml: connection.saml } : {})
              }
              return Object.keys(patch).length === 0
                ? Effect.void
                : recorder.recordStep("sso.connection.update", [id], Effect.map(sso.updateConnection(caller, id, patch, ""), ({ connection: made }) => made))
            })
            return Effect.andThen(Effect.andThen(deactivate, update), activate)
          }
          case "domain":
            return change.action === "delete"
              ? recorder.recordStep("sso.domain.delete", [], sso.deleteDomain(caller, change.name))
              : recorder.recordStep("sso.domain.verification.request", [], sso.requestDomainVerification(caller, change.name))
          case "apiKey": {
            const revoke = () => {
              const id = before.apiKeys.get(key)!
              return recorder.recordStep("api_key.revoke", [id], apiKeys.revoke(caller, id))
            }
            if (change.action === "delete") return revoke()
            const wantedKey = wanted.apiKeys.get(key)!
            // A key acts as its maker: only its maker makes it.
            if (Plan.matchKey(wantedKey.member) !== Plan.matchKey(caller.user.email ?? caller.membership.id)) {
              return Effect.fail(new Conflict({
                error: "api_key_maker",
                message: `A key acts as the member who makes it: ${wantedKey.member} applies this document to make it (or it names you as its member).`
              }))
            }
            const make = Effect.flatMap(
              recorder.recordStep("api_key.create", [], apiKeys.create(caller, {
                name: wantedKey.name,
                ...(wantedKey.expiresAt === null ? {} : { expiresAt: wantedKey.expiresAt }),
                ...(wantedKey.scopes === null ? {} : { scopes: wantedKey.scopes })
              })),
              ({ key: made }) => Effect.sync(() => void madeKeys.push({ name: wantedKey.name, key: made }))
            )
            // Keys do not change: a key with other scopes or expiry is made again.
            return change.action === "create" ? make : Effect.andThen(revoke(), make)
          }
          case "auditStream": {
            if (change.action === "delete") {
              const id = before.auditStreams.get(key)!
              return recorder.recordStep("audit.stream.delete", [id], streams.remove(caller, id))
            }
            const stream = wanted.auditStreams.get(key)!
            if (change.action === "create") {
              return Effect.flatMap(
                recorder.recordStep("audit.stream.create", [], checkingUrls(streams.create(caller, {
                  url: stream.url,
                  ...(stream.description === null ? {} : { description: stream.description }),
                  status: stream.status
                }))),
                ({ secret }) => Effect.sync(() => void auditStreamSecrets.push({ url: stream.url, secret }))
              )
            }
            const id = before.auditStreams.get(key)!
            return recorder.recordStep("audit.stream.update", [id], checkingUrls(streams.update(caller, id, {
              ...(changed(change, "url") ? { url: stream.url } : {}),
              ...(changed(change, "description") ? { description: stream.description } : {}),
              ...(changed(change, "status") ? { status: stream.status } : {})
            })))
          }
          case "scimConnection": {
            if (change.action === "delete") {
              const id = before.scimConnections.get(key)!
              return recorder.recordStep("scim.connection.delete", [id], scim.remove(caller, id))
            }
            const directory = wanted.scimConnections.get(key)!
            // The SCIM base URL the answers carry is not used here.
            if (change.action === "create") {
              return recorder.recordStep("scim.connection.create", [], Effect.map(scim.create(caller, directory, ""), ({ connection }) => connection))
            }
            const id = before.scimConnections.get(key)!
            return recorder.recordStep("scim.connection.update", [id], scim.update(caller, id, {
              ...(changed(change, "name") ? { name: directory.name } : {}),
              ...(changed(change, "groupMappingMode") ? { groupMappingMode: directory.groupMappingMode } : {}),
              ...(changed(change, "defaultRole") ? { defaultRole: directory.defaultRole } : {}),
              ...(changed(change, "roleRules") ? { roleRules: directory.roleRules } : {})
            }, ""))
          }
        }
      }
      const ordered = [...planned.changes].sort((left, right) => applyOrder(left) - applyOrder(right))
      for (const change of ordered) yield* naming(change)(step(change))
      if (planned.changes.some((change) => Plan.secretFields[change.kind] !== undefined)) {
        yield* keepSecretSources(caller.organization.id, planned.changes)
      }
      // What drift is measured against from now on: the document as given.
      yield* documents.save({
        organizationId: caller.organization.id,
        document: JSON.stringify(encodeDocument(document)),
        planHash,
        appliedAt: yield* now,
        appliedByMembershipId: caller.membership.id
      })
      return { changes: planned.changes, liveHash: Plan.hashOf(documentText((yield* reader.live(caller.organization.id)).document)) }
    }))
    return new AppliedPlan({ planHash, changes: applied.changes, liveHash: applied.liveHash, inviteTokens, apiKeys: madeKeys, auditStreamSecrets })
  })

  /** `GET /v1/organization/document/drift`: the caller's organization against its last applied document. */
  const drift = Effect.fn("OrganizationDocuments.drift")(function*(caller: MemberContext) {
    yield* mayRead(caller)
    const found = yield* orUnavailable(reader.driftOf(caller.organization.id))
    return found?.report ?? new DocumentDrift({ applied: null, changes: [], problems: [] })
  })

  return { export: exportDocument, plan, apply, drift } as const
})

export class OrganizationDocuments extends Context.Service<OrganizationDocuments>()("@orgplane/server/orgdocument/OrganizationDocuments", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      Organizations.layer,
      Members.layer,
      Invitations.layer,
      Teams.layer,
      LlmProviders.layer,
      Connections.layer,
      Access.layer,
      // The SCIM connections' reconcile takes the directory's teams from its caller, as its HTTP group does.
      ScimConnections.layer.pipe(Layer.provide(DirectoryTeams.layer)),
      DesktopPolicies.layer,
      Templates.layer,
      Plugins.layer,
      ConfigObjects.layer,
      Marketplaces.layer,
      ssoLayer,
      SsoPolicy.layer.pipe(Layer.provide(ssoLayer)),
      // The same wake as the audit group's (one layer, built once): a stream made here is looked at at once.
      Streams.layer.pipe(Layer.provide(StreamWake.layer)),
      ApiKeys.layer,
      LiveDocuments.layer,
      DocumentsRepository.layer,
      Audit.layer
    ])
  )
}
