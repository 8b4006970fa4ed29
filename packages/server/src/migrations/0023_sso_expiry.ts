/**
 * The cleanup job of SSO sign-in state (sso/IntentsExpiry.ts) deletes expired intents and SAML assertions in every
 * organization: indexes over their expiry alone (the assertions' index leads with the organization, for the ACS).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE INDEX sso_intents_expiry_idx ON sso_intents (expires_at);
CREATE INDEX sso_saml_assertions_cleanup_idx ON sso_saml_assertions (expires_at);
`))
