/**
 * The audit log's `anonymous` actor: a sign-in through an organization's SSO that failed names no one it could
 * trust, yet belongs in that organization's log (`session.create`, `failed`).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_type_check
  CHECK (actor_type IN ('user', 'api_key', 'scim', 'worker', 'system', 'anonymous'));
`))
