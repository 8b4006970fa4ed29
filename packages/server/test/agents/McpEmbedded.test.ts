/**
 * `/mcp` in an embedding host (`makeWebHandler`): the MCP SDK's client reaches it through the web handler, and the
 * tools' requests run through the same handler's router in process, with the caller's credential.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { AuthResult } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { afterAll, describe, expect, it } from "vitest"
import { makeWebHandler } from "../../src/Server.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const scope = Scope.makeUnsafe()
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

const base = "http://orgplane.test"

describe("/mcp in makeWebHandler", { timeout: 60_000 }, () => {
  it("serves the SDK's client, each tool's request answered by the host's own handler", async () => {
    const database = await Effect.runPromise(Scope.provide(TestDatabase.layer({ migrated: true }), scope))
    const { dispose, handler } = makeWebHandler({ encryptionKeys: TestServer.encryptionKeys, database, logLevel: "warn", mcp: true, passwordCost: 10 })
    try {
      const json = async (method: string, path: string, body: unknown, token?: string) => {
        const headers: Record<string, string> = { "content-type": "application/json" }
        if (token !== undefined) headers.authorization = `Bearer ${token}`
        const response = await handler(new Request(`${base}${path}`, { method, headers, body: JSON.stringify(body) }))
        const parsed: unknown = await response.json()
        return { status: response.status, body: parsed }
      }
      const email = `embedded.${Math.random().toString(36).slice(2, 10)}@example.com`
      const signedUp = await json("POST", "/v1/auth/sign-up", { email, password: "correct horse battery staple", name: "Host" })
      expect(signedUp.status).toBe(201)
      const token: string = Schema.decodeUnknownSync(Schema.toEncoded(AuthResult))(signedUp.body).session.token
      expect((await json("POST", "/v1/organizations", { name: "Embedded" }, token)).status).toBe(201)

      const client = new Client({ name: "orgplane-test", version: "0.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
        fetch: (url, init) => handler(new Request(url, init))
      }))
      try {
        const made = await client.callTool({ name: "call_operation", arguments: { name: "teams.create", arguments: { name: "From the host" } } })
        expect(made.isError ?? false, JSON.stringify(made)).toBe(false)
        expect(made.structuredContent).toMatchObject({ status: 201, body: { team: { name: "From the host" } } })
      } finally {
        await client.close()
      }
      const teams = await handler(new Request(`${base}/v1/teams`, { headers: { authorization: `Bearer ${token}` } }))
      expect(((await teams.json()) as { items: Array<{ name: string }> }).items.map((team) => team.name)).toEqual(["From the host"])
    } finally {
      await dispose()
    }
  })
})
