/**
 * `orgplane telemetry send`: the CLI in-process (see Harness.ts) against a real server sharing its database with the
 * test (RealServer.ts): out of process, so the database the test reads is a fresh one on DATABASE_URL's Postgres,
 * read with psql. Without DATABASE_URL (the embedded database, which only the server's process can open), the two
 * tests that count stored events are skipped.
 */
import { execFileSync } from "node:child_process"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Http from "../../../packages/testkit/src/Http.js"
import { cleanup, fresh, json } from "./Harness.js"
import * as RealServer from "./RealServer.js"

/** DATABASE_URL's Postgres, where the server's database is made (and dropped after), else none: the embedded one. */
const postgres = process.env.DATABASE_URL
const psql = (url: string, statement: string) => execFileSync("psql", [url, "-tAc", statement], { encoding: "utf8" }).trim()
const databaseName = `orgplane_cli_telemetry_${NodeCrypto.randomBytes(6).toString("hex")}`
const databaseUrl = (url: string) => {
  const target = new URL(url)
  target.pathname = `/${databaseName}`
  return target.toString()
}

let server: RealServer.RealServer
beforeAll(async () => {
  if (postgres !== undefined) psql(postgres, `CREATE DATABASE ${databaseName}`)
  server = await RealServer.start(postgres === undefined ? {} : {
    DATABASE_URL: databaseUrl(postgres),
    ORGPLANE_ENCRYPTION_KEYS: `k1:${NodeCrypto.randomBytes(32).toString("base64")}`,
    ORGPLANE_CLUSTER_PORT: "0"
  })
})
afterAll(async () => {
  await server?.close()
  if (postgres !== undefined) psql(postgres, `DROP DATABASE IF EXISTS ${databaseName} WITH (FORCE)`)
  await cleanup()
})

/** The organization's stored events, read from the server's database (Postgres only: see the top). */
const stored = async (organizationId: string) => {
  if (postgres === undefined) throw new Error("the stored events are read on Postgres only")
  if (!/^org_[0-9a-z]{26}$/.test(organizationId)) throw new Error(`not an organization id: ${organizationId}`)
  return Number(psql(databaseUrl(postgres), `SELECT count(*) FROM telemetry_events WHERE organization_id = '${organizationId}'`))
}

const event = (index: number) => ({ type: "task.completed", timestamp: new Date(Date.now() - 60_000).toISOString(), durationMs: index, note: "dropped" })

describe("orgplane telemetry send", { timeout: 120_000 }, () => {
  it.skipIf(postgres === undefined)("sends a file's events in batches of 50, as an object or an array, and says how many (needs DATABASE_URL: the stored events are read with psql)", async () => {
    const owner = await Http.owner(server.url, "Telemetry Org")
    const { cli, home } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }

    const file = Path.join(home, "events.json")
    await Fs.writeFile(file, JSON.stringify({ events: Array.from({ length: 120 }, (_, index) => event(index)) }))
    const sent = await cli(["telemetry", "send", "--file", file], env)
    expect(sent.code, sent.stderr).toBe(0)
    expect(sent.stdout.trim()).toBe("Sent 120 events in 3 batches.")
    expect(await stored(owner.organization.id)).toBe(120)

    const array = Path.join(home, "array.json")
    await Fs.writeFile(array, JSON.stringify([event(1)]))
    const one = await cli(["telemetry", "send", "--file", array, "--json"], env)
    expect(one.code, one.stderr).toBe(0)
    expect(json(one)).toEqual({ sent: 1, batches: 1 })
    expect(await stored(owner.organization.id)).toBe(121)
  })

  it.skipIf(postgres === undefined)("refuses a file that is not JSON, holds no events or a bad event, before sending anything (exit 2; needs DATABASE_URL: the stored events are read with psql)", async () => {
    const owner = await Http.owner(server.url, "Telemetry Refusals")
    const { cli, home } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token }
    const write = async (name: string, text: string) => {
      const path = Path.join(home, name)
      await Fs.writeFile(path, text)
      return path
    }
    const cases: ReadonlyArray<readonly [string, string]> = [
      [await write("broken.json", "{ nope"), "is not JSON"],
      [await write("empty.json", "[]"), "holds no events"],
      [await write("shape.json", JSON.stringify({ items: [] })), "expected {\"events\": [...]} or an array of events"],
      [await write("bad.json", JSON.stringify({ events: [event(1), { type: "user.active", timestamp: "yesterday" }] })), "events[1].timestamp"],
      [await write("bad-array.json", JSON.stringify([event(1), event(2), { ...event(3), durationMs: -1 }])), "events[2].durationMs"],
      [Path.join(home, "missing.json"), "no such file"]
    ]
    for (const [path, message] of cases) {
      const result = await cli(["telemetry", "send", "--file", path], env)
      expect(result.code, path).toBe(2)
      expect(result.stderr, path).toContain("--file")
      expect(result.stderr, path).toContain(message)
    }
    expect(await stored(owner.organization.id)).toBe(0)
  })

  it("needs credentials", async () => {
    const { cli, home } = await fresh()
    const path = Path.join(home, "events.json")
    await Fs.writeFile(path, JSON.stringify([event(1)]))
    const result = await cli(["telemetry", "send", "--file", path], { ORGPLANE_URL: server.url })
    expect(result.code).not.toBe(0)
    expect(result.stderr).toMatch(/sign|log ?in|credential|auth/i)
  })
})
