/**
 * Discovery apply: the candidate key a plugin was created for, so that applying the same candidate again reuses
 * the plugin instead of creating a second one (one live plugin per instance and key).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE plugins ADD COLUMN connector_candidate_key text;
CREATE UNIQUE INDEX plugins_connector_candidate_key ON plugins (organization_id, connector_instance_id, connector_candidate_key)
  WHERE connector_candidate_key IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX marketplaces_connector_instance_idx ON marketplaces (organization_id, connector_instance_id)
  WHERE connector_instance_id IS NOT NULL;
`))
