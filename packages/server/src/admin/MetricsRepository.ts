/**
 * The admin metrics' statements: instance-wide by design (the operator reads every organization's numbers), so
 * they carry the `instance-wide` marker the tenancy check recognises (packages/testkit/src/TenancyRule.ts). Set-based:
 * two statements whatever the number of people, each an aggregate over indexed ranges (telemetry events by
 * `occurred_at`, so only the partitions of the last 90 days are read).
 */
import { AdminActivityPoint, AdminMetricsSummary } from "@orgplane/schema"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import { single } from "../platform/Statements.js"
const fields = AdminMetricsSummary.fields

/** Counts of people, organizations, workers, plans and invitations. */
export const CountsRow = Schema.Struct({
  totalUsers: fields.totalUsers,
  totalOrganizations: fields.totalOrganizations,
  verifiedUsers: fields.verifiedUsers,
  recentUsers7d: fields.recentUsers7d,
  recentUsers30d: fields.recentUsers30d,
  totalWorkers: fields.totalWorkers,
  cloudWorkers: fields.cloudWorkers,
  localWorkers: fields.localWorkers,
  usersWithWorkers: fields.usersWithWorkers,
  paidUsers: fields.paidUsers,
  adminCount: fields.adminCount,
  inviters: fields.inviters,
  medianHoursToFirstInvite: fields.medianHoursToFirstInvite
})

/** Activity: the windowed counts and the 30-day series. */
export const ActivityRow = Schema.Struct({
  activeUsers1d: fields.activeUsers1d,
  activeUsers7d: fields.activeUsers7d,
  activeUsers30d: fields.activeUsers30d,
  realActiveUsers1d: fields.realActiveUsers1d,
  realActiveUsers7d: fields.realActiveUsers7d,
  realActiveUsers30d: fields.realActiveUsers30d,
  recurringUsers: fields.recurringUsers,
  activitySeries: Schema.Array(AdminActivityPoint)
})

const Request = Schema.Struct({ now: Schema.Date, operatorOrganizationId: Schema.NullOr(Schema.String) })
type Request = typeof Request.Type

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const marker = sql.unsafe("/* instance-wide: admin metrics */")

  const counts = single({
    Request,
    Result: CountsRow,
    execute: ({ now, operatorOrganizationId }) =>
      sql`${marker}
          WITH clock AS (SELECT ${now.toISOString()}::timestamptz AS now),
          live_workers AS (SELECT destination, created_by_user_id FROM workers WHERE deleted_at IS NULL),
          first_invitations AS (
            SELECT m.user_id, min(i.created_at) AS first_at
            FROM invitations i
            JOIN memberships m ON m.organization_id = i.organization_id AND m.id = i.created_by_membership_id
            WHERE m.user_id IS NOT NULL
            GROUP BY m.user_id
          ),
          invite_hours AS (
            SELECT round((greatest(0, extract(epoch FROM f.first_at - u.created_at)) / 3600)::numeric, 1) AS hours
            FROM first_invitations f JOIN users u ON u.id = f.user_id
          )
          SELECT
            (SELECT count(*) FROM users WHERE deleted_at IS NULL)::int AS total_users,
            (SELECT count(*) FROM organizations WHERE deleted_at IS NULL)::int AS total_organizations,
            (SELECT count(DISTINCT m.user_id)
               FROM memberships m
               JOIN sso_domains s ON s.organization_id = m.organization_id AND s.verified_at IS NOT NULL
               JOIN users u ON u.id = m.user_id
               WHERE m.removed_at IS NULL AND lower(split_part(u.email, '@', 2)) = lower(s.domain))::int AS verified_users,
            (SELECT count(*) FROM users, clock WHERE deleted_at IS NULL AND created_at >= clock.now - interval '7 days')::int AS recent_users7d,
            (SELECT count(*) FROM users, clock WHERE deleted_at IS NULL AND created_at >= clock.now - interval '30 days')::int AS recent_users30d,
            (SELECT count(*) FROM live_workers)::int AS total_workers,
            (SELECT count(*) FROM live_workers WHERE destination = 'cloud')::int AS cloud_workers,
            (SELECT count(*) FROM live_workers WHERE destination = 'local')::int AS local_workers,
            (SELECT count(DISTINCT created_by_user_id) FROM live_workers)::int AS users_with_workers,
            (SELECT count(DISTINCT m.user_id)
               FROM memberships m JOIN organizations o ON o.id = m.organization_id AND o.deleted_at IS NULL
               WHERE m.removed_at IS NULL AND o.plan IN ('team', 'enterprise'))::int AS paid_users,
            (SELECT count(*) FROM memberships m
               WHERE m.organization_id = ${operatorOrganizationId} AND m.removed_at IS NULL
                 AND m.user_id IS NOT NULL AND m.role IN ('owner', 'admin'))::int AS admin_count,
            (SELECT count(*) FROM invite_hours)::int AS inviters,
            -- The median of no rows is NULL: 0 without inviters, as the schema says.
            COALESCE((SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY hours)::numeric, 2)::float8 FROM invite_hours), 0)
              AS median_hours_to_first_invite`
  })

  const activity = single({
    Request,
    Result: ActivityRow,
    execute: ({ now }) =>
      sql`${marker}
          WITH days AS (
            SELECT today, today - 6 AS week_start, today - 29 AS series_start, today - 89 AS window_start
            FROM (SELECT (${now.toISOString()}::timestamptz AT TIME ZONE 'UTC')::date AS today) t
          ),
          bounds AS (
            SELECT d.*, (d.window_start::timestamp AT TIME ZONE 'UTC') AS from_at, ((d.today + 1)::timestamp AT TIME ZONE 'UTC') AS to_at
            FROM days d
          ),
          events AS (
            SELECT s.user_id, (s.created_at AT TIME ZONE 'UTC')::date AS day, false AS task
            FROM sessions s, bounds b WHERE s.created_at >= b.from_at AND s.created_at < b.to_at
            UNION ALL
            SELECT e.user_id, (e.occurred_at AT TIME ZONE 'UTC')::date,
                   e.event_type IN ('task.started', 'task.completed', 'task.failed') AND e.session_id IS NOT NULL
            FROM telemetry_events e, bounds b
            WHERE e.occurred_at >= b.from_at AND e.occurred_at < b.to_at AND e.user_id IS NOT NULL
          ),
          user_days AS (SELECT user_id, day, bool_or(task) AS task FROM events GROUP BY user_id, day),
          activity_by_day AS (
            SELECT a.day, count(*)::int AS active_users, (count(*) FILTER (WHERE a.task))::int AS real_active_users
            FROM user_days a, days d WHERE a.day >= d.series_start GROUP BY a.day
          ),
          signups_by_day AS (
            SELECT (u.created_at AT TIME ZONE 'UTC')::date AS day, count(*)::int AS signups
            FROM users u, days d
            WHERE u.created_at >= (d.series_start::timestamp AT TIME ZONE 'UTC')
              AND u.created_at < ((d.today + 1)::timestamp AT TIME ZONE 'UTC')
            GROUP BY 1
          ),
          series AS (
            SELECT g.day, coalesce(a.active_users, 0) AS active_users, coalesce(a.real_active_users, 0) AS real_active_users,
                   coalesce(n.signups, 0) AS signups
            FROM days d
            CROSS JOIN LATERAL (SELECT (d.series_start + i) AS day FROM generate_series(0, 29) AS i) g
            LEFT JOIN activity_by_day a ON a.day = g.day
            LEFT JOIN signups_by_day n ON n.day = g.day
          ),
          per_user AS (
            SELECT bool_or(a.day = d.today) AS active1d, bool_or(a.day >= d.week_start) AS active7d,
                   bool_or(a.day >= d.series_start) AS active30d, bool_or(a.task AND a.day = d.today) AS real1d,
                   bool_or(a.task AND a.day >= d.week_start) AS real7d, bool_or(a.task AND a.day >= d.series_start) AS real30d,
                   count(*) AS active_days
            FROM user_days a, days d GROUP BY a.user_id
          )
          SELECT
            count(*) FILTER (WHERE active1d)::int AS active_users1d,
            count(*) FILTER (WHERE active7d)::int AS active_users7d,
            count(*) FILTER (WHERE active30d)::int AS active_users30d,
            count(*) FILTER (WHERE real1d)::int AS real_active_users1d,
            count(*) FILTER (WHERE real7d)::int AS real_active_users7d,
            count(*) FILTER (WHERE real30d)::int AS real_active_users30d,
            count(*) FILTER (WHERE active_days >= 2)::int AS recurring_users,
            (SELECT json_agg(json_build_object(
                      'day', to_char(s.day, 'YYYY-MM-DD'), 'activeUsers', s.active_users,
                      'realActiveUsers', s.real_active_users, 'signups', s.signups) ORDER BY s.day)
             FROM series s) AS activity_series
          FROM per_user`
  })

  /** Makes the enclosing transaction read one snapshot, read-only: its first statement. */
  const snapshot = sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY`.pipe(Effect.asVoid)

  return { snapshot, counts, activity } as const
})

export class MetricsRepository extends Context.Service<MetricsRepository>()("@orgplane/server/admin/MetricsRepository", { make }) {
  static readonly layer = Layer.effect(this, this.make)
}
