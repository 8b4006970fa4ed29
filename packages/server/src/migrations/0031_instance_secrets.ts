/**
 * The instance's own secrets, encrypted at rest like every other (platform/InstanceSecrets.ts): the cursor key,
 * which signs list cursors and OAuth states, was kept in clear in `instance_settings`. The start-up after this
 * migration encrypts it here, bound to its row, and deletes the clear copy (migrations run without the keys).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
CREATE TABLE instance_secrets (
  name text PRIMARY KEY,
  ciphertext text NOT NULL
);
`))
