/**
 * The plan of an organization document a change was applied through (`via.planHash`): null for every other event,
 * as for every event before it.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE audit_events ADD COLUMN plan_hash text;
`))
