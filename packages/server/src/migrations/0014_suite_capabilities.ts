/**
 * Capability passthroughs: each organization's OAuth client per suite (`suite-a` mail, `suite-b` calendar), its
 * members' own delegated credentials, and the pending authorizations between "connect" and the callback.
 *
 * Secrets (the client secret, tokens, PKCE verifiers) are stored encrypted with platform/Crypto.ts and never
 * returned. `credential_version` is the compare-and-set counter of a credential, as on mcp_member_credentials.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE suite_clients (
  organization_id text NOT NULL REFERENCES organizations (id),
  suite text NOT NULL CHECK (suite IN ('suite-a', 'suite-b')),
  client_id text NOT NULL,
  client_secret_ciphertext text,
  tenant text,
  features text[] NOT NULL DEFAULT '{}',
  -- Null: the suite's default.
  authorization_endpoint text,
  token_endpoint text,
  api_base_url text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  updated_by_membership_id text,
  PRIMARY KEY (organization_id, suite),
  FOREIGN KEY (organization_id, updated_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE TABLE suite_credentials (
  organization_id text NOT NULL,
  suite text NOT NULL,
  membership_id text NOT NULL,
  access_token_ciphertext text NOT NULL,
  refresh_token_ciphertext text,
  token_type text,
  granted_scopes text[] NOT NULL DEFAULT '{}',
  token_expires_at timestamptz,
  credential_version integer NOT NULL DEFAULT 0,
  credential_health text NOT NULL DEFAULT 'ready' CHECK (credential_health IN ('ready', 'reconnect_required')),
  credential_health_reason text,
  connected_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, suite, membership_id),
  FOREIGN KEY (organization_id, suite) REFERENCES suite_clients (organization_id, suite) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id) ON DELETE CASCADE
);
CREATE TABLE suite_authorizations (
  organization_id text NOT NULL,
  id text NOT NULL,
  suite text NOT NULL,
  membership_id text NOT NULL,
  code_verifier_ciphertext text NOT NULL,
  redirect_uri text NOT NULL,
  -- The client when the authorization started: a callback for another client is refused.
  client_id text NOT NULL,
  requested_scopes text[] NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, suite) REFERENCES suite_clients (organization_id, suite) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX suite_authorizations_member_idx ON suite_authorizations (organization_id, suite, membership_id);
`))
