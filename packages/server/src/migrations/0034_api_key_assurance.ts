/**
 * How an API key's maker authenticated, so SSO enforcement reaches keys as it reaches sessions
 * (identity/SsoEnforcement.ts): the SSO connection and organization that authenticated the session (or key) the key
 * was made with, copied when it is made; both null for a key made outside an SSO session. Keys made before this
 * migration have no record and count as made outside one: where enforcement covers their maker they stop working
 * (the maker makes a new one from an SSO session).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE api_keys ADD COLUMN sso_connection_id text;
ALTER TABLE api_keys ADD COLUMN authenticated_organization_id text REFERENCES organizations (id) ON DELETE CASCADE;
`))
