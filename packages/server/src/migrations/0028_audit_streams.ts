/**
 * Audit streams: endpoints an organization registers to receive its audit events (audit/StreamDelivery.ts). A row
 * holds the signing secret encrypted (platform/SecretColumns.ts `auditStreamSecret`), the cursor (the `occurred_at`
 * and id of the last event the endpoint acknowledged: later events follow it, in `(occurred_at, id)` order), the
 * batch in flight (its delivery id and last event, so a retry sends the same events under the same id), and the
 * delivery state the API shows. `next_attempt_at` is null while paused; the partial index finds the due ones.
 * `lease_until` keeps a claimed stream from being claimed again while its delivery is under way.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE audit_streams (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  url text NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('active', 'paused')),
  secret_ciphertext text NOT NULL,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  cursor_occurred_at timestamptz NOT NULL,
  cursor_event_id text NOT NULL DEFAULT '',
  pending_delivery_id text,
  pending_last_occurred_at timestamptz,
  pending_last_event_id text,
  last_attempt_at timestamptz,
  last_success_at timestamptz,
  consecutive_failures integer NOT NULL DEFAULT 0,
  last_error text,
  next_attempt_at timestamptz,
  lease_until timestamptz,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id),
  CHECK ((pending_delivery_id IS NULL) = (pending_last_event_id IS NULL) AND (pending_last_event_id IS NULL) = (pending_last_occurred_at IS NULL))
);
CREATE INDEX audit_streams_list_idx ON audit_streams (organization_id, created_at, id);
CREATE INDEX audit_streams_due_idx ON audit_streams (next_attempt_at) WHERE status = 'active';
`))
