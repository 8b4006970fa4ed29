/**
 * External MCP connections: an organization's registration of a remote MCP server (its URL, how it authenticates,
 * whose credential it uses), the grants that let people use it, the per-member OAuth credentials of `per_member`
 * connections, and the pending OAuth authorizations between "connect" and the callback.
 *
 * Secrets (API keys, tokens, client secrets, PKCE verifiers) are stored encrypted with platform/Crypto.ts, in
 * `*_ciphertext` columns, and never returned. `credential_version` is the compare-and-set counter of a credential:
 * a refresh writes only if the version it read is still current, so two refreshes cannot lose a token.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"
import { grants } from "./0004_catalog.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE mcp_connections (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  url text NOT NULL,
  auth_type text NOT NULL CHECK (auth_type IN ('none', 'apikey', 'oauth')),
  credential_mode text NOT NULL DEFAULT 'shared' CHECK (credential_mode IN ('shared', 'per_member')),
  api_key_ciphertext text,
  -- The shared credential (oauth + shared): tokens, their scopes and expiry.
  access_token_ciphertext text,
  refresh_token_ciphertext text,
  token_type text,
  granted_scopes text[] NOT NULL DEFAULT '{}',
  token_expires_at timestamptz,
  credential_version integer NOT NULL DEFAULT 0,
  credential_health text NOT NULL DEFAULT 'unknown' CHECK (credential_health IN ('unknown', 'ready', 'reconnect_required')),
  credential_health_reason text,
  credential_checked_at timestamptz,
  -- none: set by a successful initialize at create or update; apikey and shared oauth: when the credential was stored.
  connected_at timestamptz,
  -- OAuth configuration and the client registered with the authorization server.
  oauth_issuer text,
  oauth_requested_scopes text[] NOT NULL DEFAULT '{}',
  oauth_client_id text,
  oauth_client_secret_ciphertext text,
  oauth_registration_source text CHECK (oauth_registration_source IN ('pre_registered', 'client_metadata', 'dynamic')),
  oauth_token_endpoint_auth_method text,
  oauth_redirect_uri text,
  -- The authorization server's endpoints as discovered (authorization, token, registration, ...).
  oauth_metadata jsonb,
  oauth_issuer_review_required_at timestamptz,
  tool_policy_all_disabled boolean NOT NULL DEFAULT false,
  tool_policy_disabled_tools text[] NOT NULL DEFAULT '{}',
  tool_policy_updated_by_membership_id text,
  tool_policy_updated_at timestamptz,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  CHECK (credential_mode = 'shared' OR auth_type = 'oauth'),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id),
  FOREIGN KEY (organization_id, tool_policy_updated_by_membership_id) REFERENCES memberships (organization_id, id)
);
-- Names are unique per organization, ignoring case: the CLI finds a connection by name.
CREATE UNIQUE INDEX mcp_connections_name_key ON mcp_connections (organization_id, lower(name));
CREATE INDEX mcp_connections_list_idx ON mcp_connections (organization_id, created_at, id);
${grants("mcp_connection_grants", "mcp_connection_id", "mcp_connections")}
ALTER TABLE mcp_connection_grants DROP CONSTRAINT mcp_connection_grants_organization_id_mcp_connection_id_fkey;
ALTER TABLE mcp_connection_grants ADD FOREIGN KEY (organization_id, mcp_connection_id)
  REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE;

-- A member's own credential for a per_member connection.
CREATE TABLE mcp_member_credentials (
  organization_id text NOT NULL,
  mcp_connection_id text NOT NULL,
  membership_id text NOT NULL,
  access_token_ciphertext text,
  refresh_token_ciphertext text,
  token_type text,
  granted_scopes text[] NOT NULL DEFAULT '{}',
  token_expires_at timestamptz,
  credential_version integer NOT NULL DEFAULT 0,
  credential_health text NOT NULL DEFAULT 'unknown' CHECK (credential_health IN ('unknown', 'ready', 'reconnect_required')),
  credential_health_reason text,
  credential_checked_at timestamptz,
  connected_at timestamptz,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, mcp_connection_id, membership_id),
  FOREIGN KEY (organization_id, mcp_connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id) ON DELETE CASCADE
);

-- Authorizations started and not yet called back: the PKCE verifier, whose credential the tokens become, until when.
CREATE TABLE mcp_oauth_authorizations (
  organization_id text NOT NULL,
  id text NOT NULL,
  mcp_connection_id text NOT NULL,
  -- Who started it; for a per_member connection, whose credential the tokens become.
  membership_id text NOT NULL,
  target text NOT NULL CHECK (target IN ('shared', 'member')),
  code_verifier_ciphertext text NOT NULL,
  redirect_uri text NOT NULL,
  -- The connection's OAuth client when the authorization started: a callback for another client is refused.
  oauth_client_id text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, mcp_connection_id) REFERENCES mcp_connections (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, membership_id) REFERENCES memberships (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX mcp_oauth_authorizations_expiry_idx ON mcp_oauth_authorizations (expires_at);
`))
