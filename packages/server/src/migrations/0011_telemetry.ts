/**
 * Telemetry: events from the desktop app and workers, partitioned by month on the time the event happened
 * (`occurred_at`), so retention drops whole partitions. Partitions are created ahead of time by
 * telemetry/Partitions.ts (at start-up, on ingest of a month not seen yet, and by the daily retention job); there is
 * no DEFAULT partition, so a month's partition can always be created later without scanning one. The member's user
 * is copied onto each event (a fact at the time of the event) so the admin metrics count people without a join.
 * Dimensions are kept per session: one row per (organization, source, session, type), upserted.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE telemetry_events (
  organization_id text NOT NULL,
  id text NOT NULL,
  membership_id text NOT NULL,
  user_id text,
  event_type text NOT NULL,
  occurred_at timestamptz NOT NULL,
  source text CHECK (source IN ('app', 'worker')),
  session_id text,
  duration_ms integer CHECK (duration_ms BETWEEN 0 AND 86400000),
  success boolean,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (occurred_at, id),
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id)
) PARTITION BY RANGE (occurred_at);
CREATE INDEX telemetry_events_type_idx ON telemetry_events (organization_id, event_type, occurred_at);
CREATE INDEX telemetry_events_member_idx ON telemetry_events (organization_id, membership_id, occurred_at);
CREATE INDEX telemetry_events_session_idx ON telemetry_events (organization_id, session_id, occurred_at);
-- Admin metrics: active people per day across the instance.
CREATE INDEX telemetry_events_user_day_idx ON telemetry_events (occurred_at, user_id);

CREATE TABLE telemetry_session_dimensions (
  organization_id text NOT NULL REFERENCES organizations (id),
  id text NOT NULL,
  source text NOT NULL,
  session_id text NOT NULL,
  dimension_type text NOT NULL,
  dimension_value text NOT NULL,
  dimension_label text NOT NULL,
  metadata jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, id),
  UNIQUE (organization_id, source, session_id, dimension_type)
);
CREATE INDEX telemetry_session_dimensions_value_idx ON telemetry_session_dimensions (organization_id, dimension_type, dimension_value);
`))
