/**
 * SAML assertions taken by a connection's ACS, until they expire: an assertion is taken once, so a Response posted
 * again (an IdP-initiated one has no single-use intent to spend) is refused as a replay. Rows are dropped once the
 * assertion's own validity (plus the clock skew) has passed, when the engine would refuse it anyway.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE sso_saml_assertions (
  organization_id text NOT NULL,
  connection_id text NOT NULL,
  assertion_id text NOT NULL,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, connection_id, assertion_id),
  FOREIGN KEY (organization_id, connection_id) REFERENCES sso_connections (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX sso_saml_assertions_expiry_idx ON sso_saml_assertions (organization_id, expires_at);
`))
