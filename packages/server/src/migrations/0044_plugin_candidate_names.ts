/**
 * What a sync that follows a repository (docs/connectors.md, "Following a marketplace") keeps of a plugin a
 * discovery apply made:
 * - `connector_candidate_name`: the name the plugin has in its repository; the plugin is renamed when it changes, and
 *   a moved folder is recognised by it. Null for plugins people made, and for plugins imported before this release
 *   until their next sync records it (without renaming them).
 * - `connector_left_at`: when the plugin left its repository (archived by the sync, not by a person): listed again,
 *   it comes back active. Null otherwise.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE plugins ADD COLUMN connector_candidate_name text, ADD COLUMN connector_left_at timestamptz;
`))
