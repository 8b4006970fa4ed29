/**
 * The tenancy check sees what a running server executes (every test file of the database project is checked after
 * its tests by `test/support/tenancySetup.ts`). The rule itself, with statements it must pass and refuse, is
 * tested in packages/testkit/test/Tenancy.test.ts.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import * as Tenancy from "../support/Tenancy.js"
import { describe, expect, it } from "vitest"

describe("the tenancy check", () => {
  it("records what a running server executes", async () => {
    const server = await TestServer.start()
    try {
      const owner = await Http.owner(server.url)
      expect((await Http.request(server.url, "GET", "/v1/teams", { token: owner.token })).status).toBe(200)
      const statements = Tenancy.statements()
      expect(statements.some((sql) => /FROM sessions s/.test(sql))).toBe(true)
      expect(statements.some((sql) => /FROM teams t WHERE/.test(sql))).toBe(true)
      // And checks them: the teams list is confined to the owner's organization.
      expect(await Tenancy.violations()).toEqual([])
    } finally {
      await server.close()
    }
  })
})
