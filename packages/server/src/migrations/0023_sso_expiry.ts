/**
 * The cleanup job of SSO sign-in state (sso/IntentsExpiry.ts) deletes expired intents and SAML assertions in every
 * organization: indexes over their expiry alone (the assertions' index leads with the organization, for the ACS).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
CREATE INDEX sso_intents_expiry_idx ON sso_intents (expires_at);
CREATE INDEX sso_saml_assertions_cleanup_idx ON sso_saml_assertions (expires_at);
`))
