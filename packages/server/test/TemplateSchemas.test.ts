/**
 * The registry of template JSON Schemas (templates/SchemaRegistry.ts) on its own: loading a folder (and refusing a
 * bad one), violations as paths into the document, and defaults filled in on a copy.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Fs from "node:fs/promises"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compile } from "../src/templates/SchemaCompiler.js"
import { invalidDocument, load, MAX_VIOLATIONS, registryOf } from "../src/templates/SchemaRegistry.js"

let dir: string
beforeAll(async () => {
  dir = await Fs.mkdtemp(Path.join(Os.tmpdir(), "orgplane-schemas-"))
})
afterAll(() => Fs.rm(dir, { recursive: true, force: true }))

const folder = async (files: Record<string, string>) => {
  const at = await Fs.mkdtemp(Path.join(dir, "case-"))
  for (const [name, text] of Object.entries(files)) await Fs.writeFile(Path.join(at, name), text)
  return at
}

const loaded = (at: string) => Effect.runPromise(Effect.result(load(at)))

describe("template schemas", () => {
  it("loads every <schemaVersion>.json of a folder, by dialect, and ignores other files", async () => {
    const at = await folder({
      "workspace-1.json": JSON.stringify({ $schema: "http://json-schema.org/draft-07/schema#", type: "object", required: ["a"] }),
      "workspace-2.json": JSON.stringify({ $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "string" }] }),
      "notes.md": "# not a schema"
    })
    const registry = Result.getOrThrow(await loaded(at))
    expect(registry.versions).toEqual(["workspace-1", "workspace-2"])
    expect(registry.check("workspace-1", {})).toEqual([{ path: ["a"], keyword: "required", message: "must have required property 'a'" }])
    expect(registry.check("workspace-2", [1])).toEqual([{ path: [0], keyword: "type", message: "must be string" }])
    expect(registry.check("workspace-2", ["x"])).toEqual([])
    expect(registry.check("workspace-3", {})).toBeUndefined()
  })

  it("stops start-up on a file that is not JSON, not a schema, or not named by a schemaVersion", async () => {
    for (const [files, expected] of [
      [{ "a.json": "{ nope" }, "a.json is not a JSON Schema"],
      [{ "b.json": JSON.stringify({ type: "no-such-type" }) }, "b.json is not a JSON Schema"],
      [{ "-bad.json": "{}" }, "is not a schemaVersion"]
    ] as const) {
      const result = await loaded(await folder(files))
      expect(Result.isFailure(result)).toBe(true)
      expect(String(Result.isFailure(result) ? result.failure : "")).toContain(expected)
    }
    const missing = await loaded(Path.join(dir, "absent"))
    expect(String(Result.isFailure(missing) ? missing.failure : "")).toContain("cannot be read")
  })

  it("points violations at the member, unescaping JSON Pointer tokens and telling indexes from names", () => {
    const registry = registryOf(new Map([["v", compile({
      type: "object",
      properties: { "a/b": { type: "object", properties: { "0": { type: "string" } }, additionalProperties: false }, list: { type: "array", items: { type: "integer" } } }
    })]]))
    expect(registry.check("v", { "a/b": { "0": 1, extra: true }, list: [1, "x"] })?.map((v) => v.path)).toEqual(
      expect.arrayContaining([["a/b", "extra"], ["a/b", "0"], ["list", 1]])
    )
  })

  it("fills in defaults on a copy, leaving the stored document alone", () => {
    const registry = registryOf(new Map([["v", compile({ type: "object", properties: { shell: { type: "string", default: "bash" } } })]]))
    const document = { name: "x" }
    expect(registry.resolve("v", document)).toEqual({ name: "x", shell: "bash" })
    expect(document).toEqual({ name: "x" })
    expect(registry.resolve("other", document)).toBeUndefined()
  })

  it("caps a 400's details at MAX_VIOLATIONS and says how many more there were", () => {
    const violations = Array.from({ length: MAX_VIOLATIONS + 5 }, (_, i) => ({ path: [i], keyword: "type", message: "must be string" }))
    const error = invalidDocument("v", violations)
    expect(error.details).toHaveLength(MAX_VIOLATIONS + 1)
    expect(error.details[0]).toMatchObject({ path: ["document", 0], code: "schema_violation", keyword: "type" })
    expect(error.details.at(-1)?.message).toBe("and 5 more violations")
  })
})
