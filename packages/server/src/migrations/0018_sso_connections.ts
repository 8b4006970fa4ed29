/**
 * SSO sign-in (issue 25): several connections per organization, its verified domains apart from them, single-use
 * sign-in and test intents, links from IdP subjects to people, and sessions that record who authenticated them.
 *
 * - `sso_domains`: an organization's email domains with their DNS TXT verification; a domain is verified by one
 *   organization only (unique index over verified rows).
 * - `sso_connections`: `ssc_` ids; kind, name, state (`draft|active|inactive`), JIT and mapping (JSON), the IdP
 *   settings of its kind (JSON; the OIDC client secret in its own encrypted column), `config_revision` and the
 *   latest test (JSON).
 * - `sso_connection_domains`: which domains a connection serves; `active` mirrors the connection's state, so the
 *   partial unique index lets at most one active connection serve a domain.
 * - `sso_intents`: a test or a sign-in between its start and the IdP's answer (nonce, encrypted PKCE verifier, the
 *   SAML request id, the admin a test is bound to, where the browser returns), then for a sign-in the hash of the
 *   one-time code that becomes a session.
 * - `sso_identities`: the IdP subject of a connection → the person; `deprovisioned_at` is the hook directory sync
 *   (SCIM) sets to refuse an identity.
 * - `sessions.sso_connection_id` / `authenticated_organization_id`: what authenticated a session (null: password).
 * - `sso_policies`: an organization's enforcement (SSO required for its verified domains; owners' password
 *   break-glass).
 *
 * Data: today's single connection becomes a `draft` connection named after its protocol, its domain a domain of the
 * organization with its verification. The OIDC client secret is not carried over (its ciphertext is bound to the
 * old row and migrations run without keys): such a connection answers `clientSecretSet: false` until the secret is
 * set again; nobody could sign in through it before, so no sign-in is lost.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as Migrator from "../platform/Migrator.js"
import { typeid } from "typeid-js"

interface OldRow {
  readonly organizationId: string
  readonly protocol: "oidc" | "saml"
  readonly domain: string
  readonly oidcIssuer: string | null
  readonly oidcClientId: string | null
  readonly samlEntityId: string | null
  readonly samlSsoUrl: string | null
  readonly samlCertificate: string | null
  readonly verificationToken: string | null
  readonly verificationExpiresAt: Date | null
  readonly domainVerifiedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

const MAPPING = {
  oidc: { email: "email", name: "name", givenName: "given_name", familyName: "family_name", groups: "groups", groupRules: [] },
  saml: { email: "email", name: "displayName", givenName: "givenName", familyName: "surname", groups: "groups", groupRules: [] }
}

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* Migrator.runScript(sql, `
ALTER TABLE sso_connections RENAME TO sso_connections_0009;
ALTER INDEX sso_connections_verified_domain_key RENAME TO sso_connections_0009_verified_domain_key;
ALTER TABLE sso_connections_0009 RENAME CONSTRAINT sso_connections_updated_by_membership_fkey TO sso_connections_0009_updated_by_membership_fkey;

CREATE TABLE sso_domains (
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  domain text NOT NULL,
  verification_token text,
  verification_expires_at timestamptz,
  verified_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, domain)
);
CREATE UNIQUE INDEX sso_domains_verified_key ON sso_domains (domain) WHERE verified_at IS NOT NULL;

CREATE TABLE sso_connections (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('oidc', 'saml')),
  name text NOT NULL,
  state text NOT NULL CHECK (state IN ('draft', 'active', 'inactive')),
  jit jsonb NOT NULL,
  mapping jsonb NOT NULL,
  oidc jsonb,
  oidc_client_secret_ciphertext text,
  saml jsonb,
  config_revision integer NOT NULL,
  last_test jsonb,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  CHECK ((kind = 'oidc') = (oidc IS NOT NULL)),
  CHECK ((kind = 'saml') = (saml IS NOT NULL))
);
CREATE INDEX sso_connections_organization_idx ON sso_connections (organization_id, id);

CREATE TABLE sso_connection_domains (
  organization_id text NOT NULL,
  connection_id text NOT NULL,
  domain text NOT NULL,
  active boolean NOT NULL DEFAULT false,
  PRIMARY KEY (organization_id, connection_id, domain),
  FOREIGN KEY (organization_id, connection_id) REFERENCES sso_connections (organization_id, id) ON DELETE CASCADE,
  FOREIGN KEY (organization_id, domain) REFERENCES sso_domains (organization_id, domain) ON DELETE CASCADE
);
CREATE UNIQUE INDEX sso_connection_domains_active_key ON sso_connection_domains (domain) WHERE active;

CREATE TABLE sso_intents (
  id text PRIMARY KEY,
  organization_id text NOT NULL,
  connection_id text NOT NULL,
  purpose text NOT NULL CHECK (purpose IN ('test', 'sign_in')),
  config_revision integer NOT NULL,
  nonce text NOT NULL,
  code_verifier_ciphertext text,
  saml_request_id text,
  user_id text REFERENCES users (id) ON DELETE CASCADE,
  login_hint text,
  return_to text,
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  consumed_at timestamptz,
  exchange_code_hash text UNIQUE,
  exchange_user_id text REFERENCES users (id) ON DELETE CASCADE,
  exchange_expires_at timestamptz,
  exchanged_at timestamptz,
  FOREIGN KEY (organization_id, connection_id) REFERENCES sso_connections (organization_id, id) ON DELETE CASCADE,
  CHECK (purpose <> 'test' OR user_id IS NOT NULL)
);
CREATE INDEX sso_intents_connection_idx ON sso_intents (organization_id, connection_id, created_at);
CREATE INDEX sso_intents_saml_request_idx ON sso_intents (saml_request_id) WHERE saml_request_id IS NOT NULL;

CREATE TABLE sso_identities (
  organization_id text NOT NULL,
  connection_id text NOT NULL,
  subject text NOT NULL,
  user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  email text NOT NULL,
  claims jsonb NOT NULL,
  deprovisioned_at timestamptz,
  created_at timestamptz NOT NULL,
  last_sign_in_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, connection_id, subject),
  FOREIGN KEY (organization_id, connection_id) REFERENCES sso_connections (organization_id, id) ON DELETE CASCADE
);
CREATE INDEX sso_identities_user_idx ON sso_identities (organization_id, user_id);

CREATE TABLE sso_policies (
  organization_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  require_sso boolean NOT NULL,
  owners_password_fallback boolean NOT NULL,
  updated_at timestamptz NOT NULL
);

ALTER TABLE sessions ADD COLUMN sso_connection_id text;
ALTER TABLE sessions ADD COLUMN authenticated_organization_id text REFERENCES organizations (id) ON DELETE CASCADE;
`)

  const old = yield* sql.unsafe<OldRow>("/* instance-wide: migration 0018 moves every organization's single connection */ SELECT * FROM sso_connections_0009")
  for (const row of old) {
    yield* sql`INSERT INTO sso_domains ${
      sql.insert({
        organizationId: row.organizationId,
        domain: row.domain,
        verificationToken: row.verificationToken,
        verificationExpiresAt: row.verificationExpiresAt,
        verifiedAt: row.domainVerifiedAt,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt
      })
    }`
    const id = typeid("ssc").toString()
    const oidc = row.protocol === "oidc"
      ? {
        issuer: row.oidcIssuer,
        endpoints: null,
        clientId: row.oidcClientId,
        scopes: ["openid", "email", "profile"],
        tokenEndpointAuthMethod: "client_secret_basic"
      }
      : null
    const saml = row.protocol === "saml"
      ? {
        source: "manual",
        metadataUrl: null,
        metadataXml: null,
        entityId: row.samlEntityId,
        ssoUrl: row.samlSsoUrl,
        certificates: row.samlCertificate === null ? [] : [row.samlCertificate],
        allowIdpInitiated: false,
        relayStateAllowList: []
      }
      : null
    yield* sql`INSERT INTO sso_connections ${
      sql.insert({
        id,
        organizationId: row.organizationId,
        kind: row.protocol,
        name: row.protocol === "oidc" ? "OIDC" : "SAML",
        state: "draft",
        jit: JSON.stringify({ enabled: true, defaultRole: "member", defaultTeamIds: [] }),
        mapping: JSON.stringify(MAPPING[row.protocol]),
        oidc: oidc === null ? null : JSON.stringify(oidc),
        oidcClientSecretCiphertext: null,
        saml: saml === null ? null : JSON.stringify(saml),
        configRevision: 1,
        lastTest: null,
        createdAt: row.createdAt,
        updatedAt: row.updatedAt
      })
    }`
    yield* sql`INSERT INTO sso_connection_domains ${
      sql.insert({ organizationId: row.organizationId, connectionId: id, domain: row.domain, active: false })
    }`
  }
  yield* sql.unsafe(`DROP TABLE sso_connections_0009`)
})
