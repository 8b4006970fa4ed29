/**
 * Templates: the organization's shared templates, their immutable versions (each holding its document, as `json` to
 * keep the author's member order) and their access grants. `latest_version` is the number of the newest version;
 * `deleted_at` marks a soft-deleted template, which the API treats as missing. The name's word index serves the
 * list's `q` (words and word prefixes, as config objects' search text).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"
import { grants } from "./0004_catalog.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE templates (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 255),
  description text NOT NULL CHECK (char_length(description) <= 2000),
  kind text NOT NULL CHECK (kind ~ '^[a-z][a-z0-9_-]{0,63}$'),
  latest_version integer NOT NULL CHECK (latest_version > 0),
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE INDEX templates_list_idx ON templates (organization_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX templates_kind_idx ON templates (organization_id, kind, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX templates_name_search_idx ON templates USING gin (to_tsvector('simple', name)) WHERE deleted_at IS NULL;

CREATE TABLE template_versions (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  template_id text NOT NULL,
  number integer NOT NULL CHECK (number > 0),
  schema_version text,
  validated boolean NOT NULL,
  document json NOT NULL,
  size_bytes integer NOT NULL CHECK (size_bytes BETWEEN 0 AND 262144),
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  UNIQUE (organization_id, template_id, number),
  FOREIGN KEY (organization_id, template_id) REFERENCES templates (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
${grants("template_grants", "template_id", "templates")}
`))
