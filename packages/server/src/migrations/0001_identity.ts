/** Users, organizations, memberships, sessions, API keys, workspace bootstrap and rate limits. */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE users (
  id text PRIMARY KEY,
  email text NOT NULL,
  name text NOT NULL,
  password_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE organizations (
  id text PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL CHECK (plan IN ('free', 'team', 'enterprise')),
  provisional boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- Facts about the instance itself, such as which organization operates it.
CREATE TABLE instance_settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE memberships (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  user_id text REFERENCES users (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  removed_at timestamptz
);
CREATE UNIQUE INDEX memberships_active_user_key ON memberships (organization_id, user_id)
  WHERE removed_at IS NULL AND user_id IS NOT NULL;
CREATE INDEX memberships_user_idx ON memberships (user_id, id) WHERE removed_at IS NULL;

CREATE TABLE sessions (
  id text PRIMARY KEY,
  user_id text NOT NULL REFERENCES users (id),
  token_hash text NOT NULL UNIQUE,
  active_organization_id text REFERENCES organizations (id),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX sessions_user_idx ON sessions (user_id);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  membership_id text NOT NULL REFERENCES memberships (id),
  name text NOT NULL,
  prefix text NOT NULL,
  key_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_keys_organization_idx ON api_keys (organization_id, id);

CREATE TABLE workspace_bootstraps (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  setup_membership_id text NOT NULL REFERENCES memberships (id),
  status text NOT NULL CHECK (status IN ('provisional', 'claimed')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL
);

CREATE TABLE workspace_claims (
  id text PRIMARY KEY,
  organization_id text NOT NULL REFERENCES organizations (id),
  bootstrap_id text NOT NULL REFERENCES workspace_bootstraps (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  token_hash text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('pending', 'claimed')),
  created_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  claimed_by_user_id text REFERENCES users (id),
  claimed_at timestamptz
);

-- Fixed-window counters, one row per limited key (for example a client address).
CREATE TABLE rate_limits (
  key text PRIMARY KEY,
  window_start timestamptz NOT NULL,
  count integer NOT NULL
);
`))
