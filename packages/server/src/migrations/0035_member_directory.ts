/**
 * What plain members see of each other: whether they see emails, per organization, off by default (owners and admins
 * always see the whole directory; members/Members.ts).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.unsafe(`
ALTER TABLE organizations ADD COLUMN member_emails_visible boolean NOT NULL DEFAULT false;
`))
