/**
 * Vitest setup of every server test file (vitest.config.ts):
 * after the file's tests, every SQL statement its test servers ran (`Tenancy.ts` records them) must satisfy the
 * tenancy rule; the file fails with the offending statements listed otherwise.
 */
import { afterAll } from "vitest"
import { violations } from "./Tenancy.js"

afterAll(async () => {
  const found = await violations()
  if (found.length > 0) {
    throw new Error(
      `Statements on tenant tables not confined by organization_id in a WHERE, ON or USING, or an INSERT's columns ` +
        `(list non-tenant tables in packages/testkit/src/TenancyRule.ts, or Effect 4's own in test/support/Tenancy.ts):\n` +
        found.map(({ sql, tables }) => `- [${tables.join(", ")}] ${sql}`).join("\n")
    )
  }
})
