/**
 * Who owns an account (docs/security.md, "Who owns an account"):
 * - `users.has_password`: whether the account has a password of its own; not when made by SSO or a directory, or taken
 *   back. Accounts made before this migration count as having one, but tombstones and those made in the same
 *   transaction as an SSO identity link or a SCIM User of theirs (one instant: SSO's JIT, a directory's
 *   provisioning), which were made without.
 * - `users.password_bound_organization_id`: the organization whose owner or admin was shown the reset link that set
 *   the password: it may know it (and what was chosen in its place), so the password ends when the account joins
 *   another organization. `users.password_change_required`: that password is temporary, its sign-in chooses another.
 * - `account_tokens.delivery`: how a reset link reached the person: `shown` to whoever issued it, or `mailed` to the
 *   account's address (which its use then proves). Links issued before were mailed when the person asked for them.
 * - `sso_intents.exchange_subject`: the provider's subject a sign-in's one-time code stands for: the code is
 *   exchanged only while that identity still leads to the account.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE users ADD COLUMN has_password boolean NOT NULL DEFAULT true;
ALTER TABLE users ADD COLUMN password_bound_organization_id text REFERENCES organizations (id) ON DELETE SET NULL;
ALTER TABLE users ADD COLUMN password_change_required boolean NOT NULL DEFAULT false;
UPDATE users u SET has_password = false
  WHERE u.deleted_at IS NOT NULL
    OR EXISTS (SELECT 1 FROM sso_identities i WHERE i.user_id = u.id AND i.created_at = u.created_at)
    OR EXISTS (SELECT 1 FROM scim_users s WHERE s.user_id = u.id AND s.created_at = u.created_at);
ALTER TABLE account_tokens ADD COLUMN delivery text NOT NULL DEFAULT 'shown' CHECK (delivery IN ('shown', 'mailed'));
UPDATE account_tokens SET delivery = 'mailed' WHERE issued_by = 'self';
ALTER TABLE sso_intents ADD COLUMN exchange_subject text;
`))
