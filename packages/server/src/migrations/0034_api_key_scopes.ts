/**
 * How an API key's maker authenticated, so SSO enforcement reaches keys as it reaches sessions
 * (identity/SsoEnforcement.ts): the SSO connection and organization that authenticated the session (or key) the key
 * was made with, copied when it is made; both null for a key made outside an SSO session. Keys made before this
 * migration have no record and count as made outside one: where enforcement covers their maker they stop working
 * (the maker makes a new one from an SSO session).
 *
 * And what a key may do: `scopes`, the policy table's actions it may take, space-separated (null for the keys made
 * before scopes, which keep their maker's whole role); `parent_api_key_id`, the key it was made with, whose
 * revocation revokes it.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE api_keys ADD COLUMN sso_connection_id text;
ALTER TABLE api_keys ADD COLUMN authenticated_organization_id text REFERENCES organizations (id) ON DELETE CASCADE;
ALTER TABLE api_keys ADD COLUMN scopes text;
ALTER TABLE api_keys ADD COLUMN parent_api_key_id text REFERENCES api_keys (id) ON DELETE CASCADE;
CREATE INDEX api_keys_parent_idx ON api_keys (parent_api_key_id) WHERE parent_api_key_id IS NOT NULL;
`))
