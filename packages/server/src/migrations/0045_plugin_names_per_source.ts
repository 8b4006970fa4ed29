/**
 * Plugin names are unique where Claude Code has them unique (docs/connectors.md): a connector's plugins within their
 * instance (its marketplace: `name@marketplace`), the plugins people made within the organization. Two repositories
 * (a fork, a mirror) may each bring a `code-review`, beside one a person made. Before, every live plugin's name was
 * unique in the organization, and importing a second repository with the same plugins failed with `plugin_exists`.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
DROP INDEX plugins_name_key;
CREATE UNIQUE INDEX plugins_name_key ON plugins (organization_id, lower(name))
  WHERE deleted_at IS NULL AND connector_instance_id IS NULL;
CREATE UNIQUE INDEX plugins_connector_name_key ON plugins (organization_id, connector_instance_id, lower(name))
  WHERE deleted_at IS NULL AND connector_instance_id IS NOT NULL;
`))
