/**
 * The server's dependency rule, checked by `pnpm lint:deps` (dependency-cruiser) in CI after the typecheck.
 *
 * packages/server/src has three kinds of folders:
 * - shared: platform/ and integrations/ (what every area may use); they import each other, never an area;
 * - migrations/: imports platform/ at most;
 * - areas: every other folder. An area imports platform/, integrations/, @orgplane/schema, its own files, and of
 *   another area only the modules it declares below: the services it depends on (each area's `dependsOn`). Anything
 *   else of another area (its repositories, its handlers, its helpers) is a violation, and so is a folder that is not
 *   declared here (a new area states what it depends on, even if nothing).
 * The files at the root of src/ (Server.ts composes everything, index.ts re-exports) are free; any file may read
 * src/Version.ts (the package's version).
 *
 * The declared dependencies between areas form no cycle, and no-folder-cycles checks the imports themselves: no two
 * folders import each other, directly or through others.
 */
const src = "^packages/server/src/"

/** Folders any area may import. */
const shared = ["platform", "integrations"]

/**
 * Each area and the modules of other areas it may import (paths under src/, without `.ts`). Keep the lists short:
 * a module listed here is another area's public surface.
 */
const areas = {
  access: ["identity/Memberships", "teams/Teams"],
  // /mcp: the API to agents, each tool's request run through the server's own router; of identity only the prefix
  // that tells an API key sent as a bearer token from a session token.
  agents: ["identity/ApiKeys"],
  // An account's deletion and export: identity's part through its services; what other areas keep of the person is
  // forgotten (or read) in the deletion's one transaction, so through their repositories, as scim's suspension does.
  accounts: [
    "identity/Accounts",
    "identity/AccountRecords",
    "identity/AccountRemoval",
    "identity/Authentication",
    "identity/IdentityLinksRepository",
    "identity/Operator",
    "identity/OrganizationDeletion",
    "audit/AuditRepository",
    "capabilities/SuiteRepository",
    "mcp/CredentialsRepository",
    "memory/MemoryRepository",
    "scim/UsersRepository",
    "sso/IntentsRepository"
  ],
  admin: ["identity/Organizations", "identity/Operator", "identity/PasswordResets", "identity/OperatorUsers", "accounts/AccountDeletion", "identity/OrganizationDeletion"],
  audit: [],
  capabilities: [],
  catalog: [
    "access/Access",
    // A marketplace's cloud readiness reads the organization's MCP connections and the presets.
    "mcp/Connections",
    "mcp/ConnectionsRepository",
    "mcp/PresetsConfig"
  ],
  connectors: [
    "access/Access",
    "identity/Memberships",
    "catalog/Parsing",
    // Discovery's apply and the sync's materializer write catalog rows inside the connectors' own transactions
    // (a target's files become config objects, plugins and marketplaces in one commit), so they use catalog's
    // repositories rather than its services, whose methods each end their own transaction.
    "catalog/ComponentFilesRepository",
    "catalog/ConfigObjectsRepository",
    "catalog/ContentsRepository",
    "catalog/MarketplacesRepository",
    "catalog/PluginsRepository"
  ],
  identity: [],
  // Accepting with `signUp` makes an account: counted by sign-up's throttle.
  invitations: ["identity/Accounts", "identity/Memberships", "identity/Organizations", "identity/Ownership", "identity/SignUpThrottle"],
  llm: ["access/Access"],
  mcp: ["access/Access", "identity/Memberships"],
  // Making someone an owner is within the organizations they may own.
  members: ["identity/Memberships", "identity/OwnershipQuota"],
  memory: [],
  // Changes go through each part's service; the document is read from each part's storage, which the drift job does
  // with no caller (orgdocument/LiveDocuments.ts).
  orgdocument: [
    "identity/Organizations",
    "invitations/Invitations",
    "members/Members",
    "teams/Teams",
    "identity/Memberships",
    "identity/OrganizationsRepository",
    "invitations/InvitationsRepository",
    "members/DirectoryRepository",
    "teams/TeamsRepository",
    "audit/Audit",
    "audit/AuditRepository",
    "llm/LlmProviders",
    "llm/LlmProvidersRepository",
    "llm/LlmConfig",
    "mcp/Connections",
    "mcp/ConnectionsRepository",
    "access/Access",
    "scim/Connections",
    "scim/ConnectionsRepository",
    "teams/DirectoryTeams",
    "policies/DesktopPolicies",
    "policies/DesktopPoliciesRepository",
    "policies/Effective",
    "templates/Templates",
    "templates/TemplatesRepository",
    "catalog/Plugins",
    "catalog/PluginsRepository",
    "catalog/ConfigObjects",
    "catalog/ConfigObjectsRepository",
    "catalog/Parsing",
    "catalog/Marketplaces",
    "catalog/MarketplacesRepository",
    "connectors/ConnectorsRepository",
    "sso/Saml",
    "sso/Sso",
    "sso/SsoRepository",
    "sso/Policy",
    "sso/PolicyRepository",
    "audit/Streams",
    "audit/StreamsRepository",
    "audit/StreamWake",
    "identity/ApiKeys",
    "identity/ApiKeysRepository"
  ],
  policies: ["identity/Memberships"],
  // SSO sign-in makes people, members and team members as password sign-up and invitations do (JIT).
  // The identity links it makes and follows, and Ownership's decision on an account with the provider's email.
  sso: [
    "identity/Authentication",
    "identity/Accounts",
    "identity/IdentityLinksRepository",
    "identity/Memberships",
    "identity/Operator",
    "identity/Ownership",
    "identity/SsoEnforcement",
    "identity/UsersRepository",
    "teams/TeamsRepository"
  ],
  scim: [
    "identity/Accounts",
    "identity/Memberships",
    "identity/Ownership",
    "identity/UsersRepository",
    "teams/DirectoryTeams",
    "mcp/CredentialsRepository",
    "capabilities/SuiteRepository"
  ],
  system: [],
  teams: ["identity/Memberships"],
  telemetry: [],
  templates: ["access/Access"],
  workers: []
}

const alternatives = (names) => names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|")
const version = `${src}Version\\.ts$`

const areaRules = Object.entries(areas).map(([area, modules]) => ({
  name: `area-${area}`,
  severity: "error",
  comment: `${area}/ imports platform/, integrations/, its own files and, of other areas, only ` +
    (modules.length === 0 ? "nothing" : modules.join(", ")) +
    " (declared in .dependency-cruiser.cjs: add a service there, or move a shared engine to platform/)",
  from: { path: `${src}${area}/` },
  to: {
    path: src,
    pathNot: [
      `${src}(${alternatives([...shared, area])})/`,
      version,
      ...(modules.length === 0 ? [] : [`${src}(${alternatives(modules)})\\.ts$`])
    ]
  }
}))

const declared = alternatives([...shared, "migrations", ...Object.keys(areas)])

module.exports = {
  forbidden: [
    ...areaRules,
    {
      name: "shared-imports-no-area",
      severity: "error",
      comment: "platform/ and integrations/ are what every area uses: they import each other and nothing area-specific",
      from: { path: `${src}(${alternatives(shared)})/` },
      to: { path: src, pathNot: [`${src}(${alternatives(shared)})/`, version] }
    },
    {
      name: "migrations-import-platform-only",
      severity: "error",
      comment: "migrations are forward-only history: they may use platform/ helpers, never an area's code",
      from: { path: `${src}migrations/` },
      to: { path: src, pathNot: [`${src}(migrations|platform)/`, version] }
    },
    {
      name: "undeclared-folder",
      severity: "error",
      comment: "every folder of packages/server/src is shared, migrations or an area declared in .dependency-cruiser.cjs",
      from: { path: `${src}[^/]+/`, pathNot: `${src}(${declared})/` },
      to: {}
    },
    {
      name: "no-folder-cycles",
      severity: "error",
      comment: "no two folders of packages/server/src import each other, directly or through other folders",
      scope: "folder",
      from: { path: src },
      to: { circular: true }
    },
    {
      name: "no-module-cycles",
      severity: "error",
      comment: "no module of the server imports itself through others",
      from: { path: src },
      to: { circular: true }
    }
  ],
  options: {
    includeOnly: src,
    doNotFollow: { path: "node_modules" },
    tsConfig: { fileName: "tsconfig.json" },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: [".ts", ".js"] }
  }
}
