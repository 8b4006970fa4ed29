/** `orgplane telemetry send`: the CLI in-process (see Harness.ts) against a real server sharing its database with the test. */
import { Http, TestServer } from "@orgplane/testkit"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"

let server: Awaited<ReturnType<typeof TestServer.startSharingDatabase>>
beforeAll(async () => {
  server = await TestServer.startSharingDatabase()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

const stored = (organizationId: string) =>
  server.sql((sql) => sql<{ count: string }>`SELECT count(*) AS count FROM telemetry_events WHERE organization_id = ${organizationId}`)
    .then((rows) => Number(rows[0]!.count))

const event = (index: number) => ({ type: "task.completed", timestamp: new Date(Date.now() - 60_000).toISOString(), durationMs: index, note: "dropped" })

describe("orgplane telemetry send", { timeout: 120_000 }, () => {
  it("sends a file's events in batches of 50, as an object or an array, and says how many", async () => {
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

  it("refuses a file that is not JSON, holds no events or a bad event, before sending anything (exit 2)", async () => {
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
