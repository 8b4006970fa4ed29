/**
 * The audit log's closed catalog of actions (`GET /v1/audit/event-types`), and each operation's declaration of
 * what it records: `audits("member.role.update")` on an endpoint names the action its success (and, for an
 * operation that checks a role, its refusal) records; `notAudited("...")` says, with the reason, that an operation
 * that is not a GET changes nothing an organization's log should hold (a search sent as POST, a sign-up in no
 * organization). A test walks the API and fails for a non-GET operation that declares neither, as the access test
 * does for roles. A GET declares an action only when it hands out what the organization protects (an `access`
 * action: a stored credential, the audit log's export). The OpenAPI document shows the declaration as `x-orgplane-audit`.
 */
import * as Context from "effect/Context"
import * as HttpApi from "effect/http-api/HttpApi"
import type * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Option from "effect/Option"
import { addExtension } from "./Extensions.js"

/** What kind of thing an action is: a change of state, a security event, a read of protected data, a run. */
export type AuditCategory = "change" | "security" | "access" | "execution"

export interface AuditActionRule {
  readonly category: AuditCategory
  /** What happened, as the catalog says it: one sentence, past tense. */
  readonly description: string
}

const change = (description: string): AuditActionRule => ({ category: "change", description })
const security = (description: string): AuditActionRule => ({ category: "security", description })
const access = (description: string): AuditActionRule => ({ category: "access", description })
const execution = (description: string): AuditActionRule => ({ category: "execution", description })

/**
 * Every action the log records, named `<resource>.<verb>` (or `<resource>.<part>.<verb>`), so a prefix
 * (`member.`, `sso.connection.`) selects a family.
 */
export const AuditActions = {
  // Sign-in and credentials
  "session.create": security("A person signed in (password or SSO) and a session was created."),
  "session.revoke": security("A person signed out, or ended one or all others of their sessions."),
  "session.switch_organization": security("A session switched the organization it acts in."),
  "user.update": change("A person changed their own name or email."),
  "user.password.change": security("A person changed their password."),
  "user.password.reset_link.create": security(
    "A one-time password reset link was issued for a person: by an owner or admin, the instance's operator, the server's own command, or mailed at a request."
  ),
  "user.password.reset": security("A person set a new password with a one-time reset link; every session of theirs ended."),
  "user.email.verify": security("A person proved their email address with the link mailed to it."),
  "user.email.change": security("A person changed their account's email (the new address unverified until proven)."),
  "user.delete": security(
    "An account was deleted, by its person or the instance's operator: recorded in each organization it left and, for the operator, in theirs."
  ),
  "user.disable": security("The instance's operator disabled an account: its sessions ended, its API keys and sign-ins refused."),
  "user.enable": security("The instance's operator enabled a disabled account again."),
  "user.reclaim": security(
    "An organization's SSO provider or directory, vouching for an address of a domain it verified, took back an account whose email nobody had proven: its password, sessions, API keys and other identity links ended (the reason counts them)."
  ),
  "api_key.create": security("An API key was created."),
  "api_key.revoke": security("An API key was revoked."),
  // The organization and its people
  "organization.create": change("An organization was created."),
  "organization.plan.update": change("The instance's operator changed an organization's plan."),
  "organization.update": change("An organization's name, logo or metadata was changed."),
  "organization.document.drift": change(
    "The organization drifted from its last applied document: the reason names each differing field and who changed it (the drift job, every two minutes, once per new drift)."
  ),
  "organization.document.apply": change(
    "An organization document's plan was applied (organization as code): each of its changes is an event of its own, in the same transaction, its `via.planHash` naming the plan."
  ),
  "organization.delete": security("An organization was deleted (an owner, or the instance's operator): it stopped serving, restorable until its purge."),
  "organization.restore": security("A deleted organization was restored before its purge."),
  "organization.purge": security("A deleted organization, or an unclaimed provisional workspace, was purged: every row of it removed (the counts per table are the reason). Kept in the operator organization's log."),
  "instance.operator.claim": security("An owner made their organization the instance's operator with the one-time setup token."),
  "member.role.update": change("A member's role was changed."),
  "member.directory.update": security("What plain members see of each other (their emails) was changed."),
  "member.remove": change("A member was removed, or left."),
  "member.ownership.transfer": change("Ownership was transferred to another member."),
  "team.create": change("A team was created."),
  "team.update": change("A team was renamed or its external key changed."),
  "team.delete": change("A team was deleted."),
  "team.member.add": change("Members were added to a team."),
  "team.member.remove": change("A member was removed from a team."),
  "invitation.create": change("An invitation was sent."),
  "invitation.cancel": change("An invitation was cancelled."),
  "invitation.accept": change("An invitation was accepted."),
  "workspace.bootstrap": change("A workspace was bootstrapped."),
  "workspace.claim.accept": change("A workspace claim was accepted."),
  // Catalog
  "config_object.create": change("A config object was created."),
  "config_object.version.create": change("A new version of a config object was created."),
  "config_object.archive": change("A config object was archived."),
  "config_object.restore": change("A config object was restored."),
  "config_object.delete": change("A config object was deleted."),
  "plugin.create": change("A plugin was created."),
  "plugin.update": change("A plugin was changed."),
  "plugin.archive": change("A plugin was archived."),
  "plugin.restore": change("A plugin was restored."),
  "plugin.delete": change("A plugin was deleted."),
  "plugin.config_object.add": change("A config object was added to a plugin."),
  "plugin.config_object.remove": change("A config object was removed from a plugin."),
  "marketplace.create": change("A marketplace was created."),
  "marketplace.update": change("A marketplace was changed."),
  "marketplace.delete": change("A marketplace was deleted."),
  "marketplace.plugin.add": change("A plugin was added to a marketplace."),
  "marketplace.plugin.remove": change("A plugin was removed from a marketplace."),
  "access.grant": change("Access to a resource was granted to a member, a team or the organization."),
  "access.revoke": change("An access grant was revoked."),
  // Connectors
  "connector_account.create": change("A code-host account was connected."),
  "connector_account.disconnect": change("A code-host account was disconnected."),
  "connector_instance.create": change("A connector instance was created."),
  "connector_instance.update": change("A connector instance was changed."),
  "connector_instance.enable": change("A connector instance was enabled."),
  "connector_instance.disable": change("A connector instance was disabled."),
  "connector_instance.remove": change("A connector instance was removed."),
  "connector_instance.discovery.apply": change("A connector instance's discovery was applied."),
  "connector_instance.sync": execution("A member started a connector sync."),
  "connector_target.create": change("A connector target was created."),
  "connector_target.update": change("A connector target was changed."),
  "connector_target.resync": execution("A connector target's resync was started."),
  "connector_sync.complete": execution("A connector sync finished on the durable engine (applied, or failed: the reason says why)."),
  "connector_mapping.create": change("A connector mapping was created."),
  "connector_mapping.update": change("A connector mapping was changed."),
  "connector_mapping.delete": change("A connector mapping was deleted."),
  // Desktop policies
  "desktop_policy.create": change("A desktop policy was created."),
  "desktop_policy.update": change("A desktop policy was changed."),
  "desktop_policy.delete": change("A desktop policy was deleted."),
  // SSO
  "sso.domain.verification.request": change("Verification of an email domain was requested."),
  "sso.domain.verify": security("An email domain was verified."),
  "sso.domain.delete": security("An email domain was removed."),
  "sso.connection.create": security("An SSO connection was created."),
  "sso.connection.update": security("An SSO connection's settings were changed."),
  "sso.connection.delete": security("An SSO connection was deleted."),
  "sso.connection.activate": security("An SSO connection was activated."),
  "sso.connection.deactivate": security("An SSO connection was deactivated."),
  "sso.connection.test": security("A test of an SSO connection was started."),
  "sso.connection.metadata.refresh": change("An SSO connection's IdP metadata was refetched."),
  "sso.policy.update": security("The organization's SSO enforcement policy was changed."),
  // SCIM
  "scim.connection.create": security("A SCIM connection was created."),
  "scim.connection.update": security("A SCIM connection's settings were changed."),
  "scim.connection.delete": security("A SCIM connection was deleted."),
  "scim.token.create": security("A SCIM token was issued."),
  "scim.token.revoke": security("A SCIM token was revoked."),
  "scim.connection.reconcile": execution("A SCIM connection was reconciled."),
  "scim.user.provision": change("The directory provisioned a User (a member)."),
  "scim.user.update": change("The directory changed a User (including suspension and restoration)."),
  "scim.user.deprovision": change("The directory deleted a User (the membership was removed)."),
  "scim.group.provision": change("The directory provisioned a Group."),
  "scim.group.update": change("The directory changed a Group or its members."),
  "scim.group.delete": change("The directory deleted a Group."),
  // Workers
  "worker.register": change("A worker was registered."),
  "worker.update": change("A worker was changed."),
  "worker.delete": change("A worker was deleted."),
  "worker.token.rotate": security("A worker's token was rotated."),
  "worker.runtime.upgrade": execution("A worker's runtime upgrade was requested."),
  "worker.instance.register": change("A worker runtime registered its instance."),
  // Memory, templates, telemetry
  "memory.save": change("A person saved a memory."),
  "memory.delete": change("A person deleted a memory."),
  "template.create": change("A template was created."),
  "template.update": change("A template was changed (a new version, or its name, description or kind)."),
  "template.delete": change("A template was deleted."),
  // MCP
  "mcp_connection.create": change("An MCP connection was registered."),
  "mcp_connection.update": change("An MCP connection was changed."),
  "mcp_connection.delete": change("An MCP connection was deleted."),
  "mcp_connection.tool_policy.update": change("An MCP connection's tool policy was changed."),
  "mcp_connection.connect": security("A credential was connected to an MCP connection (shared or a member's own)."),
  "mcp_connection.disconnect": security("A credential was disconnected from an MCP connection."),
  "mcp_connection.tool.call": execution("An MCP tool was called as a diagnostic."),
  "mcp_connection.resolve": execution("A URL, host or product name was resolved to an MCP server."),
  // LLM providers
  "llm_provider.create": change("An LLM provider was registered."),
  "llm_provider.update": change("An LLM provider was changed."),
  "llm_provider.delete": change("An LLM provider was deleted."),
  "llm_provider.credential.set": security("An LLM provider's credential was set or replaced."),
  "llm_provider.credential.read": access("An LLM provider's credential was read to connect to it."),
  "llm_provider.test": execution("An LLM provider was tested with its stored credential."),
  // Capabilities
  "suite_client.set": security("A mail or calendar suite's OAuth client was configured."),
  "suite_client.delete": security("A mail or calendar suite's OAuth client was removed."),
  "suite_connection.connect": security("A person connected their mail or calendar suite account."),
  "suite_connection.disconnect": security("A person disconnected their mail or calendar suite account."),
  "capability.mail_draft.create": execution("A mail draft was created through the mail suite."),
  "capability.calendar_event.update": execution("A calendar event was changed through the calendar suite."),
  // The audit log itself
  "audit.export": access("The audit log was exported (the filters are the event's reason)."),
  "audit.settings.update": security("The audit log's settings (its retention) were changed."),
  "audit.retention.apply": change("Events older than the organization's retention were deleted by the daily job."),
  "audit.stream.create": security("An audit stream (an endpoint receiving the organization's events) was registered."),
  "audit.stream.update": security("An audit stream's URL or description was changed, or it was paused or resumed."),
  "audit.stream.delete": security("An audit stream was deleted."),
  "audit.stream.secret.rotate": security("An audit stream's signing secret was replaced."),
  "audit.stream.test": execution("A signed test delivery was sent to an audit stream's endpoint.")
} as const satisfies Record<string, AuditActionRule>

export type AuditAction = keyof typeof AuditActions

/** The OpenAPI extension member carrying an operation's declaration: its action, or `false` with a reason. */
export const AuditExtension = "x-orgplane-audit"

export type AuditDeclaration =
  | { readonly action: AuditAction }
  | { readonly action: false; readonly reason: string }

/** Marks an endpoint with the action its success records (and, if it checks a role, its refusal). */
export const audits = (action: AuditAction) => addExtension(AuditExtension, { action } satisfies AuditDeclaration)

/** Marks an endpoint that is not a GET and records nothing, with the reason. */
export const notAudited = (reason: string) => addExtension(AuditExtension, { action: false, reason } satisfies AuditDeclaration)

/** Whether an extension member's value is a declaration (what `audits` and `notAudited` write). */
const isAuditDeclaration = (value: unknown): value is AuditDeclaration =>
  typeof value === "object" && value !== null && "action" in value &&
  ((typeof value.action === "string" && value.action in AuditActions) ||
    (value.action === false && "reason" in value && typeof value.reason === "string"))

/** Each operation's declaration by operation id (`teams.create`), read from its endpoint's markers. */
export const auditDeclarations = <Id extends string, Groups extends HttpApiGroup.Constraint>(
  api: HttpApi.HttpApi<Id, Groups>
): ReadonlyMap<string, AuditDeclaration> => {
  const declarations = new Map<string, AuditDeclaration>()
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, group }) {
      const declaration = Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Override))?.[AuditExtension]
      if (isAuditDeclaration(declaration)) {
        declarations.set(group.topLevel ? endpoint.identifier : `${group.identifier}.${endpoint.identifier}`, declaration)
      }
    }
  })
  return declarations
}
