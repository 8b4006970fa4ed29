/**
 * The tenancy check itself: what counts as a tenant statement, and proof that the recorder sees the statements a
 * running server executes (every test file is checked after its tests by `packages/testkit/src/tenancySetup.ts`).
 */
import { Http, TestServer, Tenancy } from "@orgplane/testkit"
import { describe, expect, it } from "vitest"

describe("the tenancy rule", () => {
  it("requires organization_id in statements on tenant tables", () => {
    expect(Tenancy.unscopedTables("SELECT * FROM teams WHERE id = $1")).toEqual(["teams"])
    expect(Tenancy.unscopedTables("DELETE FROM team_members WHERE membership_id = $1")).toEqual(["team_members"])
    expect(Tenancy.unscopedTables("UPDATE memberships SET role = $1 WHERE id = $2")).toEqual(["memberships"])
    expect(Tenancy.unscopedTables("SELECT * FROM users u LEFT JOIN memberships m ON m.user_id = u.id")).toEqual(["memberships"])
    expect(Tenancy.unscopedTables("SELECT * FROM teams WHERE organization_id = $1 AND id = $2")).toEqual([])
    expect(Tenancy.unscopedTables(`INSERT INTO "api_keys" ("id","organization_id") VALUES ($1,$2)`)).toEqual([])
  })

  it("leaves alone the tables listed as not tenant-scoped, functions, catalogs and migrations", () => {
    expect(Tenancy.unscopedTables("SELECT * FROM users WHERE lower(email) = lower($1)")).toEqual([])
    expect(Tenancy.unscopedTables("UPDATE sessions SET revoked_at = $1 WHERE id = $2")).toEqual([])
    expect(Tenancy.unscopedTables("SELECT * FROM unnest($1::text[])")).toEqual([])
    expect(Tenancy.unscopedTables("SELECT conname FROM pg_constraint")).toEqual([])
    expect(Tenancy.unscopedTables("CREATE TABLE teams (id text PRIMARY KEY)")).toEqual([])
    expect(Tenancy.unscopedTables("-- a comment\nALTER TABLE teams ADD COLUMN x text")).toEqual([])
    expect(Tenancy.unscopedTables("INSERT INTO rate_limits (key) VALUES ($1) ON CONFLICT (key) DO UPDATE SET count = 1")).toEqual([])
    expect(Tenancy.unscopedTables("INSERT INTO test_probe VALUES (1)")).toEqual([])
  })

  it("leaves alone statements marked instance-wide at their start, and only there", () => {
    expect(Tenancy.unscopedTables("/* instance-wide: admin metrics */ SELECT count(*) FROM workers")).toEqual([])
    expect(Tenancy.unscopedTables("SELECT count(*) FROM workers /* instance-wide: admin metrics */")).toEqual(["workers"])
    expect(Tenancy.unscopedTables("/* instance-wide */ SELECT count(*) FROM workers")).toEqual(["workers"])
  })

  it("records what a running server executes", async () => {
    const server = await TestServer.start()
    try {
      const owner = await Http.owner(server.url)
      expect((await Http.request(server.url, "GET", "/v1/teams", { token: owner.token })).status).toBe(200)
      const statements = Tenancy.statements()
      expect(statements.some((sql) => /FROM sessions s/.test(sql))).toBe(true)
      expect(statements.some((sql) => /FROM teams t WHERE/.test(sql))).toBe(true)
    } finally {
      await server.close()
    }
  })
})
