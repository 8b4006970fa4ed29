/** Teams, team memberships and invitations. */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE INDEX memberships_organization_idx ON memberships (organization_id, id);

CREATE TABLE teams (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  created_by_membership_id text REFERENCES memberships (id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX teams_name_key ON teams (organization_id, lower(name));

-- Deleting a team deletes its memberships; later tables that assign things to teams cascade the same way.
CREATE TABLE team_members (
  team_id text NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
  membership_id text NOT NULL REFERENCES memberships (id),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (team_id, membership_id)
);
CREATE INDEX team_members_membership_idx ON team_members (membership_id);

CREATE TABLE invitations (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  token_hash text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('pending', 'accepted', 'canceled')),
  created_by_membership_id text NOT NULL REFERENCES memberships (id),
  accepted_by_membership_id text REFERENCES memberships (id),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
-- One pending invitation per email and organization: inviting again refreshes it.
CREATE UNIQUE INDEX invitations_pending_email_key ON invitations (organization_id, lower(email)) WHERE status = 'pending';
CREATE INDEX invitations_organization_idx ON invitations (organization_id, id);
`))
