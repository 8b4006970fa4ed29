/**
 * The audit log: one row per event, append-only, partitioned by month on `occurred_at` like telemetry
 * (platform/MonthlyPartitions.ts: no DEFAULT partition; months are created ahead by audit/Partitions.ts). The
 * actor and how it came in are copied onto the event (facts at the time: a label survives a rename, an id a
 * deletion), so there are no foreign keys: an event outlives what it names. Targets are a small JSON array,
 * searched by id through a GIN index. `audit_settings` holds an organization's retention when an owner set one.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE audit_events (
  organization_id text NOT NULL,
  id text NOT NULL,
  occurred_at timestamptz NOT NULL,
  action text NOT NULL,
  category text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('succeeded', 'denied')),
  actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'scim', 'worker', 'system')),
  actor_id text NOT NULL,
  actor_membership_id text,
  actor_label text,
  credential_id text,
  sso_connection_id text,
  ip text,
  user_agent text,
  targets jsonb NOT NULL DEFAULT '[]',
  target_ids text[] NOT NULL DEFAULT '{}',
  reason text,
  request_id text,
  PRIMARY KEY (occurred_at, id)
) PARTITION BY RANGE (occurred_at);
CREATE INDEX audit_events_time_idx ON audit_events (organization_id, occurred_at, id);
CREATE INDEX audit_events_action_idx ON audit_events (organization_id, action, occurred_at, id);
CREATE INDEX audit_events_actor_idx ON audit_events (organization_id, actor_id, occurred_at, id);
CREATE INDEX audit_events_targets_idx ON audit_events USING gin (target_ids);
CREATE INDEX audit_events_id_idx ON audit_events (organization_id, id);

-- An organization's settings; none until an owner changes the defaults.
CREATE TABLE audit_settings (
  organization_id text PRIMARY KEY REFERENCES organizations (id),
  retention_days integer NOT NULL CHECK (retention_days BETWEEN 7 AND 3650),
  updated_at timestamptz NOT NULL
);
`))
