/** Admin metrics: instance-wide counts of people, organizations, workers, activity and invitations, for the operator. */
import * as Schema from "effect/Schema"
import { Timestamp } from "./Common.js"
import { NonNegativeInt } from "./internal/counts.js"

const Count = (description: string) => NonNegativeInt.annotate({ description })

/** A UTC day key, `YYYY-MM-DD`. */
const DayKey = Schema.String.check(Schema.isPattern(/^\d{4}-\d{2}-\d{2}$/u)).annotate({
  description: "A UTC calendar day, `YYYY-MM-DD`."
})

/** One day of the 30-day activity series. */
export class AdminActivityPoint extends Schema.Class<AdminActivityPoint>("AdminActivityPoint")(Schema.Struct({
  day: DayKey,
  activeUsers: Count("People active that day: a session created, or any telemetry event."),
  realActiveUsers: Count("People with task activity that day: a `task.started`, `task.completed` or `task.failed` event with a session id."),
  signups: Count("People whose account was created that day.")
}).annotate({ examples: [{ day: "2026-11-02", activeUsers: 42, realActiveUsers: 31, signups: 3 }] })) {}

export class AdminMetricsSummary extends Schema.Class<AdminMetricsSummary>("AdminMetricsSummary")(Schema.Struct({
  totalUsers: Count("Every person with an account on the instance (deleted accounts not counted)."),
  totalOrganizations: Count("Every organization on the instance, provisional ones included."),
  verifiedUsers: Count(
    "People whose email domain is the verified SSO domain of an organization they are an active member of (the instance has no email verification)."
  ),
  recentUsers7d: Count("People whose account was created in the last 7 days (signups, not activity)."),
  recentUsers30d: Count("People whose account was created in the last 30 days."),
  totalWorkers: Count("Workers not deleted."),
  cloudWorkers: Count("Workers not deleted with destination `cloud`."),
  localWorkers: Count("Workers not deleted with destination `local`."),
  usersWithWorkers: Count("Distinct people who created a worker that is not deleted."),
  usersWithoutWorkers: Count("totalUsers − usersWithWorkers, at least 0."),
  paidUsers: Count("People with an active membership in an organization on the `team` or `enterprise` plan."),
  unpaidUsers: Count("Every other person: totalUsers − paidUsers."),
  billingUnavailableUsers: Count("Always 0: plans are stored on the instance, so billing is always known."),
  adminCount: Count("Owners and admins (active memberships) of the operator organization: the instance's admins."),
  activeUsers1d: Count("People active today (UTC): a session created, or any telemetry event."),
  activeUsers7d: Count("People active on any of the last 7 UTC days, today included."),
  activeUsers30d: Count("People active on any day of the 30-day series."),
  realActiveUsers1d: Count("People with task activity today (UTC)."),
  realActiveUsers7d: Count("People with task activity on any of the last 7 UTC days."),
  realActiveUsers30d: Count("People with task activity on any day of the 30-day series."),
  recurringUsers: Count("People active (any activity, task activity included) on at least 2 distinct UTC days of the last 90."),
  inviters: Count("Distinct people who ever created an invitation."),
  // Finite: Effect 4's Schema.Number also takes (and documents) "NaN" and "Infinity", which no median is.
  medianHoursToFirstInvite: Schema.Finite.annotate({
    description:
      "Median over inviters of the hours from account creation to their first invitation (each floored at 0 and rounded to 0.1; an even count averages the two middle values); 0 while nobody has invited anyone (`inviters` is 0)."
  }),
  billingLoaded: Schema.Boolean.annotate({ description: "Always true: paidUsers and unpaidUsers are computed from organization plans." }),
  activitySeries: Schema.Array(AdminActivityPoint).annotate({
    description: "30 daily points, oldest first: the UTC days from 29 days ago to today."
  })
}).annotate({
  examples: [{
    totalUsers: 120,
    totalOrganizations: 14,
    verifiedUsers: 85,
    recentUsers7d: 9,
    recentUsers30d: 26,
    totalWorkers: 37,
    cloudWorkers: 12,
    localWorkers: 25,
    usersWithWorkers: 30,
    usersWithoutWorkers: 90,
    paidUsers: 96,
    unpaidUsers: 24,
    billingUnavailableUsers: 0,
    adminCount: 2,
    activeUsers1d: 42,
    activeUsers7d: 71,
    activeUsers30d: 98,
    realActiveUsers1d: 31,
    realActiveUsers7d: 58,
    realActiveUsers30d: 80,
    recurringUsers: 77,
    inviters: 11,
    medianHoursToFirstInvite: 2.5,
    billingLoaded: true,
    // The 30 days up to the examples' day, 2026-11-02. Instances: Effect 4 encodes no plain object as a class, and an
    // example it cannot encode is left out.
    activitySeries: Array.from({ length: 30 }, (_, index) => {
      const day = new Date(Date.UTC(2026, 9, 4 + index)).toISOString().slice(0, 10)
      return new AdminActivityPoint({ day, activeUsers: 30 + (index % 7) * 2, realActiveUsers: 20 + (index % 5) * 2, signups: index % 4 })
    })
  }]
})) {}

export const AdminMetricsResponse = Schema.Struct({
  summary: AdminMetricsSummary,
  generatedAt: Timestamp
})
