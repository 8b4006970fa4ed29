/**
 * The policy table: every action in an organization with the lowest role that may take it. It is the one source of
 * the server's role checks, of `GET /v1/roles`, and of the role text in the OpenAPI document.
 */
import { addExtension } from "./Extensions.js"
import type { Role } from "./Organizations.js"
import type { Credential } from "./Security.js"

export interface Rule {
  /** The lowest role that may take the action; higher roles may too. */
  readonly role: Role
  /** What the action lets a member do, as `GET /v1/roles` lists it. */
  readonly capability: string
  /** Also restricted to the instance's operator organization. */
  readonly operatorOnly?: true
  /**
   * Taken on the caller's own membership only: an operation that checks it beside other actions (`members.remove`)
   * checks it when its path names the caller's membership, the others otherwise.
   */
  readonly oneself?: true
}

export const Policy = {
  "members.read": { role: "member", capability: "read the organization's members and their roles" },
  "teams.read": { role: "member", capability: "read the organization's teams" },
  "catalog.read": {
    role: "member",
    capability: "read the config objects, plugins and marketplaces shared with them (owners and admins: all of them)"
  },
  "catalog.create": { role: "member", capability: "create config objects and plugins, which they then manage" },
  "connectors.read": {
    role: "member",
    capability: "read connector accounts, and the connector instances shared with them (owners and admins: all of them)"
  },
  "templates.read": {
    role: "member",
    capability: "read, instantiate, change and share the templates they created or were granted (owners and admins: all of them)"
  },
  "templates.create": { role: "member", capability: "create templates, which they then manage" },
  "desktopPolicies.readEffective": { role: "member", capability: "read their own effective desktop policy" },
  "memory.use": { role: "member", capability: "save, search, list and delete their own memories (nobody reads another person's)" },
  "members.leave": { role: "member", capability: "leave the organization", oneself: true },
  "members.readDirectory": {
    role: "admin",
    capability: "read every member's email, user id and suspension, and removed members (members see names and roles, and emails where the organization allows it)"
  },
  "members.manageDirectory": { role: "admin", capability: "choose whether members see each other's emails" },
  "members.changeRole": { role: "admin", capability: "change members' and admins' roles between member and admin" },
  "members.remove": { role: "admin", capability: "remove members and admins" },
  "teams.manage": { role: "admin", capability: "create, change and delete teams" },
  "invitations.manage": { role: "admin", capability: "invite members, list and cancel invitations" },
  "invitations.inviteAdmins": { role: "admin", capability: "invite admins (with invitations.manage)" },
  "marketplaces.create": { role: "admin", capability: "create marketplaces" },
  "catalog.grantOrgWide": {
    role: "admin",
    capability: "share a config object, plugin or marketplace with the whole organization"
  },
  "connectors.manage": {
    role: "admin",
    capability: "connect and disconnect code-host accounts, create connector instances and apply their discovery"
  },
  "desktopPolicies.manage": { role: "admin", capability: "create, read, change and delete desktop policies (enterprise plan)" },
  "sso.manage": {
    role: "admin",
    capability: "configure, test, activate and delete the organization's SSO connections and verify its email domains (enterprise plan)"
  },
  "scim.manage": {
    role: "admin",
    capability:
      "create, change and delete the organization's SCIM connections, issue and revoke their tokens, read their provisioning log and reconcile them (enterprise plan)"
  },
  "apiKeys.manage": { role: "admin", capability: "create, list and revoke API keys" },
  "audit.read": { role: "admin", capability: "read and export the organization's audit log: who did what, when and through which credential" },
  "audit.manage": { role: "owner", capability: "set how long the organization's audit log keeps its events, and manage the endpoints it is streamed to" },
  "organizations.read": { role: "member", capability: "read the organization's name, logo, metadata, plan and member count" },
  "organizations.update": { role: "admin", capability: "change the organization's name, logo and metadata" },
  "organizations.export": {
    role: "admin",
    capability: "export the organization as a document (organization as code): its profile, member directory, members, pending invitations and teams"
  },
  "organizations.delete": {
    role: "owner",
    capability: "delete the organization (it stops serving at once and is purged after the grace period) and restore it within that period"
  },
  "organizations.setPlan": {
    role: "admin",
    capability: "change any organization's plan (in the operator organization only)",
    operatorOnly: true
  },
  "admin.readMetrics": {
    role: "admin",
    capability: "read the instance's usage metrics (in the operator organization only)",
    operatorOnly: true
  },
  "admin.readUsers": {
    role: "admin",
    capability: "list every account of the instance, with its organization count and whether it is disabled (in the operator organization only)",
    operatorOnly: true
  },
  "admin.manageUsers": {
    role: "admin",
    capability: "disable, enable and delete any account of the instance (in the operator organization only)",
    operatorOnly: true
  },
  "admin.readOrganizations": {
    role: "admin",
    capability: "list every organization of the instance, deleted ones with when they will be purged (in the operator organization only)",
    operatorOnly: true
  },
  "admin.deleteOrganizations": {
    role: "admin",
    capability: "delete and restore any organization of the instance (in the operator organization only)",
    operatorOnly: true
  },
  "admin.claimOperator": {
    role: "owner",
    capability: "make their organization the instance's operator with the server's one-time setup token, while nothing else names the operator"
  },
  "members.resetPassword": {
    role: "admin",
    capability:
      "issue a one-time password reset link for a member whose account belongs to no other organization (admins: plain members; owners: admins and members)"
  },
  "admin.resetPasswords": {
    role: "admin",
    capability: "issue a one-time password reset link for any account on the instance (in the operator organization only)",
    operatorOnly: true
  },
  "members.manageOwners": { role: "owner", capability: "make a member an owner, demote or remove another owner" },
  "members.transferOwnership": { role: "owner", capability: "transfer ownership to an admin" },
  "workers.read": { role: "member", capability: "read the organization's workers and their instances" },
  "workers.register": { role: "member", capability: "register workers, which they then manage" },
  "workers.manage": {
    role: "member",
    capability: "change, delete, rotate the token of and upgrade the workers they registered (owners and admins: any worker)"
  },
  "workers.readActivity": {
    role: "member",
    capability: "read the heartbeats and online/offline transitions of the workers they registered (owners and admins: any worker)"
  },
  "workers.manageAny": { role: "admin", capability: "change, delete, rotate the token of and upgrade any worker of the organization" },
  "telemetry.ingest": { role: "member", capability: "send telemetry events of their own use" },
  "mcp.read": {
    role: "member",
    capability: "read the external MCP connections granted to them and the curated MCP presets (owners and admins: every connection)"
  },
  "mcp.connectOwn": { role: "member", capability: "connect and disconnect their own account on the per-member MCP connections granted to them" },
  "mcp.manage": {
    role: "admin",
    capability: "register, change, delete and grant external MCP connections, set their tool policy, and connect their shared credential"
  },
  "mcp.resolve": { role: "admin", capability: "resolve a URL, host or product name to an MCP server and its requirements" },
  "mcp.callTools": { role: "admin", capability: "run one tool of an MCP connection granted to them, as a diagnostic" },
  "capabilities.use": {
    role: "member",
    capability:
      "connect their own mail and calendar suite accounts, and through them create mail drafts, read mail and add meeting links as themselves"
  },
  "llmProviders.use": {
    role: "member",
    capability:
      "read the LLM provider catalog and the LLM providers granted to them, and connect to them (the credential a client needs); manage the providers they created or were granted manager access to"
  },
  "llmProviders.create": { role: "admin", capability: "register LLM providers of the organization, which they then manage" },
  "capabilities.manage": {
    role: "admin",
    capability: "configure the organization's mail and calendar suite OAuth clients and which capabilities they enable"
  }
} as const satisfies Record<string, Rule>

export type Action = keyof typeof Policy

/** Roles from lowest to highest: a role may do everything the roles before it may. */
export const Roles: ReadonlyArray<Role> = ["member", "admin", "owner"]

/** Whether `role` includes everything `required` may do. */
export const hasRole = (role: Role, required: Role): boolean => Roles.indexOf(role) >= Roles.indexOf(required)

/** Whether a member with `role` may take `action` (the operator restriction is checked separately). */
export const allows = (role: Role, action: Action): boolean => hasRole(role, Policy[action].role)

/**
 * Whether a member with `role` may take `action` with `credential`: the role against the table and, for an API key,
 * its scopes (a key made before scopes takes its maker's whole role). The one rule: the server's checks read it, and
 * `GET /v1/me` answers the actions it allows (`credentialActions`), which the MCP server shows operations by. The
 * operator restriction is checked separately.
 */
export const credentialAllows = (role: Role, credential: Credential, action: Action): boolean =>
  allows(role, action) && (credential._tag !== "ApiKey" || credential.scopes === null || credential.scopes.includes(action))

/** A role's actions, in the table's order: what every session of it (and every key made before scopes) may take. */
const roleActions = new Map<Role, ReadonlyArray<Action>>()

/**
 * Every action of the table `credentialAllows` a member with `role` to take with `credential`, in the table's order.
 * A session's, and a key's without scopes, are its role's, made once per role.
 */
export const credentialActions = (role: Role, credential: Credential): ReadonlyArray<Action> => {
  if (credential._tag === "ApiKey" && credential.scopes !== null) return Actions.filter((action) => credentialAllows(role, credential, action))
  let actions = roleActions.get(role)
  if (actions === undefined) roleActions.set(role, actions = Actions.filter((action) => allows(role, action)))
  return actions
}

/** Whether the action is taken on the caller's own membership only (`Rule.oneself`). */
export const takenOnOneself = (action: Action): boolean => {
  const rule: Rule = Policy[action]
  return rule.oneself === true
}

/** The actions whose lowest role is exactly `role`. */
export const actionsOf = (role: Role): ReadonlyArray<Action> =>
  (Object.keys(Policy) as Array<Action>).filter((action) => Policy[action].role === role)

/** Every action of the table, in its order. */
export const Actions: readonly [Action, ...Array<Action>] = [
  "members.read",
  ...(Object.keys(Policy) as Array<Action>).filter((action) => action !== "members.read")
]

/**
 * Actions an API key takes only when one of its scopes names them, whatever its maker's role: what lets a leaked key
 * outlast its revocation or reach beyond its organization's work. Making and revoking keys (so a leaked key cannot
 * mint more); who holds power over the organization's people (ownership, role changes, inviting admins: an admin the
 * key brought in would stay after the key is revoked); the audit log's retention and streams; the organization's
 * sign-in (SSO connections and domains, SCIM provisioning: a leaked key could otherwise hand sign-in to another
 * identity provider); password reset links (a leaked key could otherwise take over the accounts it may reset);
 * deleting an organization (its own owners', or the operator's over any); and the instance's operator powers over
 * plans, the operator itself and people's accounts, and its lists of every account and every organization (other
 * organizations' people and names; the instance's metrics are counts and stay a default key's).
 */
export const KeyGuardedActions: ReadonlyArray<Action> = [
  "apiKeys.manage",
  "members.manageOwners",
  "members.transferOwnership",
  "members.changeRole",
  "invitations.inviteAdmins",
  "audit.manage",
  "sso.manage",
  "scim.manage",
  "organizations.setPlan",
  "admin.claimOperator",
  "members.resetPassword",
  "admin.resetPasswords",
  "admin.manageUsers",
  "admin.readUsers",
  "admin.readOrganizations",
  "organizations.delete",
  "admin.deleteOrganizations"
]

/** OpenAPI extension members naming the actions an operation checks (the document's `transform` adds their text). */
export const ActionsExtension = "x-orgplane-actions"

/**
 * Marks an endpoint with the actions it checks: the OpenAPI document lists them with their lowest roles, from
 * this table, so the documented roles cannot drift from the enforced ones.
 */
export const requires = (...actions: readonly [Action, ...Array<Action>]) => addExtension(ActionsExtension, actions)

/** Who may take an action, as the OpenAPI document says it. */
const holders = (rule: Rule): string =>
  (rule.role === "owner" ? "owners" : rule.role === "admin" ? "owners and admins" : "any member") +
  (rule.operatorOnly ? " of the operator organization" : "")

/**
 * The sentence the OpenAPI document appends to an operation that checks `actions`, with the refusal the caller
 * gets otherwise: none when every member may, `operator_only` for an operator action.
 */
export const describeActions = (actions: ReadonlyArray<Action>): string => {
  const rules: ReadonlyArray<Rule> = actions.map((action) => Policy[action])
  const refusal = rules.some((rule) => rule.operatorOnly)
    ? " (403 `operator_only` otherwise)"
    : rules.some((rule) => rule.role !== "member")
    ? " (403 `insufficient_role` otherwise)"
    : ""
  return `Policy: ${actions.map((action) => `\`${action}\`, ${holders(Policy[action])}`).join("; ")}${refusal}.`
}
