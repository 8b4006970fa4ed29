/**
 * Tenancy by construction: every tenant table is unique on (organization_id, id), and every reference between
 * rows of tenant tables goes through a composite foreign key that names the organization, so a row can never
 * point into another organization. `team_members` carries its organization too.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
-- The unique constraints replace the plain (organization_id, id) indexes of the first migrations.
DROP INDEX memberships_organization_idx;
ALTER TABLE memberships ADD CONSTRAINT memberships_organization_id_id_key UNIQUE (organization_id, id);
DROP INDEX api_keys_organization_idx;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_organization_id_id_key UNIQUE (organization_id, id);
DROP INDEX invitations_organization_idx;
ALTER TABLE invitations ADD CONSTRAINT invitations_organization_id_id_key UNIQUE (organization_id, id);
ALTER TABLE teams ADD CONSTRAINT teams_organization_id_id_key UNIQUE (organization_id, id);
ALTER TABLE workspace_bootstraps ADD CONSTRAINT workspace_bootstraps_organization_id_id_key UNIQUE (organization_id, id);
ALTER TABLE workspace_claims ADD CONSTRAINT workspace_claims_organization_id_id_key UNIQUE (organization_id, id);

ALTER TABLE api_keys
  DROP CONSTRAINT api_keys_membership_id_fkey,
  ADD CONSTRAINT api_keys_membership_fkey
    FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id);

ALTER TABLE teams
  DROP CONSTRAINT teams_created_by_membership_id_fkey,
  ADD CONSTRAINT teams_created_by_membership_fkey
    FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id);

ALTER TABLE team_members ADD COLUMN organization_id text;
UPDATE team_members tm SET organization_id = t.organization_id FROM teams t WHERE t.id = tm.team_id;
ALTER TABLE team_members
  ALTER COLUMN organization_id SET NOT NULL,
  DROP CONSTRAINT team_members_team_id_fkey,
  DROP CONSTRAINT team_members_membership_id_fkey,
  ADD CONSTRAINT team_members_team_fkey
    FOREIGN KEY (organization_id, team_id) REFERENCES teams (organization_id, id) ON DELETE CASCADE,
  ADD CONSTRAINT team_members_membership_fkey
    FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id);
DROP INDEX team_members_membership_idx;
CREATE INDEX team_members_membership_idx ON team_members (organization_id, membership_id);

ALTER TABLE invitations
  DROP CONSTRAINT invitations_created_by_membership_id_fkey,
  DROP CONSTRAINT invitations_accepted_by_membership_id_fkey,
  ADD CONSTRAINT invitations_created_by_membership_fkey
    FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id),
  ADD CONSTRAINT invitations_accepted_by_membership_fkey
    FOREIGN KEY (organization_id, accepted_by_membership_id) REFERENCES memberships (organization_id, id);

ALTER TABLE workspace_bootstraps
  DROP CONSTRAINT workspace_bootstraps_setup_membership_id_fkey,
  ADD CONSTRAINT workspace_bootstraps_setup_membership_fkey
    FOREIGN KEY (organization_id, setup_membership_id) REFERENCES memberships (organization_id, id);

ALTER TABLE workspace_claims
  DROP CONSTRAINT workspace_claims_bootstrap_id_fkey,
  ADD CONSTRAINT workspace_claims_bootstrap_fkey
    FOREIGN KEY (organization_id, bootstrap_id) REFERENCES workspace_bootstraps (organization_id, id);
`))
