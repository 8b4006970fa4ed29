/**
 * TypeIDs: `<prefix>_<26-character base32 suffix>`, each prefix its own branded schema.
 *
 * The suffix is a UUIDv7 in Crockford base32 (lowercase alphabet `0-9a-hjkmnp-tv-z`); its first character is at
 * most `7` because 26 base32 characters hold 130 bits and a UUID only 128. Generation lives in the server
 * (`typeid-js`); this module only validates, so the client stays dependency-free.
 */
import * as Schema from "effect/Schema"

const SUFFIX = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/

/** What each prefix identifies ("Team id"), filled as the schemas below are made: named in wrong-prefix messages. */
const identified = new Map<string, string>()

/** "Team id" → "team id"; "API key id" stays. */
const lower = (text: string) => /^[A-Z][a-z]/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text

/**
 * Checks one TypeID against its prefix, with the message a caller needs to fix it. The prefix is checked first, so
 * an id of another kind (a member id where a team id belongs) is named as such rather than reported by its length.
 */
export const checkTypeId = (prefix: string, value: string): string | undefined => {
  if (!value.startsWith(`${prefix}_`)) {
    const other = /^([a-z]{1,8})_/.exec(value)?.[1]
    const kind = other === undefined ? undefined : identified.get(other)
    const expected = identified.get(prefix)
    return `TypeID must start with '${prefix}_'${expected ? ` (${lower(expected)})` : ""}${
      kind ? `; '${other}_…' is ${/^[aeio]/i.test(kind) ? "an" : "a"} ${lower(kind)}` : ""
    }`
  }
  const length = prefix.length + 27
  if (value.length !== length) return `TypeID must be ${length} characters (${prefix}_<26 char suffix>)`
  if (!SUFFIX.test(value.slice(prefix.length + 1))) return "TypeID suffix is not valid base32"
  return undefined
}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
/** 2026-11-02T09:30:00Z, the instant of the examples: their ids start with it, as the server's start with theirs. */
const EXAMPLE_MILLIS = 1793611800000n

/**
 * The suffix of example id number `n` of a prefix: a UUIDv7 (the examples' instant, version 7, the RFC 9562 variant)
 * whose other bits come from the prefix and `n`, so every example id is valid, distinct and the same on every run.
 */
const exampleSuffix = (prefix: string, n: number): string => {
  let state = 2166136261
  for (const char of `${prefix}:${n}`) state = Math.imul(state ^ char.charCodeAt(0), 16777619) >>> 0
  let bits = 0n
  for (let round = 0; round < 3; round++) {
    state = Math.imul(state ^ (state >>> 15), 2246822507) >>> 0
    state = Math.imul(state ^ (state >>> 13), 3266489909) >>> 0
    bits = (bits << 32n) | BigInt(state)
  }
  const random = bits & ((1n << 74n) - 1n)
  let value = (EXAMPLE_MILLIS << 80n) | (7n << 76n) | ((random >> 62n) << 64n) | (2n << 62n) | (random & ((1n << 62n) - 1n))
  let suffix = ""
  for (let index = 0; index < 26; index++) {
    suffix = ALPHABET[Number(value & 31n)] + suffix
    value >>= 5n
  }
  return suffix
}

/**
 * The checked string of a prefix, named `brand` in the document; each id brands it where it is declared
 * (`.pipe(Schema.brand("TeamId"))`): Effect 4's `Schema.brand` takes a literal brand, not a type parameter.
 */
const typeId = (prefix: string, brand: string, identifies: string) => {
  identified.set(prefix, identifies)
  const example = `${prefix}_${exampleSuffix(prefix, 1)}`
  return Schema.String.check(
    Schema.makeFilter((value: string) => checkTypeId(prefix, value) ?? true, {
      description: `${identifies}: a TypeID with the '${prefix}_' prefix (${prefix.length + 27} characters)`,
      // For values generated from the schema (`effect/Arbitrary`): the property tests' ids.
      arbitraryConstraint: { patterns: [{ source: `^${prefix}_[0-7][0-9a-hjkmnp-tv-z]{25}$`, flags: "" }] },
      toJsonSchema: () => ({
        type: "string",
        minLength: prefix.length + 27,
        maxLength: prefix.length + 27,
        pattern: `^${prefix}_[0-7][0-9a-hjkmnp-tv-z]{25}$`,
        examples: [example]
      })
    })
  ).annotate({ identifier: brand, examples: [example] })
}

export const OrganizationId = typeId("org", "OrganizationId", "Organization id").pipe(Schema.brand("OrganizationId"))
export type OrganizationId = typeof OrganizationId.Type
export const UserId = typeId("usr", "UserId", "User id").pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
export const SessionId = typeId("ses", "SessionId", "Session id").pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type
export const MembershipId = typeId("om", "MembershipId", "Organization membership id").pipe(Schema.brand("MembershipId"))
export type MembershipId = typeof MembershipId.Type
export const TeamId = typeId("tem", "TeamId", "Team id").pipe(Schema.brand("TeamId"))
export type TeamId = typeof TeamId.Type
export const ApiKeyId = typeId("apk", "ApiKeyId", "API key id").pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type
export const BootstrapId = typeId("wbt", "BootstrapId", "Workspace bootstrap id").pipe(Schema.brand("BootstrapId"))
export type BootstrapId = typeof BootstrapId.Type
export const WorkspaceClaimId = typeId("wcl", "WorkspaceClaimId", "Workspace claim id").pipe(Schema.brand("WorkspaceClaimId"))
export type WorkspaceClaimId = typeof WorkspaceClaimId.Type
export const InvitationId = typeId("inv", "InvitationId", "Invitation id").pipe(Schema.brand("InvitationId"))
export type InvitationId = typeof InvitationId.Type
export const ConnectorAccountId = typeId("cac", "ConnectorAccountId", "Connector account id").pipe(Schema.brand("ConnectorAccountId"))
export type ConnectorAccountId = typeof ConnectorAccountId.Type
export const ConnectorTargetId = typeId("ctg", "ConnectorTargetId", "Connector target id").pipe(Schema.brand("ConnectorTargetId"))
export type ConnectorTargetId = typeof ConnectorTargetId.Type
export const ConnectorInstanceId = typeId("cin", "ConnectorInstanceId", "Connector instance id").pipe(Schema.brand("ConnectorInstanceId"))
export type ConnectorInstanceId = typeof ConnectorInstanceId.Type
export const ConnectorMappingId = typeId("cmp", "ConnectorMappingId", "Connector mapping id").pipe(Schema.brand("ConnectorMappingId"))
export type ConnectorMappingId = typeof ConnectorMappingId.Type
export const PluginId = typeId("plg", "PluginId", "Plugin id").pipe(Schema.brand("PluginId"))
export type PluginId = typeof PluginId.Type
export const MarketplaceId = typeId("mkt", "MarketplaceId", "Marketplace id").pipe(Schema.brand("MarketplaceId"))
export type MarketplaceId = typeof MarketplaceId.Type
export const ConfigObjectId = typeId("cob", "ConfigObjectId", "Config object id").pipe(Schema.brand("ConfigObjectId"))
export type ConfigObjectId = typeof ConfigObjectId.Type
export const ConfigObjectVersionId = typeId("cov", "ConfigObjectVersionId", "Config object version id").pipe(Schema.brand("ConfigObjectVersionId"))
export type ConfigObjectVersionId = typeof ConfigObjectVersionId.Type
export const ConfigObjectAccessGrantId = typeId("coa", "ConfigObjectAccessGrantId", "Config object access grant id").pipe(Schema.brand("ConfigObjectAccessGrantId"))
export type ConfigObjectAccessGrantId = typeof ConfigObjectAccessGrantId.Type
export const MarketplaceAccessGrantId = typeId("mag", "MarketplaceAccessGrantId", "Marketplace access grant id").pipe(Schema.brand("MarketplaceAccessGrantId"))
export type MarketplaceAccessGrantId = typeof MarketplaceAccessGrantId.Type
export const PluginConfigObjectId = typeId("pco", "PluginConfigObjectId", "Plugin config object membership id").pipe(Schema.brand("PluginConfigObjectId"))
export type PluginConfigObjectId = typeof PluginConfigObjectId.Type
export const PluginAccessGrantId = typeId("pag", "PluginAccessGrantId", "Plugin access grant id").pipe(Schema.brand("PluginAccessGrantId"))
export type PluginAccessGrantId = typeof PluginAccessGrantId.Type
export const MarketplacePluginId = typeId("mkp", "MarketplacePluginId", "Marketplace plugin membership id").pipe(Schema.brand("MarketplacePluginId"))
export type MarketplacePluginId = typeof MarketplacePluginId.Type
export const ConnectorInstanceAccessGrantId = typeId("cia", "ConnectorInstanceAccessGrantId", "Connector instance access grant id").pipe(Schema.brand("ConnectorInstanceAccessGrantId"))
export type ConnectorInstanceAccessGrantId = typeof ConnectorInstanceAccessGrantId.Type
export const ConnectorSyncEventId = typeId("cse", "ConnectorSyncEventId", "Connector sync event id").pipe(Schema.brand("ConnectorSyncEventId"))
export type ConnectorSyncEventId = typeof ConnectorSyncEventId.Type
export const DesktopPolicyId = typeId("dpo", "DesktopPolicyId", "Desktop policy id").pipe(Schema.brand("DesktopPolicyId"))
export type DesktopPolicyId = typeof DesktopPolicyId.Type
export const ExternalMcpConnectionId = typeId("emc", "ExternalMcpConnectionId", "External MCP connection id").pipe(Schema.brand("ExternalMcpConnectionId"))
export type ExternalMcpConnectionId = typeof ExternalMcpConnectionId.Type
export const McpConnectionAccessGrantId = typeId("emg", "McpConnectionAccessGrantId", "MCP connection access grant id").pipe(Schema.brand("McpConnectionAccessGrantId"))
export type McpConnectionAccessGrantId = typeof McpConnectionAccessGrantId.Type
export const MemoryId = typeId("mem", "MemoryId", "Memory id").pipe(Schema.brand("MemoryId"))
export type MemoryId = typeof MemoryId.Type
export const MemoryContextId = typeId("mcx", "MemoryContextId", "Memory context id").pipe(Schema.brand("MemoryContextId"))
export type MemoryContextId = typeof MemoryContextId.Type
export const TelemetryEventId = typeId("tev", "TelemetryEventId", "Telemetry event id").pipe(Schema.brand("TelemetryEventId"))
export type TelemetryEventId = typeof TelemetryEventId.Type
export const TelemetryDimensionId = typeId("tsd", "TelemetryDimensionId", "Telemetry session dimension id").pipe(Schema.brand("TelemetryDimensionId"))
export type TelemetryDimensionId = typeof TelemetryDimensionId.Type
export const WorkerId = typeId("wrk", "WorkerId", "Worker id").pipe(Schema.brand("WorkerId"))
export type WorkerId = typeof WorkerId.Type
export const WorkerInstanceId = typeId("wki", "WorkerInstanceId", "Worker instance id").pipe(Schema.brand("WorkerInstanceId"))
export type WorkerInstanceId = typeof WorkerInstanceId.Type
export const WorkerTokenId = typeId("wkt", "WorkerTokenId", "Worker token id").pipe(Schema.brand("WorkerTokenId"))
export type WorkerTokenId = typeof WorkerTokenId.Type
export const WorkerHeartbeatId = typeId("whb", "WorkerHeartbeatId", "Worker heartbeat id").pipe(Schema.brand("WorkerHeartbeatId"))
export type WorkerHeartbeatId = typeof WorkerHeartbeatId.Type
export const WorkerActivityEventId = typeId("wae", "WorkerActivityEventId", "Worker activity event id").pipe(Schema.brand("WorkerActivityEventId"))
export type WorkerActivityEventId = typeof WorkerActivityEventId.Type
export const TemplateId = typeId("tpl", "TemplateId", "Template id").pipe(Schema.brand("TemplateId"))
export type TemplateId = typeof TemplateId.Type
export const TemplateVersionId = typeId("tpv", "TemplateVersionId", "Template version id").pipe(Schema.brand("TemplateVersionId"))
export type TemplateVersionId = typeof TemplateVersionId.Type
export const TemplateAccessGrantId = typeId("tpa", "TemplateAccessGrantId", "Template access grant id").pipe(Schema.brand("TemplateAccessGrantId"))
export type TemplateAccessGrantId = typeof TemplateAccessGrantId.Type
export const LlmProviderId = typeId("llp", "LlmProviderId", "LLM provider id").pipe(Schema.brand("LlmProviderId"))
export type LlmProviderId = typeof LlmProviderId.Type
export const LlmProviderAccessGrantId = typeId("lpg", "LlmProviderAccessGrantId", "LLM provider access grant id").pipe(Schema.brand("LlmProviderAccessGrantId"))
export type LlmProviderAccessGrantId = typeof LlmProviderAccessGrantId.Type
export const SsoConnectionId = typeId("ssc", "SsoConnectionId", "SSO connection id").pipe(Schema.brand("SsoConnectionId"))
export type SsoConnectionId = typeof SsoConnectionId.Type
export const SsoIntentId = typeId("ssi", "SsoIntentId", "SSO sign-in or test intent id").pipe(Schema.brand("SsoIntentId"))
export type SsoIntentId = typeof SsoIntentId.Type
export const ScimConnectionId = typeId("scc", "ScimConnectionId", "SCIM connection id").pipe(Schema.brand("ScimConnectionId"))
export type ScimConnectionId = typeof ScimConnectionId.Type
export const ScimTokenId = typeId("sct", "ScimTokenId", "SCIM token id").pipe(Schema.brand("ScimTokenId"))
export type ScimTokenId = typeof ScimTokenId.Type
export const ScimGroupId = typeId("scg", "ScimGroupId", "SCIM group id").pipe(Schema.brand("ScimGroupId"))
export type ScimGroupId = typeof ScimGroupId.Type
export const ScimEventId = typeId("sce", "ScimEventId", "SCIM provisioning event id").pipe(Schema.brand("ScimEventId"))
export type ScimEventId = typeof ScimEventId.Type
export const AuditEventId = typeId("aev", "AuditEventId", "Audit event id").pipe(Schema.brand("AuditEventId"))
export type AuditEventId = typeof AuditEventId.Type
export const AuditStreamId = typeId("ast", "AuditStreamId", "Audit stream id").pipe(Schema.brand("AuditStreamId"))
export type AuditStreamId = typeof AuditStreamId.Type
export const AuditStreamDeliveryId = typeId("asd", "AuditStreamDeliveryId", "Audit stream delivery id").pipe(Schema.brand("AuditStreamDeliveryId"))
export type AuditStreamDeliveryId = typeof AuditStreamDeliveryId.Type

/**
 * Every TypeID the service issues, by prefix: what the server's `makeId(prefix)` returns, so a prefix can only
 * make its own brand. Persisted: only ever append.
 */
export const IdsByPrefix = {
  org: OrganizationId,
  usr: UserId,
  ses: SessionId,
  om: MembershipId,
  tem: TeamId,
  apk: ApiKeyId,
  wbt: BootstrapId,
  wcl: WorkspaceClaimId,
  inv: InvitationId,
  cac: ConnectorAccountId,
  ctg: ConnectorTargetId,
  cin: ConnectorInstanceId,
  cmp: ConnectorMappingId,
  plg: PluginId,
  mkt: MarketplaceId,
  cob: ConfigObjectId,
  cov: ConfigObjectVersionId,
  coa: ConfigObjectAccessGrantId,
  mag: MarketplaceAccessGrantId,
  dpo: DesktopPolicyId,
  emc: ExternalMcpConnectionId,
  pco: PluginConfigObjectId,
  pag: PluginAccessGrantId,
  mkp: MarketplacePluginId,
  cia: ConnectorInstanceAccessGrantId,
  cse: ConnectorSyncEventId,
  mem: MemoryId,
  mcx: MemoryContextId,
  tev: TelemetryEventId,
  tsd: TelemetryDimensionId,
  wrk: WorkerId,
  wki: WorkerInstanceId,
  wkt: WorkerTokenId,
  emg: McpConnectionAccessGrantId,
  whb: WorkerHeartbeatId,
  wae: WorkerActivityEventId,
  tpl: TemplateId,
  tpv: TemplateVersionId,
  tpa: TemplateAccessGrantId,
  llp: LlmProviderId,
  lpg: LlmProviderAccessGrantId,
  ssc: SsoConnectionId,
  ssi: SsoIntentId,
  scc: ScimConnectionId,
  sct: ScimTokenId,
  scg: ScimGroupId,
  sce: ScimEventId,
  aev: AuditEventId,
  ast: AuditStreamId,
  asd: AuditStreamDeliveryId
} as const
export type Prefix = keyof typeof IdsByPrefix
/** The branded id type of a prefix: `IdOf<"tem">` is `TeamId`. */
export type IdOf<P extends Prefix> = (typeof IdsByPrefix)[P]["Type"]

/**
 * Example id number `n` (from 1) of a prefix, for the API's examples: `exampleId("tem")` is the `TeamId` schema's own
 * example; `exampleId("om", 2)` a second member, distinct from the first.
 */
export const exampleId = <P extends Prefix>(prefix: P, n = 1): IdOf<P> => `${prefix}_${exampleSuffix(prefix, n)}` as IdOf<P>
