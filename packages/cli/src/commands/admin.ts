/**
 * `orgplane admin`: `claim-operator <setup-token>` makes the active organization the instance's operator with the
 * server's one-time setup token; `metrics`, the instance's usage metrics, for owners and admins of the operator
 * organization: a table of the summary and a sparkline of the last 30 days' activity; `orgs list | delete | restore`,
 * every organization of the instance.
 */
import {
  type AdminActivityPoint,
  AdminApi,
  AdminMetricsResponse,
  AdminOrganizationListQuery,
  AdminOrganizationPage,
  ClaimOperatorRequest,
  Organization,
  OrganizationDeletionResponse,
  OrganizationId,
  OrganizationResponse
} from "@orgplane/schema"
import { Effect } from "effect"
import * as Schema from "effect/Schema"
import * as Commands from "../Commands.js"
import * as Inputs from "../Inputs.js"
import * as Output from "../Output.js"
import { UsageError } from "../Errors.js"

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
      schema: AdminOrganizationListQuery.fields.q.from
    })),
    deleted: Inputs.boolean("deleted", { description: "Only deleted organizations (not purged yet)." }),
    live: Inputs.boolean("live", { description: "Only organizations that are not deleted." })
  },
  call: (client, { deleted, live, query }, page) =>
    Effect.gen(function*() {
      if (deleted && live) return yield* Effect.fail(new UsageError({ message: "give --deleted or --live, not both" }))
      return yield* client.admin.listOrganizations({
        urlParams: { ...page, ...Inputs.ifSome("q", query), ...(deleted ? { deleted: true } : live ? { deleted: false } : {}) }
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
  call: (client, { organizationId }) => client.admin.deleteOrganization({ path: { organizationId } }),
  output: OrganizationDeletionResponse,
  human: ({ deletion }) =>
    `Deleted ${deletion.organization.name} (${deletion.organization.id}). It may be restored until ${Output.date(deletion.purgeAfter)} ('orgplane admin orgs restore ${deletion.organization.id}'); then the purge removes ${deletion.totalRows} rows.`
})

export const orgsRestore = Commands.endpoint("restore", {
  summary: "Restore a deleted organization before its purge (operator only, with a recent sign-in).",
  inputs: { organizationId },
  call: (client, { organizationId }) => client.admin.restoreOrganization({ path: { organizationId } }),
  output: OrganizationResponse,
  human: ({ organization }) => `Restored ${organization.name} (${organization.id}).`
})

export const orgs = Commands.group("orgs", "Every organization of the instance: list, delete, restore (operator only).", [orgsList, orgsDelete, orgsRestore])

export const admin = Commands.group("admin", "Operate the instance (owners and admins of the operator organization).", [claimOperator, metrics, orgs], [AdminApi])
