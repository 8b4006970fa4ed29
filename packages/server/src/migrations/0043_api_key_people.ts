/**
 * What an API key may do to an organization's people (issue 55, item 5; docs/security.md, "Keys, the operator's
 * hierarchy and small leaks").
 *
 * An invitation records the key that made it (`created_by_api_key_id`; null for a session's), and a key's pending
 * invitations are canceled when its row is deleted, whatever deletes it: its revocation, the cascade from the key
 * that made it, its maker's removal, suspension, account deletion or reclaimed account, a person-wide revocation.
 * The trigger holds it in the database, so no path can forget it; the foreign key then clears the reference (the
 * invitation stays, `canceled`, as one canceled by an admin does).
 *
 * Scopes: inviting admins is an action of its own (`invitations.inviteAdmins`), and it, `members.changeRole` and the
 * operator's lists of every account and organization (`admin.readUsers`, `admin.readOrganizations`; item 6) are now
 * taken by a key only when a scope names them. Scopes are stored expanded (`members.read teams.read ...`, an
 * area's `.*` as each of its actions), so a key made without scopes is told from one whose scopes were named by
 * holding exactly the default set: the policy table's actions for an owner or an admin (the same set) less those a
 * key took only by name, as every release with scopes made it (0.1.0, 0.2.0). Such keys lose the newly guarded
 * actions, as a key made without scopes now does (the fix); keys whose scopes were named and held
 * `invitations.manage` (named, or as `invitations.*`) keep what it let them do: they get `invitations.inviteAdmins`.
 * A key made without scopes by a key with named ones held a part of the default set and is taken as named.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

/** The scopes a key made without them holds, in 0.1.0 and 0.2.0 (its maker an owner or an admin). */
const madeWithoutScopes = [
  "members.read", "teams.read", "catalog.read", "catalog.create", "connectors.read", "templates.read", "templates.create",
  "desktopPolicies.readEffective", "memory.use", "members.leave", "members.readDirectory", "members.manageDirectory",
  "members.changeRole", "members.remove", "teams.manage", "invitations.manage", "marketplaces.create", "catalog.grantOrgWide",
  "connectors.manage", "desktopPolicies.manage", "audit.read", "organizations.read", "organizations.update", "admin.readMetrics",
  "admin.readUsers", "admin.readOrganizations", "workers.read", "workers.register", "workers.manage", "workers.readActivity",
  "workers.manageAny", "telemetry.ingest", "mcp.read", "mcp.connectOwn", "mcp.manage", "mcp.resolve", "mcp.callTools",
  "capabilities.use", "llmProviders.use", "llmProviders.create", "capabilities.manage"
]

/** The actions such a key no longer takes: a key takes them only when a scope names them. */
const nowGuarded = ["members.changeRole", "admin.readUsers", "admin.readOrganizations"]

const array = (actions: ReadonlyArray<string>) => `ARRAY[${actions.map((action) => `'${action}'`).join(", ")}]`
const held = "string_to_array(scopes, ' ')"
const isDefault = `(${held} @> ${array(madeWithoutScopes)} AND ${held} <@ ${array(madeWithoutScopes)})`

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE invitations ADD COLUMN created_by_api_key_id text;
ALTER TABLE invitations ADD CONSTRAINT invitations_created_by_api_key_fkey
  FOREIGN KEY (organization_id, created_by_api_key_id) REFERENCES api_keys (organization_id, id)
  ON DELETE SET NULL (created_by_api_key_id);
CREATE INDEX invitations_created_by_api_key_idx ON invitations (organization_id, created_by_api_key_id)
  WHERE created_by_api_key_id IS NOT NULL;
CREATE FUNCTION cancel_api_key_invitations() RETURNS trigger LANGUAGE plpgsql AS $cancel$
BEGIN
  UPDATE invitations SET status = 'canceled', updated_at = now()
    WHERE organization_id = OLD.organization_id AND created_by_api_key_id = OLD.id AND status = 'pending';
  RETURN OLD;
END
$cancel$;
CREATE TRIGGER api_keys_cancel_invitations BEFORE DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION cancel_api_key_invitations();

UPDATE api_keys SET scopes = trim(replace(' ' || scopes || ' ', ' invitations.manage ', ' invitations.manage invitations.inviteAdmins '))
  WHERE scopes IS NOT NULL AND NOT ${isDefault} AND 'invitations.manage' = ANY (${held});
UPDATE api_keys SET scopes = array_to_string(ARRAY(
    SELECT scope FROM unnest(${held}) WITH ORDINALITY AS kept (scope, position)
    WHERE scope <> ALL (${array(nowGuarded)}) ORDER BY position), ' ')
  WHERE scopes IS NOT NULL AND ${isDefault};
`))
