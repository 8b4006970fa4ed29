/**
 * SSO: one connection per organization (OIDC or SAML settings, the email domain) with the state of the domain's
 * DNS verification. The OIDC client secret is stored encrypted (platform/Crypto.ts). A domain can be verified by
 * one organization only.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE sso_connections (
  organization_id text PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  protocol text NOT NULL CHECK (protocol IN ('oidc', 'saml')),
  domain text NOT NULL,
  oidc_issuer text,
  oidc_client_id text,
  oidc_client_secret_ciphertext text,
  saml_entity_id text,
  saml_sso_url text,
  saml_certificate text,
  verification_token text,
  verification_expires_at timestamptz,
  domain_verified_at timestamptz,
  updated_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT sso_connections_updated_by_membership_fkey
    FOREIGN KEY (organization_id, updated_by_membership_id) REFERENCES memberships (organization_id, id),
  CHECK (protocol <> 'oidc' OR (oidc_issuer IS NOT NULL AND oidc_client_id IS NOT NULL AND oidc_client_secret_ciphertext IS NOT NULL)),
  CHECK (protocol <> 'saml' OR (saml_entity_id IS NOT NULL AND saml_sso_url IS NOT NULL AND saml_certificate IS NOT NULL))
);
CREATE UNIQUE INDEX sso_connections_verified_domain_key ON sso_connections (domain) WHERE domain_verified_at IS NOT NULL;
`))
