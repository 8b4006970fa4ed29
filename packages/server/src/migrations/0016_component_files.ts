/**
 * The files a component carries (issue 31): what each config object version lists (`config_object_version_files`:
 * its entry and the files beside it, paths from the plugin's folder) and their bytes, stored once per organization
 * and content (`component_file_contents`, by SHA-256: a sync that changes one file of a skill stores that file only).
 * `connector_source_bindings.files_json` keeps the repository files (path and blob) a bound object was last made
 * with, so a sync sees a changed supporting file even when the entry file did not change.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE component_file_contents (
  organization_id text NOT NULL REFERENCES organizations (id),
  sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size integer NOT NULL CHECK (size >= 0),
  content bytea NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, sha256)
);

CREATE TABLE config_object_version_files (
  organization_id text NOT NULL REFERENCES organizations (id),
  config_object_version_id text NOT NULL,
  path text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('entry', 'file')),
  size integer NOT NULL CHECK (size >= 0),
  sha256 text,
  media_type text NOT NULL,
  omitted text,
  PRIMARY KEY (organization_id, config_object_version_id, path),
  FOREIGN KEY (organization_id, config_object_version_id) REFERENCES config_object_versions (organization_id, id),
  FOREIGN KEY (organization_id, sha256) REFERENCES component_file_contents (organization_id, sha256),
  CHECK (kind = 'file' OR sha256 IS NULL),
  CHECK (omitted IS NULL OR sha256 IS NULL)
);

ALTER TABLE connector_source_bindings ADD COLUMN files_json text;
`))
