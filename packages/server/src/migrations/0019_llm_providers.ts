/**
 * LLM providers: an organization's model providers (from the catalog or custom), their model allow-list (jsonb:
 * the effective figures of each model), the encrypted credential and extra headers, and the grants that let
 * members use them. `credential_ciphertext` holds the credential as JSON (`{apiKey}` or `{accessToken,
 * refreshToken?}`), `headers_ciphertext` the extra headers as a JSON object; both bound to their row
 * (platform/SecretColumns.ts). `header_names` repeats the names, which reads show.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"
import { grants } from "./0004_catalog.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE llm_providers (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  name text NOT NULL,
  source text NOT NULL CHECK (source IN ('catalog', 'custom')),
  catalog_provider_id text,
  api_style text NOT NULL CHECK (api_style IN ('openai-compatible', 'anthropic')),
  base_url text NOT NULL,
  header_names text[] NOT NULL DEFAULT '{}',
  headers_ciphertext text,
  models jsonb NOT NULL,
  credential_type text CHECK (credential_type IN ('api_key', 'oauth')),
  credential_ciphertext text,
  credential_expires_at timestamptz,
  credential_updated_at timestamptz,
  last_used_at timestamptz,
  created_by_membership_id text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (organization_id, id),
  CHECK ((source = 'catalog') = (catalog_provider_id IS NOT NULL)),
  CHECK ((credential_type IS NULL) = (credential_ciphertext IS NULL)),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
-- Names are unique per organization, ignoring case: the CLI finds a provider by name.
CREATE UNIQUE INDEX llm_providers_name_key ON llm_providers (organization_id, lower(name));
CREATE INDEX llm_providers_list_idx ON llm_providers (organization_id, created_at, id);
${grants("llm_provider_grants", "llm_provider_id", "llm_providers")}
ALTER TABLE llm_provider_grants DROP CONSTRAINT llm_provider_grants_organization_id_llm_provider_id_fkey;
ALTER TABLE llm_provider_grants ADD FOREIGN KEY (organization_id, llm_provider_id)
  REFERENCES llm_providers (organization_id, id) ON DELETE CASCADE;
`))
