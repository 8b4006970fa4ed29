/**
 * What a sync could not import, and a plugin's metadata as its repository gives it (issue 31).
 *
 * - `connector_skipped_files`: one row per mapped file the last sync of its target skipped, with the reason. A
 *   sync writes the files it skips and, when it finishes, drops the rows an earlier sync wrote (a skipped file has
 *   no binding, so every sync reads it again). A plugin shows the rows of its mappings; deleting a mapping deletes
 *   its rows.
 * - `plugins.source_metadata`: `version`, `author`, `homepage`, `repository`, `license`, `keywords` and `category`
 *   from `plugin.json` and the marketplace entry, for a plugin a discovery apply made; null for others.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE connector_skipped_files (
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_target_id text NOT NULL,
  connector_mapping_id text NOT NULL,
  path text NOT NULL,
  reason text NOT NULL,
  connector_sync_event_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, connector_mapping_id, path),
  FOREIGN KEY (organization_id, connector_mapping_id) REFERENCES connector_mappings (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, connector_target_id) REFERENCES connector_targets (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX connector_skipped_files_target ON connector_skipped_files (organization_id, connector_target_id);
ALTER TABLE plugins ADD COLUMN source_metadata jsonb;
`))
