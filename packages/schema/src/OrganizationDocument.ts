/**
 * Organization as code: one document describing an organization, written by `GET /v1/organization/document` (the
 * export) and published as a JSON Schema (`organization-document.schema.json`, beside this package's `dist`) so that
 * editors complete and check it. Its parts are the API's own schemas (names, keys, roles, metadata), so a document
 * that validates here holds only values the API accepts.
 *
 * Things are named by what is stable between organizations, never by ids: members and invitations by email, teams by
 * name. Every list is sorted (members, invitations and a team's members by email, teams by name, metadata by key), so
 * two exports of one state are the same bytes. docs/config-as-code.md has the rules and what is built so far.
 */
import * as Schema from "effect/Schema"
import { RetentionDays } from "./Audit.js"
import { ApiKeyScopeRequest, CreateApiKeyRequest } from "./ApiKeys.js"
import { AuditStreamDescription, AuditStreamStatus, AuditStreamUrl, MAX_AUDIT_STREAMS } from "./AuditStreams.js"
import { AccessRole } from "./Access.js"
import { Email, Int, Timestamp, TrimmedText } from "./Common.js"
import { acme, ada, edsger, exampleTime, grace } from "./Examples.js"
import { exampleId } from "./Ids.js"
import { InvitableRole, InvitationDelivery } from "./Invitations.js"
import { isLlmHeaderList, LlmApiStyle, LlmBaseUrl, LlmModelInputs, LlmProviderName } from "./LlmProviders.js"
import { McpAuthType, McpConnectionName, McpCredentialMode, McpScope, McpServerUrl, McpToolName } from "./McpConnections.js"
import { OrganizationLogoUrl, OrganizationMetadata, OrganizationName, Role } from "./Organizations.js"
import { DesktopPolicyDocumentInput, DesktopPolicyName, DesktopPolicyPriority } from "./DesktopPolicies.js"
import { ScimConnectionName, ScimDefaultRole, ScimGroupMappingMode, ScimRoleRules } from "./ScimConnections.js"
import { TeamExternalKey, TeamName } from "./Teams.js"
import {
  IdpUrl,
  OidcEndpoints,
  SamlSettingsInput,
  SsoConnectionKind,
  SsoConnectionName,
  SsoDomain,
  SsoJitRole,
  TokenEndpointAuthMethod
} from "./Sso.js"
import { CatalogDescription, LogoUrl, MarketplaceName, PluginName } from "./Plugins.js"
import { ContentSchemaVersion, JsonObject, ObjectType, ParserMode, RelativePath, SourceText } from "./ConfigObjects.js"
import { ConnectorInstanceName } from "./Connectors.js"
import { TemplateDescription, TemplateDocument, TemplateKindName, TemplateName, TemplateSchemaVersion } from "./Templates.js"

/** The version of the document's format this server writes and reads. */
export const ORGANIZATION_DOCUMENT_VERSION = 1

export const DocumentOrganization = Schema.Struct({
  name: OrganizationName,
  logoUrl: Schema.NullOr(OrganizationLogoUrl).annotate({ description: "The organization's logo, or null for none." }),
  metadata: OrganizationMetadata
}).annotate({
  identifier: "DocumentOrganization",
  description: "The organization's profile, as `PATCH /v1/organization` sets it."
})

export const DocumentDirectory = Schema.Struct({
  emailsVisibleToMembers: Schema.Boolean.annotate({
    description: "Whether plain members see each other's emails (`PUT /v1/member-directory`)."
  })
}).annotate({ identifier: "DocumentDirectory", description: "Who sees what of the member directory." })

export const DocumentAudit = Schema.Struct({
  retentionDays: RetentionDays.annotate({
    description: "How many days the audit log keeps its events (`PUT /v1/audit/settings`); the export writes the default, 365, when nobody set it."
  })
}).annotate({ identifier: "DocumentAudit", description: "The audit log's settings. Its streams are not part of the document yet." })

export const DocumentSsoPolicy = Schema.Struct({
  requireSso: Schema.Boolean.annotate({
    description: "Whether SSO is required for the domains the organization's active connections serve (`PUT /v1/sso/policy`): needs an active connection, and a policy that would refuse the applier's own session is refused."
  }),
  ownersPasswordFallback: Schema.Boolean.annotate({ description: "Whether owners keep password sign-in while SSO is required (break-glass)." })
}).annotate({ identifier: "DocumentSsoPolicy", description: "Who must sign in through SSO. The export writes the defaults (not required, owners' fallback on) when nobody set it." })

/** Where a secret's value comes from: an environment variable or a file, read where the apply is run (the CLI, a script). */
export const SecretSource = Schema.String.check(
  Schema.isMinLength(5),
  Schema.isMaxLength(1029),
  Schema.isPattern(/^(env:[A-Za-z_][A-Za-z0-9_]{0,127}|file:[^\s\u0000][^\u0000]{0,1023})$/u, {
    message: "must be env:NAME (an environment variable: letters, digits and _) or file:PATH (a file's whole content, one trailing newline dropped)"
  })
).annotate({
  identifier: "SecretSource",
  description: "`env:NAME`: the environment variable NAME; `file:PATH`: the file at PATH (relative to the working directory), without one trailing newline. Read by whoever applies the document, never by the server.",
  examples: ["env:OPENAI_API_KEY", "file:secrets/openai.key"]
})

/**
 * A secret in the document: where its value comes from, and a version counter raised to rotate it on purpose. The
 * value itself is never in the document, a plan or the stored applied document.
 */
export const SecretReference = Schema.Struct({
  from: SecretSource,
  version: Int.check(Schema.isBetween({ minimum: 0, maximum: 1_000_000 })).annotate({
    description: "Raised to rotate the secret: a plan whose version (or `from`) differs from the live one writes the value again (`rotated`). 0 is the value the organization holds that no document wrote (the export writes it so)."
  })
}).annotate({
  identifier: "SecretReference",
  description: "A secret by reference: its source and version, never its value.",
  examples: [{ from: "env:OPENAI_API_KEY", version: 1 }]
})
export type SecretReference = typeof SecretReference.Type

/** A member as the document names one: by email, or by membership id for the one member that has no email. */
export const DocumentMemberName = TrimmedText(
  1,
  254,
  "The member's email; for the one member without an email (the unclaimed owner of a workspace created by bootstrap), its membership id (`om_…`)."
)

/** The most members, invitations and team members a document lists (its body is bounded too: `MaxBodyBytes`). */
export const DOCUMENT_MAX_ITEMS = 20_000
/** The most teams a document lists. */
export const DOCUMENT_MAX_TEAMS = 5_000

export const DocumentMember = Schema.Struct({
  email: DocumentMemberName,
  role: Role,
  suspended: Schema.optionalKey(Schema.Literal(true)).annotateKey({
    description: "Present, and true, for a member the organization's directory (SCIM) deactivated: the directory, not the document, decides it."
  })
}).annotate({
  identifier: "DocumentMember",
  description:
    "A member and their role. People join by invitation, SSO or SCIM: the document names members who joined, it never creates an account."
})
export type DocumentMember = typeof DocumentMember.Type

export const DocumentInvitation = Schema.Struct({
  email: Email,
  role: InvitableRole,
  delivery: InvitationDelivery
}).annotate({ identifier: "DocumentInvitation", description: "A pending invitation." })

export const DocumentTeam = Schema.Struct({
  name: TeamName,
  externalKey: Schema.NullOr(TeamExternalKey).annotate({ description: "The organization's own key for the team, or null." }),
  members: Schema.Array(DocumentMemberName).check(Schema.isMaxLength(DOCUMENT_MAX_ITEMS)).annotate({
    description: "The team's members, by email (as `members` names them), sorted."
  }),
  directoryManaged: Schema.optionalKey(Schema.Literal(true)).annotateKey({
    description: "Present, and true, for a team a SCIM connection's directory manages: its name and members are the directory's."
  })
}).annotate({ identifier: "DocumentTeam", description: "A team and its members." })
export type DocumentTeam = typeof DocumentTeam.Type

/** Whom a grant is for: one member (by the name `members` gives them), one team (by name) or the organization. */
export const DocumentGrant = Schema.Union([
  Schema.Struct({ organization: Schema.Literal(true), role: AccessRole }).annotate({ identifier: "DocumentOrganizationGrant" }),
  Schema.Struct({ team: TeamName, role: AccessRole }).annotate({ identifier: "DocumentTeamGrant" }),
  Schema.Struct({ member: DocumentMemberName, role: AccessRole }).annotate({ identifier: "DocumentMemberGrant" })
]).annotate({
  identifier: "DocumentGrant",
  description: "An access grant: to the whole organization (`organization: true`), a team by name, or a member by email; with its role."
})
export type DocumentGrant = typeof DocumentGrant.Type

/**
 * A resource's grants: additive unless `authoritative` names `grants` (then a grant the list leaves out is revoked).
 * Sorted: the organization's, then teams' and members' by name.
 */
const DocumentGrants = Schema.optionalKey(Schema.Array(DocumentGrant).check(Schema.isMaxLength(DOCUMENT_MAX_ITEMS))).annotateKey({
  description:
    "Who may use it, and how: the organization's grant, then teams' and members' by name. Absent: the plan changes no grant. Listed grants are given (or their role changed); a grant the list leaves out is revoked only when `authoritative` names `grants`."
})

export const DocumentLlmProvider = Schema.Struct({
  name: LlmProviderName,
  catalogProviderId: Schema.NullOr(TrimmedText(1, 64, "A provider of the LLM catalog")).annotate({
    description: "The catalog provider it starts from (`GET /v1/llm-provider-catalog`), or null for a custom one. Fixed once created."
  }),
  apiStyle: Schema.optionalKey(LlmApiStyle).annotateKey({
    description: "Fixed once created. Absent: the catalog provider's (required for a custom one); the export writes it."
  }),
  baseUrl: Schema.optionalKey(LlmBaseUrl).annotateKey({
    description: "Absent: the catalog provider's (required for a custom one); the export writes it."
  }),
  models: LlmModelInputs.annotate({
    description: "The model allow-list, as `POST /v1/llm-providers` takes it: a figure left out is the catalog's. The export writes every known figure."
  }),
  headers: Schema.Array(Schema.Struct({
    name: Schema.String.check(Schema.isMaxLength(64), Schema.isPattern(/^[A-Za-z0-9][A-Za-z0-9-]{0,63}$/u)).annotate({
      description: "The header's name (`OpenAI-Organization`): 1 to 64 letters, digits or `-`."
    }),
    value: SecretReference
  })).check(isLlmHeaderList<{ readonly name: string }>()).annotate({
    description: "Extra headers, sorted by name, each value a secret reference (header values are never read back). `[]`: none."
  }),
  apiKey: Schema.NullOr(SecretReference).annotate({
    description: "The API key, by reference; null for none from the document (a provider holding OAuth tokens exports null and keeps them)."
  }),
  grants: DocumentGrants
}).annotate({ identifier: "DocumentLlmProvider", description: "An LLM provider, its allow-list, its secrets by reference and its grants." })
export type DocumentLlmProvider = typeof DocumentLlmProvider.Type

export const DocumentMcpOAuth = Schema.Struct({
  clientId: Schema.NullOr(TrimmedText(1, 512, "A client pre-registered with the authorization server")).annotate({
    description: "A client pre-registered with the authorization server; null: the client orgplane registers itself (dynamic registration or its client metadata document)."
  }),
  clientSecret: Schema.NullOr(SecretReference).annotate({ description: "The pre-registered client's secret, by reference (a confidential client); null for none." }),
  authorizationServerIssuer: Schema.NullOr(McpServerUrl).annotate({
    description: "The authorization server to use when the MCP server names several; null: the one it names, found when connecting (the export writes the one in use, and null plans no change)."
  }),
  requestedScopes: Schema.Array(McpScope).check(Schema.isMaxLength(100)).annotate({ description: "The scopes asked for, sorted." })
}).annotate({ identifier: "DocumentMcpOAuth", description: "An `oauth` connection's client and scopes. Its tokens come from connecting, never from the document." })

export const DocumentMcpConnection = Schema.Struct({
  name: McpConnectionName,
  url: McpServerUrl,
  authType: McpAuthType.annotate({ description: "Fixed once created." }),
  credentialMode: McpCredentialMode.annotate({ description: "Fixed once created; `per_member` needs `authType: oauth`." }),
  apiKey: Schema.NullOr(SecretReference).annotate({ description: "`apikey` connections: the key, by reference; null for the others." }),
  oauth: Schema.NullOr(DocumentMcpOAuth).annotate({ description: "`oauth` connections: the client and scopes; null for the others." }),
  toolPolicy: Schema.Struct({
    allDisabled: Schema.Boolean,
    disabledTools: Schema.Array(McpToolName).check(Schema.isMaxLength(500)).annotate({ description: "The tools disabled by name, sorted." })
  }).annotate({ description: "What is disabled of its tools (`PUT .../tool-policy`)." }),
  grants: DocumentGrants
}).annotate({
  identifier: "DocumentMcpConnection",
  description: "An external MCP connection, its tool policy, its secrets by reference and its grants. Credentials from connecting are not part of the document."
})
export type DocumentMcpConnection = typeof DocumentMcpConnection.Type

export const DocumentScimConnection = Schema.Struct({
  name: ScimConnectionName,
  groupMappingMode: ScimGroupMappingMode,
  defaultRole: ScimDefaultRole,
  roleRules: ScimRoleRules.annotate({ description: "Group → role rules, sorted by group (compared ignoring case)." })
}).annotate({
  identifier: "DocumentScimConnection",
  description: "A SCIM connection's settings: how its groups map to teams and which roles its members get. Its tokens are issued through the API, never by the document."
})
export type DocumentScimConnection = typeof DocumentScimConnection.Type

export const DocumentDesktopPolicy = Schema.Struct({
  name: DesktopPolicyName,
  enabled: Schema.Boolean,
  priority: DesktopPolicyPriority,
  policy: DesktopPolicyDocumentInput,
  members: Schema.Array(DocumentMemberName).check(Schema.isMaxLength(500)).annotate({ description: "Members it is assigned to, by email, sorted." }),
  teams: Schema.Array(TeamName).check(Schema.isMaxLength(500)).annotate({ description: "Teams it is assigned to, by name, sorted." })
}).annotate({
  identifier: "DocumentDesktopPolicy",
  description: "A desktop policy other than the default: what it sets, for whom, and at which priority. Names a document holds are unique, ignoring case."
})
export type DocumentDesktopPolicy = typeof DocumentDesktopPolicy.Type

export const DocumentTemplate = Schema.Struct({
  name: TemplateName,
  description: TemplateDescription,
  kind: TemplateKindName,
  schemaVersion: Schema.NullOr(TemplateSchemaVersion).annotate({ description: "Its document's format version; null for none." }),
  document: TemplateDocument,
  grants: DocumentGrants
}).annotate({
  identifier: "DocumentTemplate",
  description: "A shared template: its latest version's document (a change makes a new version), and its grants. Names a document holds are unique, ignoring case."
})
export type DocumentTemplate = typeof DocumentTemplate.Type

export const DocumentConfigObject = Schema.Struct({
  relativePath: RelativePath.pipe(Schema.annotateEncoded({
    description: "Where its source file lives (`skills/deploy/SKILL.md`): what the document names it by, compared ignoring case. Fixed once created."
  })),
  // Fixed once created (the struct's description says so: annotating the named schema would publish a second one).
  objectType: ObjectType,
  parserMode: ParserMode,
  schemaVersion: ContentSchemaVersion,
  rawSourceText: SourceText,
  metadata: Schema.NullOr(JsonObject).annotate({ description: "Free-form data kept with its version, or null for none." }),
  status: Schema.Literals(["active", "archived"]).annotate({ description: "`archived`: kept, listed as archived (`POST /v1/config-objects/{configObjectId}/archive`)." }),
  grants: DocumentGrants
}).annotate({
  identifier: "DocumentConfigObject",
  description:
    "A config object people made that has a path (not one a connector syncs: its repository is its code): its latest version's content, its status and its grants. Its path and type are fixed once created; a change of its content makes a new version."
})
export type DocumentConfigObject = typeof DocumentConfigObject.Type

export const DocumentPlugin = Schema.Struct({
  name: PluginName,
  description: CatalogDescription,
  status: Schema.Literals(["active", "archived"]).annotate({ description: "`archived`: kept, listed as archived (`POST /v1/plugins/{pluginId}/archive`)." }),
  configObjects: Schema.optionalKey(Schema.Array(RelativePath).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description:
      "The config objects it holds, by path (config objects people made, the organization's or this document's), sorted. Objects a connector syncs or without a path that it holds are left out and left alone. Absent: the plan changes none of its config objects; `[]` names none."
  }),
  grants: DocumentGrants
}).annotate({
  identifier: "DocumentPlugin",
  description: "A plugin people made (not one a connector syncs from a repository: its repository is its code), its config objects, its status and its grants."
})
export type DocumentPlugin = typeof DocumentPlugin.Type

export const DocumentMarketplace = Schema.Struct({
  name: MarketplaceName,
  description: CatalogDescription,
  logoUrl: Schema.NullOr(LogoUrl).annotate({ description: "Its logo, or null for none." }),
  plugins: Schema.Array(PluginName).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS)).annotate({
    description: "The plugins it lists, by name (plugins people made, the organization's or this document's), sorted. Plugins a connector syncs that it lists are left out and left alone."
  }),
  grants: DocumentGrants
}).annotate({
  identifier: "DocumentMarketplace",
  description: "A marketplace people made (not one a connector made), the plugins it lists and its grants."
})
export type DocumentMarketplace = typeof DocumentMarketplace.Type

/** A plugin or marketplace a connector syncs, by its name within the connector: only its grants are the document's. */
const DocumentSynced = (name: typeof PluginName, identifier: string, what: string) =>
  Schema.Struct({ name, grants: DocumentGrants }).annotate({
    identifier,
    description: `A ${what} the connector syncs from its repository, named by its name within the connector (the repository decides the rest): its grants.`
  })

export const DocumentConnector = Schema.Struct({
  name: ConnectorInstanceName,
  grants: DocumentGrants,
  plugins: Schema.optionalKey(Schema.Array(DocumentSynced(PluginName, "DocumentSyncedPlugin", "plugin")).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "The plugins it syncs, sorted by name. Absent, or leaving one out: the plan changes none of their grants."
  }),
  marketplaces: Schema.optionalKey(Schema.Array(DocumentSynced(MarketplaceName, "DocumentSyncedMarketplace", "marketplace")).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "The marketplaces it made, sorted by name. Absent, or leaving one out: the plan changes none of their grants."
  })
}).annotate({
  identifier: "DocumentConnector",
  description:
    "A connector (`POST /v1/connector-instances`: its account, repository and branch are made through the API, never by a document) and what it syncs: the grants of the connector and of each plugin and marketplace it syncs. A document names only connectors the organization has, and never makes or deletes one or what it syncs."
})
export type DocumentConnector = typeof DocumentConnector.Type

export const DocumentDomain = Schema.Struct({
  domain: SsoDomain,
  verified: Schema.optionalKey(Schema.Literal(true)).annotateKey({
    description: "Present, and true, for a domain verified by its DNS record: DNS, not the document, decides it."
  })
}).annotate({
  identifier: "DocumentDomain",
  description: "An email domain of the organization. Naming one claims it (a verification record is made, `POST /v1/sso/request-domain-verification`); it is verified by DNS (`POST /v1/sso/verify-domain`), never by the document."
})
export type DocumentDomain = typeof DocumentDomain.Type

const claimName = (description: string) => TrimmedText(1, 255, description)

export const DocumentSsoConnection = Schema.Struct({
  name: SsoConnectionName,
  kind: SsoConnectionKind.annotate({ description: "`oidc` or `saml`. Fixed once created." }),
  active: Schema.Boolean.annotate({
    description: "Whether it serves sign-ins. A connection is made inactive; activating it needs a successful test of its current settings and verified domains (`POST /v1/sso/connections/{connectionId}/tests`), and an active connection's settings do not change: the plan refuses both otherwise."
  }),
  domains: Schema.Array(SsoDomain).check(Schema.isMaxLength(50)).annotate({
    description: "The email domains it serves, sorted; each becomes a domain of the organization to verify (by DNS, never by the document)."
  }),
  jit: Schema.Struct({
    enabled: Schema.Boolean.annotate({ description: "Whether a person new to the organization becomes a member at sign-in." }),
    defaultRole: SsoJitRole,
    defaultTeams: Schema.Array(TeamName).check(Schema.isMaxLength(20)).annotate({ description: "Teams a member made at sign-in joins, by name, sorted." })
  }).annotate({ description: "Who becomes a member at sign-in." }),
  mapping: Schema.Struct({
    email: claimName("The claim (OIDC) or attribute (SAML) holding the email."),
    name: claimName("The claim or attribute holding the full name."),
    givenName: claimName("The claim or attribute holding the given name."),
    familyName: claimName("The claim or attribute holding the family name."),
    groups: claimName("The claim or attribute holding the groups."),
    groupRules: Schema.Array(Schema.Struct({
      group: TrimmedText(1, 255, "A group name (or id) as the identity provider sends it."),
      team: TeamName
    })).check(Schema.isMaxLength(100)).annotate({ description: "Group → team rules (the team by name), sorted by group and team." })
  }).annotate({ description: "Where the profile comes from, and which teams a group joins at sign-in." }),
  oidc: Schema.NullOr(Schema.Struct({
    issuer: IdpUrl("The OpenID Provider's issuer."),
    endpoints: Schema.NullOr(OidcEndpoints).annotate({ description: "Manual endpoints; null: discovered from the issuer." }),
    clientId: TrimmedText(1, 255, "The client id orgplane is registered under at the provider"),
    clientSecret: Schema.NullOr(SecretReference).annotate({
      description: "The client secret, by reference; null only where none is stored (a connection from before secrets were kept): a new connection needs one."
    }),
    scopes: Schema.Array(TrimmedText(1, 100, "A scope")).check(Schema.isMaxLength(21)).annotate({
      description: "The scopes asked for, sorted; `openid` is always asked for (the export writes it)."
    }),
    tokenEndpointAuthMethod: TokenEndpointAuthMethod
  })).annotate({ description: "`oidc` connections: the provider and client, its secret by reference; null for SAML." }),
  saml: Schema.NullOr(SamlSettingsInput).annotate({
    description: "`saml` connections: the IdP by metadata URL, metadata XML or by hand, as `POST /v1/sso/connections` takes it (the export writes what the source needs, `allowIdpInitiated` and `relayStateAllowList`); null for OIDC."
  })
}).annotate({
  identifier: "DocumentSsoConnection",
  description: "An SSO connection: its settings, teams by name, the OIDC client's secret by reference. Its tests and domain verifications are the API's."
})
export type DocumentSsoConnection = typeof DocumentSsoConnection.Type

export const DocumentAuditStream = Schema.Struct({
  url: AuditStreamUrl,
  description: Schema.NullOr(AuditStreamDescription).annotate({ description: "What the endpoint is, for people; null for none." }),
  status: AuditStreamStatus
}).annotate({
  identifier: "DocumentAuditStream",
  description: "An endpoint that receives the organization's audit events, named by its URL. Its signing secret is made by the server: the apply that creates the stream answers it once (`auditStreamSecrets`); rotate it through the API."
})
export type DocumentAuditStream = typeof DocumentAuditStream.Type

export const DocumentApiKey = Schema.Struct({
  name: CreateApiKeyRequest.fields.name,
  member: DocumentMemberName.annotate({ description: "The member it acts as (who made it), by email. An apply makes a key only for its applier." }),
  scopes: Schema.NullOr(Schema.Array(ApiKeyScopeRequest).check(Schema.isMaxLength(100))).annotate({
    description: "What it may do: actions, or `<area>.*` for all of an area's (the export writes an area's `.*` where the key holds all of it), compared as the actions they name. Null: a key from before keys had scopes (every action its maker's role allows)."
  }),
  expiresAt: Schema.NullOr(Timestamp).annotate({
    description: "When it stops working (an expired key is not exported). Null: a key from before every key expired; a new key needs one."
  })
}).annotate({
  identifier: "DocumentApiKey",
  description: "An API key as declared metadata: its name, maker, scopes and expiry. Its secret is never in the document: the apply that makes a key answers it once (`apiKeys`)."
})
export type DocumentApiKey = typeof DocumentApiKey.Type

/** The document's lists whose omissions a plan may delete. */
export const DocumentCollection = Schema.Literals(["members", "invitations", "teams", "llmProviders", "mcpConnections", "scimConnections", "desktopPolicies", "templates", "configObjects", "plugins", "marketplaces", "ssoConnections", "auditStreams", "apiKeys", "domains", "grants"]).annotate({
  identifier: "DocumentCollection",
  description: "A list of the document: `members`, `invitations`, `teams`, `llmProviders`, `mcpConnections`, `scimConnections`, `desktopPolicies`, `templates`, `configObjects`, `plugins`, `marketplaces`, `ssoConnections`, `auditStreams`, `apiKeys`, `domains`, or `grants` (every resource's grants)."
})
export type DocumentCollection = typeof DocumentCollection.Type

export const OrganizationDocument = Schema.Struct({
  $schema: Schema.optionalKey(TrimmedText(1, 2048)).annotateKey({
    description: "Where an editor finds this document's JSON Schema; the server ignores it."
  }),
  version: Schema.Literal(ORGANIZATION_DOCUMENT_VERSION).annotate({ description: "The document format's version." }),
  authoritative: Schema.optionalKey(Schema.Array(DocumentCollection).check(Schema.isMaxLength(16))).annotateKey({
    description:
      "The lists whose omissions are deletes: a member, pending invitation, team, LLM provider, MCP connection, SCIM connection, desktop policy, template, config object, plugin, marketplace, SSO connection, audit stream, API key or domain that such a list leaves out is removed, cancelled or deleted by the plan; with `grants`, a grant a resource's `grants` leaves out is revoked. Every other list is additive (the default): what it leaves out stays. The export writes none."
  }),
  organization: Schema.optionalKey(DocumentOrganization).annotateKey({ description: "Absent: the plan leaves the profile as it is." }),
  directory: Schema.optionalKey(DocumentDirectory).annotateKey({ description: "Absent: the plan leaves the setting as it is." }),
  audit: Schema.optionalKey(DocumentAudit).annotateKey({ description: "Absent: the plan leaves the audit log's settings as they are." }),
  ssoPolicy: Schema.optionalKey(DocumentSsoPolicy).annotateKey({ description: "Absent: the plan leaves the SSO policy as it is." }),
  members: Schema.optionalKey(Schema.Array(DocumentMember).check(Schema.isMaxLength(DOCUMENT_MAX_ITEMS))).annotateKey({
    description:
      "The organization's members (removed ones not), sorted by email. Absent: the plan changes no member, even where `members` is authoritative; `[]` names none (authoritative, every member is removed)."
  }),
  invitations: Schema.optionalKey(Schema.Array(DocumentInvitation).check(Schema.isMaxLength(DOCUMENT_MAX_ITEMS))).annotateKey({
    description: "Its pending invitations, sorted by email. Absent: the plan changes none; `[]` names none."
  }),
  teams: Schema.optionalKey(Schema.Array(DocumentTeam).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "Its teams, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  llmProviders: Schema.optionalKey(Schema.Array(DocumentLlmProvider).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "Its LLM providers, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  mcpConnections: Schema.optionalKey(Schema.Array(DocumentMcpConnection).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "Its external MCP connections, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  scimConnections: Schema.optionalKey(Schema.Array(DocumentScimConnection).check(Schema.isMaxLength(100))).annotateKey({
    description: "Its SCIM connections, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  desktopDefaultPolicy: Schema.optionalKey(DesktopPolicyDocumentInput).annotateKey({
    description: "What the organization's default desktop policy sets, every switch written out (the built-in defaults when nobody changed it). Absent: the plan leaves it as it is."
  }),
  desktopPolicies: Schema.optionalKey(Schema.Array(DocumentDesktopPolicy).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "Its other desktop policies, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  templates: Schema.optionalKey(Schema.Array(DocumentTemplate).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "Its shared templates, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  configObjects: Schema.optionalKey(Schema.Array(DocumentConfigObject).check(Schema.isMaxLength(DOCUMENT_MAX_ITEMS))).annotateKey({
    description: "The config objects people made that have a path, sorted by path. Absent: the plan changes none; `[]` names none (authoritative: each is deleted, softly, as `DELETE /v1/config-objects/{configObjectId}` does)."
  }),
  plugins: Schema.optionalKey(Schema.Array(DocumentPlugin).check(Schema.isMaxLength(DOCUMENT_MAX_ITEMS))).annotateKey({
    description: "The plugins people made, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  marketplaces: Schema.optionalKey(Schema.Array(DocumentMarketplace).check(Schema.isMaxLength(DOCUMENT_MAX_ITEMS))).annotateKey({
    description: "The marketplaces people made, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  connectors: Schema.optionalKey(Schema.Array(DocumentConnector).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "Its connectors, sorted by name, with the grants of what they sync. Never authoritative: a connector the list leaves out keeps its grants, and no plan makes or deletes one."
  }),
  domains: Schema.optionalKey(Schema.Array(DocumentDomain).check(Schema.isMaxLength(50))).annotateKey({
    description: "Its email domains, sorted. Absent: the plan changes none; `[]` names none. With `domains` authoritative, an SSO connection's domains must be listed here too."
  }),
  ssoConnections: Schema.optionalKey(Schema.Array(DocumentSsoConnection).check(Schema.isMaxLength(100))).annotateKey({
    description: "Its SSO connections, sorted by name. Absent: the plan changes none; `[]` names none."
  }),
  auditStreams: Schema.optionalKey(Schema.Array(DocumentAuditStream).check(Schema.isMaxLength(MAX_AUDIT_STREAMS))).annotateKey({
    description: "Its audit streams, sorted by URL. Absent: the plan changes none; `[]` names none."
  }),
  apiKeys: Schema.optionalKey(Schema.Array(DocumentApiKey).check(Schema.isMaxLength(DOCUMENT_MAX_TEAMS))).annotateKey({
    description: "Its API keys that have not expired, sorted by name. Absent: the plan changes none; `[]` names none (authoritative: every key is revoked)."
  })
}).annotate({
  identifier: "OrganizationDocument",
  description:
    "An organization described as code: its profile, member directory, audit log settings, SSO policy, members, pending invitations, teams, LLM providers, MCP connections, SCIM connections, desktop policies, templates, config objects, plugins, marketplaces, connectors' grants, email domains, SSO connections, audit streams and API keys. The export writes every part; a document given to a plan may leave parts out.",
  examples: [{
    version: ORGANIZATION_DOCUMENT_VERSION,
    organization: { name: acme.name, logoUrl: null, metadata: { costCenter: "R&D-42" } },
    directory: { emailsVisibleToMembers: false },
    audit: { retentionDays: 365 },
    members: [{ email: ada.email, role: "owner" }, { email: grace.email, role: "admin" }],
    invitations: [{ email: edsger.email, role: "member", delivery: "mailed" }],
    teams: [{ name: "Platform", externalKey: "grp-platform", members: [ada.email, grace.email] }],
    llmProviders: [{
      name: "OpenAI",
      catalogProviderId: "openai",
      apiStyle: "openai-compatible",
      baseUrl: "https://api.openai.com/v1",
      models: [{ id: "gpt-4o", name: "GPT-4o", contextWindow: 128000, maxOutputTokens: 16384, cost: { input: 2.5, output: 10, cacheRead: 1.25 } }],
      headers: [],
      apiKey: { from: "env:OPENAI_API_KEY", version: 1 }
    }],
    mcpConnections: [{
      name: "Linear",
      url: "https://mcp.linear.app/mcp",
      authType: "oauth",
      credentialMode: "shared",
      apiKey: null,
      oauth: { clientId: null, clientSecret: null, authorizationServerIssuer: "https://mcp.linear.app", requestedScopes: ["read", "write"] },
      toolPolicy: { allDisabled: false, disabledTools: ["delete_issue"] }
    }],
    scimConnections: [{ name: "Okta", groupMappingMode: "create_teams", defaultRole: "member", roleRules: [{ group: "Platform admins", role: "admin" }] }],
    configObjects: [{
      relativePath: "skills/deploy-to-staging/SKILL.md",
      objectType: "skill",
      parserMode: "markdown",
      schemaVersion: "1",
      rawSourceText: "---\nname: deploy-to-staging\ndescription: Deploys the current branch to the staging environment.\n---\n# Deploy to staging\n\nRun `make deploy ENV=staging`.\n",
      metadata: null,
      status: "active"
    }],
    plugins: [{
      name: "Release tooling",
      description: "Skills and commands for shipping services.",
      status: "active",
      configObjects: ["skills/deploy-to-staging/SKILL.md"],
      grants: [{ organization: true, role: "viewer" }, { team: "Platform", role: "editor" }]
    }],
    marketplaces: [{ name: "Acme internal", description: "What Acme's teams share with each other.", logoUrl: null, plugins: ["Release tooling"] }]
  }]
})
export type OrganizationDocument = typeof OrganizationDocument.Type

/** The document as the export writes it: every part present. */
export type ExportedDocument = Omit<OrganizationDocument, "plugins" | "connectors"> & {
  readonly organization: typeof DocumentOrganization.Type
  readonly directory: typeof DocumentDirectory.Type
  readonly audit: typeof DocumentAudit.Type
  readonly ssoPolicy: typeof DocumentSsoPolicy.Type
  readonly members: ReadonlyArray<DocumentMember>
  readonly invitations: ReadonlyArray<typeof DocumentInvitation.Type>
  readonly teams: ReadonlyArray<DocumentTeam>
  readonly llmProviders: ReadonlyArray<DocumentLlmProvider>
  readonly mcpConnections: ReadonlyArray<DocumentMcpConnection>
  readonly scimConnections: ReadonlyArray<DocumentScimConnection>
  readonly desktopDefaultPolicy: typeof DesktopPolicyDocumentInput.Type
  readonly desktopPolicies: ReadonlyArray<DocumentDesktopPolicy>
  readonly templates: ReadonlyArray<DocumentTemplate>
  readonly configObjects: ReadonlyArray<DocumentConfigObject>
  readonly plugins: ReadonlyArray<DocumentPlugin & { readonly configObjects: ReadonlyArray<string> }>
  readonly marketplaces: ReadonlyArray<DocumentMarketplace>
  readonly connectors: ReadonlyArray<
    DocumentConnector & {
      readonly plugins: NonNullable<DocumentConnector["plugins"]>
      readonly marketplaces: NonNullable<DocumentConnector["marketplaces"]>
    }
  >
  readonly domains: ReadonlyArray<DocumentDomain>
  readonly ssoConnections: ReadonlyArray<DocumentSsoConnection>
  readonly auditStreams: ReadonlyArray<DocumentAuditStream>
  readonly apiKeys: ReadonlyArray<DocumentApiKey>
}

export const PlanDocumentRequest = Schema.Struct({ document: OrganizationDocument }).annotate({
  examples: [{ document: { version: ORGANIZATION_DOCUMENT_VERSION, teams: [{ name: "Platform", externalKey: null, members: [] }] } }]
})

export const DocumentChangeKind = Schema.Literals(["organization", "directory", "audit", "member", "invitation", "team", "llmProvider", "mcpConnection", "scimConnection", "desktopPolicy", "template", "configObject", "plugin", "marketplace", "connector", "ssoConnection", "ssoPolicy", "auditStream", "apiKey", "domain"]).annotate({
  identifier: "DocumentChangeKind",
  description: "What a change is about."
})

export const DocumentFieldChange = Schema.Struct({
  field: Schema.String.annotate({
    description: "The document's member that changes, for example `role` or `members`; for a connector, `grants` or the grants of what it syncs, `plugins/<name>/grants` and `marketplaces/<name>/grants`."
  }),
  before: Schema.optionalKey(Schema.Json).annotateKey({ description: "Its live value; absent for a create." }),
  after: Schema.optionalKey(Schema.Json).annotateKey({ description: "Its value once applied; absent for a delete." }),
  secret: Schema.optionalKey(Schema.Literals(["set", "rotated"])).annotateKey({
    description: "For a secret (its references are `before` and `after`, never its value): `set`, written where there was none; `rotated`, written again (its version or source changed). The apply needs each one's value (`secrets`)."
  })
}).annotate({ identifier: "DocumentFieldChange" })

export const DocumentChange = Schema.Struct({
  action: Schema.Literals(["create", "update", "delete"]).annotate({
    description: "`create`: the document names what the organization does not have (a team, an invitation sent); `update`: fields differ; `delete`: an authoritative list leaves it out (a member removed, an invitation cancelled, a team deleted)."
  }),
  kind: DocumentChangeKind,
  name: Schema.String.annotate({ description: "Which one: the member's or invitation's email, the team's, LLM provider's, MCP connection's, SCIM connection's, desktop policy's, template's, plugin's, marketplace's, connector's or SSO connection's name, an API key's name, a config object's path, an audit stream's URL, a domain (`default` for the default desktop policy); `organization`, `directory`, `audit` and `ssoPolicy` for those." }),
  fields: Schema.Array(DocumentFieldChange).annotate({ description: "Every field that changes, with before and after." })
}).annotate({ identifier: "DocumentChange" })
export type DocumentChange = typeof DocumentChange.Type

/** A hash as plans write them: `sha256:` and 64 hex digits. */
export const PlanHash = Schema.String.check(Schema.isMaxLength(71), Schema.isPattern(/^sha256:[0-9a-f]{64}$/)).annotate({
  identifier: "PlanHash",
  description: "A SHA-256 hash: `sha256:` and 64 lowercase hex digits.",
  examples: ["sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9"]
})

export class OrganizationPlan extends Schema.Class<OrganizationPlan>("OrganizationPlan")(Schema.Struct({
  planHash: PlanHash.annotate({
    description: "The plan's own hash, of its live state's hash and its changes: what `apply` is given, and what each applied change's audit event names (`via.planHash`)."
  }),
  liveHash: PlanHash.annotate({
    description: "The hash of the live state the plan was computed against: the export's bytes at that moment."
  }),
  changes: Schema.Array(DocumentChange).annotate({
    description: "What applying the document changes, in the document's order (profile, directory, audit settings, members, invitations, teams, each by name). Empty when the organization already is the document."
  }),
  secrets: Schema.Array(SecretSource).annotate({
    description: "The sources of the secrets the apply writes (`set` or `rotated`), sorted: their values go with the apply (`secrets`), read by the applier from the environment or files."
  }),
  markdown: Schema.String.annotate({ description: "The plan as Markdown, for a pull request's comment." })
}).annotate({
  examples: [{
    planHash: "sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9",
    liveHash: "sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    changes: [{ action: "update", kind: "member", name: grace.email, fields: [{ field: "role", before: "member", after: "admin" }] }],
    secrets: [],
    markdown: `### orgplane plan: 0 to create, 1 to update, 0 to delete\n\nLive state \`sha256:2c26…\`.\n\n| action | kind | name | field | before | after |\n| --- | --- | --- | --- | --- | --- |\n| update | member | ${grace.email} | role | "member" | "admin" |\n`
  }]
})) {}

export const ApplyDocumentRequest = Schema.Struct({
  document: OrganizationDocument,
  planHash: PlanHash.annotate({
    description: "The `planHash` of the plan being applied, as `POST /v1/organization/document/plan` answered it for this document."
  }),
  secrets: Schema.optionalKey(
    Schema.Array(Schema.Struct({
      from: SecretSource,
      value: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(8192)).annotate({ description: "The secret, as read from its source." })
    })).check(Schema.isMaxLength(1000))
  ).annotateKey({
    description: "The value of each secret the plan writes, by its source (the plan's `secrets`), read by the applier. Used for this apply only: never stored, logged or answered."
  })
}).annotate({
  examples: [{
    document: { version: ORGANIZATION_DOCUMENT_VERSION, teams: [{ name: "Platform", externalKey: null, members: [] }] },
    planHash: "sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9"
  }]
})

export class AppliedPlan extends Schema.Class<AppliedPlan>("AppliedPlan")(Schema.Struct({
  planHash: PlanHash.annotate({ description: "The plan applied (its `planHash`); each change's audit event names it." }),
  changes: Schema.Array(DocumentChange).annotate({
    description: "The changes made, as the plan listed them. Empty when the organization already was the document (an apply run again)."
  }),
  liveHash: PlanHash.annotate({ description: "The hash of the live state once applied: the `liveHash` of the document's next plan, which is empty." }),
  inviteTokens: Schema.Array(Schema.Struct({ email: Email, inviteToken: Schema.String })).annotate({
    description: "The token of each invitation the apply sent with delivery `shown`, shown this once as `POST /v1/invitations` shows it: hand it to the invitee. Empty for mailed ones."
  }),
  apiKeys: Schema.Array(Schema.Struct({ name: Schema.String, key: Schema.String })).annotate({
    description: "Each API key the apply made (created, or made again with other scopes or expiry), shown this once as `POST /v1/api-keys` shows it."
  }),
  auditStreamSecrets: Schema.Array(Schema.Struct({ url: Schema.String, secret: Schema.String })).annotate({
    description: "The signing secret of each audit stream the apply created, shown this once as `POST /v1/audit/streams` shows it: keep it where the receiver reads it."
  })
}).annotate({
  description: "What an apply changed.",
  examples: [{
    planHash: "sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9",
    changes: [{ action: "update", kind: "member", name: grace.email, fields: [{ field: "role", before: "member", after: "admin" }] }],
    liveHash: "sha256:6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b",
    inviteTokens: [],
    apiKeys: [],
    auditStreamSecrets: []
  }]
})) {}

export const DriftCause = Schema.Struct({
  eventId: Schema.String.annotate({ description: "The audit event of the change (`GET /v1/audit/events/{eventId}`)." }),
  action: Schema.String.annotate({ description: "Its action, for example `member.role.update`." }),
  occurredAt: Timestamp,
  actor: Schema.Struct({
    type: Schema.String.annotate({ description: "`user`, `api_key`, `scim`, `system`, ... as the audit log names the actor." }),
    id: Schema.String,
    label: Schema.NullOr(Schema.String).annotate({ description: "The person's name and email, or the key's name, at the time." })
  }),
  credentialId: Schema.NullOr(Schema.String).annotate({ description: "The session, API key or SCIM token the change came through." })
}).annotate({ identifier: "DriftCause", description: "The last change the audit log records of what drifted, made outside the document." })

export const DriftChange = Schema.Struct({
  ...DocumentChange.fields,
  changedBy: Schema.NullOr(DriftCause).annotate({
    description: "Who changed it since the document was applied, from the audit log; null when the log names none (a resource created and deleted outside it is named by an id the document does not hold)."
  })
}).annotate({ identifier: "DriftChange" })
export type DriftChange = typeof DriftChange.Type

export const DriftProblem = Schema.Struct({
  path: Schema.Array(Schema.Union([Schema.String, Schema.Number])),
  message: Schema.String
}).annotate({ identifier: "DriftProblem", description: "Something of the applied document the organization no longer can be (a member who left)." })

export class DocumentDrift extends Schema.Class<DocumentDrift>("DocumentDrift")(Schema.Struct({
  applied: Schema.NullOr(Schema.Struct({
    planHash: PlanHash,
    appliedAt: Timestamp,
    appliedByMembershipId: Schema.NullOr(Schema.String)
  })).annotate({ description: "The organization's last applied document: its plan and when; null when none was ever applied (nothing can drift)." }),
  changes: Schema.Array(DriftChange).annotate({
    description: "What differs between the applied document and the organization now, as the plan that would bring the document back: `before` is the live value, `after` the document's. Empty: no drift."
  }),
  problems: Schema.Array(DriftProblem).annotate({ description: "What the document names that the organization no longer allows (a member who left): drift the plan cannot undo." })
}).annotate({
  description: "Drift: the organization against its last applied document, each difference with who made it.",
  examples: [{
    applied: { planHash: "sha256:fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9", appliedAt: exampleTime(10), appliedByMembershipId: ada.membershipId },
    changes: [{
      action: "update",
      kind: "member",
      name: grace.email,
      fields: [{ field: "role", before: "owner", after: "admin" }],
      changedBy: {
        eventId: exampleId("aev"),
        action: "member.role.update",
        occurredAt: exampleTime(12),
        actor: { type: "user", id: ada.userId, label: `${ada.name} <${ada.email}>` },
        credentialId: exampleId("ses")
      }
    }],
    problems: []
  }]
})) {}

/**
 * The document's JSON Schema, for editors (draft 2020-12; closed objects, as the API's request bodies are): what
 * `organization-document.schema.json` holds.
 */
export const organizationDocumentJsonSchema = () => {
  const document = Schema.toJsonSchemaDocument(OrganizationDocument, { onExcessProperty: "error" })
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "orgplane organization document",
    ...document.schema,
    $defs: document.definitions
  }
}
