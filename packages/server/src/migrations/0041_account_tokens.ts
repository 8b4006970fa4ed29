/**
 * One-time tokens of an account (docs/security.md, "Recovery without the current password"), stored as SHA-256:
 * - `password_reset`: a reset link issued by an owner or admin of the organization that alone holds the account
 *   (`issuer_organization_id`, `allowed_role`: the highest role the account may have there when it is used), by the
 *   instance's operator, by whoever runs the server (`orgplane admin reset-password`), or mailed on request. Bound to
 *   the account's password as it was (`password_digest`, SHA-256 of its stored hash) and to its email: a change of
 *   either voids it.
 * - `email_verification`: a link mailed to the account's address (`email`); using it proves that address.
 * One of each per account: issuing another replaces it. A use deletes it.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE account_tokens (
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  purpose text NOT NULL CHECK (purpose IN ('password_reset', 'email_verification')),
  token_hash text NOT NULL,
  email text NOT NULL,
  password_digest text,
  issued_by text NOT NULL CHECK (issued_by IN ('member', 'operator', 'machine', 'self')),
  issuer_label text,
  issuer_organization_id text REFERENCES organizations (id) ON DELETE SET NULL,
  allowed_role text CHECK (allowed_role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (user_id, purpose)
);
CREATE UNIQUE INDEX account_tokens_token_hash_key ON account_tokens (token_hash);
`))
