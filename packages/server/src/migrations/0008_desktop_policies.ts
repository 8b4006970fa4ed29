/** Desktop policies and their assignments to members and teams. */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE desktop_policies (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  policy_name text NOT NULL,
  is_default boolean NOT NULL,
  is_enabled boolean NOT NULL,
  priority integer NOT NULL CHECK (priority BETWEEN 0 AND 1000000),
  policy jsonb NOT NULL,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id),
  -- The default policy is never disabled or deleted.
  CHECK (NOT is_default OR (is_enabled AND deleted_at IS NULL))
);
-- One default policy per organization: creating it twice (two first requests at once) inserts one.
CREATE UNIQUE INDEX desktop_policies_default_key ON desktop_policies (organization_id) WHERE is_default;
CREATE INDEX desktop_policies_list_idx ON desktop_policies (organization_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE desktop_policy_members (
  organization_id text NOT NULL,
  desktop_policy_id text NOT NULL,
  membership_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, desktop_policy_id, membership_id),
  FOREIGN KEY (organization_id, desktop_policy_id) REFERENCES desktop_policies (organization_id, id),
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id)
);
CREATE INDEX desktop_policy_members_membership_idx ON desktop_policy_members (organization_id, membership_id);

-- A deleted team's assignments go with it.
CREATE TABLE desktop_policy_teams (
  organization_id text NOT NULL,
  desktop_policy_id text NOT NULL,
  team_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, desktop_policy_id, team_id),
  FOREIGN KEY (organization_id, desktop_policy_id) REFERENCES desktop_policies (organization_id, id),
  FOREIGN KEY (organization_id, team_id) REFERENCES teams (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX desktop_policy_teams_team_idx ON desktop_policy_teams (organization_id, team_id);
`))
