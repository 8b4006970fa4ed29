/**
 * An organization's whole life (identity/Organizations.ts, identity/OrganizationPurge.ts): its logo and metadata,
 * and its deletion: when it was deleted and by whom, when the purge may take it, and what the purge removed so far
 * (counted per table across its runs, so the record it leaves says everything it removed). The sessions' indexes
 * serve the deletion (sessions acting in it fall back) and the purge (sessions its SSO made end with it).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE organizations ADD COLUMN logo_url text;
ALTER TABLE organizations ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE organizations ADD COLUMN deleted_at timestamptz;
ALTER TABLE organizations ADD COLUMN purge_after timestamptz;
ALTER TABLE organizations ADD COLUMN deleted_by text;
ALTER TABLE organizations ADD COLUMN purged_rows jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE organizations ADD CONSTRAINT organizations_deletion_check
  CHECK ((deleted_at IS NULL) = (purge_after IS NULL) AND (deleted_at IS NULL) = (deleted_by IS NULL));
CREATE INDEX organizations_purge_idx ON organizations (purge_after) WHERE deleted_at IS NOT NULL;
CREATE INDEX organizations_provisional_idx ON organizations (created_at) WHERE provisional AND deleted_at IS NULL;
CREATE INDEX sessions_active_organization_idx ON sessions (active_organization_id) WHERE active_organization_id IS NOT NULL;
CREATE INDEX sessions_authenticated_organization_idx ON sessions (authenticated_organization_id) WHERE authenticated_organization_id IS NOT NULL;
`))
