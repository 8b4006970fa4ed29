/**
 * What the MCP server serves: every operation of the API is served or left out with a written reason, and the
 * default tool list an agent loads stays within its token budget.
 */
import { Api, operationsOf } from "@orgplane/schema"
import * as McpTest from "effect/ai/McpTest"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { Catalog, Server, Tools, Transport } from "../src/index.js"

/** A Transport that reaches nothing: listing the catalog tools sends no request. */
const unreachable: Transport.Transport["Service"] = {
  send: () => Effect.fail(new Transport.TransportError({ message: "no server in this test" })),
  authorize: () => Effect.fail(new Transport.TransportError({ message: "no server in this test" }))
}

describe("Catalog", () => {
  it("serves every operation or excludes it with a reason", () => {
    const coverage = Catalog.coverage()
    const all = operationsOf(Api)
    expect(coverage.map((entry) => entry.id)).toEqual(all.map((operation) => operation.id))
    const unaccounted = coverage.filter((entry) => !entry.served && entry.reason.trim() === "")
    expect(unaccounted).toEqual([])
    // Every excluded name is an operation a person's credential reaches: an exclusion of nothing would hide a rename.
    for (const id of Object.keys(Catalog.excludedOperations)) {
      expect(all.find((operation) => operation.id === id)?.credential).toBe("member")
    }
    const served = coverage.filter((entry) => entry.served)
    expect(served.length).toBe(Catalog.served().length)
    expect(served.length).toBeGreaterThan(100)
    console.log(`MCP catalog: ${served.length} of ${all.length} operations served`)
  })

  it("gives each served operation an object input schema, and a toolset tool name of [A-Za-z0-9_-]", () => {
    const names = new Set<string>()
    for (const operation of Catalog.served()) {
      const input = Catalog.inputSchemaOf(operation)
      expect(input.type).toBe("object")
      expect(Object.keys(input.properties ?? {}).sort()).toEqual([...Catalog.layoutOf(operation).names].sort())
      // Every reference points at a definition carried along.
      const text = JSON.stringify([input, Catalog.outputSchemaOf(operation)])
      expect(text).not.toContain("#/components/")
      const name = Catalog.toolNameOf(operation)
      expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      expect(names.has(name)).toBe(false)
      names.add(name)
    }
  })

  it("keeps the default tools/list under 2,000 tokens", async () => {
    const listed = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const client = yield* McpTest.makeClient(Server.registrations({ transport: unreachable }), { protocols: Server.protocols })
      return yield* client.listTools()
    })))
    expect(listed.tools.map((tool) => tool.name)).toEqual(["find_operations", "describe_operation", "read_operation", "call_operation"])
    for (const tool of listed.tools) expect(tool.outputSchema).toBeDefined()
    const characters = JSON.stringify(listed.tools).length
    const tokens = Math.ceil(characters / 4)
    console.log(`MCP default tools/list: ${characters} characters, about ${tokens} tokens (characters / 4)`)
    expect(tokens).toBeLessThan(2000)
  })

  it("refuses unknown options and unknown toolsets", async () => {
    const refused = (input: unknown) => Effect.runPromise(Effect.flip(Tools.decodeOptions(input)))
    expect((await refused({ toolset: ["teams"] })).message).toContain("toolset")
    expect((await refused({ toolsets: ["teams", "nope"] })).message).toContain("Unknown toolset nope")
    expect(await Effect.runPromise(Tools.decodeOptions({ toolsets: ["teams"], readOnly: true }))).toEqual({ toolsets: ["teams"], readOnly: true })
  })
})
