/**
 * The tenancy rule itself (packages/testkit/src/TenancyRule.ts): statements it must pass and statements it must refuse.
 * That the recorder sees what a running server executes is checked in packages/server/test/http/Tenancy.test.ts.
 */
import { describe, expect, it } from "vitest"
import { unscopedTables } from "../src/TenancyRule.js"

const passes = async (sql: string) => expect(await unscopedTables(sql), sql).toEqual([])
const refuses = async (sql: string, tables: ReadonlyArray<string>) => expect([...(await unscopedTables(sql))].sort(), sql).toEqual([...tables].sort())

describe("the tenancy rule refuses", () => {
  it("statements on tenant tables that do not confine them", async () => {
    await refuses("SELECT * FROM teams WHERE id = $1", ["teams"])
    await refuses("DELETE FROM team_members WHERE membership_id = $1", ["team_members"])
    await refuses("UPDATE memberships SET role = $1 WHERE id = $2", ["memberships"])
    await refuses("SELECT * FROM users u LEFT JOIN memberships m ON m.user_id = u.id", ["memberships"])
    await refuses("SELECT count(*) FROM workers", ["workers"])
  })

  it("organization_id named only where it confines nothing: the SELECT list, GROUP BY, ORDER BY, SET, RETURNING", async () => {
    await refuses("SELECT organization_id, name FROM teams WHERE id = $1", ["teams"])
    await refuses("SELECT organization_id, count(*) FROM teams GROUP BY organization_id ORDER BY organization_id", ["teams"])
    await refuses("UPDATE teams SET organization_id = $1 WHERE id = $2", ["teams"])
    await refuses("DELETE FROM teams WHERE id = $1 RETURNING organization_id", ["teams"])
    await refuses("SELECT * FROM teams WHERE organization_id IS NOT NULL", ["teams"])
    await refuses("SELECT * FROM teams WHERE organization_id <> $1", ["teams"])
  })

  it("a condition that not every row must meet: a branch of an OR, a NOT", async () => {
    await refuses("SELECT * FROM teams WHERE organization_id = $1 OR id = $2", ["teams"])
    await refuses("SELECT * FROM teams WHERE NOT (organization_id = $1)", ["teams"])
  })

  it("a table compared only with itself, or joined on organization_id to tables nothing confines", async () => {
    await refuses("SELECT * FROM teams t WHERE t.organization_id = t.organization_id", ["teams"])
    await refuses("SELECT * FROM teams t JOIN team_members tm ON tm.organization_id = t.organization_id AND tm.team_id = t.id", ["teams", "team_members"])
    await refuses("SELECT * FROM teams t JOIN team_members tm USING (organization_id)", ["teams", "team_members"])
  })

  it("one unconfined table of several, wherever it is: a join, a subquery, a CTE, a UNION arm, a derived table", async () => {
    await refuses("SELECT * FROM teams t JOIN team_members tm ON tm.team_id = t.id WHERE t.organization_id = $1", ["team_members"])
    await refuses("SELECT * FROM teams WHERE organization_id = $1 AND id IN (SELECT team_id FROM team_members WHERE membership_id = $2)", ["team_members"])
    await refuses("SELECT *, (SELECT count(*) FROM team_members tm WHERE tm.team_id = t.id) FROM teams t WHERE t.organization_id = $1", ["team_members"])
    await refuses("WITH gone AS (DELETE FROM teams WHERE id = $1 RETURNING id) SELECT * FROM gone", ["teams"])
    await refuses("SELECT id FROM teams WHERE organization_id = $1 UNION ALL SELECT id FROM plugins WHERE id = $2", ["plugins"])
    await refuses("SELECT * FROM (SELECT * FROM teams) t WHERE t.organization_id = $1", ["teams"])
    await refuses("UPDATE teams t SET name = m.name FROM memberships m WHERE t.organization_id = $1 AND m.id = $2", ["memberships"])
  })

  it("an INSERT into a tenant table that does not write organization_id, and TRUNCATE", async () => {
    await refuses("INSERT INTO teams (id, name) VALUES ($1, $2)", ["teams"])
    await refuses("INSERT INTO teams VALUES ($1, $2, $3)", ["teams"])
    await refuses("INSERT INTO teams (id, organization_id, name) SELECT id, organization_id, name FROM teams WHERE id = $1", ["teams"])
    await refuses("TRUNCATE teams", ["teams"])
  })

  it("a write, or a join within the query, by a key that only confines reads from outside values", async () => {
    await refuses("UPDATE invitations SET accepted_at = now() WHERE token_hash = $1", ["invitations"])
    await refuses("DELETE FROM memberships WHERE user_id = $1", ["memberships"])
    await refuses("SELECT * FROM users u JOIN memberships m ON m.user_id = u.id", ["memberships"])
    await refuses("SELECT * FROM invitations i JOIN teams t ON t.id = i.team_id WHERE i.token_hash = $1", ["teams"])
    await refuses("SELECT * FROM teams WHERE token_hash = $1", ["teams"])
  })
})

describe("the tenancy rule passes", () => {
  it("tables confined by a parameter, a constant, a list or an array", async () => {
    await passes("SELECT * FROM teams WHERE organization_id = $1 AND id = $2")
    await passes("SELECT * FROM teams t WHERE t.id = $2 AND $1 = t.organization_id")
    await passes("SELECT * FROM teams WHERE organization_id = $1::text")
    await passes("SELECT * FROM teams WHERE organization_id IN ($1, $2)")
    await passes("SELECT * FROM teams WHERE organization_id = ANY($1)")
    await passes("SELECT * FROM teams WHERE organization_id IS NOT DISTINCT FROM $1")
    await passes("SELECT * FROM teams WHERE (organization_id, id) = ($1, $2)")
    await passes("SELECT * FROM teams WHERE (organization_id, id) IN (($1, $2), ($1, $3))")
    await passes("SELECT * FROM teams WHERE organization_id = (SELECT organization_id FROM organizations WHERE slug = $1)")
    await passes("SELECT * FROM teams WHERE organization_id IN (SELECT id FROM organizations WHERE slug = $1)")
    await passes("SELECT * FROM teams WHERE (id > $2 OR name = $3) AND organization_id = $1 FOR UPDATE")
  })

  it("joins: in ON, USING or WHERE, along a chain of organization_id to a confined table", async () => {
    await passes("SELECT * FROM teams t JOIN team_members tm ON tm.organization_id = t.organization_id AND tm.team_id = t.id WHERE t.organization_id = $1")
    await passes("SELECT * FROM teams t JOIN team_members tm USING (organization_id) WHERE t.organization_id = $1")
    await passes(
      "SELECT * FROM teams t JOIN team_members tm ON tm.organization_id = t.organization_id " +
        "JOIN memberships m ON m.organization_id = tm.organization_id AND m.id = tm.membership_id WHERE t.organization_id = $1 AND t.id = $2"
    )
    await passes("SELECT * FROM memberships m JOIN sessions s ON m.organization_id = s.active_organization_id WHERE s.id = $1")
    await passes("SELECT * FROM users u LEFT JOIN memberships m ON m.user_id = u.id AND m.organization_id = $1 WHERE u.id = $2")
  })

  it("subqueries confined on their own or by their enclosing query's confined table", async () => {
    await passes(
      "SELECT * FROM teams t WHERE t.organization_id = $1 AND EXISTS " +
        "(SELECT 1 FROM team_members tm WHERE tm.organization_id = t.organization_id AND tm.team_id = t.id)"
    )
    await passes("SELECT t.*, (SELECT count(*) FROM team_members tm WHERE tm.organization_id = $1 AND tm.team_id = t.id) FROM teams t WHERE t.organization_id = $1")
    await passes(
      "WITH mine AS (SELECT id FROM teams WHERE organization_id = $1) " +
        "SELECT * FROM mine JOIN team_members tm ON tm.team_id = mine.id WHERE tm.organization_id = $1"
    )
    await passes(
      "SELECT * FROM teams t, LATERAL (SELECT count(*) FROM team_members tm WHERE tm.organization_id = t.organization_id AND tm.team_id = t.id) c " +
        "WHERE t.organization_id = $1"
    )
    await passes("SELECT * FROM (SELECT * FROM teams WHERE organization_id = $1) t WHERE t.id = $2")
    await passes("SELECT id FROM teams WHERE organization_id = $1 UNION SELECT id FROM plugins WHERE organization_id = $1")
  })

  it("writes: an INSERT naming organization_id, an UPDATE or DELETE confined in its WHERE", async () => {
    await passes(`INSERT INTO "api_keys" ("id","organization_id") VALUES ($1,$2)`)
    await passes("INSERT INTO teams (id, organization_id, name) VALUES ($1, $2, $3) ON CONFLICT (organization_id, id) DO UPDATE SET name = excluded.name")
    await passes("INSERT INTO team_members (organization_id, team_id) SELECT organization_id, id FROM teams WHERE organization_id = $1")
    await passes("UPDATE teams SET name = $1 WHERE organization_id = $2 AND id = $3 RETURNING *")
    await passes("UPDATE teams t SET name = m.name FROM memberships m WHERE t.organization_id = $1 AND m.organization_id = t.organization_id AND m.id = $2")
    await passes("DELETE FROM team_members tm USING teams t WHERE t.organization_id = $1 AND tm.organization_id = t.organization_id AND tm.team_id = t.id")
    await passes("WITH gone AS (DELETE FROM teams WHERE organization_id = $1 AND id = $2 RETURNING id) SELECT * FROM gone")
    // A CTE reads the ones before it: `state` here is the first CTE, not a table.
    await passes("WITH state AS (SELECT true AS wrote), marked AS (UPDATE sessions SET revoked_at = now() FROM state WHERE state.wrote RETURNING 1) SELECT * FROM marked")
    await refuses("WITH state AS (SELECT true AS wrote), marked AS (UPDATE teams SET name = 'x' FROM state WHERE state.wrote RETURNING 1) SELECT * FROM marked", ["teams"])
  })

  it("leaves alone the tables listed as not tenant-scoped, functions, catalogs, migrations and tests' own tables", async () => {
    await passes("SELECT * FROM users WHERE lower(email) = lower($1)")
    await passes("UPDATE sessions SET revoked_at = $1 WHERE id = $2")
    await passes("SELECT * FROM unnest($1::text[])")
    await passes("SELECT conname FROM pg_constraint")
    await passes("SELECT table_name FROM information_schema.tables")
    await passes("CREATE TABLE teams (id text PRIMARY KEY)")
    await passes("-- a comment\nALTER TABLE teams ADD COLUMN x text")
    await passes("INSERT INTO rate_limits (key) VALUES ($1) ON CONFLICT (key) DO UPDATE SET count = 1")
    await passes("INSERT INTO test_probe VALUES (1)")
    await passes("BEGIN")
    await passes("SET LOCAL statement_timeout = '1s'")
    await passes("SELECT pg_advisory_xact_lock(hashtext($1))")
  })

  it("reads that find their rows by a cross-organization key: a secret token, a person's id", async () => {
    await passes("SELECT organization_id FROM invitations WHERE token_hash = $1")
    await passes("SELECT * FROM workspace_claims WHERE token_hash = $1 AND status = 'pending' AND expires_at > $2 FOR UPDATE")
    await passes(
      "SELECT t.id, t.organization_id FROM worker_tokens t JOIN workers w ON w.organization_id = t.organization_id AND w.id = t.worker_id " +
        "WHERE t.token_hash = $1 AND t.revoked_at IS NULL"
    )
    await passes("SELECT organization_id FROM memberships WHERE user_id = $1 AND removed_at IS NULL ORDER BY id LIMIT 1")
    await passes(
      "SELECT * FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN LATERAL " +
        "(SELECT * FROM memberships WHERE user_id = s.user_id AND removed_at IS NULL LIMIT 1) m ON true WHERE s.token_hash = $1"
    )
  })

  it("a statement Postgres cannot parse: it reads nothing", async () => {
    await passes("SELEC 1")
    await passes("SELEKT * FROM teams")
  })

  it("statements marked instance-wide at their start, and only there", async () => {
    await passes("/* instance-wide: admin metrics */ SELECT count(*) FROM workers")
    await refuses("SELECT count(*) FROM workers /* instance-wide: admin metrics */", ["workers"])
    await refuses("/* instance-wide */ SELECT count(*) FROM workers", ["workers"])
  })
})
