/**
 * Idempotency keys (platform/Idempotency.ts): one row per key and scope, the scope being a hash of the credential
 * that sent it and the organization it acts in (not a tenant table: a session may act in no organization yet).
 *
 * - `fingerprint`: a hash of the request (method, path and query, body) the key was first used for;
 * - `lease_id`, `lease_expires_at`: the request running under the key now, if any;
 * - `commit_markers`: one marker per transaction of that request that committed, written inside the transaction
 *   itself, so a change never commits without its key;
 * - `response_status`, `response`: the answer to replay, encrypted with a key derived from the credential.
 *
 * Rows live 24 hours from `created_at`: claims ignore older ones and an hourly job deletes them.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE idempotency_keys (
  scope text NOT NULL,
  key text NOT NULL,
  fingerprint text NOT NULL,
  created_at timestamptz NOT NULL,
  lease_id text,
  lease_expires_at timestamptz,
  commit_markers text[] NOT NULL DEFAULT '{}',
  response_status integer,
  response text,
  PRIMARY KEY (scope, key),
  CHECK ((response_status IS NULL) = (response IS NULL))
);
CREATE INDEX idempotency_keys_created_at_idx ON idempotency_keys (created_at);
`))
