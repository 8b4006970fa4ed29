/**
 * Nobody takes an account, or the instance, by getting there first (docs/security.md):
 * - `users.email_verified_at`: the account's email is proven to the whole instance: an SSO sign-in through a domain
 *   an organization verified made or took the account. An account whose email nobody proved is not linked to an SSO
 *   identity with that email: the identity takes it back (identity/Accounts.ts `reclaim`).
 * - `memberships.email_verified_at`: the organization proved the member's email to itself: the member created it (its
 *   first member, unless bootstrap made it), or accepted its invitation sent to that email (the inviter saw the
 *   token, so the proof holds in that organization only).
 * - `instance_setup_tokens`: hashes of the one-time setup tokens the server logs at start while nothing operates the
 *   instance. The operator organization is no longer the first one created: the one recorded that way is forgotten,
 *   and its owner claims it again with a setup token (or `ORGPLANE_OPERATOR_ORGANIZATION_ID` names it).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
ALTER TABLE memberships ADD COLUMN email_verified_at timestamptz;

UPDATE users u SET email_verified_at = (SELECT min(i.created_at) FROM sso_identities i WHERE i.user_id = u.id)
  WHERE EXISTS (SELECT 1 FROM sso_identities i WHERE i.user_id = u.id);
UPDATE memberships m SET email_verified_at = m.created_at
  WHERE m.user_id IS NOT NULL AND m.email_verified_at IS NULL
    AND EXISTS (SELECT 1 FROM invitations i WHERE i.organization_id = m.organization_id AND i.accepted_by_membership_id = m.id);
UPDATE memberships m SET email_verified_at = m.created_at
  WHERE m.user_id IS NOT NULL AND m.email_verified_at IS NULL
    AND NOT EXISTS (SELECT 1 FROM workspace_bootstraps b WHERE b.organization_id = m.organization_id)
    AND m.id = (SELECT f.id FROM memberships f WHERE f.organization_id = m.organization_id ORDER BY f.created_at, f.id LIMIT 1);

CREATE TABLE instance_setup_tokens (
  token_hash text PRIMARY KEY,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);
DELETE FROM instance_settings WHERE key = 'operator_organization_id';
`))
