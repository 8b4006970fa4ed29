/**
 * `orgplane memory`: the CLI in-process (see Harness.ts) against a real server (RealServer.ts).
 */
import { MemoryPage, MemorySearchResults } from "@orgplane/schema"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"

let server: RealServer.RealServer

beforeAll(async () => {
  server = await RealServer.start()
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

describe("orgplane memory", { timeout: 120_000 }, () => {
  it("saves, searches, lists, shows and deletes the caller's own memories", async () => {
    const org = await Http.staffed(server.url)
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }

    const saved = await cli([
      "memory", "save", "The release train leaves every Tuesday", "--tag", "release", "--tag", " release ",
      "--snippet", "we ship on Tuesdays", "--json"
    ], env)
    expect(saved.code, saved.stderr).toBe(0)
    const memory = json(saved).memory
    expect(memory).toMatchObject({ content: "The release train leaves every Tuesday", tags: ["release"], source: "chat", scope: "user" })
    const human = await cli(["memory", "save", "Standup moved to 10am"], env)
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/^Saved memory mem_[0-9a-z]{26}\.\n$/)

    const found = await cli(["memory", "search", "when does the release ship", "--json"], env)
    expect(found.code, found.stderr).toBe(0)
    expect(wire(MemorySearchResults, found).results.map((result) => result.id)).toEqual([memory.id])
    const table = await cli(["memory", "search", "release"], env)
    expect(table.stdout).toContain("SCORE")
    expect(table.stdout).toContain(memory.id)
    const none = await cli(["memory", "search", "the"], env)
    expect(none.code).toBe(0)
    expect(none.stdout).toBe("No memories match.\n")

    const listed = await cli(["memory", "list", "--limit", "1", "--json"], env)
    expect(wire(MemoryPage, listed).items.map((item) => item.content)).toEqual(["Standup moved to 10am"])
    const all = await cli(["memory", "list", "--all"], env)
    expect(all.stdout).toContain("The release train leaves every Tuesday")

    const shown = await cli(["memory", "get", memory.id], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain("> we ship on Tuesdays")

    // Another member of the organization, even its owner, reaches none of it.
    const owner = { ...env, ORGPLANE_TOKEN: org.owner.token }
    expect(json(await cli(["memory", "search", "release", "--json"], owner)).results).toEqual([])
    const foreign = await cli(["memory", "delete", memory.id], owner)
    expect(foreign.code).not.toBe(0)
    expect(foreign.stderr).toContain("memory_not_found")

    const deleted = await cli(["memory", "delete", memory.id, "--json"], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(json(deleted)).toEqual({ ok: true, deleted: memory.id })
    expect((await cli(["memory", "get", memory.id], env)).code).not.toBe(0)
  })

  it("checks its input with the API's rules before sending anything", async () => {
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: "http://127.0.0.1:9", ORGPLANE_TOKEN: "unused" }
    const blank = await cli(["memory", "save", "   "], env)
    expect(blank.code).toBe(2)
    expect(blank.stderr).toContain("<content>")
    const tooManyTags = await cli(["memory", "save", "x", ...Array.from({ length: 33 }, (_, i) => ["--tag", `t${i}`]).flat()], env)
    expect(tooManyTags.code).toBe(2)
    expect(tooManyTags.stderr).toContain("--tag")
    const badLimit = await cli(["memory", "search", "x", "--limit", "51"], env)
    expect(badLimit.code).toBe(2)
    expect(badLimit.stderr).toContain("--limit")
    const badId = await cli(["memory", "delete", "tem_01h455vb4pex5vsknk084sn02q"], env)
    expect(badId.code).toBe(2)
  })
})
