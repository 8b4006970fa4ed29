/**
 * The audit log, second step: an update's before and after (`changes`, secrets redacted before they get here), a
 * failed sign-in's `failed` outcome, and the credential filter's index (a leaked key's every use, newest first).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE audit_events ADD COLUMN changes jsonb;
ALTER TABLE audit_events DROP CONSTRAINT audit_events_outcome_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_outcome_check CHECK (outcome IN ('succeeded', 'denied', 'failed'));
CREATE INDEX audit_events_credential_idx ON audit_events (organization_id, credential_id, occurred_at, id);
`))
