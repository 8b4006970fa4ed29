/**
 * Auto-import of new plugins: the candidate keys an instance has already decided on, so that a sync imports only
 * candidates that appeared since. A key is recorded when a discovery apply offered it (supported, whether the person
 * picked it or not) and when a sync imported it (`connector_sync_event_id`, so that the sync's summary can name it
 * again when its step runs twice). A key once recorded is never imported by a sync again: a plugin a person left out
 * or deleted stays so. Existing instances start with the keys of the plugins apply created.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE connector_candidate_keys (
  organization_id text NOT NULL,
  connector_instance_id text NOT NULL,
  candidate_key text NOT NULL,
  connector_sync_event_id text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, connector_instance_id, candidate_key),
  FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id) ON DELETE CASCADE
);
INSERT INTO connector_candidate_keys (organization_id, connector_instance_id, candidate_key, created_at)
  SELECT DISTINCT ON (organization_id, connector_instance_id, connector_candidate_key)
    organization_id, connector_instance_id, connector_candidate_key, created_at
  FROM plugins WHERE connector_instance_id IS NOT NULL AND connector_candidate_key IS NOT NULL
  ORDER BY organization_id, connector_instance_id, connector_candidate_key, created_at;
`))
