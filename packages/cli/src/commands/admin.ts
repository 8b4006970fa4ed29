/**
 * `orgplane admin`: `claim-operator <setup-token>` makes the active organization the instance's operator with the
 * server's one-time setup token; `metrics`, the instance's usage metrics, for owners and admins of the operator
 * organization: a table of the summary and a sparkline of the last 30 days' activity; `users list | disable | enable
 * | delete`, the instance's accounts.
 */
import {
  AccountDeletion,
  type AdminActivityPoint,
  AdminApi,
  AdminMetricsResponse,
  type AdminUser,
  AdminUserPage,
  AdminUserResponse,
  ClaimOperatorRequest,
  Organization,
  SearchText,
  UserId
} from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { UsageError } from "../Errors.js"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"

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
      urlParams: { ...Inputs.ifSome("email", email), ...Inputs.ifSome("disabled", Option.map(state, (value) => value === "disabled")), ...page }
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
  call: (client, { userId }) => client.admin.disableUser({ path: { userId } }),
  output: AdminUserResponse,
  human: ({ user }) => `${user.name} <${user.email}> (${user.id}) is disabled: its sessions ended; its API keys and sign-ins are refused until enabled.`
})

export const enableUser = Commands.endpoint("enable", {
  summary: "Enable a disabled account: it signs in again and its API keys work again (operator only).",
  inputs: { userId },
  call: (client, { userId }) => client.admin.enableUser({ path: { userId } }),
  output: AdminUserResponse,
  human: ({ user }) => `${user.name} <${user.email}> (${user.id}) is enabled.`
})

export const deleteUser = Commands.leaf("delete", {
  summary: "Delete any account for good, as its person could: sessions, keys, memberships, memories and connections go (operator only; --yes).",
  details: [
    "Refused while the person is the last owner of an organization that has other members. The audit log records it in every organization the person left and in yours, and names the person by a pseudonym. Asks for a recent sign-in."
  ],
  inputs: { userId, yes: Inputs.boolean("yes", { description: "Confirm that the account is to be deleted: nothing brings it back." }) },
  run: (input) =>
    input.yes
      ? Commands.withClient(input, (client) =>
        Effect.flatMap(client.admin.deleteUser({ path: { userId: input.userId } }), (result) =>
          Output.emit(input.global, AccountDeletion, result, ({ organizationsLeft, pseudonym, userId }) =>
            `Deleted account ${userId} (now ${pseudonym}); it left ${organizationsLeft.length} organization${organizationsLeft.length === 1 ? "" : "s"}.`)))
      : Effect.fail(new UsageError({ message: `this deletes ${input.userId} for good: pass --yes` }))
})

export const users = Commands.group("users", "The instance's accounts: list, disable, enable, delete (operator only).", [listUsers, disableUser, enableUser, deleteUser], [
  AdminApi
])

export const admin = Commands.group("admin", "Operate the instance (owners and admins of the operator organization).", [claimOperator, metrics, users], [AdminApi])
