/**
 * `orgplane scim connections … | tokens … | events | reconcile`: the directories (Okta, Entra ID, ...) that provision
 * the active organization's members and teams through SCIM 2.0, their tokens, event log and reconcile (enterprise
 * plan; owners and admins).
 */
import { CreatedScimToken, CreateScimConnectionRequest, CreateScimTokenRequest, exampleId, type ScimConnection, ScimConnectionId, ScimConnectionPage, ScimConnectionResponse, ScimConnectionsApi, ScimDefaultRole, type ScimEvent, ScimEventListQuery, ScimEventOutcome, ScimEventPage, ScimGroupMappingMode, ScimReconcileReport, ScimRoleRules, ScimTokenId, ScimTokenPage, Timestamp, UpdatedScimConnection } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaGetter from "effect/SchemaGetter"
import * as SchemaIssue from "effect/SchemaIssue"
import * as Commands from "../Commands.js"
import { UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

const connectionId = Inputs.argument("connectionId", { schema: ScimConnectionId, description: "The SCIM connection (scc_…)." })

/**
 * `--role-rule <group>=<role>`, repeated: split at the last `=` (a group name may hold one; a role never does), then
 * checked as the API's `roleRules`.
 */
const RoleRulesFromFlags = Schema.Array(Schema.String).pipe(Schema.decodeTo(ScimRoleRules, {
  decode: SchemaGetter.transformEffect((flags: ReadonlyArray<string>) =>
    Effect.forEach(flags, (flag) => {
      const at = flag.lastIndexOf("=")
      return at === -1
        ? Effect.fail(new SchemaIssue.InvalidValue({ message: "each rule must be <group>=<role>, e.g. \"Platform admins=admin\"" }, flags))
        // The role is any text here: ScimRoleRules decodes it next, and refuses anything but admin or member.
        : Effect.succeed({ group: flag.slice(0, at), role: flag.slice(at + 1) as "admin" | "member" })
    })
  ),
  encode: SchemaGetter.transform((rules: ReadonlyArray<{ readonly group: string; readonly role: string }>) => rules.map((rule) => `${rule.group}=${rule.role}`))
}))

const settings = {
  groupMapping: Inputs.optional(Inputs.choice("group-mapping", ScimGroupMappingMode.literals, {
    description:
      "What the directory's groups do to teams: metadata_only (nothing), create_teams (a team per group, managed by the directory), link_by_external_key (the team whose external key is the group's externalId)."
  })),
  defaultRole: Inputs.optional(Inputs.choice("default-role", ScimDefaultRole.literals, {
    description: "The role of members the directory creates (never owner)."
  })),
  roleRules: Inputs.repeatedText("role-rule", {
    placeholder: "<group>=<role>",
    description:
      "A member of this group (displayName or externalId, any case) gets this role (admin or member) when it is higher than the default; at most 100.",
    schema: RoleRulesFromFlags
  })
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`

const rulesOf = (connection: ScimConnection) =>
  connection.roleRules.length === 0 ? "none" : connection.roleRules.map((rule) => `"${rule.group}" → ${rule.role}`).join(", ")

const healthOf = ({ health, id }: ScimConnection) =>
  health.unresolvedFailures === 0
    ? "no unresolved failures"
    : `${plural(health.unresolvedFailures, "write")} refused or failed since the last success (last ${
      Output.date(health.lastFailureAt)
    }): see 'orgplane scim events ${id}'`

export const describe = (connection: ScimConnection) =>
  [
    `${connection.name} (${connection.id})`,
    Output.fields([
      ["base URL", connection.baseUrl],
      ["group mapping", connection.groupMappingMode],
      ["default role", connection.defaultRole],
      ["role rules", rulesOf(connection)],
      ["provisioned", `${plural(connection.users, "user")}, ${plural(connection.groups, "group")}`],
      ["active tokens", String(connection.activeTokens)],
      ["last success", connection.health.lastSuccessAt === null ? "never" : Output.date(connection.health.lastSuccessAt)],
      ["health", healthOf(connection)]
    ]).split("\n").map((line) => `  ${line}`).join("\n"),
    ...(connection.activeTokens === 0
      ? [`No active token: the directory cannot connect until 'orgplane scim tokens create ${connection.id} --name <name>'.`]
      : [])
  ].join("\n")

const describeReport = (report: typeof ScimReconcileReport.Type) =>
  report.repaired.length === 0
    ? `Nothing had drifted (checked ${report.checked} SCIM Users and Groups).`
    : [
      `Checked ${report.checked} SCIM Users and Groups; repaired ${report.repaired.length}:`,
      ...report.repaired.map((repair) => `  ${repair.resourceType} ${repair.resourceId}: ${repair.change}`)
    ].join("\n")

export const create = Commands.endpoint("create", {
  summary: "Create a SCIM connection for a directory; it does nothing until a token is created for it.",
  details: [
    "Defaults: --group-mapping metadata_only, --default-role member, no role rules. Then create a token ('orgplane scim tokens create <connectionId> --name <name>') and give the directory its base URL and the token."
  ],
  inputs: { name: Inputs.argument("name", { schema: CreateScimConnectionRequest.fields.name }), ...settings },
  call: (client, input) =>
    client.scimConnections.create({
      payload: {
        name: input.name,
        ...Inputs.ifSome("groupMappingMode", input.groupMapping),
        ...Inputs.ifSome("defaultRole", input.defaultRole),
        ...(input.roleRules.length > 0 ? { roleRules: input.roleRules } : {})
      }
    }),
  output: ScimConnectionResponse,
  human: ({ connection }) => `Created:\n${describe(connection)}`
})

export const list = Commands.list("list", {
  summary: "List the organization's SCIM connections, oldest first, with their counts and health.",
  noun: "SCIM connections",
  inputs: {},
  call: (client, _, page) => client.scimConnections.list({ query: page }),
  output: ScimConnectionPage,
  columns: [
    ["id", (connection) => connection.id],
    ["name", (connection) => connection.name],
    ["mode", (connection) => connection.groupMappingMode],
    ["users", (connection) => String(connection.users)],
    ["groups", (connection) => String(connection.groups)],
    ["tokens", (connection) => String(connection.activeTokens)],
    ["last success", (connection) => Output.date(connection.health.lastSuccessAt)],
    ["failures", (connection) => String(connection.health.unresolvedFailures)],
    ["base url", (connection) => connection.baseUrl]
  ]
})

export const get = Commands.endpoint("get", {
  summary: "Show a SCIM connection: base URL, group mapping, role rules, counts and health.",
  inputs: { connectionId },
  call: (client, { connectionId }) => client.scimConnections.get({ params: { connectionId } }),
  output: ScimConnectionResponse,
  human: ({ connection }) => describe(connection)
})

export const update = Commands.endpoint("update", {
  examples: [
    ["Members the directory makes become admins.", ["scim", "connections", "update", exampleId("scc"), "--default-role", "admin"]],
  ],
  summary: "Rename a SCIM connection or change what its directory does (applied at once by a reconcile).",
  details: [
    "A new --group-mapping, --default-role or set of --role-rule (which replaces the rules; --clear-role-rules removes them) is applied at once: the organization is reconciled with it (teams created, linked or released; roles set by the rules; owners never demoted), and the command prints what that changed."
  ],
  inputs: {
    connectionId,
    name: Inputs.optional(Inputs.text("name", { placeholder: "<name>", schema: CreateScimConnectionRequest.fields.name })),
    ...settings,
    clearRoleRules: Inputs.boolean("clear-role-rules", { description: "Remove every role rule." })
  },
  call: (client, input) =>
    Effect.gen(function*() {
      if (input.clearRoleRules && input.roleRules.length > 0) {
        return yield* new UsageError({ message: "give --role-rule or --clear-role-rules, not both" })
      }
      const payload = {
        ...Inputs.ifSome("name", input.name),
        ...Inputs.ifSome("groupMappingMode", input.groupMapping),
        ...Inputs.ifSome("defaultRole", input.defaultRole),
        ...(input.roleRules.length > 0 ? { roleRules: input.roleRules } : input.clearRoleRules ? { roleRules: [] } : {})
      }
      if (Object.keys(payload).length === 0) {
        return yield* new UsageError({
          message: "give something to change (--name, --group-mapping, --default-role, --role-rule, --clear-role-rules)"
        })
      }
      return yield* client.scimConnections.update({ params: { connectionId: input.connectionId }, payload })
    }),
  output: UpdatedScimConnection,
  human: ({ connection, reconciled }) =>
    [`Updated:\n${describe(connection)}`, ...(reconciled === null ? [] : [`Applied at once. ${describeReport(reconciled)}`])].join("\n")
})

const DeletedConnection = Schema.Struct({ ok: Schema.Literal(true), deleted: ScimConnectionId })

export const del = Commands.endpoint("delete", {
  summary: "Delete a SCIM connection: its tokens stop working; its members stay as they are and its teams become ordinary teams.",
  inputs: { connectionId },
  call: (client, { connectionId }) =>
    client.scimConnections.delete({ params: { connectionId } }).pipe(Effect.as({ ok: true as const, deleted: connectionId })),
  output: DeletedConnection,
  human: ({ deleted }) =>
    `Deleted SCIM connection ${deleted}: its tokens stopped working and its Users, Groups and event log are gone. Its members stay as they are (suspended ones stay suspended) and its teams are ordinary teams now.`
})

export const createToken = Commands.endpoint("create", {
  summary: "Create a token for a SCIM connection and print it with the base URL (only this once).",
  details: [
    "A connection may have several tokens: to rotate, create a new one, give it to the directory, see it used ('orgplane scim tokens list'), then revoke the old one. --json prints the whole answer, token included."
  ],
  inputs: {
    connectionId,
    name: Inputs.text("name", { placeholder: "<name>", schema: CreateScimTokenRequest.fields.name }),
    expiresAt: Inputs.optional(Inputs.text("expires-at", {
      placeholder: "<time>",
      description: "When the token stops working (ISO 8601, in the future, e.g. 2030-01-01T00:00:00Z). Default: never.",
      schema: Timestamp
    }))
  },
  call: (client, { connectionId, expiresAt, name }) =>
    client.scimConnections.createToken({ params: { connectionId }, payload: { name, ...Inputs.ifSome("expiresAt", expiresAt) } }),
  output: CreatedScimToken,
  human: ({ baseUrl, scimToken, token }) =>
    [
      `Created SCIM token '${scimToken.name}' (${scimToken.id}) for ${scimToken.connectionId}, expires ${
        scimToken.expiresAt === null ? "never" : Output.date(scimToken.expiresAt)
      }.`,
      "The token is shown only this once. Give the directory both, now:",
      "",
      `  SCIM base URL  ${baseUrl}`,
      `  token          ${token}`,
      "",
      "Okta: the app's Provisioning tab, Integration: SCIM connector base URL, authentication mode HTTP Header (the token).",
      "Microsoft Entra ID: the enterprise application's Provisioning, Admin Credentials: Tenant URL and Secret Token.",
      `Its first use shows in 'orgplane scim tokens list ${scimToken.connectionId}'.`
    ].join("\n")
})

export const listTokens = Commands.list("list", {
  summary: "List a SCIM connection's tokens, newest first, revoked and expired ones included (never the tokens themselves).",
  noun: "tokens",
  inputs: { connectionId },
  call: (client, { connectionId }, page) => client.scimConnections.listTokens({ params: { connectionId }, query: page }),
  output: ScimTokenPage,
  columns: [
    ["id", (token) => token.id],
    ["name", (token) => token.name],
    ["state", (token) => token.state],
    ["created", (token) => Output.date(token.createdAt)],
    ["expires", (token) => Output.date(token.expiresAt)],
    ["last used", (token) => Output.date(token.lastUsedAt)]
  ]
})

const RevokedToken = Schema.Struct({ ok: Schema.Literal(true), connection: ScimConnectionId, revoked: ScimTokenId })

export const revokeToken = Commands.endpoint("revoke", {
  summary: "Revoke a SCIM token: the directory's requests with it are refused (401) at once.",
  inputs: { connectionId, tokenId: Inputs.argument("tokenId", { schema: ScimTokenId, description: "The token (sct_…), from 'scim tokens list'." }) },
  call: (client, { connectionId, tokenId }) =>
    client.scimConnections.revokeToken({ params: { connectionId, tokenId } }).pipe(
      Effect.as({ ok: true as const, connection: connectionId, revoked: tokenId })
    ),
  output: RevokedToken,
  human: ({ revoked }) => `Revoked SCIM token ${revoked}; the directory's requests with it are refused from now on.`
})

/** The path as the directory sent it, less the connection's SCIM base (`/Users/om_…`). */
const pathOf = (event: ScimEvent) => {
  const base = `/scim/v2/${event.connectionId}`
  return event.path.startsWith(base) ? event.path.slice(base.length) || "/" : event.path
}

export const events = Commands.list("events", {
  summary: "List a SCIM connection's provisioning events, newest first: each write the directory sent, and each reconcile.",
  details: [
    "One event per write (method, path without its query, resource, status, outcome, the error the directory got); reads are not recorded. refused: 4xx, the request was wrong; failed: 5xx, the directory should retry."
  ],
  noun: "events",
  inputs: {
    connectionId,
    outcome: Inputs.optional(Inputs.choice("outcome", ScimEventOutcome.literals, {
      description: "Only events with this outcome (succeeded: 2xx, refused: 4xx, failed: 5xx)."
    })),
    resourceType: Inputs.optional(Inputs.choice("resource-type", ScimEventListQuery.fields.resourceType.schema.literals, { description: "Only events about Users or Groups." }))
  },
  call: (client, { connectionId, outcome, resourceType }, page) =>
    client.scimConnections.listEvents({
      params: { connectionId },
      query: { ...Inputs.ifSome("outcome", outcome), ...Inputs.ifSome("resourceType", resourceType), ...page }
    }),
  output: ScimEventPage,
  columns: [
    ["at", (event) => Output.date(event.createdAt)],
    ["request", (event) => `${event.method} ${pathOf(event)}`],
    ["resource", (event) => event.resourceId === null ? "-" : `${event.resourceType ?? ""} ${event.resourceId}`.trim()],
    ["status", (event) => String(event.status)],
    ["outcome", (event) => event.outcome],
    ["error", (event) => event.detail === null && event.scimType === null ? "-" : [event.scimType, event.detail].filter((part) => part !== null).join(": ")]
  ]
})

export const reconcile = Commands.endpoint("reconcile", {
  summary: "Make the organization agree with what the directory said where something drifted, and print each repair.",
  details: [
    "Repairs memberships suspended, restored or removed by hand, teams missing or holding other members (or newly linkable by external key), and the roles the rules give; one transaction, recorded in the event log. Running it again right after repairs nothing."
  ],
  inputs: { connectionId },
  call: (client, { connectionId }) => client.scimConnections.reconcile({ params: { connectionId } }),
  output: ScimReconcileReport,
  human: describeReport
})

export const connections = Commands.group("connections", "The organization's SCIM connections: one per directory.", [create, list, get, update, del])

export const tokens = Commands.group("tokens", "The bearer tokens a directory authenticates with (shown once; several at a time to rotate).", [
  createToken,
  listTokens,
  revokeToken
])

export const scim = Commands.group(
  "scim",
  "Manage directory provisioning (SCIM 2.0): connections, tokens, the event log and reconcile (enterprise plan; owners and admins).",
  [connections, tokens, events, reconcile],
  [ScimConnectionsApi]
)
