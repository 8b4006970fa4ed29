/**
 * What plain members see of each other: whether they see emails, per organization, off by default (owners and admins
 * always see the whole directory; members/Members.ts).
 */
import * as Effect from "effect/Effect"
import * as Migrator from "../platform/Migrator.js"

export default Effect.flatMap(Migrator.script, (sql) =>
  sql.unsafe(`
ALTER TABLE organizations ADD COLUMN member_emails_visible boolean NOT NULL DEFAULT false;
`))
