/**
 * Directory provisioning (SCIM 2.0):
 * - `scim_connections`: one directory of an organization (several allowed), its group mapping mode, default role and
 *   explicit group → role rules (none by default: group names never grant roles by accident), and its health: the
 *   last successful and failed writes, and the failures since the last success.
 * - `scim_tokens`: bearer tokens of a connection, several at once so rotation overlaps; hashed, never stored in clear.
 * - `scim_users`: a SCIM User is a membership (its SCIM id is the `om_` id); what the directory sent is kept as
 *   `resource` (the attributes the server advertises), with the columns filters and uniqueness need beside it.
 *   `deleted_at` marks a User the directory deleted (the membership is removed); the row stays as the record of it.
 * - `scim_groups` and `scim_group_members`: a SCIM Group, the team it maps onto (per the mode) and its members.
 * - `scim_events`: one row per SCIM request of a connection, for its administrators.
 * - `memberships.suspended_at`: the directory deactivated the member (kept, not admitted, no seat), also set when
 *   the directory deletes them, so neither SSO JIT nor an invitation brings them back until it reactivates them.
 * - `teams.external_key` (an organization's own key for a team, unique) and `teams.scim_connection_id` (a team the
 *   directory owns refuses manual edits).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE scim_connections (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  group_mapping_mode text NOT NULL CHECK (group_mapping_mode IN ('metadata_only', 'create_teams', 'link_by_external_key')),
  default_role text NOT NULL CHECK (default_role IN ('admin', 'member')),
  role_rules jsonb NOT NULL DEFAULT '[]',
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  last_success_at timestamptz,
  last_failure_at timestamptz,
  failures_since_success integer NOT NULL DEFAULT 0,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE UNIQUE INDEX scim_connections_name_key ON scim_connections (organization_id, lower(name));
CREATE INDEX scim_connections_list_idx ON scim_connections (organization_id, created_at, id);

CREATE TABLE scim_tokens (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  connection_id text NOT NULL,
  name text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES scim_connections (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE INDEX scim_tokens_connection_idx ON scim_tokens (organization_id, connection_id, created_at, id);

CREATE TABLE scim_users (
  organization_id text NOT NULL,
  membership_id text NOT NULL,
  connection_id text NOT NULL,
  user_id text NOT NULL REFERENCES users (id),
  user_name text NOT NULL,
  external_id text,
  active boolean NOT NULL,
  display_name text,
  emails jsonb NOT NULL DEFAULT '[]',
  resource jsonb NOT NULL,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  PRIMARY KEY (organization_id, membership_id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES scim_connections (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id)
);
CREATE UNIQUE INDEX scim_users_user_name_key ON scim_users (organization_id, connection_id, lower(user_name))
  WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX scim_users_external_id_key ON scim_users (organization_id, connection_id, external_id)
  WHERE deleted_at IS NULL AND external_id IS NOT NULL;
CREATE INDEX scim_users_list_idx ON scim_users (organization_id, connection_id, created_at, membership_id)
  WHERE deleted_at IS NULL;
CREATE INDEX scim_users_user_idx ON scim_users (organization_id, user_id);

CREATE TABLE scim_groups (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  connection_id text NOT NULL,
  display_name text NOT NULL,
  external_id text,
  team_id text,
  version integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES scim_connections (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, team_id) REFERENCES teams (organization_id, id) ON DELETE SET NULL (team_id)
);
CREATE UNIQUE INDEX scim_groups_display_name_key ON scim_groups (organization_id, connection_id, lower(display_name));
CREATE UNIQUE INDEX scim_groups_external_id_key ON scim_groups (organization_id, connection_id, external_id)
  WHERE external_id IS NOT NULL;
CREATE INDEX scim_groups_list_idx ON scim_groups (organization_id, connection_id, created_at, id);

CREATE TABLE scim_group_members (
  organization_id text NOT NULL,
  group_id text NOT NULL,
  membership_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, group_id, membership_id),
  FOREIGN KEY (organization_id, group_id) REFERENCES scim_groups (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, membership_id) REFERENCES scim_users (organization_id, membership_id) ON DELETE CASCADE
);
CREATE INDEX scim_group_members_member_idx ON scim_group_members (organization_id, membership_id);

CREATE TABLE scim_events (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  connection_id text NOT NULL,
  token_id text,
  method text NOT NULL,
  path text NOT NULL,
  resource_type text CHECK (resource_type IN ('User', 'Group')),
  resource_id text,
  status integer NOT NULL,
  scim_type text,
  detail text,
  created_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES scim_connections (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX scim_events_list_idx ON scim_events (organization_id, connection_id, id);

ALTER TABLE memberships ADD COLUMN suspended_at timestamptz;

ALTER TABLE teams ADD COLUMN external_key text, ADD COLUMN scim_connection_id text,
  ADD FOREIGN KEY (organization_id, scim_connection_id) REFERENCES scim_connections (organization_id, id)
    ON DELETE SET NULL (scim_connection_id);
CREATE UNIQUE INDEX teams_external_key_key ON teams (organization_id, external_key) WHERE external_key IS NOT NULL;
`))
