/**
 * What a person sees of their sessions (`GET /v1/me/sessions`) and what ends an idle one: the address and user agent
 * a session signed in from, and its last use (written at most once a minute; identity/Authentication.ts).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE sessions ADD COLUMN last_used_at timestamptz;
ALTER TABLE sessions ADD COLUMN ip_address text;
ALTER TABLE sessions ADD COLUMN user_agent text;
CREATE INDEX sessions_user_live_idx ON sessions (user_id, id) WHERE revoked_at IS NULL;
`))
