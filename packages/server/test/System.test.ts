import { PgClient } from "@effect/sql-pg"
import { Database } from "@orgplane/server"
import { Http, TestDatabase, TestServer } from "@orgplane/testkit"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start({ version: "1.2.3" })
})
afterAll(() => server.close())

describe("system", () => {
  it("reports health with the configured version", async () => {
    const response = await Http.request(server.url, "GET", "/health")
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true, version: "1.2.3" })
  })

  it("reports readiness after checking the database", async () => {
    const response = await Http.request(server.url, "GET", "/ready")
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true, checks: { database: "ok" } })
  })

  it("serves the OpenAPI 3.1 document labelled with the API contract's version, not the software's", async () => {
    const response = await Http.request(server.url, "GET", "/openapi.json")
    expect(response.status).toBe(200)
    expect(response.body.openapi).toBe("3.1.0")
    expect(response.body.info.version).toBe("dev")
    // Sessions, API keys, the worker runtime's token, and the SCIM token a directory sends.
    expect(Object.keys(response.body.components.securitySchemes).sort()).toEqual(["apiKey", "bearer", "scimToken", "workerToken"])
    expect(response.body.components.securitySchemes.scimToken).toMatchObject({ type: "http", scheme: "bearer", bearerFormat: "scim-token" })
    expect(JSON.stringify(response.body)).not.toContain("HttpApiDecodeError")
  })

  it("answers an unknown route with a 404 body", async () => {
    const response = await Http.request(server.url, "GET", "/v1/nothing-here")
    expect(response.status).toBe(404)
    expect(response.body).toEqual({ error: "not_found", message: "No route for GET /v1/nothing-here" })
  })
})

describe("readiness when the database goes away", () => {
  it("answers 503 service_unavailable while health stays up", async () => {
    const scope = Effect.runSync(Scope.make())
    const loadDataDir = await TestDatabase.embeddedTemplate()
    const { socketDir } = await Effect.runPromise(Scope.extend(Database.embedded({ dataDir: "memory", loadDataDir }), scope))
    const lonely = await TestServer.start({
      database: PgClient.layer({ host: socketDir, port: 5432, database: "postgres", username: "postgres", maxConnections: 1 })
    })
    try {
      expect((await Http.request(lonely.url, "GET", "/ready")).status).toBe(200)
      await Effect.runPromise(Scope.close(scope, Exit.void))
      const down = await Http.request(lonely.url, "GET", "/ready")
      expect(down.status).toBe(503)
      expect(down.body).toEqual({ error: "service_unavailable", message: "The database does not answer." })
      expect((await Http.request(lonely.url, "GET", "/health")).status).toBe(200)
    } finally {
      await lonely.close()
    }
  })
})
