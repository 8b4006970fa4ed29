/**
 * Worker activity: when a worker's last heartbeat arrived (the server's clock; `last_heartbeat_at` is now the
 * runtime's `sentAt`), its open sessions, its recorded state (`online`/`offline`, moved by heartbeats and the
 * offline check), the last 100 heartbeats per worker, and the transitions between the two states.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE workers
  ADD COLUMN last_seen_at timestamptz,
  ADD COLUMN open_sessions integer CHECK (open_sessions >= 0),
  ADD COLUMN activity_state text NOT NULL DEFAULT 'offline' CHECK (activity_state IN ('online', 'offline'));
-- Workers that beat before this migration: seen when they last beat, online until the offline check says otherwise.
UPDATE workers SET last_seen_at = last_heartbeat_at, activity_state = 'online' WHERE last_heartbeat_at IS NOT NULL;
-- The offline check's candidates: online workers by when they were last seen.
CREATE INDEX workers_online_seen_idx ON workers (last_seen_at) WHERE activity_state = 'online' AND deleted_at IS NULL;

CREATE TABLE worker_heartbeats (
  organization_id text NOT NULL,
  id text NOT NULL,
  worker_id text NOT NULL,
  received_at timestamptz NOT NULL,
  sent_at timestamptz NOT NULL,
  status text NOT NULL,
  active boolean NOT NULL,
  last_activity_at timestamptz,
  open_sessions integer CHECK (open_sessions >= 0),
  image_version text,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, worker_id) REFERENCES workers (organization_id, id)
);
-- Newest first for the activity feed and for trimming to the last 100.
CREATE INDEX worker_heartbeats_worker_idx ON worker_heartbeats (organization_id, worker_id, received_at DESC, id DESC);

CREATE TABLE worker_activity_events (
  organization_id text NOT NULL,
  id text NOT NULL,
  worker_id text NOT NULL,
  from_state text NOT NULL CHECK (from_state IN ('online', 'offline')),
  to_state text NOT NULL CHECK (to_state IN ('online', 'offline')),
  at timestamptz NOT NULL,
  cause text NOT NULL CHECK (cause IN ('heartbeat', 'no_heartbeat')),
  recorded_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, worker_id) REFERENCES workers (organization_id, id),
  -- One transition per worker, state and instant: a repeated detection of the same silence records nothing more.
  UNIQUE (organization_id, worker_id, to_state, at)
);
CREATE INDEX worker_activity_events_worker_idx ON worker_activity_events (organization_id, worker_id, at DESC, id DESC);
`))
