/**
 * The catalog: config objects with their immutable versions, plugins, marketplaces, the memberships between
 * them, and one access-grant table per shared kind. Every reference between tenant rows is a composite foreign
 * key naming the organization (see 0003).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

/** A grant table of one kind: a direct, team-wide or organization-wide role on one resource. */
export const grants = (table: string, resource: string, resourceTable: string) => `
CREATE TABLE ${table} (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  ${resource} text NOT NULL,
  membership_id text,
  team_id text,
  org_wide boolean NOT NULL DEFAULT false,
  role text NOT NULL CHECK (role IN ('viewer', 'editor', 'manager')),
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  removed_at timestamptz,
  UNIQUE (organization_id, id),
  CHECK (num_nonnulls(membership_id, team_id, nullif(org_wide, false)) = 1),
  FOREIGN KEY (organization_id, ${resource}) REFERENCES ${resourceTable} (organization_id, id),
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id),
  -- A deleted team's grants go with it.
  FOREIGN KEY (organization_id, team_id) REFERENCES teams (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
-- One grant per target: granting again updates it.
CREATE UNIQUE INDEX ${table}_member_key ON ${table} (organization_id, ${resource}, membership_id) WHERE membership_id IS NOT NULL;
CREATE UNIQUE INDEX ${table}_team_key ON ${table} (organization_id, ${resource}, team_id) WHERE team_id IS NOT NULL;
CREATE UNIQUE INDEX ${table}_org_wide_key ON ${table} (organization_id, ${resource}) WHERE org_wide;
CREATE INDEX ${table}_list_idx ON ${table} (organization_id, ${resource}, created_at, id);
-- "Which resources may this member see": by member, by team, and org-wide.
CREATE INDEX ${table}_membership_idx ON ${table} (organization_id, membership_id) WHERE removed_at IS NULL;
CREATE INDEX ${table}_team_idx ON ${table} (organization_id, team_id) WHERE removed_at IS NULL;
`

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE config_objects (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  object_type text NOT NULL CHECK (object_type IN ('skill', 'agent', 'command', 'tool', 'mcp', 'hook', 'context', 'custom')),
  source_mode text NOT NULL CHECK (source_mode IN ('cloud', 'import', 'connector')),
  status text NOT NULL CHECK (status IN ('active', 'archived', 'deleted')),
  title text NOT NULL,
  description text NOT NULL,
  search_text text NOT NULL,
  current_file_name text,
  current_file_extension text,
  current_relative_path text,
  created_by_membership_id text,
  -- References connector_instances once they exist (the connector migration adds the foreign key).
  connector_instance_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  UNIQUE (organization_id, id),
  CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE INDEX config_objects_list_idx ON config_objects (organization_id, created_at, id);
CREATE INDEX config_objects_connector_idx ON config_objects (organization_id, connector_instance_id) WHERE connector_instance_id IS NOT NULL;
-- The \`q\` filter: words (and word prefixes) of the title, description and source.
CREATE INDEX config_objects_search_idx ON config_objects USING gin (to_tsvector('simple', search_text));

CREATE TABLE config_object_versions (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  config_object_id text NOT NULL,
  number integer NOT NULL CHECK (number > 0),
  schema_version text NOT NULL,
  parser_mode text NOT NULL CHECK (parser_mode IN ('markdown', 'json', 'yaml', 'text')),
  -- json, not jsonb: the content keeps its author's member order (jsonb sorts members by length).
  normalized_payload_json json,
  raw_source_text text,
  metadata json,
  created_via text NOT NULL CHECK (created_via IN ('cloud', 'import', 'connector', 'system')),
  created_by_membership_id text,
  connector_sync_event_id text,
  source_revision_ref text,
  is_deleted_version boolean NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  UNIQUE (organization_id, config_object_id, number),
  FOREIGN KEY (organization_id, config_object_id) REFERENCES config_objects (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);

CREATE TABLE plugins (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  description text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'archived', 'deleted')),
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  UNIQUE (organization_id, id),
  CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE UNIQUE INDEX plugins_name_key ON plugins (organization_id, lower(name)) WHERE deleted_at IS NULL;
CREATE INDEX plugins_list_idx ON plugins (organization_id, lower(name), id);

CREATE TABLE marketplaces (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  description text NOT NULL,
  logo_url text,
  status text NOT NULL CHECK (status IN ('active', 'archived', 'deleted')),
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  UNIQUE (organization_id, id),
  CHECK ((status = 'deleted') = (deleted_at IS NOT NULL)),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE UNIQUE INDEX marketplaces_name_key ON marketplaces (organization_id, lower(name)) WHERE deleted_at IS NULL;
CREATE INDEX marketplaces_list_idx ON marketplaces (organization_id, lower(name), id);

-- One row per plugin and config object: removing sets removed_at, adding again clears it.
CREATE TABLE plugin_config_objects (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  plugin_id text NOT NULL,
  config_object_id text NOT NULL,
  membership_source text NOT NULL CHECK (membership_source IN ('manual', 'connector', 'system')),
  -- References connector_mappings once they exist.
  connector_mapping_id text,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  removed_at timestamptz,
  UNIQUE (organization_id, id),
  UNIQUE (organization_id, plugin_id, config_object_id),
  FOREIGN KEY (organization_id, plugin_id) REFERENCES plugins (organization_id, id),
  FOREIGN KEY (organization_id, config_object_id) REFERENCES config_objects (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE INDEX plugin_config_objects_list_idx ON plugin_config_objects (organization_id, plugin_id, created_at, id);
CREATE INDEX plugin_config_objects_object_idx ON plugin_config_objects (organization_id, config_object_id) WHERE removed_at IS NULL;
-- A plugin's active members (its count, its manifest): the plan must not depend on fresh statistics, or Postgres
-- may pick the index above and filter every membership of the organization.
CREATE INDEX plugin_config_objects_plugin_idx ON plugin_config_objects (organization_id, plugin_id) WHERE removed_at IS NULL;

CREATE TABLE marketplace_plugins (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  marketplace_id text NOT NULL,
  plugin_id text NOT NULL,
  membership_source text NOT NULL CHECK (membership_source IN ('manual', 'connector', 'system')),
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  removed_at timestamptz,
  UNIQUE (organization_id, id),
  UNIQUE (organization_id, marketplace_id, plugin_id),
  FOREIGN KEY (organization_id, marketplace_id) REFERENCES marketplaces (organization_id, id),
  FOREIGN KEY (organization_id, plugin_id) REFERENCES plugins (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE INDEX marketplace_plugins_list_idx ON marketplace_plugins (organization_id, marketplace_id, created_at, id);
CREATE INDEX marketplace_plugins_plugin_idx ON marketplace_plugins (organization_id, plugin_id) WHERE removed_at IS NULL;
${grants("config_object_grants", "config_object_id", "config_objects")}
${grants("plugin_grants", "plugin_id", "plugins")}
${grants("marketplace_grants", "marketplace_id", "marketplaces")}
`))
