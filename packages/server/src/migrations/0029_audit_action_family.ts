/**
 * The audit log's action index serves a family filter (`action=member.*`, the list's `e.action LIKE 'member.%'`)
 * as well as an exact action. With the database's default operator class a LIKE prefix can use a btree index only
 * under the C collation, so on any other (C.UTF-8, en_US.UTF-8) a family was read through the time index, every
 * event of the organization filtered: flat for a common family, but a family with few or no events read them all
 * (about a second at 1,000,000 events, `pnpm bench --audit`). `text_pattern_ops` compares bytes, so the planner
 * turns the prefix into a range on the index; it serves `=` too, so it replaces the index instead of adding one (no
 * second index to write on every event). On a partitioned table the statements apply to every partition.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
DROP INDEX audit_events_action_idx;
CREATE INDEX audit_events_action_idx ON audit_events (organization_id, action text_pattern_ops, occurred_at, id);
`))
