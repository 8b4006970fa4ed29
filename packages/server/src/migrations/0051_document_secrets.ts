/**
 * Where an organization document's secrets come from (organization as code): for each secret field of a resource an
 * apply wrote, the references it named (`env:…`, `file:…`) and their version counters, with a fingerprint of the
 * stored ciphertext then. A ciphertext that no longer has the fingerprint was written outside the document: its
 * version reads as 0. Never a secret: the values stay in the resources' own encrypted columns.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE organization_document_secrets (
  organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  resource_id text NOT NULL,
  field text NOT NULL,
  refs jsonb NOT NULL,
  fingerprint text NOT NULL,
  PRIMARY KEY (organization_id, resource_id, field)
);
`))
