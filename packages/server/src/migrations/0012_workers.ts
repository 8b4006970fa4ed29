/**
 * Workers: a worker of an organization, the instances its runtime registers (the newest is "the" instance), and
 * the tokens a runtime authenticates with (only their hashes are kept). An instance stores the credential the
 * server presents when it calls the runtime (upgrade), encrypted with platform/Crypto.ts.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE workers (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  created_by_membership_id text,
  created_by_user_id text REFERENCES users (id),
  name text NOT NULL,
  description text,
  destination text NOT NULL CHECK (destination IN ('local', 'cloud')),
  status text NOT NULL,
  image_version text,
  workspace_path text,
  sandbox_backend text,
  last_heartbeat_at timestamptz,
  last_active_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz,
  UNIQUE (organization_id, id),
  FOREIGN KEY (organization_id, created_by_membership_id) REFERENCES memberships (organization_id, id)
);
CREATE INDEX workers_list_idx ON workers (organization_id, created_at, id) WHERE deleted_at IS NULL;
-- Admin metrics: workers per creator across the instance.
CREATE INDEX workers_creator_idx ON workers (created_by_user_id) WHERE deleted_at IS NULL;

CREATE TABLE worker_instances (
  organization_id text NOT NULL,
  id text NOT NULL,
  worker_id text NOT NULL,
  provider text NOT NULL,
  region text,
  url text,
  status text NOT NULL,
  runtime_credential_ciphertext text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, worker_id) REFERENCES workers (organization_id, id)
);
CREATE INDEX worker_instances_latest_idx ON worker_instances (organization_id, worker_id, created_at DESC, id DESC);

CREATE TABLE worker_tokens (
  organization_id text NOT NULL,
  id text NOT NULL,
  worker_id text NOT NULL,
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  last_used_at timestamptz,
  revoked_at timestamptz,
  PRIMARY KEY (organization_id, id),
  FOREIGN KEY (organization_id, worker_id) REFERENCES workers (organization_id, id)
);
CREATE INDEX worker_tokens_worker_idx ON worker_tokens (organization_id, worker_id);
`))
