/**
 * The channel each audited request came through (`via.channel`): `mcp` for an MCP server acting for the caller, as
 * the request declared with `Orgplane-Channel`; `api` otherwise, as every event before it was.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE audit_events ADD COLUMN channel text NOT NULL DEFAULT 'api' CHECK (channel IN ('api', 'mcp'));
`))
