/**
 * Connectors: code-host accounts, instances (with their grants), targets, mappings, sync events, the source
 * binding of every materialized config object, and the discovery cache (the result and the tree, per commit).
 * The catalog's connector columns get their foreign keys; plugins and marketplaces created by a discovery apply
 * remember their instance, which is what `remove` deletes.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"
import { grants } from "./0004_catalog.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE connector_accounts (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_type text NOT NULL CHECK (connector_type IN ('codehost')),
  kind text NOT NULL CHECK (kind IN ('app_installation', 'token')),
  -- The installation id of an app installation; null for a token account.
  remote_id text,
  external_account_ref text,
  display_name text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'disconnected')),
  -- A token account's token, encrypted (platform/Crypto).
  token_ciphertext text,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  CHECK ((kind = 'app_installation') = (remote_id IS NOT NULL)),
  CHECK ((kind = 'token') = (token_ciphertext IS NOT NULL)),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE UNIQUE INDEX connector_accounts_installation_key ON connector_accounts (organization_id, connector_type, remote_id) WHERE remote_id IS NOT NULL;
-- Webhooks find the accounts of an installation across organizations.
CREATE INDEX connector_accounts_remote_idx ON connector_accounts (remote_id) WHERE remote_id IS NOT NULL;
CREATE INDEX connector_accounts_list_idx ON connector_accounts (organization_id, created_at, id);

CREATE TABLE connector_instances (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_account_id text NOT NULL,
  connector_type text NOT NULL CHECK (connector_type IN ('codehost')),
  remote_id text NOT NULL,
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'disabled')),
  instance_config_json jsonb NOT NULL,
  last_synced_at timestamptz,
  last_sync_status text,
  last_sync_cursor text,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, connector_account_id) REFERENCES connector_accounts (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE UNIQUE INDEX connector_instances_name_key ON connector_instances (organization_id, lower(name));
CREATE INDEX connector_instances_list_idx ON connector_instances (organization_id, created_at, id);
CREATE INDEX connector_instances_account_idx ON connector_instances (organization_id, connector_account_id);
${grants("connector_instance_grants", "connector_instance_id", "connector_instances")}

CREATE TABLE connector_targets (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_instance_id text NOT NULL,
  connector_type text NOT NULL CHECK (connector_type IN ('codehost')),
  remote_id text NOT NULL,
  target_kind text NOT NULL CHECK (target_kind IN ('repository_branch')),
  external_target_ref text NOT NULL,
  target_config_json jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id)
);
CREATE UNIQUE INDEX connector_targets_branch_key ON connector_targets (connector_instance_id, lower(remote_id), external_target_ref);
CREATE INDEX connector_targets_list_idx ON connector_targets (organization_id, connector_instance_id, created_at, id);
-- Webhooks find the targets of a repository.
CREATE INDEX connector_targets_remote_idx ON connector_targets (organization_id, lower(remote_id));

CREATE TABLE connector_mappings (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_instance_id text NOT NULL,
  connector_target_id text NOT NULL,
  connector_type text NOT NULL CHECK (connector_type IN ('codehost')),
  remote_id text,
  mapping_kind text NOT NULL CHECK (mapping_kind IN ('path', 'api', 'custom')),
  selector text NOT NULL,
  object_type text NOT NULL CHECK (object_type IN ('skill', 'agent', 'command', 'tool', 'mcp', 'hook', 'context', 'custom')),
  plugin_id text,
  auto_add_to_plugin boolean NOT NULL,
  mapping_config_json jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  UNIQUE (connector_target_id, selector, object_type),
  FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id),
  FOREIGN KEY (organization_id, connector_target_id) REFERENCES connector_targets (organization_id, id),
  FOREIGN KEY (organization_id, plugin_id) REFERENCES plugins (organization_id, id)
);
-- The mappings list: most recently updated first, then by id.
CREATE INDEX connector_mappings_list_idx ON connector_mappings (organization_id, connector_target_id, updated_at DESC, id DESC);
CREATE INDEX connector_mappings_instance_idx ON connector_mappings (organization_id, connector_instance_id);
CREATE INDEX connector_mappings_plugin_idx ON connector_mappings (organization_id, plugin_id) WHERE plugin_id IS NOT NULL;

CREATE TABLE connector_sync_events (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_instance_id text NOT NULL,
  connector_target_id text,
  event_type text NOT NULL,
  external_event_ref text,
  source_revision_ref text,
  -- Push, sync-now and apply events of one target and commit are one event: a redelivery finds it.
  dedupe_key text,
  status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'failed', 'ignored')),
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  summary_json jsonb NOT NULL,
  started_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id),
  FOREIGN KEY (organization_id, connector_target_id) REFERENCES connector_targets (organization_id, id)
);
CREATE UNIQUE INDEX connector_sync_events_dedupe_key ON connector_sync_events (organization_id, connector_target_id, dedupe_key) WHERE dedupe_key IS NOT NULL;
CREATE INDEX connector_sync_events_list_idx ON connector_sync_events (organization_id, connector_instance_id, created_at DESC, id DESC);

-- Which file of which mapping a materialized config object is, and the blob it was last made from.
CREATE TABLE connector_source_bindings (
  config_object_id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_instance_id text NOT NULL,
  connector_target_id text NOT NULL,
  connector_mapping_id text NOT NULL,
  path text NOT NULL,
  blob_sha text NOT NULL,
  source_revision_ref text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, connector_mapping_id, path),
  FOREIGN KEY (organization_id, config_object_id) REFERENCES config_objects (organization_id, id),
  FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id),
  FOREIGN KEY (organization_id, connector_mapping_id) REFERENCES connector_mappings (organization_id, id)
);

-- Discovery of one target at one commit: the result, and the tree in path order (positions are the tree cursor).
CREATE TABLE connector_discoveries (
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_target_id text NOT NULL,
  source_revision_ref text NOT NULL,
  result_json jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (connector_target_id, source_revision_ref),
  FOREIGN KEY (organization_id, connector_target_id) REFERENCES connector_targets (organization_id, id)
);
CREATE TABLE connector_tree_entries (
  organization_id text NOT NULL REFERENCES organizations (id),
  connector_target_id text NOT NULL,
  source_revision_ref text NOT NULL,
  position integer NOT NULL,
  path text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('blob', 'tree')),
  sha text NOT NULL,
  size bigint NOT NULL,
  PRIMARY KEY (connector_target_id, source_revision_ref, position),
  FOREIGN KEY (connector_target_id, source_revision_ref) REFERENCES connector_discoveries (connector_target_id, source_revision_ref) ON DELETE CASCADE
);
CREATE INDEX connector_tree_entries_path_idx ON connector_tree_entries (connector_target_id, source_revision_ref, path COLLATE "C");

-- Webhook deliveries already handled, so a redelivery is answered without doing the work again.
CREATE TABLE codehost_deliveries (
  delivery_id text PRIMARY KEY,
  event text NOT NULL,
  received_at timestamptz NOT NULL
);

ALTER TABLE config_objects ADD FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id);
ALTER TABLE plugin_config_objects ADD FOREIGN KEY (organization_id, connector_mapping_id) REFERENCES connector_mappings (organization_id, id);
CREATE INDEX plugin_config_objects_mapping_idx ON plugin_config_objects (organization_id, connector_mapping_id) WHERE connector_mapping_id IS NOT NULL;
ALTER TABLE plugins ADD COLUMN connector_instance_id text;
ALTER TABLE plugins ADD FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id);
ALTER TABLE marketplaces ADD COLUMN connector_instance_id text;
ALTER TABLE marketplaces ADD FOREIGN KEY (organization_id, connector_instance_id) REFERENCES connector_instances (organization_id, id);
`))
