/** `orgplane templates`: the CLI in-process (see Harness.ts) against a real server with a registered schema. */
import { TemplatePage, TemplateVersionPage } from "@orgplane/schema"
import * as Http from "../../../packages/testkit/src/Http.js"
import * as RealServer from "./RealServer.js"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { Readable } from "node:stream"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"

let server: RealServer.RealServer
let schemas: string

beforeAll(async () => {
  const { home } = await fresh()
  schemas = Path.join(home, "schemas")
  await Fs.mkdir(schemas)
  await Fs.writeFile(Path.join(schemas, "workspace-1.json"), JSON.stringify({
    type: "object",
    required: ["name"],
    properties: { name: { type: "string" }, shell: { type: "string", default: "bash" } }
  }))
  server = await RealServer.start({ ORGPLANE_TEMPLATE_SCHEMAS_DIR: schemas })
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

const stdin = (text: string) => vi.spyOn(process, "stdin", "get").mockReturnValue(Readable.from([Buffer.from(text)]) as typeof process.stdin)

describe("orgplane templates", { timeout: 120_000 }, () => {
  it("creates from a file, updates from stdin, lists, shows versions, instantiates, shares and deletes", async () => {
    const org = await Http.staffed(server.url)
    const bob = await Http.join(server.url, org.owner.token, "member", "Bob")
    const { cli, home } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.member.token }
    const file = Path.join(home, "starter.json")
    await Fs.writeFile(file, JSON.stringify({ name: "starter", folders: ["src"] }, null, 2))

    const created = await cli(["templates", "create", "Service starter", "--kind", "workspace", "--file", file, "--schema-version", "workspace-1", "--json"], env)
    expect(created.code, created.stderr).toBe(0)
    const { template } = json(created)
    expect(template).toMatchObject({ name: "Service starter", kind: "workspace", latestVersion: { number: 1, validated: true } })
    const human = await cli(["templates", "create", "Other", "--kind", "agent-profile", "--file", file], env)
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/^Created template Other \(tpl_[0-9a-z]{26}\), version 1\.\n$/)

    stdin(JSON.stringify({ name: "starter", folders: ["src", "test"] }))
    const updated = await cli(["templates", "update", template.id, "--file", "-", "--description", "With tests", "--json"], env)
    expect(updated.code, updated.stderr).toBe(0)
    expect(json(updated)).toMatchObject({ template: { description: "With tests", latestVersion: { number: 2 } }, document: { folders: ["src", "test"] } })

    const listed = await cli(["templates", "list", "--query", "serv", "--kind", "workspace", "--json"], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(wire(TemplatePage, listed).items.map((item) => item.id)).toEqual([template.id])
    const table = await cli(["templates", "list"], env)
    expect(table.stdout).toContain("SCHEMA")
    expect(table.stdout).toContain("Service starter")

    const versions = await cli(["templates", "versions", template.id, "--json"], env)
    expect(versions.code, versions.stderr).toBe(0)
    expect(wire(TemplateVersionPage, versions).items.map((item) => item.number)).toEqual([2, 1])
    const first = json(versions).items[1].id

    const instance = await cli(["templates", "instantiate", template.id], env)
    expect(instance.code, instance.stderr).toBe(0)
    expect(JSON.parse(instance.stdout)).toEqual({ name: "starter", folders: ["src", "test"], shell: "bash" })
    const old = await cli(["templates", "instantiate", template.id, "--version-id", first, "--json"], env)
    expect(old.code, old.stderr).toBe(0)
    expect(json(old)).toMatchObject({ version: { number: 1 }, document: { folders: ["src"], shell: "bash" }, defaultsApplied: true })

    const shown = await cli(["templates", "get", template.id], env)
    expect(shown.stdout).toContain("With tests")
    expect(shown.stdout).toContain("\"test\"")

    // Bob sees nothing until granted; then reads it.
    const asBob = { ...env, ORGPLANE_TOKEN: bob.token }
    const hidden = await cli(["templates", "get", template.id], asBob)
    expect(hidden.code).not.toBe(0)
    expect(hidden.stderr).toContain("template_not_found")
    const granted = await cli(["templates", "grant", template.id, "--role", "viewer", "--member", bob.membership.id, "--json"], env)
    expect(granted.code, granted.stderr).toBe(0)
    const grant = json(granted).item
    expect((await cli(["templates", "get", template.id], asBob)).code).toBe(0)
    const grantsTable = await cli(["templates", "grants", template.id], env)
    expect(grantsTable.stdout).toContain(grant.id)
    const revoked = await cli(["templates", "revoke", template.id, grant.id], env)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect((await cli(["templates", "get", template.id], asBob)).code).not.toBe(0)

    const deleted = await cli(["templates", "delete", template.id, "--json"], env)
    expect(json(deleted)).toEqual({ ok: true, deleted: template.id })
    expect((await cli(["templates", "get", template.id], env)).code).not.toBe(0)
  })

  it("refuses a bad document file before sending anything, and reports schema violations", async () => {
    const org = await Http.staffed(server.url)
    const { cli, home } = await fresh()
    const offline = { ORGPLANE_URL: "http://127.0.0.1:9", ORGPLANE_TOKEN: "unused" }
    const notJson = Path.join(home, "bad.json")
    await Fs.writeFile(notJson, "{ not json")
    const bad = await cli(["templates", "create", "x", "--kind", "workspace", "--file", notJson], offline)
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--file")
    const missing = await cli(["templates", "create", "x", "--kind", "workspace", "--file", Path.join(home, "nope.json")], offline)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("no such file")
    const big = Path.join(home, "big.json")
    await Fs.writeFile(big, JSON.stringify({ x: "a".repeat(256 * 1024) }))
    const tooBig = await cli(["templates", "create", "x", "--kind", "workspace", "--file", big], offline)
    expect(tooBig.code).toBe(2)
    expect(tooBig.stderr).toContain("256 KiB")
    const badKind = await cli(["templates", "list", "--kind", "Work Space"], offline)
    expect(badKind.code).toBe(2)
    const nothing = await cli(["templates", "update", "tpl_01h455vb4pex5vsknk084sn02q"], offline)
    expect(nothing.code).toBe(2)

    const invalid = Path.join(home, "invalid.json")
    await Fs.writeFile(invalid, JSON.stringify({ name: 7 }))
    const refused = await cli(["templates", "create", "x", "--kind", "workspace", "--file", invalid, "--schema-version", "workspace-1"], {
      ORGPLANE_URL: server.url,
      ORGPLANE_TOKEN: org.member.token
    })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("document.name")
  })
})
