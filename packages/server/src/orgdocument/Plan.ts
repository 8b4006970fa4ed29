/**
 * A plan: what applying a document to an organization would change, computed from the organization's live state as
 * its export writes it (`ExportedDocument`) and the document asked for. Pure: the same two documents give the same
 * plan on every machine, so the plan of an export against itself is empty by construction (the property tests hold
 * it over generated documents: test/OrganizationPlan.test.ts).
 *
 * The rules (docs/config-as-code.md): a part the document leaves out changes nothing; a list named in `authoritative`
 * deletes what it leaves out, any other list deletes nothing; members and invitations are matched by email and teams
 * by name, ignoring case; `suspended` and `directoryManaged` are the directory's and are never planned.
 */
import {
  collapseScopes,
  type DocumentApiKey,
  type DocumentAuditStream,
  type DocumentChange,
  type DocumentCollection,
  type DocumentConfigObject,
  type DocumentDesktopPolicy,
  type DocumentGrant,
  type DocumentLlmProvider,
  type DocumentMarketplace,
  type DocumentMcpConnection,
  type DocumentMember,
  type DocumentPlugin,
  type DocumentScimConnection,
  type DocumentSsoConnection,
  type DocumentTemplate,
  type DocumentTeam,
  expandScopes,
  type ExportedDocument,
  type LlmCatalog,
  type LlmModel,
  type LlmModelInput,
  type OrganizationDocument,
  type SecretReference
} from "@orgplane/schema"
import * as Result from "effect/Result"
import type * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { parse } from "../catalog/Parsing.js"
import { modelsOf, unknownModelMessage } from "../llm/LlmProviders.js"
import { completeDefault } from "../policies/Effective.js"

/** A detail of the 400 a document the plan cannot take answers: where in the request, and why. */
export interface Problem {
  readonly path: ReadonlyArray<string | number>
  readonly message: string
}

type Json = Schema.Json

type Field = DocumentChange["fields"][number]

/** A hash as plans, applies and drift write it (`PlanHash`): `sha256:` and the hex of `text`'s SHA-256. */
export const hashOf = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`

/** Code point order, the same on every machine and locale: the order of the export's lists and of a plan's changes. */
export const byText = (left: string, right: string) => left < right ? -1 : left > right ? 1 : 0

/** How the plan matches names: emails and team names ignoring case. */
export const matchKey = (name: string) => name.toLowerCase()

/** Whom a grant is for, as the plan matches grants: `organization`, `team:<name>` or `member:<email>`, ignoring case. */
export const grantKey = (grant: DocumentGrant) =>
  "organization" in grant ? "organization" : "team" in grant ? `team:${matchKey(grant.team)}` : `member:${matchKey(grant.member)}`

/** Grants in the document's order: the organization's, then teams' by name, then members' by email. */
export const sortGrants = (grants: ReadonlyArray<DocumentGrant>): Array<DocumentGrant> => {
  const rank = (grant: DocumentGrant) => "organization" in grant ? 0 : "team" in grant ? 1 : 2
  return [...grants].sort((left, right) => rank(left) - rank(right) || byText(grantKey(left), grantKey(right)))
}

/** What a connector's change names (its field: `grants`, `plugins/<name>/grants`, `marketplaces/<name>/grants`), by the connector's name. */
export const syncedKey = (connector: string, field: string) => `${matchKey(connector)}\n${field}`

/** A secret field of a resource, by kind, name and field: where the apply finds its ciphertext's fingerprint. */
export const secretKey = (kind: DocumentChange["kind"], name: string, field: string) => `${kind}\n${matchKey(name)}\n${field}`

/** The fields that hold secrets, by kind: their values are references, written from values the apply is given. */
export const secretFields: Partial<Record<DocumentChange["kind"], ReadonlyArray<string>>> = {
  llmProvider: ["apiKey", "headers"],
  mcpConnection: ["apiKey", "oauth.clientSecret"],
  ssoConnection: ["oidc.clientSecret"]
}

/** A value's JSON with every object's keys in code point order: equal values, equal text (metadata in any order). */
const canonical = (value: Json): string =>
  Array.isArray(value)
    ? `[${value.map(canonical).join(",")}]`
    : typeof value === "object" && value !== null
    ? `{${Object.entries(value).sort(([left], [right]) => byText(left, right)).map(([key, inner]) => `${JSON.stringify(key)}:${canonical(inner)}`).join(",")}}`
    : JSON.stringify(value)

/** The fields that are sets of names (members, teams, a marketplace's plugins, a plugin's config objects), compared ignoring case. */
const nameSets = new Set(["members", "teams", "plugins", "domains", "configObjects"])

/**
 * A SAML IdP as the plan compares it: what its source takes (members of other sources are ignored, as the API ignores
 * them), the IdP-initiated settings with their defaults, certificates without their line breaks.
 */
const samlKey = (value: Json): Json => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value
  const saml = value as DocumentSsoConnection["saml"] & object
  const common = { allowIdpInitiated: saml.allowIdpInitiated ?? false, relayStateAllowList: [...saml.relayStateAllowList ?? []] }
  return saml.source === "metadataUrl"
    ? { source: saml.source, url: saml.url ?? null, ...common }
    : saml.source === "metadataXml"
    ? { source: saml.source, xml: saml.xml ?? null, ...common }
    : {
      source: saml.source,
      entityId: saml.entityId ?? null,
      ssoUrl: saml.ssoUrl ?? null,
      certificates: (saml.certificates ?? []).map((pem) => pem.replace(/\s+/g, "")),
      ...common
    }
}

/** Equal as the document compares values: sets of names ignoring case (`nameSets`); anything else as canonical JSON. */
const same = (field: string, left: Json, right: Json): boolean =>
  field === "saml" ? canonical(samlKey(left)) === canonical(samlKey(right)) :
  nameSets.has(field) && Array.isArray(left) && Array.isArray(right)
    ? JSON.stringify(left.map(String).map(matchKey).sort(byText)) === JSON.stringify(right.map(String).map(matchKey).sort(byText))
    : canonical(left) === canonical(right)

/** The fields of `after` whose values differ from `before`'s, in `names`' order. */
const differing = <A extends Record<string, Json>>(before: A, after: A, names: ReadonlyArray<keyof A & string>): Array<Field> =>
  names.flatMap((field) => same(field, before[field]!, after[field]!) ? [] : [{ field, before: before[field]!, after: after[field]! }])

const created = <A extends Record<string, Json>>(after: A, names: ReadonlyArray<keyof A & string>): Array<Field> =>
  names.map((field) => ({ field, after: after[field]! }))

const deleted = <A extends Record<string, Json>>(before: A, names: ReadonlyArray<keyof A & string>): Array<Field> =>
  names.map((field) => ({ field, before: before[field]! }))

/** Items of a list keyed by `key`, and the problems of a name given twice. */
const keyed = <A>(items: ReadonlyArray<A>, key: (item: A) => string, at: (index: number) => ReadonlyArray<string | number>, problems: Array<Problem>) => {
  const found = new Map<string, { readonly item: A; readonly index: number }>()
  items.forEach((item, index) => {
    const name = matchKey(key(item))
    if (found.has(name)) problems.push({ path: at(index), message: `is named twice (also at index ${found.get(name)!.index})` })
    else found.set(name, { item, index })
  })
  return found
}

const memberFields = (member: DocumentMember) => ({ role: member.role })

const teamFields = (team: DocumentTeam) => ({
  name: team.name,
  externalKey: team.externalKey,
  members: [...team.members].sort(byText)
})

/** A token count the document can hold (`LlmModelInput`'s range); the catalog's 0 for "none" is left out. */
const tokens = (count: number | null) => count !== null && count >= 1 && count <= 100_000_000 ? count : undefined
const price = (value: number | null) => value === null || (value >= 0 && value <= 1_000_000)

/**
 * An allow-list as the document writes it: every figure the document can hold, none that is null. A figure left out
 * is the catalog's again when planned, so a stored list and its document resolve to the same list.
 */
export const documentModels = (models: ReadonlyArray<LlmModel>): Array<LlmModelInput> =>
  models.map((model) => {
    const contextWindow = tokens(model.contextWindow)
    const maxOutputTokens = tokens(model.maxOutputTokens)
    const cost = model.cost
    return {
      id: model.id,
      name: model.name,
      ...(contextWindow === undefined ? {} : { contextWindow }),
      ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
      ...(cost === null || ![cost.input, cost.output, cost.cacheRead].every(price)
        ? {}
        : { cost: { input: cost.input, output: cost.output, cacheRead: cost.cacheRead } })
    }
  })

/** An LLM provider's fields as the plan compares them, its headers' names sorted. */
const llmFields = (provider: LlmProviderFacts) => ({
  name: provider.name,
  catalogProviderId: provider.catalogProviderId,
  apiStyle: provider.apiStyle,
  baseUrl: provider.baseUrl,
  models: provider.models as Json,
  headers: [...provider.headers].sort((left, right) => byText(left.name.toLowerCase(), right.name.toLowerCase())) as Json,
  apiKey: provider.apiKey as Json,
  grants: (provider.grants ?? []) as Json
})
const llmFieldNames = ["name", "catalogProviderId", "apiStyle", "baseUrl", "models", "headers", "apiKey", "grants"] as const

/** An LLM provider with every default resolved (the catalog's API style, base URL and figures). */
type LlmProviderFacts = DocumentLlmProvider & { readonly apiStyle: string; readonly baseUrl: string }

/** A secret field's change: `set` where there was none (a create, no key, no headers), `rotated` where there was. */
const secretChange = ({ after, before, field }: Field): Field => {
  const none = before === undefined || before === null || (typeof before === "object" && Object.keys(before).length === 0)
  return { field, ...(before === undefined ? {} : { before }), after: after!, secret: none ? "set" : "rotated" }
}

/** A changed field of `kind`, marked `set` or `rotated` where it writes a secret: a reference named, or headers that are not `{}`. */
const markSecret = (kind: DocumentChange["kind"]) => (field: Field): Field =>
  (secretFields[kind] ?? []).includes(field.field) && typeof field.after === "object" && field.after !== null && Object.keys(field.after).length > 0
    ? secretChange(field)
    : field

/** The references a secret field's value names: itself (one secret), or each of a map's (headers). */
export const referencesIn = (value: Json | undefined): Array<SecretReference> => {
  if (typeof value !== "object" || value === null) return []
  if (Array.isArray(value)) return value.flatMap(referencesIn)
  const { from, version } = value as { readonly from?: Json; readonly version?: Json }
  return typeof from === "string" && typeof version === "number" ? [{ from, version }] : Object.values(value).flatMap(referencesIn)
}

/** The sources of the secrets a plan writes, sorted: every reference of each secret field set or rotated. */
export const secretsOf = (changes: ReadonlyArray<DocumentChange>): Array<string> =>
  [...new Set(changes.flatMap((change) => change.fields.flatMap((field) => field.secret === undefined ? [] : referencesIn(field.after).map((ref) => ref.from))))]
    .sort(byText)

/** An MCP connection's fields as the plan compares them: its OAuth side flattened, lists as sorted sets. */
const mcpFields = (connection: DocumentMcpConnection) => ({
  name: connection.name,
  url: connection.url,
  authType: connection.authType,
  credentialMode: connection.credentialMode,
  apiKey: connection.apiKey as Json,
  "oauth.clientId": connection.oauth?.clientId ?? null,
  "oauth.clientSecret": (connection.oauth?.clientSecret ?? null) as Json,
  "oauth.authorizationServerIssuer": connection.oauth?.authorizationServerIssuer ?? null,
  "oauth.requestedScopes": connection.oauth === null ? null : [...new Set(connection.oauth.requestedScopes)].sort(byText),
  toolPolicy: { allDisabled: connection.toolPolicy.allDisabled, disabledTools: [...new Set(connection.toolPolicy.disabledTools)].sort(byText) },
  grants: (connection.grants ?? []) as Json
})
const mcpFieldNames = [
  "name",
  "url",
  "authType",
  "credentialMode",
  "apiKey",
  "oauth.clientId",
  "oauth.clientSecret",
  "oauth.authorizationServerIssuer",
  "oauth.requestedScopes",
  "toolPolicy",
  "grants"
] as const

/** A SCIM connection's role rules as the plan compares them: by group ignoring case, then role. */
export const sortRules = (rules: DocumentScimConnection["roleRules"]) =>
  [...rules].sort((left, right) => byText(matchKey(left.group), matchKey(right.group)) || byText(left.role, right.role))

const scimFields = (connection: DocumentScimConnection) => ({
  name: connection.name,
  groupMappingMode: connection.groupMappingMode,
  defaultRole: connection.defaultRole,
  roleRules: sortRules(connection.roleRules) as Json
})
const scimFieldNames = ["name", "groupMappingMode", "defaultRole", "roleRules"] as const

/** A desktop policy's fields as the plan compares them: its members and teams as sorted sets of names. */
const desktopFields = (policy: DocumentDesktopPolicy) => ({
  name: policy.name,
  enabled: policy.enabled,
  priority: policy.priority,
  policy: policy.policy as Json,
  members: [...policy.members].sort((left, right) => byText(matchKey(left), matchKey(right))),
  teams: [...policy.teams].sort((left, right) => byText(matchKey(left), matchKey(right)))
})
const desktopFieldNames = ["name", "enabled", "priority", "policy", "members", "teams"] as const

const templateFields = (template: DocumentTemplate) => ({
  name: template.name,
  description: template.description,
  kind: template.kind,
  schemaVersion: template.schemaVersion,
  document: template.document,
  grants: (template.grants ?? []) as Json
})
const templateFieldNames = ["name", "description", "kind", "schemaVersion", "document", "grants"] as const

/** A config object's fields as the plan compares them: its latest version's content, its status and grants. */
const configObjectFields = (object: DocumentConfigObject) => ({
  relativePath: object.relativePath,
  objectType: object.objectType,
  parserMode: object.parserMode,
  schemaVersion: object.schemaVersion,
  rawSourceText: object.rawSourceText,
  metadata: object.metadata as Json,
  status: object.status,
  grants: (object.grants ?? []) as Json
})
const configObjectFieldNames = ["relativePath", "objectType", "parserMode", "schemaVersion", "rawSourceText", "metadata", "status", "grants"] as const
/** The fields a new version of a config object writes. */
export const configObjectContent = new Set(["parserMode", "schemaVersion", "rawSourceText", "metadata"])

/** A plugin's fields as the plan compares them: its config objects as a sorted set of paths. */
const pluginFields = (plugin: DocumentPlugin) => ({
  name: plugin.name,
  description: plugin.description,
  status: plugin.status,
  configObjects: [...plugin.configObjects ?? []].sort((left, right) => byText(matchKey(left), matchKey(right))),
  grants: (plugin.grants ?? []) as Json
})
const pluginFieldNames = ["name", "description", "status", "configObjects", "grants"] as const

/** A marketplace's fields as the plan compares them: its plugins as a sorted set of names. */
const marketplaceFields = (marketplace: DocumentMarketplace) => ({
  name: marketplace.name,
  description: marketplace.description,
  logoUrl: marketplace.logoUrl,
  plugins: [...marketplace.plugins].sort((left, right) => byText(matchKey(left), matchKey(right))),
  grants: (marketplace.grants ?? []) as Json
})
const marketplaceFieldNames = ["name", "description", "logoUrl", "plugins", "grants"] as const

/** An SSO connection's group rules as the plan compares them: by group, then team, ignoring case. */
export const sortGroupRules = (rules: ReadonlyArray<{ readonly group: string; readonly team: string }>) =>
  [...rules].sort((left, right) => byText(matchKey(left.group), matchKey(right.group)) || byText(matchKey(left.team), matchKey(right.team)) || byText(left.group, right.group))

/** An SSO connection's fields as the plan compares them: its OIDC side flattened, lists sorted. */
const ssoFields = (connection: DocumentSsoConnection) => {
  const endpoints = connection.oidc?.endpoints ?? null
  return {
    name: connection.name,
    kind: connection.kind,
    active: connection.active,
    domains: [...connection.domains].sort((left, right) => byText(matchKey(left), matchKey(right))),
    jit: {
      enabled: connection.jit.enabled,
      defaultRole: connection.jit.defaultRole,
      defaultTeams: [...connection.jit.defaultTeams].sort((left, right) => byText(matchKey(left), matchKey(right)) || byText(left, right))
    },
    mapping: { ...connection.mapping, groupRules: sortGroupRules(connection.mapping.groupRules) } as Json,
    "oidc.issuer": connection.oidc?.issuer ?? null,
    "oidc.endpoints": endpoints === null
      ? null
      : { authorization: endpoints.authorization, token: endpoints.token, jwks: endpoints.jwks, ...(endpoints.userinfo === undefined ? {} : { userinfo: endpoints.userinfo }) },
    "oidc.clientId": connection.oidc?.clientId ?? null,
    "oidc.clientSecret": (connection.oidc?.clientSecret ?? null) as Json,
    "oidc.scopes": connection.oidc === null ? null : [...new Set(["openid", ...connection.oidc.scopes])].sort(byText),
    "oidc.tokenEndpointAuthMethod": connection.oidc?.tokenEndpointAuthMethod ?? null,
    saml: connection.saml as Json
  }
}
const ssoFieldNames = [
  "name",
  "kind",
  "active",
  "domains",
  "jit",
  "mapping",
  "oidc.issuer",
  "oidc.endpoints",
  "oidc.clientId",
  "oidc.clientSecret",
  "oidc.scopes",
  "oidc.tokenEndpointAuthMethod",
  "saml"
] as const
/** The fields an active connection keeps (the API's rule): a change of any other needs a new test. */
const ssoLiveFields = new Set(["name", "jit", "active"])

/** An API key's fields as the plan compares them: its scopes as the actions they name (collapsed again), its expiry as ISO text. */
const apiKeyFields = (key: DocumentApiKey) => ({
  name: key.name,
  member: key.member,
  scopes: key.scopes === null ? null : [...collapseScopes(expandScopes(key.scopes))],
  expiresAt: key.expiresAt === null ? null : key.expiresAt.toISOString()
})
const apiKeyFieldNames = ["name", "member", "scopes", "expiresAt"] as const

const streamFields = (stream: DocumentAuditStream) => ({ url: stream.url, description: stream.description, status: stream.status })
const streamFieldNames = ["url", "description", "status"] as const

/** What makes a document's MCP connection not one: credentials its `authType` does not take, or lacks. */
const mcpProblems = (connection: DocumentMcpConnection, at: (...path: ReadonlyArray<string | number>) => ReadonlyArray<string | number>): Array<Problem> => [
  ...(connection.authType === "apikey" && connection.apiKey === null ? [{ path: at("apiKey"), message: "is required for `authType: apikey`" }] : []),
  ...(connection.authType !== "apikey" && connection.apiKey !== null ? [{ path: at("apiKey"), message: "is only for `authType: apikey` (null for the others)" }] : []),
  ...(connection.authType === "oauth" && connection.oauth === null ? [{ path: at("oauth"), message: "is required for `authType: oauth`" }] : []),
  ...(connection.authType !== "oauth" && connection.oauth !== null ? [{ path: at("oauth"), message: "is only for `authType: oauth` (null for the others)" }] : []),
  ...(connection.credentialMode === "per_member" && connection.authType !== "oauth"
    ? [{ path: at("credentialMode"), message: "`per_member` needs `authType: oauth` (each member connects their own account)" }]
    : []),
  ...(connection.oauth !== null && connection.oauth.clientSecret !== null && connection.oauth.clientId === null
    ? [{ path: at("oauth", "clientSecret"), message: "needs a `clientId`" }]
    : [])
]

/**
 * A document's LLM provider with the catalog's defaults resolved, as the export writes one; or the problems that keep
 * it from being one (an unknown catalog provider or model, a custom one without its API style or base URL).
 */
const resolveProvider = (
  provider: DocumentLlmProvider,
  index: number,
  catalog: LlmCatalog,
  problems: Array<Problem>
): LlmProviderFacts | undefined => {
  const at = (...path: ReadonlyArray<string | number>) => ["document", "llmProviders", index, ...path]
  const fromCatalog = provider.catalogProviderId === null ? undefined : catalog.providers.find((entry) => entry.id === provider.catalogProviderId)
  if (provider.catalogProviderId !== null && fromCatalog === undefined) {
    problems.push({ path: at("catalogProviderId"), message: "is not a provider of the LLM catalog (GET /v1/llm-provider-catalog lists them)" })
    return undefined
  }
  const apiStyle = provider.apiStyle ?? fromCatalog?.apiStyle
  const baseUrl = provider.baseUrl ?? fromCatalog?.baseUrl
  if (apiStyle === undefined) problems.push({ path: at("apiStyle"), message: "is required for a custom provider (catalogProviderId null)" })
  if (baseUrl === undefined) problems.push({ path: at("baseUrl"), message: "is required for a custom provider (catalogProviderId null)" })
  const { models, unknown } = modelsOf(provider.models, fromCatalog)
  if (fromCatalog !== undefined) for (const model of unknown) problems.push({ path: at("models", model, "id"), message: unknownModelMessage(fromCatalog) })
  if (apiStyle === undefined || baseUrl === undefined || unknown.length > 0) return undefined
  return { ...provider, apiStyle, baseUrl, models: documentModels(models) }
}

/** The live resources of a list by name, ignoring case: several where the API keeps names not unique. */
const byName = <A extends { readonly name: string }>(items: ReadonlyArray<A>) => {
  const found = new Map<string, Array<A>>()
  for (const item of items) found.set(matchKey(item.name), [...found.get(matchKey(item.name)) ?? [], item])
  return found
}

/** The plan of `document` against `live`: its changes, or the problems that keep it from being planned. */
export const plan = (
  live: ExportedDocument,
  document: OrganizationDocument,
  catalog: LlmCatalog
): { readonly changes: ReadonlyArray<DocumentChange>; readonly problems: ReadonlyArray<Problem> } => {
  const problems: Array<Problem> = []
  const changes: Array<DocumentChange> = []
  const authoritative = new Set(document.authoritative ?? [])

  /** With `collection` authoritative, the delete of each live resource of `kind` the document leaves out. */
  const deleteLeftOut = <A extends { readonly name: string }, F extends Record<string, Json>>(
    collection: DocumentCollection,
    kind: DocumentChange["kind"],
    current: ReadonlyMap<string, ReadonlyArray<A>>,
    wanted: ReadonlyMap<string, unknown>,
    fields: (resource: A) => F,
    names: ReadonlyArray<keyof F & string>
  ) => {
    if (!authoritative.has(collection)) return
    for (const [name, [resource]] of current) {
      if (!wanted.has(name)) changes.push({ action: "delete", kind, name: resource!.name, fields: deleted(fields(resource!), names) })
    }
  }

  /** The one live resource a name names, or the problem of a name the organization has several times. */
  const theOne = <A>(
    found: ReadonlyArray<A> | undefined,
    what: string,
    at: ReadonlyArray<string | number>,
    remedy = "rename all but one through the API first"
  ): { readonly current: A | undefined } | undefined => {
    if (found === undefined || found.length <= 1) return { current: found?.[0] }
    problems.push({ path: at, message: `names ${found.length} ${what} of the organization: ${remedy}` })
    return undefined
  }

  if (document.organization !== undefined) {
    const fields = differing(live.organization, document.organization, ["name", "logoUrl", "metadata"])
    if (fields.length > 0) changes.push({ action: "update", kind: "organization", name: "organization", fields })
  }
  if (document.directory !== undefined) {
    const fields = differing(live.directory, document.directory, ["emailsVisibleToMembers"])
    if (fields.length > 0) changes.push({ action: "update", kind: "directory", name: "directory", fields })
  }
  if (document.audit !== undefined) {
    const fields = differing(live.audit, document.audit, ["retentionDays"])
    if (fields.length > 0) changes.push({ action: "update", kind: "audit", name: "audit", fields })
  }
  if (document.ssoPolicy !== undefined) {
    const fields = differing(live.ssoPolicy, document.ssoPolicy, ["requireSso", "ownersPasswordFallback"])
    if (fields.length > 0) changes.push({ action: "update", kind: "ssoPolicy", name: "ssoPolicy", fields })
  }

  const liveMembers = new Map(live.members.map((member) => [matchKey(member.email), member]))
  /** The members an authoritative `members` list removes. */
  const removed = new Set<string>()

  if (document.members !== undefined) {
    const wanted = keyed(document.members, (member) => member.email, (index) => ["document", "members", index, "email"], problems)
    for (const [name, { index, item }] of wanted) {
      const current = liveMembers.get(name)
      if (current === undefined) {
        problems.push({
          path: ["document", "members", index, "email"],
          message: "is not a member: people join by invitation, SSO or SCIM (name them under invitations)"
        })
        continue
      }
      const fields = differing(memberFields(current), memberFields(item), ["role"])
      if (fields.length > 0) changes.push({ action: "update", kind: "member", name: current.email, fields })
    }
    if (authoritative.has("members")) {
      for (const [name, member] of liveMembers) {
        if (wanted.has(name)) continue
        removed.add(name)
        changes.push({ action: "delete", kind: "member", name: member.email, fields: deleted(memberFields(member), ["role"]) })
      }
    }
  }

  if (document.invitations !== undefined) {
    const liveInvitations = new Map(live.invitations.map((invitation) => [matchKey(invitation.email), invitation]))
    const wanted = keyed(document.invitations, (invitation) => invitation.email, (index) => ["document", "invitations", index, "email"], problems)
    for (const [name, { index, item }] of wanted) {
      if (liveMembers.has(name)) {
        problems.push({ path: ["document", "invitations", index, "email"], message: "is already a member: name them under members" })
        continue
      }
      const current = liveInvitations.get(name)
      const fields = { role: item.role, delivery: item.delivery }
      if (current === undefined) changes.push({ action: "create", kind: "invitation", name: item.email, fields: created(fields, ["role", "delivery"]) })
      else {
        const changed = differing({ role: current.role, delivery: current.delivery }, fields, ["role", "delivery"])
        if (changed.length > 0) changes.push({ action: "update", kind: "invitation", name: current.email, fields: changed })
      }
    }
    if (authoritative.has("invitations")) {
      for (const [name, invitation] of liveInvitations) {
        if (!wanted.has(name)) {
          changes.push({
            action: "delete",
            kind: "invitation",
            name: invitation.email,
            fields: deleted({ role: invitation.role, delivery: invitation.delivery }, ["role", "delivery"])
          })
        }
      }
    }
  }

  if (document.teams !== undefined) {
    const liveTeams = new Map(live.teams.map((team) => [matchKey(team.name), team]))
    const wanted = keyed(document.teams, (team) => team.name, (index) => ["document", "teams", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      item.members.forEach((member, position) => {
        if (!liveMembers.has(matchKey(member))) problems.push({ path: ["document", "teams", index, "members", position], message: "is not a member of the organization" })
        else if (removed.has(matchKey(member))) {
          problems.push({ path: ["document", "teams", index, "members", position], message: "is removed by this document (members is authoritative and leaves them out)" })
        }
      })
      const current = liveTeams.get(name)
      if (current === undefined) {
        changes.push({ action: "create", kind: "team", name: item.name, fields: created(teamFields(item), ["name", "externalKey", "members"]) })
        continue
      }
      const fields = differing(teamFields(current), teamFields(item), ["name", "externalKey", "members"])
      if (fields.length === 0) continue
      if (current.directoryManaged === true && fields.some((field) => field.field !== "externalKey")) {
        problems.push({ path: ["document", "teams", index], message: "is managed by a SCIM directory: its name and members are the directory's" })
        continue
      }
      changes.push({ action: "update", kind: "team", name: current.name, fields })
    }
    if (authoritative.has("teams")) {
      for (const [name, team] of liveTeams) {
        if (wanted.has(name)) continue
        if (team.directoryManaged === true) {
          problems.push({ path: ["document", "teams"], message: `leaves out the team "${team.name}", which a SCIM directory manages and only it deletes` })
          continue
        }
        changes.push({ action: "delete", kind: "team", name: team.name, fields: deleted(teamFields(team), ["name", "externalKey", "members"]) })
      }
    }
  }

  /**
   * A resource's grants once applied, or the problems of the grants the document gives it: whom each names must be
   * a member (not one the document removes) or a team (live or the document's, not one it deletes), each once. The
   * names are written as the organization has them; without `grants` in `authoritative`, live grants the list
   * leaves out stay.
   */
  const liveTeamNames = new Map(live.teams.map((team) => [matchKey(team.name), team.name]))
  const documentTeamNames = new Map((document.teams ?? []).map((team) => [matchKey(team.name), team.name]))
  const deletedTeams = new Set(
    authoritative.has("teams") && document.teams !== undefined ? [...liveTeamNames.keys()].filter((name) => !documentTeamNames.has(name)) : []
  )
  /** Why a member a resource names cannot be one, if so: not a member, or one this document removes. */
  const memberProblem = (name: string) =>
    !liveMembers.has(matchKey(name))
      ? "is not a member of the organization"
      : removed.has(matchKey(name))
      ? "is a member this document removes (members is authoritative and leaves them out)"
      : undefined
  /** Why a team a resource names cannot be one, if so: neither the organization's nor this document's, or deleted by it. */
  const teamProblem = (name: string) =>
    !liveTeamNames.has(matchKey(name)) && !documentTeamNames.has(matchKey(name))
      ? "is not a team of the organization or of this document"
      : deletedTeams.has(matchKey(name))
      ? "is a team this document deletes (teams is authoritative and leaves it out)"
      : undefined
  /** A member's and a team's name as the organization writes it (the document's, for a team it creates). */
  const memberName = (name: string) => liveMembers.get(matchKey(name))!.email
  const teamName = (name: string) => liveTeamNames.get(matchKey(name)) ?? documentTeamNames.get(matchKey(name))!

  const grantsOnce = (
    current: ReadonlyArray<DocumentGrant>,
    wanted: ReadonlyArray<DocumentGrant> | undefined,
    at: (...path: ReadonlyArray<string | number>) => ReadonlyArray<string | number>
  ): Array<DocumentGrant> | undefined => {
    if (wanted === undefined) return [...current]
    const seen = new Set<string>()
    const named: Array<DocumentGrant> = []
    let refused = false
    wanted.forEach((grant, index) => {
      const key = grantKey(grant)
      const problem = seen.has(key)
        ? "names the same member, team or organization twice"
        : "team" in grant && !liveTeamNames.has(matchKey(grant.team)) && !documentTeamNames.has(matchKey(grant.team))
        ? "is not a team of the organization or of this document"
        : "team" in grant && deletedTeams.has(matchKey(grant.team))
        ? "is a team this document deletes (teams is authoritative and leaves it out)"
        : "member" in grant && !liveMembers.has(matchKey(grant.member))
        ? "is not a member of the organization"
        : "member" in grant && removed.has(matchKey(grant.member))
        ? "is a member this document removes (members is authoritative and leaves them out)"
        : undefined
      seen.add(key)
      if (problem !== undefined) {
        refused = true
        problems.push({ path: at("grants", index), message: problem })
        return
      }
      named.push(
        "team" in grant
          ? { team: liveTeamNames.get(matchKey(grant.team)) ?? documentTeamNames.get(matchKey(grant.team))!, role: grant.role }
          : "member" in grant
          ? { member: liveMembers.get(matchKey(grant.member))!.email, role: grant.role }
          : grant
      )
    })
    if (refused) return undefined
    const kept = authoritative.has("grants") ? [] : current.filter((grant) => !seen.has(grantKey(grant)))
    return sortGrants([...kept, ...named])
  }

  /**
   * The plan of a list whose items are their fields and grants and nothing else to check (templates): each
   * named once, matched by name (`theOne`), made or changed field by field; deletes by `deleteLeftOut`.
   */
  const planGranted = <A extends { readonly name: string; readonly grants?: ReadonlyArray<DocumentGrant> | undefined }, F extends Record<string, Json>>(
    collection: DocumentCollection & keyof OrganizationDocument,
    kind: DocumentChange["kind"],
    items: ReadonlyArray<A>,
    current: ReadonlyArray<A>,
    fields: (item: A) => F,
    names: ReadonlyArray<keyof F & string>
  ) => {
    const live = byName(current)
    const wanted = keyed(items, (item) => item.name, (index) => ["document", collection, index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", collection, index, ...path]
      const one = theOne(live.get(name), collection, at("name"))
      if (one === undefined) continue
      const grants = grantsOnce(one.current?.grants ?? [], item.grants, at)
      if (grants === undefined) continue
      const after: F = { ...fields(item), grants: grants as Json }
      if (one.current === undefined) {
        changes.push({ action: "create", kind, name: item.name, fields: created(after, names) })
        continue
      }
      const changed = differing(fields(one.current), after, names)
      if (changed.length > 0) changes.push({ action: "update", kind, name: one.current.name, fields: changed })
    }
    deleteLeftOut(collection, kind, live, wanted, fields, names)
  }

  if (document.llmProviders !== undefined) {
    const liveProviders = byName(live.llmProviders as ReadonlyArray<LlmProviderFacts>)
    const wanted = keyed(document.llmProviders, (provider) => provider.name, (index) => ["document", "llmProviders", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const one = theOne(liveProviders.get(name), "LLM providers", ["document", "llmProviders", index, "name"])
      if (one === undefined) continue
      const resolved = resolveProvider(item, index, catalog, problems)
      const current = one.current
      const grants = grantsOnce(current?.grants ?? [], item.grants, (...path) => ["document", "llmProviders", index, ...path])
      if (resolved === undefined || grants === undefined) continue
      const after = { ...llmFields(resolved), grants: grants as Json }
      if (current === undefined) {
        changes.push({
          action: "create",
          kind: "llmProvider",
          name: item.name,
          fields: created(after, llmFieldNames).map(markSecret("llmProvider"))
        })
        continue
      }
      const before = llmFields(current)
      const fields = differing(before, after, llmFieldNames)
      const fixed = fields.filter((field) => field.field === "catalogProviderId" || field.field === "apiStyle")
      for (const field of fixed) {
        problems.push({ path: ["document", "llmProviders", index, field.field], message: `cannot change once the provider is created (it is ${JSON.stringify(field.before)}): delete it and create another` })
      }
      const removesKey = fields.some((field) => field.field === "apiKey" && field.after === null)
      if (removesKey) {
        problems.push({ path: ["document", "llmProviders", index, "apiKey"], message: "cannot remove the provider's API key (the API has no such operation): name its source, or delete the provider" })
      }
      if (fixed.length > 0 || removesKey || fields.length === 0) continue
      changes.push({ action: "update", kind: "llmProvider", name: current.name, fields: fields.map(markSecret("llmProvider")) })
    }
    deleteLeftOut("llmProviders", "llmProvider", liveProviders, wanted, llmFields, llmFieldNames)
  }

  if (document.mcpConnections !== undefined) {
    const liveConnections = byName(live.mcpConnections)
    const wanted = keyed(document.mcpConnections, (connection) => connection.name, (index) => ["document", "mcpConnections", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "mcpConnections", index, ...path]
      const one = theOne(liveConnections.get(name), "MCP connections", at("name"))
      if (one === undefined) continue
      const invalid = mcpProblems(item, at)
      problems.push(...invalid)
      const current = one.current
      const grants = grantsOnce(current?.grants ?? [], item.grants, at)
      if (invalid.length > 0 || grants === undefined) continue
      if (current === undefined) {
        changes.push({
          action: "create",
          kind: "mcpConnection",
          name: item.name,
          fields: created({ ...mcpFields(item), grants: grants as Json }, mcpFieldNames).map(markSecret("mcpConnection"))
        })
        continue
      }
      const before = mcpFields(current)
      const after = { ...mcpFields(item), grants: grants as Json }
      // An issuer left null is the one the MCP server names: whichever is in use.
      if (after["oauth.authorizationServerIssuer"] === null) after["oauth.authorizationServerIssuer"] = before["oauth.authorizationServerIssuer"]
      const fields = differing(before, after, mcpFieldNames)
      const refused = fields.flatMap((field): Array<Problem> =>
        field.field === "authType" || field.field === "credentialMode"
          ? [{ path: at(field.field), message: `cannot change once the connection is created (it is ${JSON.stringify(field.before)}): delete it and create another` }]
          : (field.field === "oauth.clientId" || field.field === "oauth.clientSecret") && field.after === null
          ? [{ path: at(...field.field.split(".")), message: "cannot be removed (the API has no such operation): name it, or delete the connection" }]
          : []
      )
      problems.push(...refused)
      if (refused.length > 0 || fields.length === 0) continue
      changes.push({
        action: "update",
        kind: "mcpConnection",
        name: current.name,
        fields: fields.map(markSecret("mcpConnection"))
      })
    }
    deleteLeftOut("mcpConnections", "mcpConnection", liveConnections, wanted, mcpFields, mcpFieldNames)
  }

  if (document.desktopDefaultPolicy !== undefined) {
    // Stored complete: every switch the document leaves out is the built-in default's.
    const fields = differing({ policy: live.desktopDefaultPolicy as Json }, { policy: completeDefault(document.desktopDefaultPolicy) as Json }, ["policy"])
    if (fields.length > 0) changes.push({ action: "update", kind: "desktopPolicy", name: "default", fields })
  }

  if (document.desktopPolicies !== undefined) {
    const livePolicies = byName(live.desktopPolicies)
    const wanted = keyed(document.desktopPolicies, (policy) => policy.name, (index) => ["document", "desktopPolicies", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "desktopPolicies", index, ...path]
      if (name === "default") {
        problems.push({ path: at("name"), message: "is what a plan calls the default policy (desktopDefaultPolicy): name this one otherwise" })
        continue
      }
      const one = theOne(livePolicies.get(name), "desktop policies", at("name"))
      if (one === undefined) continue
      const named = [
        ...item.members.flatMap((member, position) => {
          const problem = memberProblem(member)
          return problem === undefined ? [] : [{ path: at("members", position), message: problem }]
        }),
        ...item.teams.flatMap((team, position) => {
          const problem = teamProblem(team)
          return problem === undefined ? [] : [{ path: at("teams", position), message: problem }]
        })
      ]
      problems.push(...named)
      if (named.length > 0) continue
      const after = desktopFields({ ...item, members: item.members.map(memberName), teams: item.teams.map(teamName) })
      const current = one.current
      if (current === undefined) {
        changes.push({ action: "create", kind: "desktopPolicy", name: item.name, fields: created(after, desktopFieldNames) })
        continue
      }
      const fields = differing(desktopFields(current), after, desktopFieldNames)
      if (fields.length > 0) changes.push({ action: "update", kind: "desktopPolicy", name: current.name, fields })
    }
    deleteLeftOut("desktopPolicies", "desktopPolicy", livePolicies, wanted, desktopFields, desktopFieldNames)
  }

  if (document.templates !== undefined) {
    planGranted("templates", "template", document.templates, live.templates, templateFields, templateFieldNames)
  }

  /**
   * What a list of names may name (a marketplace's plugins, a plugin's config objects): each once, a resource of the
   * organization or of this document (`live`, `named`, by `matchKey`), never one it deletes (its `collection`
   * authoritative and leaving it out). Answers the names as the organization or the document writes them, or
   * undefined with each problem added.
   */
  const listing = (
    collection: DocumentCollection & keyof OrganizationDocument,
    what: string,
    live: ReadonlyArray<string>,
    named: ReadonlyArray<string> | undefined
  ) => {
    const liveNames = new Map(live.map((name) => [matchKey(name), name]))
    const documentNames = new Map((named ?? []).map((name) => [matchKey(name), name]))
    const deletes = authoritative.has(collection) && named !== undefined
    return (names: ReadonlyArray<string>, at: (position: number) => ReadonlyArray<string | number>): Array<string> | undefined => {
      const seen = new Set<string>()
      const refused = names.flatMap((name, position) => {
        const key = matchKey(name)
        const problem = seen.has(key)
          ? "is listed twice"
          : !liveNames.has(key) && !documentNames.has(key)
          ? `is not a ${what} people made of the organization or of this document`
          : deletes && !documentNames.has(key)
          ? `is a ${what} this document deletes (${collection} is authoritative and leaves it out)`
          : undefined
        seen.add(key)
        return problem === undefined ? [] : [{ path: at(position), message: problem }]
      })
      problems.push(...refused)
      return refused.length > 0 ? undefined : names.map((name) => documentNames.get(matchKey(name)) ?? liveNames.get(matchKey(name))!)
    }
  }

  if (document.configObjects !== undefined) {
    // Named by path: the list's `name` is its path.
    const named = <A extends DocumentConfigObject>(object: A) => ({ ...object, name: object.relativePath })
    const liveObjects = byName(live.configObjects.map(named))
    const wanted = keyed(document.configObjects, (object) => object.relativePath, (index) => ["document", "configObjects", index, "relativePath"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "configObjects", index, ...path]
      const one = theOne(liveObjects.get(name), "config objects", at("relativePath"), "delete all but one through the API first")
      if (one === undefined) continue
      // The API's own reading of the source: a skill's front matter, JSON or YAML that parses, a parser its type takes.
      const unreadable = Result.match(parse(item.objectType, { rawSourceText: item.rawSourceText, parserMode: item.parserMode }), {
        onFailure: (error) => error.details.map((detail): Problem => ({ path: at(...detail.path.slice(1)), message: detail.message })),
        onSuccess: () => []
      })
      problems.push(...unreadable)
      const current = one.current
      const grants = grantsOnce(current?.grants ?? [], item.grants, at)
      if (unreadable.length > 0 || grants === undefined) continue
      const after = { ...configObjectFields(item), grants: grants as Json }
      if (current === undefined) {
        changes.push({ action: "create", kind: "configObject", name: item.relativePath, fields: created(after, configObjectFieldNames) })
        continue
      }
      const fields = differing(configObjectFields(current), after, configObjectFieldNames)
      const fixed = fields.filter((field) => field.field === "objectType" || field.field === "relativePath")
      for (const field of fixed) {
        problems.push({ path: at(field.field), message: `cannot change once the config object is created (it is ${JSON.stringify(field.before)}): delete it and create another` })
      }
      if (fixed.length > 0 || fields.length === 0) continue
      changes.push({ action: "update", kind: "configObject", name: current.relativePath, fields })
    }
    deleteLeftOut("configObjects", "configObject", liveObjects, wanted, configObjectFields, configObjectFieldNames)
  }

  if (document.plugins !== undefined) {
    const objectsHeld = listing("configObjects", "config object", live.configObjects.map((object) => object.relativePath), document.configObjects?.map((object) => object.relativePath))
    const livePlugins = byName(live.plugins)
    const wanted = keyed(document.plugins, (plugin) => plugin.name, (index) => ["document", "plugins", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "plugins", index, ...path]
      const one = theOne(livePlugins.get(name), "plugins", at("name"))
      if (one === undefined) continue
      const current = one.current
      // Absent, the plugin keeps what it holds.
      const configObjects = item.configObjects === undefined ? [...current?.configObjects ?? []] : objectsHeld(item.configObjects, (position) => at("configObjects", position))
      const grants = grantsOnce(current?.grants ?? [], item.grants, at)
      if (configObjects === undefined || grants === undefined) continue
      const after = { ...pluginFields({ ...item, configObjects }), grants: grants as Json }
      if (current === undefined) {
        changes.push({ action: "create", kind: "plugin", name: item.name, fields: created(after, pluginFieldNames) })
        continue
      }
      const fields = differing(pluginFields(current), after, pluginFieldNames)
      if (fields.length > 0) changes.push({ action: "update", kind: "plugin", name: current.name, fields })
    }
    deleteLeftOut("plugins", "plugin", livePlugins, wanted, pluginFields, pluginFieldNames)
  }

  if (document.marketplaces !== undefined) {
    const liveMarketplaces = byName(live.marketplaces)
    const pluginsListed = listing("plugins", "plugin", live.plugins.map((plugin) => plugin.name), document.plugins?.map((plugin) => plugin.name))
    const wanted = keyed(document.marketplaces, (marketplace) => marketplace.name, (index) => ["document", "marketplaces", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "marketplaces", index, ...path]
      const one = theOne(liveMarketplaces.get(name), "marketplaces", at("name"))
      if (one === undefined) continue
      const plugins = pluginsListed(item.plugins, (position) => at("plugins", position))
      const current = one.current
      const grants = grantsOnce(current?.grants ?? [], item.grants, at)
      if (plugins === undefined || grants === undefined) continue
      const after = { ...marketplaceFields({ ...item, plugins }), grants: grants as Json }
      if (current === undefined) {
        changes.push({ action: "create", kind: "marketplace", name: item.name, fields: created(after, marketplaceFieldNames) })
        continue
      }
      const fields = differing(marketplaceFields(current), after, marketplaceFieldNames)
      if (fields.length > 0) changes.push({ action: "update", kind: "marketplace", name: current.name, fields })
    }
    deleteLeftOut("marketplaces", "marketplace", liveMarketplaces, wanted, marketplaceFields, marketplaceFieldNames)
  }

  if (document.connectors !== undefined) {
    const liveConnectors = byName(live.connectors)
    const wanted = keyed(document.connectors, (connector) => connector.name, (index) => ["document", "connectors", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "connectors", index, ...path]
      const current = liveConnectors.get(name)?.[0]
      if (current === undefined) {
        problems.push({ path: at("name"), message: "is not a connector of the organization: connectors are made through the API (POST /v1/connector-instances), never by a document" })
        continue
      }
      const fields: Array<Field> = []
      /** A field for grants the document changes (`grantsOnce`'s problems added where it names someone it cannot). */
      const granted = (field: string, before: ReadonlyArray<DocumentGrant>, given: ReadonlyArray<DocumentGrant> | undefined, path: typeof at) => {
        const after = grantsOnce(before, given, path)
        if (after !== undefined && !same("grants", before as Json, after as Json)) fields.push({ field, before: before as Json, after: after as Json })
      }
      granted("grants", current.grants ?? [], item.grants, at)
      for (const [list, what] of [["plugins", "plugin"], ["marketplaces", "marketplace"]] as const) {
        const synced = byName(current[list])
        const named = keyed(item[list] ?? [], (entry) => entry.name, (position) => at(list, position, "name"), problems)
        for (const [key, { index: position, item: entry }] of named) {
          const one = synced.get(key)?.[0]
          if (one === undefined) {
            problems.push({ path: at(list, position, "name"), message: `is not a ${what} this connector syncs (its repository decides what it syncs)` })
            continue
          }
          granted(`${list}/${one.name}/grants`, one.grants ?? [], entry.grants, (...path) => at(list, position, ...path))
        }
      }
      if (fields.length > 0) changes.push({ action: "update", kind: "connector", name: current.name, fields })
    }
  }

  if (document.domains !== undefined) {
    const liveDomains = new Map(live.domains.map((domain) => [matchKey(domain.domain), domain]))
    const wanted = keyed(document.domains, (domain) => domain.domain, (index) => ["document", "domains", index, "domain"], problems)
    for (const [name, { item }] of wanted) {
      if (!liveDomains.has(name)) changes.push({ action: "create", kind: "domain", name: item.domain, fields: [{ field: "domain", after: item.domain }] })
    }
    if (authoritative.has("domains")) {
      // A connection's domains are the organization's: they are listed, or the next plan would delete them again.
      const served = new Map<string, string>()
      for (const connection of [...live.ssoConnections, ...document.ssoConnections ?? []]) {
        for (const domain of connection.domains) served.set(matchKey(domain), connection.name)
      }
      ;(document.ssoConnections ?? []).forEach((connection, index) =>
        connection.domains.forEach((domain, position) => {
          if (!wanted.has(matchKey(domain))) {
            problems.push({ path: ["document", "ssoConnections", index, "domains", position], message: "is not under domains, which is authoritative: list it there too" })
          }
        })
      )
      for (const [name, domain] of liveDomains) {
        if (wanted.has(name)) continue
        const connection = served.get(name)
        if (connection !== undefined) {
          problems.push({ path: ["document", "domains"], message: `leaves out ${domain.domain}, which the SSO connection "${connection}" serves: list it, or take it off the connection` })
          continue
        }
        changes.push({ action: "delete", kind: "domain", name: domain.domain, fields: [{ field: "domain", before: domain.domain }] })
      }
    }
  }

  if (document.ssoConnections !== undefined) {
    const liveConnections = byName(live.ssoConnections)
    const wanted = keyed(document.ssoConnections, (connection) => connection.name, (index) => ["document", "ssoConnections", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "ssoConnections", index, ...path]
      const one = theOne(liveConnections.get(name), "SSO connections", at("name"))
      if (one === undefined) continue
      const teamsNamed = [
        ...item.jit.defaultTeams.map((team, position) => ({ team, path: at("jit", "defaultTeams", position) })),
        ...item.mapping.groupRules.map((rule, position) => ({ team: rule.team, path: at("mapping", "groupRules", position, "team") }))
      ]
      const invalid: Array<Problem> = [
        ...teamsNamed.flatMap(({ path, team }) => {
          const problem = teamProblem(team)
          return problem === undefined ? [] : [{ path, message: problem }]
        }),
        ...(item.kind === "oidc" && item.oidc === null ? [{ path: at("oidc"), message: "is required for `kind: oidc`" }] : []),
        ...(item.kind !== "oidc" && item.oidc !== null ? [{ path: at("oidc"), message: "is only for `kind: oidc` (null for SAML)" }] : []),
        ...(item.kind === "saml" && item.saml === null ? [{ path: at("saml"), message: "is required for `kind: saml`" }] : []),
        ...(item.kind !== "saml" && item.saml !== null ? [{ path: at("saml"), message: "is only for `kind: saml` (null for OIDC)" }] : [])
      ]
      problems.push(...invalid)
      if (invalid.length > 0) continue
      const after = ssoFields({
        ...item,
        jit: { ...item.jit, defaultTeams: item.jit.defaultTeams.map(teamName) },
        mapping: { ...item.mapping, groupRules: item.mapping.groupRules.map((rule) => ({ group: rule.group, team: teamName(rule.team) })) }
      })
      const current = one.current
      if (current === undefined) {
        const refused = [
          ...(item.active ? [{ path: at("active"), message: "must be false on a new connection: apply it, test it (POST /v1/sso/connections/{connectionId}/tests), then activate it" }] : []),
          ...(item.oidc !== null && item.oidc.clientSecret === null ? [{ path: at("oidc", "clientSecret"), message: "is required to create an OIDC connection" }] : [])
        ]
        problems.push(...refused)
        if (refused.length > 0) continue
        changes.push({
          action: "create",
          kind: "ssoConnection",
          name: item.name,
          fields: created(after, ssoFieldNames).map(markSecret("ssoConnection"))
        })
        continue
      }
      const fields = differing(ssoFields(current), after, ssoFieldNames)
      const settings = fields.filter((field) => !ssoLiveFields.has(field.field))
      const refused = fields.flatMap((field): Array<Problem> =>
        field.field === "kind"
          ? [{ path: at("kind"), message: `cannot change once the connection is created (it is ${JSON.stringify(field.before)}): delete it and create another` }]
          : field.field === "oidc.clientSecret" && field.after === null
          ? [{ path: at("oidc", "clientSecret"), message: "cannot be removed (the API has no such operation): name it, or delete the connection" }]
          : []
      )
      if (settings.length > 0 && item.active) {
        refused.push({
          path: at("active"),
          message: current.active
            ? `an active connection's settings cannot change (${settings.map((field) => field.field).join(", ")}): set active to false in this document, or make a second connection, test it, and switch to it`
            : `the connection cannot be activated with changed settings (${settings.map((field) => field.field).join(", ")}): apply them inactive, test it, then activate it`
        })
      }
      problems.push(...refused)
      if (refused.length > 0 || fields.length === 0) continue
      changes.push({
        action: "update",
        kind: "ssoConnection",
        name: current.name,
        fields: fields.map(markSecret("ssoConnection"))
      })
    }
    deleteLeftOut("ssoConnections", "ssoConnection", liveConnections, wanted, ssoFields, ssoFieldNames)
  }

  if (document.apiKeys !== undefined) {
    const liveKeys = byName(live.apiKeys)
    const wanted = keyed(document.apiKeys, (key) => key.name, (index) => ["document", "apiKeys", index, "name"], problems)
    for (const [name, { index, item }] of wanted) {
      const at = (...path: ReadonlyArray<string | number>) => ["document", "apiKeys", index, ...path]
      const one = theOne(liveKeys.get(name), "API keys", at("name"))
      if (one === undefined) continue
      const maker = memberProblem(item.member)
      if (maker !== undefined) {
        problems.push({ path: at("member"), message: maker })
        continue
      }
      const after = apiKeyFields({ ...item, member: memberName(item.member) })
      const current = one.current
      const fields = current === undefined ? created(after, apiKeyFieldNames) : differing(apiKeyFields(current), after, apiKeyFieldNames)
      if (fields.length === 0) continue
      // A change makes the key again: it needs what a new key needs.
      const refused = [
        ...(item.scopes === null ? [{ path: at("scopes"), message: "must name the key's scopes to make it (null is only a key from before keys had scopes)" }] : []),
        ...(item.expiresAt === null ? [{ path: at("expiresAt"), message: "must say when the key expires to make it (every key expires)" }] : [])
      ]
      problems.push(...refused)
      if (refused.length > 0) continue
      changes.push(current === undefined
        ? { action: "create", kind: "apiKey", name: item.name, fields }
        : { action: "update", kind: "apiKey", name: current.name, fields })
    }
    deleteLeftOut("apiKeys", "apiKey", liveKeys, wanted, apiKeyFields, apiKeyFieldNames)
  }

  if (document.auditStreams !== undefined) {
    // Named by URL: the list's `name` is its URL.
    const named = <A extends DocumentAuditStream>(stream: A) => ({ ...stream, name: stream.url })
    const liveStreams = byName(live.auditStreams.map(named))
    const wanted = keyed(document.auditStreams, (stream) => stream.url, (index) => ["document", "auditStreams", index, "url"], problems)
    for (const [name, { index, item }] of wanted) {
      const one = theOne(liveStreams.get(name), "audit streams", ["document", "auditStreams", index, "url"])
      if (one === undefined) continue
      const current = one.current
      if (current === undefined) {
        changes.push({ action: "create", kind: "auditStream", name: item.url, fields: created(streamFields(item), streamFieldNames) })
        continue
      }
      const fields = differing(streamFields(current), streamFields(item), streamFieldNames)
      if (fields.length > 0) changes.push({ action: "update", kind: "auditStream", name: current.url, fields })
    }
    deleteLeftOut("auditStreams", "auditStream", liveStreams, wanted, streamFields, streamFieldNames)
  }

  if (document.scimConnections !== undefined) {
    const liveConnections = byName(live.scimConnections)
    const wanted = keyed(document.scimConnections, (connection) => connection.name, (index) => ["document", "scimConnections", index, "name"], problems)
    // Rules compare by group ignoring case, as the directory's groups are matched.
    const rulesKey = (rules: Json) => JSON.stringify((rules as DocumentScimConnection["roleRules"]).map((rule) => [matchKey(rule.group), rule.role]))
    for (const [name, { index, item }] of wanted) {
      const one = theOne(liveConnections.get(name), "SCIM connections", ["document", "scimConnections", index, "name"])
      if (one === undefined) continue
      const current = one.current
      if (current === undefined) {
        changes.push({ action: "create", kind: "scimConnection", name: item.name, fields: created(scimFields(item), scimFieldNames) })
        continue
      }
      const fields = differing(scimFields(current), scimFields(item), scimFieldNames)
        .filter((field) => field.field !== "roleRules" || rulesKey(field.before!) !== rulesKey(field.after!))
      if (fields.length > 0) changes.push({ action: "update", kind: "scimConnection", name: current.name, fields })
    }
    deleteLeftOut("scimConnections", "scimConnection", liveConnections, wanted, scimFields, scimFieldNames)
  }

  return { changes: sortChanges(changes), problems }
}

const kindOrder = ["organization", "directory", "audit", "ssoPolicy", "member", "invitation", "team", "llmProvider", "mcpConnection", "scimConnection", "desktopPolicy", "template", "configObject", "plugin", "marketplace", "connector", "ssoConnection", "auditStream", "apiKey", "domain"] as const

/** The document's order: by kind, then by name. */
const sortChanges = (changes: Array<DocumentChange>) =>
  changes.sort((left, right) =>
    kindOrder.indexOf(left.kind) - kindOrder.indexOf(right.kind) || byText(matchKey(left.name), matchKey(right.name))
  )

/** A value in a Markdown table cell: its JSON, `|` escaped, shortened past 80 characters. */
const cell = (value: Json | undefined) => {
  if (value === undefined) return ""
  const text = JSON.stringify(value)
  return (text.length > 80 ? `${text.slice(0, 79)}…` : text).replaceAll("|", "\\|")
}

/**
 * The plan as Markdown, for a pull request's comment: a count line, the live state's hash, one row per field (a
 * secret's by its references, marked `set` or `rotated`).
 */
export const markdown = (liveHash: string, changes: ReadonlyArray<DocumentChange>) => {
  const count = (action: DocumentChange["action"]) => changes.filter((change) => change.action === action).length
  const head = `### orgplane plan: ${count("create")} to create, ${count("update")} to update, ${count("delete")} to delete\n\nLive state \`${liveHash}\`.\n`
  if (changes.length === 0) return `${head}\nNo changes: the organization is the document.\n`
  const rows = changes.flatMap((change) =>
    change.fields.map((field) =>
      `| ${change.action} | ${change.kind} | ${change.name.replaceAll("|", "\\|")} | ${field.field} | ${cell(field.before)} | ${cell(field.after)}${field.secret === undefined ? "" : ` (secret ${field.secret})`} |`
    )
  )
  return `${head}\n| action | kind | name | field | before | after |\n| --- | --- | --- | --- | --- | --- |\n${rows.join("\n")}\n`
}
