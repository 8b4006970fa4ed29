/**
 * An account's whole life (issue 45, item 2): `disabled_at`, set by the instance's operator (its sessions ended, its
 * API keys and sign-ins refused until enabled again: identity/SessionsRepository.ts and ApiKeysRepository.ts join it
 * in, the check at commit reads it), and `deleted_at`, set when the account was deleted: the row stays as a
 * tombstone (memberships, SCIM Users, workers, claims and telemetry still name its id), its name and email replaced by
 * a pseudonym and its password by the unusable hash (accounts/AccountDeletion.ts).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE users ADD COLUMN disabled_at timestamptz;
ALTER TABLE users ADD COLUMN deleted_at timestamptz;
`))
