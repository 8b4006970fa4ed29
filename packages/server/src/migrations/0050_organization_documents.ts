/**
 * Each organization's last applied document (organization as code), what drift is measured against: the document
 * as given to the apply, the plan applied, when and by whom, and the drift the job last recorded (its changes, and
 * their hash, so the same drift is recorded once).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE organization_documents (
  organization_id text PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  document jsonb NOT NULL,
  plan_hash text NOT NULL,
  applied_at timestamptz NOT NULL,
  applied_by_membership_id text,
  drift jsonb,
  drift_hash text,
  drift_checked_at timestamptz
);
`))
