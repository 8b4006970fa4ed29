/**
 * How each invitation's token reached its invitee: `mailed` (only the address's mailbox saw it: accepting it proves
 * the address) or `shown` (its inviter saw it: accepting it proves nothing of the address), as every invitation made
 * before was. The proofs of an address that accepting those recorded (the membership's, set as it joined, or by
 * migration 0032 for those that joined before) are withdrawn: the account is taken back, not linked, by the address's
 * first sign-in through the organization's SSO or its directory.
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE invitations ADD COLUMN delivery text NOT NULL DEFAULT 'shown' CHECK (delivery IN ('mailed', 'shown'));
ALTER TABLE invitations ALTER COLUMN delivery DROP DEFAULT;
UPDATE memberships m SET email_verified_at = NULL
  FROM invitations i
  WHERE i.organization_id = m.organization_id AND i.accepted_by_membership_id = m.id AND m.email_verified_at IS NOT NULL;
`))
