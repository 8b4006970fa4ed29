/**
 * `orgplane admin`: `claim-operator <setup-token>` makes the active organization the instance's operator with the
 * server's one-time setup token; `metrics`, the instance's usage metrics, for owners and admins of the operator
 * organization: a table of the summary and a sparkline of the last 30 days' activity; `orgs list | delete | restore`,
 * every organization of the instance; `users list | disable | enable | delete | reset-password`, the instance's
 * accounts (the operator's reset link for any account among them); and `reset-password <email>`, a reset link made
 * on the server's machine against its database, with no server running and no sign-in (local, like `keys rotate`).
 */
import { AccountDeletion, type AdminActivityPoint, AdminApi, AdminMetricsResponse, AdminOrganizationListQuery, AdminOrganizationPage, type AdminUser, AdminUserPage, AdminUserResponse, ClaimOperatorRequest, Email, exampleId, Organization, OrganizationDeletionResponse, OrganizationId, OrganizationResponse, PasswordResetLinkResponse, SearchText, UserId } from "@orgplane/schema"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import { CommandFailed, UsageError } from "../Errors.js"
import * as Inputs from "../Inputs.js"
import * as LocalDatabase from "../LocalDatabase.js"
import * as Output from "../Output.js"
import * as ResetLinks from "../ResetLinks.js"

const BARS = "▁▂▃▄▅▆▇█"

/** One bar per value, scaled to the largest (all lowest when every value is 0). */
export const sparkline = (values: ReadonlyArray<number>): string => {
  const max = Math.max(0, ...values)
  return values.map((value) => BARS[max === 0 ? 0 : Math.round((value / max) * (BARS.length - 1))]).join("")
}

const series = (points: ReadonlyArray<AdminActivityPoint>, pick: (point: AdminActivityPoint) => number) => {
  const values = points.map(pick)
  return `${sparkline(values)}  max ${Math.max(0, ...values)}, today ${values.at(-1) ?? 0}`
}

export const claimOperator = Commands.endpoint("claim-operator", {
  summary: "Make your active organization the instance's operator with the server's one-time setup token (owners).",
  details: [
    "The token is ORGPLANE_SETUP_TOKEN, or the one the server logs at its start while no organization operates the instance (valid 24 hours). It works once; no organization becomes the operator any other way. Its owners and admins then change plans and read 'orgplane admin metrics'."
  ],
  inputs: {
    setupToken: Inputs.argument("setup-token", { schema: ClaimOperatorRequest.fields.setupToken, description: "The instance's setup token." })
  },
  call: (client, { setupToken }) => client.admin.claimOperator({ payload: { setupToken } }),
  output: Schema.Struct({ organization: Organization }),
  human: ({ organization }) => `${organization.name} (${organization.id}) now operates this instance: its owners and admins change plans and read the metrics.`
})

export const metrics = Commands.endpoint("metrics", {
  summary: "Show the instance's usage metrics: people, organizations, workers, plans, activity and invitations (operator only).",
  details: [
    "For owners and admins of the operator organization. Days are UTC; the activity lines are the 30 days ending today, oldest first. --json prints every number and the daily series."
  ],
  inputs: {},
  call: (client) => client.admin.metrics(),
  output: AdminMetricsResponse,
  human: ({ generatedAt, summary: s }) => {
    const first = s.activitySeries[0]?.day ?? "-"
    const last = s.activitySeries.at(-1)?.day ?? "-"
    return [
      Output.table(["metric", "value"], [
        ["users", `${s.totalUsers} (${s.recentUsers7d} new in 7 days, ${s.recentUsers30d} in 30)`],
        ["verified users", String(s.verifiedUsers)],
        ["organizations", String(s.totalOrganizations)],
        ["instance admins", String(s.adminCount)],
        ["paid / unpaid users", `${s.paidUsers} / ${s.unpaidUsers}`],
        ["workers", `${s.totalWorkers} (${s.cloudWorkers} cloud, ${s.localWorkers} local)`],
        ["users with / without workers", `${s.usersWithWorkers} / ${s.usersWithoutWorkers}`],
        ["active users 1d / 7d / 30d", `${s.activeUsers1d} / ${s.activeUsers7d} / ${s.activeUsers30d}`],
        ["task users 1d / 7d / 30d", `${s.realActiveUsers1d} / ${s.realActiveUsers7d} / ${s.realActiveUsers30d}`],
        ["recurring users (90 days)", String(s.recurringUsers)],
        ["inviters", String(s.inviters)],
        ["median hours to first invite", s.inviters === 0 ? "-" : String(s.medianHoursToFirstInvite)]
      ]),
      "",
      `Last 30 days (${first} to ${last}, UTC):`,
      Output.fields([
        ["active", series(s.activitySeries, (point) => point.activeUsers)],
        ["tasks", series(s.activitySeries, (point) => point.realActiveUsers)],
        ["signups", series(s.activitySeries, (point) => point.signups)]
      ]),
      "",
      `Generated ${Output.date(generatedAt)}.`
    ].join("\n")
  }
})

const organizationId = Inputs.argument("organizationId", { schema: OrganizationId, description: "The organization (org_…), from 'admin orgs list'." })

export const orgsList = Commands.list("list", {
  summary: "List every organization of the instance, oldest first, deleted ones with when they will be purged (operator only).",
  noun: "organizations",
  inputs: {
    query: Inputs.optional(Inputs.text("query", {
      description: "Only organizations whose name contains this text (case-insensitive).",
      schema: AdminOrganizationListQuery.fields.q.schema
    })),
    deleted: Inputs.boolean("deleted", { description: "Only deleted organizations (not purged yet)." }),
    live: Inputs.boolean("live", { description: "Only organizations that are not deleted." })
  },
  call: (client, { deleted, live, query }, page) =>
    Effect.gen(function*() {
      if (deleted && live) return yield* Effect.fail(new UsageError({ message: "give --deleted or --live, not both" }))
      return yield* client.admin.listOrganizations({
        query: { ...page, ...Inputs.ifSome("q", query), ...(deleted ? { deleted: true } : live ? { deleted: false } : {}) }
      })
    }),
  output: AdminOrganizationPage,
  columns: [
    ["id", (organization) => organization.id],
    ["name", (organization) => organization.name],
    ["plan", (organization) => organization.plan],
    ["members", (organization) => String(organization.memberCount)],
    ["created", (organization) => Output.date(organization.createdAt)],
    ["deleted", (organization) => Output.date(organization.deletedAt)],
    ["purged after", (organization) => Output.date(organization.purgeAfter)]
  ]
})

export const orgsDelete = Commands.endpoint("delete", {
  summary: "Delete any organization of the instance (operator only, with a recent sign-in); restorable until its grace period ends.",
  inputs: { organizationId },
  call: (client, { organizationId }) => client.admin.deleteOrganization({ params: { organizationId } }),
  output: OrganizationDeletionResponse,
  human: ({ deletion }) =>
    `Deleted ${deletion.organization.name} (${deletion.organization.id}). It may be restored until ${Output.date(deletion.purgeAfter)} ('orgplane admin orgs restore ${deletion.organization.id}'); then the purge removes ${deletion.totalRows} rows.`
})

export const orgsRestore = Commands.endpoint("restore", {
  summary: "Restore a deleted organization before its purge (operator only, with a recent sign-in).",
  inputs: { organizationId },
  call: (client, { organizationId }) => client.admin.restoreOrganization({ params: { organizationId } }),
  output: OrganizationResponse,
  human: ({ organization }) => `Restored ${organization.name} (${organization.id}).`
})

export const orgs = Commands.group("orgs", "Every organization of the instance: list, delete, restore (operator only).", [orgsList, orgsDelete, orgsRestore])

const userId = Inputs.argument("userId", { schema: UserId, description: "The account (usr_…), from 'orgplane admin users list'." })

const state = (user: AdminUser) => (user.disabledAt === null ? "enabled" : `disabled ${Output.date(user.disabledAt)}`)

export const listUsers = Commands.list("list", {
  summary: "List the instance's accounts, oldest first: email, name, organizations, disabled or not (operator only).",
  noun: "accounts",
  inputs: {
    email: Inputs.optional(Inputs.text("email", { description: "Only accounts whose email contains this text (case-insensitive).", schema: SearchText })),
    state: Inputs.optional(Inputs.choice("state", ["enabled", "disabled"], { description: "Only enabled, or only disabled, accounts." }))
  },
  call: (client, { email, state }, page) =>
    client.admin.listUsers({
      query: { ...Inputs.ifSome("email", email), ...Inputs.ifSome("disabled", Option.map(state, (value) => value === "disabled")), ...page }
    }),
  output: AdminUserPage,
  columns: [
    ["id", (user) => user.id],
    ["email", (user) => user.email],
    ["name", (user) => user.name],
    ["organizations", (user) => String(user.organizationCount)],
    ["state", state],
    ["created", (user) => Output.date(user.createdAt)]
  ]
})

export const disableUser = Commands.endpoint("disable", {
  summary: "Disable an account at once: its sessions end, its API keys and sign-ins are refused until enabled (operator only).",
  details: ["Its memberships, keys and data stay: 'orgplane admin users enable' undoes it (the sessions stay ended). Asks for a recent sign-in."],
  inputs: { userId },
  call: (client, { userId }) => client.admin.disableUser({ params: { userId } }),
  output: AdminUserResponse,
  human: ({ user }) => `${user.name} <${user.email}> (${user.id}) is disabled: its sessions ended; its API keys and sign-ins are refused until enabled.`
})

export const enableUser = Commands.endpoint("enable", {
  summary: "Enable a disabled account: it signs in again and its API keys work again (operator only).",
  inputs: { userId },
  call: (client, { userId }) => client.admin.enableUser({ params: { userId } }),
  output: AdminUserResponse,
  human: ({ user }) => `${user.name} <${user.email}> (${user.id}) is enabled.`
})

export const deleteUser = Commands.leaf("delete", {
  examples: [
    ["Delete an account for good.", ["admin", "users", "delete", exampleId("usr"), "--yes"]],
  ],
  summary: "Delete any account for good, as its person could: sessions, keys, memberships, memories and connections go (operator only; --yes).",
  details: [
    "Refused while the person is the last owner of an organization that has other members. The audit log records it in every organization the person left and in yours, and names the person by a pseudonym. Asks for a recent sign-in."
  ],
  inputs: { userId, yes: Inputs.boolean("yes", { description: "Confirm that the account is to be deleted: nothing brings it back." }) },
  run: (input) =>
    input.yes
      ? Commands.withClient(input, (client) =>
        Effect.flatMap(client.admin.deleteUser({ params: { userId: input.userId } }), (result) =>
          Output.emit(input.global, AccountDeletion, result, ({ organizationsLeft, pseudonym, userId }) =>
            `Deleted account ${userId} (now ${pseudonym}); it left ${organizationsLeft.length} organization${organizationsLeft.length === 1 ? "" : "s"}.`)))
      : Effect.fail(new UsageError({ message: `this deletes ${input.userId} for good: pass --yes` }))
})

export const resetUserPassword = Commands.endpoint("reset-password", {
  summary: "Issue a one-time password reset link for any account on the instance, shown once (operator only).",
  details: [
    "For owners and admins of the operator organization, recently signed in: a link for anyone, an owner of any organization included (the operator organization's own owners and admins by its owners only). It is valid 1 hour by default (ORGPLANE_PASSWORD_RESET_TTL), works once, and using it signs the account out everywhere. Locked out yourself? Run 'orgplane admin reset-password <email>' on the server's machine."
  ],
  inputs: { userId: Inputs.argument("userId", { schema: UserId, description: "The account (usr_…)." }) },
  call: (client, { userId }) => client.admin.issuePasswordReset({ params: { userId } }),
  output: PasswordResetLinkResponse,
  human: ({ passwordReset }, _, target) => ResetLinks.describe(passwordReset, target.url)
})

export const users = Commands.group("users", "The instance's accounts: list, disable, enable, delete, reset-password (operator only).", [
  listUsers,
  disableUser,
  enableUser,
  deleteUser,
  resetUserPassword
], [AdminApi])

export const resetPasswordOnMachine = Commands.leaf("reset-password", {
  summary: "On the server's machine: print a one-time password reset link for any account, without a running server or a sign-in.",
  details: [
    "The way back in for whoever runs the server, its operator included, as 'grafana-cli admin reset-admin-password' and 'gitea admin user change-password' are: it opens the server's database directly (DATABASE_URL, or the embedded database in --data, which no running server may have open: stop it first, or, while it runs, have an operator use 'orgplane admin users reset-password <userId>') with the server's settings, and prints the same kind of link the API issues, valid 1 hour by default (ORGPLANE_PASSWORD_RESET_TTL), once. Its command names ORGPLANE_PUBLIC_URL when that is set. The person's organizations record it in their audit logs (system:admin-reset-password).",
    "Then, with the server running: orgplane auth reset-password <token> --url <the server's URL>."
  ],
  global: false,
  inputs: {
    email: Inputs.argument("email", { schema: Email, description: "The account's email." }),
    ...LocalDatabase.inputs,
    json: Inputs.boolean("json", { description: "Print the link as JSON." })
  },
  run: (flags) =>
    Effect.gen(function*() {
      const result = yield* LocalDatabase.use(flags, (server) =>
        server.MachineRecovery.issue({
          email: flags.email,
          latestMigration: Math.max(...server.migrations.map((migration) => migration.id))
        })
      ).pipe(
        Effect.catchTags({
          NotFound: (error) => new CommandFailed({ error: error.error, message: error.message }),
          DatabaseNotMigrated: (error) => new CommandFailed({ error: "database_not_migrated", message: error.message }),
          DataFolderInUse: (error) =>
            new CommandFailed({
              error: "data_folder_in_use",
              message: `${error.message} Stop the server, run this command again, then start the server; or, while it runs, an owner or admin of the operator organization issues the link with 'orgplane admin users reset-password <userId>'.`
            }),
          ServiceUnavailable: (error) => new CommandFailed({ error: "service_unavailable", message: error.message })
        })
      )
      if (flags.json) return yield* Output.json(result)
      yield* Console.log(ResetLinks.describe(result.passwordReset, result.baseUrl ?? undefined))
    })
})

export const admin = Commands.group("admin", "Operate the instance (owners and admins of the operator organization; reset-password on the server itself).", [
  claimOperator,
  metrics,
  orgs,
  users,
  resetPasswordOnMachine
], [AdminApi])
