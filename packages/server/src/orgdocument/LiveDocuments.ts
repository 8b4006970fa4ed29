/**
 * An organization's document read from storage (organization as code): its live state as the export writes it,
 * with the ids of what it names, and its drift from the last applied document, each difference with who made it
 * (from the audit log). No caller: the export, the plan and the apply check the caller's authority
 * (OrganizationDocuments.ts) and the drift job (Drift.ts) acts for the system.
 */
import {
  AUDIT_RETENTION_DEFAULT_DAYS,
  collapseScopes,
  type DocumentChange,
  DocumentDrift,
  type DocumentGrant,
  type DocumentLlmProvider,
  type DocumentMcpConnection,
  type DocumentMember,
  type DocumentSsoConnection,
  type DocumentTeam,
  type Cursor,
  type ExportedDocument,
  type InvitationId,
  type MembershipId,
  ORGANIZATION_DOCUMENT_VERSION,
  OrganizationDocument,
  type OrganizationId,
  OrganizationNotFound,
  type SecretReference,
  type TeamId
} from "@orgplane/schema"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import {
  Access,
  type ActiveGrant,
  ConfigObjectKind,
  ConnectorInstanceKind,
  LlmProviderKind,
  MarketplaceKind,
  McpConnectionKind,
  PluginKind,
  TemplateKind
} from "../access/Access.js"
import { AuditRepository } from "../audit/AuditRepository.js"
import { ApiKeysRepository } from "../identity/ApiKeysRepository.js"
import { StreamsRepository } from "../audit/StreamsRepository.js"
import { ConfigObjectsRepository } from "../catalog/ConfigObjectsRepository.js"
import { MarketplacesRepository } from "../catalog/MarketplacesRepository.js"
import { PluginsRepository } from "../catalog/PluginsRepository.js"
import { ConnectorsRepository } from "../connectors/ConnectorsRepository.js"
import { Memberships } from "../identity/Memberships.js"
import { OrganizationsRepository } from "../identity/OrganizationsRepository.js"
import { InvitationsRepository } from "../invitations/InvitationsRepository.js"
import { LlmConfig } from "../llm/LlmConfig.js"
import { type LlmProviderRow, LlmProvidersRepository } from "../llm/LlmProvidersRepository.js"
import { ConnectionsRepository, type McpConnectionRow } from "../mcp/ConnectionsRepository.js"
import { DirectoryRepository } from "../members/DirectoryRepository.js"
import { DesktopPoliciesRepository } from "../policies/DesktopPoliciesRepository.js"
import { TemplatesRepository } from "../templates/TemplatesRepository.js"
import { type ConnectionDomainRow, type SsoConnectionRow, SsoRepository, type StoredSaml } from "../sso/SsoRepository.js"
import { PolicyRepository } from "../sso/PolicyRepository.js"
import { defaultDocument } from "../policies/Effective.js"
import { ConnectionsRepository as ScimConnectionsRepository } from "../scim/ConnectionsRepository.js"
import { now } from "../platform/Time.js"
import { TeamsRepository } from "../teams/TeamsRepository.js"
import { DocumentsRepository, type SecretRow } from "./DocumentsRepository.js"
import * as Plan from "./Plan.js"

/** The largest page the lists serve. */
const PAGE = 100

/** Every item of a paged list, page after page. */
const everyPage = <A, E, R>(
  page: (cursor: typeof Cursor.Type | undefined) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly nextCursor: typeof Cursor.Type | null }, E, R>
): Effect.Effect<Array<A>, E, R> => {
  const from = (cursor: typeof Cursor.Type | undefined, seen: Array<A>): Effect.Effect<Array<A>, E, R> =>
    Effect.flatMap(page(cursor), ({ items, nextCursor }) => {
      seen.push(...items)
      return nextCursor === null ? Effect.succeed(seen) : from(nextCursor, seen)
    })
  return from(undefined, [])
}

/** The actions that change an LLM provider (its reads and tests change nothing). */
const llmChanges = new Set(["llm_provider.create", "llm_provider.update", "llm_provider.credential.set", "llm_provider.delete", "access.grant", "access.revoke"])

/** The actions that change an MCP connection as the document describes it (connecting and tool calls do not). */
const mcpChanges = new Set([
  "mcp_connection.create",
  "mcp_connection.update",
  "mcp_connection.tool_policy.update",
  "mcp_connection.delete",
  "access.grant",
  "access.revoke"
])

/** A stored document, as the apply was given it. */
const decodeStored = Schema.decodeUnknownEffect(Schema.fromJsonString(OrganizationDocument))

const sortedRecord = (record: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.keys(record).sort(Plan.byText).map((key) => [key, record[key]!]))

/** A reference as stored (`refs`): one, or one per header name. */
const StoredReference = Schema.Struct({ from: Schema.String, version: Schema.Number })
const decodeReference = Schema.decodeUnknownSync(Schema.fromJsonString(StoredReference))
const decodeReferences = Schema.decodeUnknownSync(Schema.fromJsonString(Schema.Array(Schema.Struct({ name: Schema.String, value: StoredReference }))))

/** An environment variable's name made of words: `OpenAI (eng)` and `api key` give `OPENAI_ENG_API_KEY`. */
const variableName = (...words: ReadonlyArray<string>) =>
  words.map((word) => word.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "")).filter((word) => word !== "").join("_").slice(0, 120)

/**
 * Where the export says a secret no document wrote comes from: an environment variable named after its kind
 * (`LLM`, `MCP`), its resource and the secret, `env:LLM_OPENAI_API_KEY`.
 */
export const defaultSource = (prefix: string, resource: string, secret: string) => `env:${prefix}_${variableName(resource, secret)}`

/** The fingerprint of a secret's ciphertext: it changes whenever the secret is written, by a document or not. */
export const fingerprintOf = (ciphertext: string | null) => ciphertext === null ? null : Plan.hashOf(ciphertext)

/** The secrets an apply wrote, by resource and field. */
type StoredSecrets = ReadonlyMap<string, SecretRow>
const storedKey = (resourceId: string, field: string) => `${resourceId}\n${field}`

/**
 * A secret as its document names it: by the reference an apply last wrote it from, at that version while its
 * ciphertext is still the one the apply fingerprinted; version 0 once written outside a document, or never by one.
 */
const referenceOf = (stored: StoredSecrets, resourceId: string, field: string, ciphertext: string, fallback: string): SecretReference => {
  const row = stored.get(storedKey(resourceId, field))
  const reference = row === undefined ? undefined : decodeReference(row.refs)
  return { from: reference?.from ?? fallback, version: reference !== undefined && row!.fingerprint === fingerprintOf(ciphertext) ? reference.version : 0 }
}

/** An LLM provider as its document (its secrets by `referenceOf`, its headers' as one written together). */
const llmProviderOf = (row: LlmProviderRow, stored: StoredSecrets): DocumentLlmProvider => {
  const headerRow = stored.get(storedKey(row.id, "headers"))
  const headerRefs = new Map((headerRow === undefined ? [] : decodeReferences(headerRow.refs)).map((header) => [header.name.toLowerCase(), header.value]))
  const headersCurrent = headerRow !== undefined && headerRow.fingerprint === fingerprintOf(row.headersCiphertext)
  const headers = [...row.headerNames].sort((left, right) => Plan.byText(left.toLowerCase(), right.toLowerCase())).map((name) => {
    const ref = headerRefs.get(name.toLowerCase())
    const value: SecretReference = { from: ref?.from ?? defaultSource("LLM", row.name, name), version: headersCurrent && ref !== undefined ? ref.version : 0 }
    return { name, value }
  })
  return {
    name: row.name,
    catalogProviderId: row.catalogProviderId,
    apiStyle: row.apiStyle,
    baseUrl: row.baseUrl,
    models: Plan.documentModels(row.models),
    headers,
    apiKey: row.credentialType !== "api_key" || row.credentialCiphertext === null
      ? null
      : referenceOf(stored, row.id, "apiKey", row.credentialCiphertext, defaultSource("LLM", row.name, "API key"))
  }
}

/**
 * An MCP connection as its document: a pre-registered OAuth client only (a client orgplane registered itself is
 * registered again wherever the document goes), the issuer in use, scopes and disabled tools sorted.
 */
const mcpConnectionOf = (row: McpConnectionRow, stored: StoredSecrets): DocumentMcpConnection => {
  const preRegistered = row.oauthRegistrationSource === "pre_registered"
  return {
    name: row.name,
    url: row.url,
    authType: row.authType,
    credentialMode: row.credentialMode,
    apiKey: row.authType !== "apikey" || row.apiKeyCiphertext === null
      ? null
      : referenceOf(stored, row.id, "apiKey", row.apiKeyCiphertext, defaultSource("MCP", row.name, "API key")),
    oauth: row.authType !== "oauth" ? null : {
      clientId: preRegistered ? row.oauthClientId : null,
      clientSecret: !preRegistered || row.oauthClientSecretCiphertext === null
        ? null
        : referenceOf(stored, row.id, "oauth.clientSecret", row.oauthClientSecretCiphertext, defaultSource("MCP", row.name, "client secret")),
      authorizationServerIssuer: row.oauthIssuer,
      requestedScopes: [...new Set(row.oauthRequestedScopes)].sort(Plan.byText)
    },
    toolPolicy: { allDisabled: row.toolPolicyAllDisabled, disabledTools: [...new Set(row.toolPolicyDisabledTools)].sort(Plan.byText) }
  }
}

/** A SAML connection's IdP as its document: what its source needs, and the IdP-initiated settings. */
const samlOf = (saml: StoredSaml): NonNullable<DocumentSsoConnection["saml"]> => {
  const common = { allowIdpInitiated: saml.allowIdpInitiated, relayStateAllowList: [...saml.relayStateAllowList] }
  return saml.source === "metadataUrl"
    ? { source: saml.source, url: saml.metadataUrl ?? "", ...common }
    : saml.source === "metadataXml"
    ? { source: saml.source, xml: saml.metadataXml ?? "", ...common }
    : { source: saml.source, entityId: saml.entityId ?? "", ssoUrl: saml.ssoUrl ?? "", certificates: [...saml.certificates], ...common }
}

/**
 * An SSO connection as its document: teams by name (a team gone is left out, as the API's rules then name none), the
 * OIDC client's secret by reference, lists sorted.
 */
const ssoConnectionOf = (
  row: SsoConnectionRow,
  domains: ReadonlyArray<ConnectionDomainRow>,
  teamNames: ReadonlyMap<string, string>,
  stored: StoredSecrets
): DocumentSsoConnection => {
  const byName = (left: string, right: string) => Plan.byText(Plan.matchKey(left), Plan.matchKey(right)) || Plan.byText(left, right)
  const endpoints = row.oidc?.endpoints ?? null
  return {
    name: row.name,
    kind: row.kind,
    active: row.state === "active",
    domains: domains.filter((domain) => domain.connectionId === row.id).map((domain) => domain.domain).sort(Plan.byText),
    jit: {
      enabled: row.jit.enabled,
      defaultRole: row.jit.defaultRole,
      defaultTeams: row.jit.defaultTeamIds.flatMap((id) => teamNames.get(id) ?? []).sort(byName)
    },
    mapping: {
      email: row.mapping.email,
      name: row.mapping.name,
      givenName: row.mapping.givenName,
      familyName: row.mapping.familyName,
      groups: row.mapping.groups,
      groupRules: Plan.sortGroupRules(row.mapping.groupRules.flatMap((rule) => {
        const team = teamNames.get(rule.teamId)
        return team === undefined ? [] : [{ group: rule.group, team }]
      }))
    },
    oidc: row.oidc === null ? null : {
      issuer: row.oidc.issuer,
      endpoints: endpoints === null ? null : {
        authorization: endpoints.authorization,
        token: endpoints.token,
        jwks: endpoints.jwks,
        ...(endpoints.userinfo === null ? {} : { userinfo: endpoints.userinfo })
      },
      clientId: row.oidc.clientId,
      clientSecret: row.oidcClientSecretCiphertext === null
        ? null
        : referenceOf(stored, row.id, "oidc.clientSecret", row.oidcClientSecretCiphertext, defaultSource("SSO", row.name, "client secret")),
      scopes: [...new Set(row.oidc.scopes)].sort(Plan.byText),
      tokenEndpointAuthMethod: row.oidc.tokenEndpointAuthMethod
    },
    saml: row.saml === null ? null : samlOf(row.saml)
  }
}

const make = Effect.gen(function*() {
  const organizationRows = yield* OrganizationsRepository
  const memberships = yield* Memberships
  const directory = yield* DirectoryRepository
  const invitationRows = yield* InvitationsRepository
  const teamRows = yield* TeamsRepository
  const documents = yield* DocumentsRepository
  const auditRows = yield* AuditRepository
  const llmRows = yield* LlmProvidersRepository
  const mcpRows = yield* ConnectionsRepository
  const access = yield* Access
  const scimRows = yield* ScimConnectionsRepository
  const desktopRows = yield* DesktopPoliciesRepository
  const templateRows = yield* TemplatesRepository
  const pluginRows = yield* PluginsRepository
  const objectRows = yield* ConfigObjectsRepository
  const connectorRows = yield* ConnectorsRepository
  const marketplaceRows = yield* MarketplacesRepository
  const ssoRows = yield* SsoRepository
  const ssoPolicies = yield* PolicyRepository
  const streamRows = yield* StreamsRepository
  const keyRows = yield* ApiKeysRepository
  const { catalog } = yield* LlmConfig

  /**
   * The grants of each kind the document holds, by resource, as the document names them (`Plan.sortGrants`); a grant
   * to someone who is no longer a member grants nothing and is left out.
   */
  const grantReader = Effect.fnUntraced(function*(
    organizationId: OrganizationId,
    memberList: ReadonlyArray<{ readonly id: MembershipId; readonly email?: string | null | undefined }>,
    teamList: ReadonlyArray<{ readonly id: TeamId; readonly name: string }>
  ) {
    const members = new Map(memberList.map((member) => [member.id, member.email ?? member.id]))
    const teams = new Map(teamList.map((team) => [team.id, team.name]))
    const byResource = (grants: ReadonlyArray<ActiveGrant>) => {
      const found = new Map<string, Array<DocumentGrant>>()
      for (const grant of grants) {
        const named: DocumentGrant | undefined = grant.orgWide
          ? { organization: true, role: grant.role }
          : grant.teamId !== null
          ? Option.match(Option.fromNullishOr(teams.get(grant.teamId)), { onNone: () => undefined, onSome: (team) => ({ team, role: grant.role }) })
          : grant.membershipId !== null
          ? Option.match(Option.fromNullishOr(members.get(grant.membershipId)), { onNone: () => undefined, onSome: (member) => ({ member, role: grant.role }) })
          : undefined
        if (named === undefined) continue
        found.set(grant.resourceId, [...found.get(grant.resourceId) ?? [], named])
      }
      return (resourceId: string) => Plan.sortGrants(found.get(resourceId) ?? [])
    }
    return {
      llmProvider: byResource(yield* access.activeGrants(organizationId, LlmProviderKind)),
      mcpConnection: byResource(yield* access.activeGrants(organizationId, McpConnectionKind)),
      template: byResource(yield* access.activeGrants(organizationId, TemplateKind)),
      configObject: byResource(yield* access.activeGrants(organizationId, ConfigObjectKind)),
      plugin: byResource(yield* access.activeGrants(organizationId, PluginKind)),
      marketplace: byResource(yield* access.activeGrants(organizationId, MarketplaceKind)),
      connector: byResource(yield* access.activeGrants(organizationId, ConnectorInstanceKind))
    }
  })

  /**
   * The organization as its document, and the ids of what the document names (by `Plan.matchKey`), read from
   * storage: the caller's authority is the export's to check (`readsOf`); the drift job reads with none.
   */
  const live = Effect.fn("LiveDocuments.live")(function*(organizationId: OrganizationId) {
    const found = yield* organizationRows.details(organizationId)
    if (Option.isNone(found)) return yield* new OrganizationNotFound()
    const organization = found.value
    const emailsVisible = yield* directory.emailsVisible(organizationId)
    const auditSettings = yield* auditRows.settings(organizationId)
    const ssoPolicy = yield* ssoPolicies.find(organizationId)
    const memberList = yield* memberships.every(organizationId)
    const at = yield* now
    const pending = yield* everyPage((cursor) =>
      invitationRows.list(organizationId, cursor === undefined ? { limit: PAGE, status: "pending" } : { limit: PAGE, status: "pending", cursor }, at)
    )
    const teamList = yield* teamRows.every(organizationId)
    const providers = yield* llmRows.all(organizationId)
    const connections = yield* mcpRows.rows(organizationId)
    const grantsOf = yield* grantReader(organizationId, memberList, teamList)
    const directories = yield* everyPage((cursor) => scimRows.list(organizationId, at, cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor }))
    const desktop = yield* everyPage((cursor) => desktopRows.list(organizationId, cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor }))
    const teamNames = new Map<TeamId, string>(teamList.map((team) => [team.id, team.name]))
    const templates = yield* templateRows.latest(organizationId)
    const objects = yield* objectRows.ownObjects(organizationId)
    const objectPaths = new Map<string, string>(objects.map((object) => [object.id, object.relativePath]))
    const plugins = yield* pluginRows.ownPlugins(organizationId)
    // What a plugin holds of what the document names: objects people made with a path, not deleted.
    const held = Arr.groupBy(
      (yield* pluginRows.heldConfigObjects(organizationId)).filter((row) => objectPaths.has(row.configObjectId)),
      (row) => row.pluginId
    )
    const marketplaces = yield* marketplaceRows.ownMarketplaces(organizationId)
    const pluginNames = new Map<string, string>(plugins.map((plugin) => [plugin.id, plugin.name]))
    const connectorList = yield* connectorRows.instanceNames(organizationId)
    const syncedPlugins = Arr.groupBy(yield* pluginRows.syncedPlugins(organizationId), (row) => row.connectorInstanceId)
    const syncedMarketplaces = Arr.groupBy(yield* marketplaceRows.syncedMarketplaces(organizationId), (row) => row.connectorInstanceId)
    const ssoConnections = yield* ssoRows.listConnections({ organizationId })
    const ssoDomains = yield* ssoRows.connectionDomains(organizationId, ssoConnections.map((row) => row.id))
    const domains = yield* ssoRows.listDomains({ organizationId })
    // At most MAX_AUDIT_STREAMS: one page.
    const streams = (yield* streamRows.list(organizationId, { limit: PAGE })).items
    const keys = (yield* everyPage((cursor) => keyRows.list(organizationId, cursor === undefined ? { limit: PAGE } : { limit: PAGE, cursor })))
      .filter((key) => key.expiresAt === null || key.expiresAt.getTime() > at.getTime())
    const byName = (left: string, right: string) => Plan.byText(Plan.matchKey(left), Plan.matchKey(right))
    const secrets = new Map((yield* documents.secrets(organizationId)).map((row) => [storedKey(row.resourceId, row.field), row]))

    const names = new Map<MembershipId, string>(memberList.map((member) => [member.id, member.email ?? member.id]))
    const documentMembers = memberList.map((member): DocumentMember => {
      const name = member.email ?? member.id
      return member.suspendedAt === null || member.suspendedAt === undefined
        ? { email: name, role: member.role }
        : { email: name, role: member.role, suspended: true }
    }).sort((left, right) => Plan.byText(left.email, right.email))
    const documentTeams = teamList.map((team): DocumentTeam => {
      const teamMembers = team.memberIds.map((id) => names.get(id) ?? id).sort(Plan.byText)
      return team.scimConnectionId === null
        ? { name: team.name, externalKey: team.externalKey, members: teamMembers }
        : { name: team.name, externalKey: team.externalKey, members: teamMembers, directoryManaged: true }
    }).sort((left, right) => Plan.byText(left.name, right.name) || Plan.byText(left.externalKey ?? "", right.externalKey ?? ""))

    const document = {
      version: ORGANIZATION_DOCUMENT_VERSION,
      organization: { name: organization.name, logoUrl: organization.logoUrl, metadata: sortedRecord(organization.metadata) },
      directory: { emailsVisibleToMembers: emailsVisible },
      audit: { retentionDays: Option.match(auditSettings, { onNone: () => AUDIT_RETENTION_DEFAULT_DAYS, onSome: (settings) => settings.retentionDays }) },
      // Never set: the defaults, SSO not required and owners' fallback on (sso/Policy.ts).
      ssoPolicy: Option.match(ssoPolicy, {
        onNone: () => ({ requireSso: false, ownersPasswordFallback: true }),
        onSome: (policy) => ({ requireSso: policy.requireSso, ownersPasswordFallback: policy.ownersPasswordFallback })
      }),
      members: documentMembers,
      invitations: pending
        .map((invitation) => ({ email: invitation.email, role: invitation.role, delivery: invitation.delivery }))
        .sort((left, right) => Plan.byText(left.email, right.email)),
      teams: documentTeams,
      llmProviders: providers.map((row) => ({ ...llmProviderOf(row, secrets), grants: grantsOf.llmProvider(row.id) }))
        .sort((left, right) => Plan.byText(left.name, right.name)),
      mcpConnections: connections.map((row) => ({ ...mcpConnectionOf(row, secrets), grants: grantsOf.mcpConnection(row.id) }))
        .sort((left, right) => Plan.byText(left.name, right.name)),
      scimConnections: directories
        .map((row) => ({ name: row.name, groupMappingMode: row.groupMappingMode, defaultRole: row.defaultRole, roleRules: Plan.sortRules(row.roleRules) }))
        .sort((left, right) => Plan.byText(left.name, right.name)),
      // Made on first use: until then the built-in defaults are the default policy's.
      desktopDefaultPolicy: desktop.find((policy) => policy.isDefault)?.policy ?? defaultDocument,
      desktopPolicies: desktop.filter((policy) => !policy.isDefault).map((policy) => ({
        name: policy.policyName,
        enabled: policy.isEnabled,
        priority: policy.priority,
        policy: policy.policy,
        // Assignments of members who left or teams that are gone assign nobody.
        members: policy.memberIds.flatMap((id) => names.get(id) ?? []).sort(byName),
        teams: policy.teamIds.flatMap((id) => teamNames.get(id) ?? []).sort(byName)
      })).sort((left, right) => Plan.byText(left.name, right.name) || Plan.byText(String(left.priority), String(right.priority))),
      templates: templates.map((template) => ({
        name: template.name,
        description: template.description,
        kind: template.kind,
        schemaVersion: template.schemaVersion,
        document: template.document,
        grants: grantsOf.template(template.id)
      })).sort((left, right) => Plan.byText(left.name, right.name)),
      configObjects: objects.map((object) => ({
        relativePath: object.relativePath,
        objectType: object.objectType,
        parserMode: object.parserMode,
        schemaVersion: object.schemaVersion,
        // A version with content always has its source (one given as an object is kept as its JSON).
        rawSourceText: object.rawSourceText ?? "",
        metadata: object.metadata,
        status: object.status,
        grants: grantsOf.configObject(object.id)
      })).sort((left, right) => Plan.byText(left.relativePath, right.relativePath)),
      plugins: plugins.map((plugin) => ({
        name: plugin.name,
        description: plugin.description,
        status: plugin.status,
        configObjects: (held[plugin.id] ?? []).map((row) => objectPaths.get(row.configObjectId)!).sort(Plan.byText),
        grants: grantsOf.plugin(plugin.id)
      })).sort((left, right) => Plan.byText(left.name, right.name)),
      marketplaces: marketplaces.map((marketplace) => ({
        name: marketplace.name,
        description: marketplace.description,
        logoUrl: marketplace.logoUrl,
        // Listings of plugins that are deleted or a connector's are not the document's.
        plugins: marketplace.pluginIds.flatMap((id) => pluginNames.get(id) ?? []).sort(byName),
        grants: grantsOf.marketplace(marketplace.id)
      })).sort((left, right) => Plan.byText(left.name, right.name)),
      connectors: connectorList.map((connector) => ({
        name: connector.name,
        grants: grantsOf.connector(connector.id),
        plugins: (syncedPlugins[connector.id] ?? []).map((plugin) => ({ name: plugin.name, grants: grantsOf.plugin(plugin.id) }))
          .sort((left, right) => Plan.byText(left.name, right.name)),
        marketplaces: (syncedMarketplaces[connector.id] ?? []).map((marketplace) => ({ name: marketplace.name, grants: grantsOf.marketplace(marketplace.id) }))
          .sort((left, right) => Plan.byText(left.name, right.name))
      })).sort((left, right) => Plan.byText(left.name, right.name)),
      domains: domains.map((row) => row.verifiedAt === null ? { domain: row.domain } : { domain: row.domain, verified: true as const })
        .sort((left, right) => Plan.byText(left.domain, right.domain)),
      ssoConnections: ssoConnections.map((row) => ssoConnectionOf(row, ssoDomains, teamNames, secrets))
        .sort((left, right) => Plan.byText(left.name, right.name)),
      auditStreams: streams.map((row) => ({ url: row.url, description: row.description, status: row.status }))
        .sort((left, right) => Plan.byText(left.url, right.url)),
      apiKeys: keys.map((key) => ({
        name: key.name,
        member: names.get(key.createdByOrgMembershipId) ?? key.createdByOrgMembershipId,
        scopes: key.scopes === null ? null : [...collapseScopes(key.scopes)],
        expiresAt: key.expiresAt
      })).sort((left, right) => Plan.byText(left.name, right.name) || Plan.byText(left.member, right.member))
    } satisfies ExportedDocument
    return {
      document,
      members: new Map(memberList.map((member) => [Plan.matchKey(member.email ?? member.id), member.id])),
      invitations: new Map<string, InvitationId>(pending.map((invitation) => [Plan.matchKey(invitation.email), invitation.id])),
      teams: new Map<string, TeamId>(teamList.map((team) => [Plan.matchKey(team.name), team.id])),
      llmProviders: new Map(providers.map((row) => [Plan.matchKey(row.name), row.id])),
      mcpConnections: new Map(connections.map((row) => [Plan.matchKey(row.name), row.id])),
      scimConnections: new Map(directories.map((row) => [Plan.matchKey(row.name), row.id])),
      desktopPolicies: new Map(desktop.map((policy) => [policy.isDefault ? "default" : Plan.matchKey(policy.policyName), policy.id])),
      templates: new Map(templates.map((template) => [Plan.matchKey(template.name), template.id])),
      configObjects: new Map(objects.map((object) => [Plan.matchKey(object.relativePath), object.id])),
      plugins: new Map(plugins.map((plugin) => [Plan.matchKey(plugin.name), plugin.id])),
      marketplaces: new Map(marketplaces.map((marketplace) => [Plan.matchKey(marketplace.name), marketplace.id])),
      connectors: new Map(connectorList.map((connector) => [Plan.matchKey(connector.name), connector.id])),
      /** What connectors sync, by `Plan.syncedKey`. */
      synced: new Map<string, string>(connectorList.flatMap((connector) => [
        ...(syncedPlugins[connector.id] ?? []).map((plugin) => [Plan.syncedKey(connector.name, `plugins/${plugin.name}/grants`), plugin.id] as const),
        ...(syncedMarketplaces[connector.id] ?? []).map((marketplace) => [Plan.syncedKey(connector.name, `marketplaces/${marketplace.name}/grants`), marketplace.id] as const)
      ])),
      ssoConnections: new Map(ssoConnections.map((row) => [Plan.matchKey(row.name), row.id])),
      auditStreams: new Map(streams.map((row) => [Plan.matchKey(row.url), row.id])),
      apiKeys: new Map(keys.map((key) => [Plan.matchKey(key.name), key.id])),
      /** The fingerprint of each secret field's ciphertext now, by kind and name (`secretKey`). */
      fingerprints: new Map<string, string | null>([
        ...providers.flatMap((row) => [
          [Plan.secretKey("llmProvider", row.name, "apiKey"), fingerprintOf(row.credentialCiphertext)] as const,
          [Plan.secretKey("llmProvider", row.name, "headers"), fingerprintOf(row.headersCiphertext)] as const
        ]),
        ...connections.flatMap((row) => [
          [Plan.secretKey("mcpConnection", row.name, "apiKey"), fingerprintOf(row.apiKeyCiphertext)] as const,
          [Plan.secretKey("mcpConnection", row.name, "oauth.clientSecret"), fingerprintOf(row.oauthClientSecretCiphertext)] as const
        ]),
        ...ssoConnections.map((row) => [Plan.secretKey("ssoConnection", row.name, "oidc.clientSecret"), fingerprintOf(row.oidcClientSecretCiphertext)] as const)
      ])
    }
  })

  /** The organization's teams' ids by name (`Plan.matchKey`): what an apply names teams it has just made by. */
  const teamIds = Effect.fn("LiveDocuments.teamIds")(function*(organizationId: OrganizationId) {
    const teamList = yield* teamRows.every(organizationId)
    return new Map<string, TeamId>(teamList.map((team) => [Plan.matchKey(team.name), team.id]))
  })

  /** The plugins people made, their ids by name (`Plan.matchKey`): what an apply names plugins it has just made by. */
  const pluginIds = Effect.fn("LiveDocuments.pluginIds")(function*(organizationId: OrganizationId) {
    return new Map((yield* pluginRows.ownPlugins(organizationId)).map((plugin) => [Plan.matchKey(plugin.name), plugin.id]))
  })

  /** The config objects the document names, their ids by path (`Plan.matchKey`): what an apply names objects it has just made by. */
  const configObjectIds = Effect.fn("LiveDocuments.configObjectIds")(function*(organizationId: OrganizationId) {
    return new Map((yield* objectRows.ownObjects(organizationId)).map((object) => [Plan.matchKey(object.relativePath), object.id]))
  })

  /**
   * The organization against its last applied document: the plan that would bring the document back, each change
   * with the last change the audit log records of it since the apply, outside a plan. Null without an applied one.
   */
  const driftOf = Effect.fn("LiveDocuments.driftOf")(function*(organizationId: OrganizationId) {
    const stored = yield* documents.find(organizationId)
    if (stored === undefined) return undefined
    const document = yield* Effect.orDie(decodeStored(stored.document))
    const current = yield* live(organizationId)
    const { changes, problems } = Plan.plan(current.document, document, catalog)
    const idOf = (change: DocumentChange): string | undefined => {
      const key = Plan.matchKey(change.name)
      switch (change.kind) {
        case "organization":
        case "directory":
        case "audit":
        case "ssoPolicy":
          return organizationId
        case "member":
          return current.members.get(key)
        case "invitation":
          return current.invitations.get(key)
        case "team":
          return current.teams.get(key)
        case "llmProvider":
          return current.llmProviders.get(key)
        case "mcpConnection":
          return current.mcpConnections.get(key)
        case "scimConnection":
          return current.scimConnections.get(key)
        case "desktopPolicy":
          return current.desktopPolicies.get(key)
        case "template":
          return current.templates.get(key)
        case "configObject":
          return current.configObjects.get(key)
        case "plugin":
          return current.plugins.get(key)
        case "marketplace":
          return current.marketplaces.get(key)
        case "connector":
          return current.connectors.get(key)
        case "ssoConnection":
          return current.ssoConnections.get(key)
        case "auditStream":
          return current.auditStreams.get(key)
        case "apiKey":
          return current.apiKeys.get(key)
        case "domain":
          return change.name
      }
    }
    /** What a change is about: its resource, and for a connector what it syncs whose grants the change names. */
    const idsOf = (change: DocumentChange): Array<string> => [
      idOf(change),
      ...change.kind === "connector" ? change.fields.map((field) => current.synced.get(Plan.syncedKey(change.name, field.field))) : []
    ].filter((id) => id !== undefined)
    const ids = [...new Set(changes.flatMap(idsOf))]
    const events = yield* documents.lastChanges(organizationId, stored.appliedAt, ids)
    const causeOf = (change: DocumentChange) => {
      const targets = new Set(idsOf(change))
      const fits = (action: string) =>
        change.kind === "organization" ? action === "organization.update"
        : change.kind === "directory" ? action === "member.directory.update"
        : change.kind === "audit" ? action === "audit.settings.update"
        : change.kind === "ssoPolicy" ? action === "sso.policy.update"
        : change.kind === "auditStream" ? action === "audit.stream.create" || action === "audit.stream.update" || action === "audit.stream.delete"
        : change.kind === "apiKey" ? action === "api_key.create" || action === "api_key.revoke"
        : change.kind === "domain" ? action === "sso.domain.verification.request" || action === "sso.domain.delete"
        : change.kind === "llmProvider" ? llmChanges.has(action)
        : change.kind === "mcpConnection" ? mcpChanges.has(action)
        : change.kind === "scimConnection" ? action.startsWith("scim.connection.")
        : change.kind === "ssoConnection" ? action.startsWith("sso.connection.") && action !== "sso.connection.test"
        : change.kind === "desktopPolicy" ? action.startsWith("desktop_policy.")
        : change.kind === "configObject" ? action.startsWith("config_object.") || action === "access.grant" || action === "access.revoke"
        : change.kind === "connector" ? action === "access.grant" || action === "access.revoke"
        : change.kind === "template" || change.kind === "plugin" || change.kind === "marketplace"
        ? action.startsWith(`${change.kind}.`) || action === "access.grant" || action === "access.revoke"
        : action.startsWith(`${change.kind}.`) || (change.kind === "member" && action.startsWith("scim."))
      const latest = events
        .filter((event) => targets.has(event.targetId) && fits(event.action))
        .sort((left, right) => right.occurredAt.getTime() - left.occurredAt.getTime())[0]
      return latest === undefined ? null : {
        eventId: latest.id,
        action: latest.action,
        occurredAt: latest.occurredAt,
        actor: { type: latest.actorType, id: latest.actorId, label: latest.actorLabel },
        credentialId: latest.credentialId
      }
    }
    const report = new DocumentDrift({
      applied: { planHash: stored.planHash, appliedAt: stored.appliedAt, appliedByMembershipId: stored.appliedByMembershipId },
      changes: changes.map((change) => ({ ...change, changedBy: causeOf(change) })),
      problems: problems.map(({ message, path }) => ({ message, path: path.slice(1) }))
    })
    return { report, recordedHash: stored.driftHash, ids }
  })

  return { live, teamIds, pluginIds, configObjectIds, driftOf, catalog } as const
})

export class LiveDocuments extends Context.Service<LiveDocuments>()("@orgplane/server/orgdocument/LiveDocuments", { make }) {
  static readonly layer = Layer.effect(this, this.make).pipe(
    Layer.provide([
      OrganizationsRepository.layer,
      Memberships.layer,
      DirectoryRepository.layer,
      InvitationsRepository.layer,
      TeamsRepository.layer,
      LlmProvidersRepository.layer,
      ConnectionsRepository.layer,
      Access.layer,
      ScimConnectionsRepository.layer,
      DesktopPoliciesRepository.layer,
      TemplatesRepository.layer,
      PluginsRepository.layer,
      ConfigObjectsRepository.layer,
      ConnectorsRepository.layer,
      MarketplacesRepository.layer,
      SsoRepository.layer,
      PolicyRepository.layer,
      StreamsRepository.layer,
      ApiKeysRepository.layer,
      DocumentsRepository.layer,
      AuditRepository.layer
    ])
  )
}
