/**
 * `orgplane keys rotate` against a database a server wrote secrets into (the embedded one in a data folder, or a
 * fresh database on the Postgres at DATABASE_URL): the report, the keys in the database, a second run with nothing
 * to do, a server with the new key alone, and the refusal of a database that was never migrated.
 * The servers are RealServer.ts's, on the database the CLI rotates.
 */
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as FakeMcp from "../../../packages/testkit/src/FakeMcp.js"
import * as Http from "../../../packages/testkit/src/Http.js"
import { cleanup, fresh, json } from "./Harness.js"
import * as Postgres from "./Postgres.js"
import * as RealServer from "./RealServer.js"

const API_KEY = "sk-rotated-secret-123"
const newKey = (id: string) => `${id}:${NodeCrypto.randomBytes(32).toString("base64")}`

let mcp: FakeMcp.FakeMcp
let other: FakeMcp.FakeMcp

beforeAll(async () => {
  mcp = await FakeMcp.start({ auth: { apiKey: API_KEY } })
  other = await FakeMcp.start({ auth: { apiKey: API_KEY } })
})
afterAll(async () => {
  await mcp?.close()
  await other?.close()
  await Postgres.dropDatabases()
  await cleanup()
})

/**
 * Where the CLI and the servers find the database: a data folder, or a fresh database on DATABASE_URL's Postgres;
 * `start` starts a server on it with `environment`.
 */
const newDatabase = async (home: string) => {
  const postgres = process.env.DATABASE_URL
  if (postgres !== undefined && postgres !== "") {
    const fresh = await Postgres.newDatabase("orgplane_cli_keys")
    return {
      flags: ["--database-url", fresh],
      start: (environment: Record<string, string>) => RealServer.start({ ...environment, DATABASE_URL: fresh })
    }
  }
  const dataDir = Path.join(home, "data")
  await Fs.mkdir(dataDir, { recursive: true })
  return { flags: ["--data", dataDir], start: (environment: Record<string, string>) => RealServer.start(environment, { data: dataDir }) }
}

describe("orgplane keys rotate", { timeout: 180_000 }, () => {
  it("re-encrypts every stored secret with the newest key, then finds nothing to do", async () => {
    const { cli, home } = await fresh()
    const database = await newDatabase(home)
    const old = newKey("old")
    const rotated = newKey("new")

    let server = await database.start({ ORGPLANE_ENCRYPTION_KEYS: old, ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
    const org = await Http.staffed(server.url)
    const ids: Array<string> = []
    for (const name of ["One", "Two", "Three"]) {
      const created = await Http.request(server.url, "POST", "/v1/mcp-connections", {
        token: org.owner.token,
        body: { name, url: mcp.url, authType: "apikey", apiKey: API_KEY }
      })
      ids.push(Http.expectStatus<{ item: { id: string } }>("creating", created, 201).item.id)
    }
    await server.close()

    const env = { ORGPLANE_ENCRYPTION_KEYS: `${rotated},${old}` }
    const first = await cli(["keys", "rotate", ...database.flags, "--batch-size", "2", "--json"], env)
    expect(first.stderr).toBe("")
    expect(first.code).toBe(0)
    const report = json(first)
    // The three API keys, and the instance's cursor key.
    expect(report).toMatchObject({ keyId: "new", rewritten: 4, unreadable: 0 })
    expect(report.columns).toContainEqual({ table: "mcp_connections", column: "api_key_ciphertext", rewritten: 3, unreadable: 0, changedMeanwhile: 0 })
    expect(report.columns).toContainEqual({ table: "instance_secrets", column: "ciphertext", rewritten: 1, unreadable: 0, changedMeanwhile: 0 })

    const second = await cli(["keys", "rotate", ...database.flags], env)
    expect(second.code).toBe(0)
    expect(second.stdout).toContain("TABLE")
    expect(second.stderr).toContain(`Re-encrypted 0 stored secret(s) with key "new"; 0 unreadable left as they are.`)

    // The old key can go.
    server = await database.start({ ORGPLANE_ENCRYPTION_KEYS: rotated, ORGPLANE_OUTBOUND_ALLOW_PRIVATE: "true" })
    try {
      for (const id of ids) {
        const moved = await Http.request(server.url, "PATCH", `/v1/mcp-connections/${id}`, { token: org.owner.token, body: { url: other.url } })
        expect(moved.status).toBe(200)
      }
    } finally {
      await server.close()
    }
  })

  it("generate prints a new key for ORGPLANE_ENCRYPTION_KEYS, named by --id or the day", async () => {
    const { cli } = await fresh()
    const named = await cli(["keys", "generate", "--id", "prod-2"])
    expect(named.code).toBe(0)
    const [id, key] = named.stdout.trim().split(":")
    expect(id).toBe("prod-2")
    expect(Buffer.from(key!, "base64")).toHaveLength(32)
    const dated = await cli(["keys", "generate"])
    expect(dated.stdout.trim()).toMatch(/^k\d{8}:[A-Za-z0-9+/]{43}=$/)
    expect(dated.stdout.trim()).not.toBe(named.stdout.trim())
    const refused = await cli(["keys", "generate", "--id", "no spaces"])
    expect(refused.code).toBe(2)
  })

  it("refuses a database that was never migrated, and (with DATABASE_URL) a missing key", async () => {
    const { cli, home } = await fresh()
    const database = await newDatabase(home)
    const refused = await cli(["keys", "rotate", ...database.flags], { ORGPLANE_ENCRYPTION_KEYS: newKey("k") })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("not migrated to this version")
    if (database.flags[0] === "--database-url") {
      const keyless = await cli(["keys", "rotate", ...database.flags], {})
      expect(keyless.code).not.toBe(0)
      expect(keyless.stderr).toContain("ORGPLANE_ENCRYPTION_KEYS")
    }
  })
})
