/**
 * Whether a stored component file is executable in the repository (git mode 100755, as hook scripts are): served
 * with the file so that a desktop, and `orgplane plugins download`, write it executable. A stored tree entry keeps its
 * mode too; those stored before have none (null), so a sync reads such a tree again from the code host, and the
 * components' next sync stores their files with their modes (the plan's fingerprint now holds the mode).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE config_object_version_files ADD COLUMN executable boolean NOT NULL DEFAULT false;
ALTER TABLE connector_tree_entries ADD COLUMN executable boolean;
`))
