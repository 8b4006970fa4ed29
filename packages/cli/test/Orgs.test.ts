/**
 * `orgplane orgs get | update | delete | restore | list --deleted` and `orgplane admin orgs list | delete | restore`:
 * the CLI in-process (see Harness.ts) against a real server (RealServer.ts), started with the setup token
 * `Http.operator` redeems.
 */
import { AdminOrganizationPage } from "@orgplane/schema"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, wire } from "./Harness.js"
import * as Http from "./Http.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer

beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_SETUP_TOKEN: Http.SETUP_TOKEN })
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

describe("orgplane orgs", () => {
  it("reads and changes the active organization, deletes it with its name, lists and restores it", async () => {
    const org = await Http.staffed(server.url, "Acme")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.owner.token }

    const shown = await cli(["orgs", "get"], env)
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`Acme (${org.organizationId})`)
    expect(shown.stdout).toMatch(/^ {2}members\s+3$/m)
    expect(shown.stdout).toMatch(/^ {2}metadata\s+-$/m)

    const updated = await cli(["orgs", "update", "--name", "Acme Corp", "--logo-url", "/logos/acme.png", "--metadata", "costCenter=R&D=42", "--metadata", "team=core"], env)
    expect(updated.code, updated.stderr).toBe(0)
    expect(updated.stdout).toContain(`Acme Corp (${org.organizationId})`)
    expect(updated.stdout).toMatch(/^ {2}metadata\s+costCenter=R&D=42, team=core$/m)
    const asJson = json(await cli(["orgs", "get", "--json"], env))
    expect(asJson.organization).toMatchObject({ name: "Acme Corp", logoUrl: "/logos/acme.png", metadata: { costCenter: "R&D=42", team: "core" } })

    const nothing = await cli(["orgs", "update"], env)
    expect([nothing.code !== 0, nothing.stderr]).toEqual([true, expect.stringContaining("give at least one of --name")])
    const badKey = await cli(["orgs", "update", "--metadata", "not a key=x"], env)
    expect([badKey.code !== 0, badKey.stderr]).toEqual([true, expect.stringContaining("--metadata")])
    const cleared = json(await cli(["orgs", "update", "--no-metadata", "--no-logo", "--json"], env))
    expect(cleared.organization).toMatchObject({ metadata: {}, logoUrl: null })

    const misnamed = await cli(["orgs", "delete", "Acme"], env)
    expect(misnamed.code).not.toBe(0)
    expect(misnamed.stderr).toContain("confirmName")
    const deleted = await cli(["orgs", "delete", "Acme Corp"], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toMatch(new RegExp(`^Deleted Acme Corp \\(${org.organizationId}\\)\\. It may be restored until \\S+ \\('orgplane orgs restore ${org.organizationId}'\\); then the purge removes \\d+ rows\\.\\n$`))
    const gone = await cli(["orgs", "get"], env)
    expect(gone.code).not.toBe(0)
    expect(gone.stderr).toContain("organization_not_found")

    const restorable = await cli(["orgs", "list", "--deleted"], env)
    expect(restorable.code, restorable.stderr).toBe(0)
    expect(restorable.stdout).toMatch(new RegExp(`^${org.organizationId}\\s+Acme Corp\\s+owner\\s+`, "m"))
    const restored = await cli(["orgs", "restore", org.organizationId], env)
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toBe(`Restored Acme Corp (${org.organizationId}); it is your active organization again.\n`)
    expect((await cli(["orgs", "get"], env)).code).toBe(0)
  })

  it("lets the instance's operator list, delete and restore any organization", async () => {
    const operator = await Http.operator(server.url, "Operations")
    const tenant = await Http.owner(server.url, "Tenant")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: operator.token }

    const listed = await cli(["admin", "orgs", "list", "--query", "tenant"], env)
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(new RegExp(`^${tenant.organization.id}\\s+Tenant\\s+free\\s+1\\s+\\S+\\s+-\\s+-$`, "m"))
    const deleted = await cli(["admin", "orgs", "delete", tenant.organization.id], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toContain(`Deleted Tenant (${tenant.organization.id}).`)
    const onlyDeleted = wire(AdminOrganizationPage, await cli(["admin", "orgs", "list", "--deleted", "--json"], env))
    expect(onlyDeleted.items.map((item) => item.id)).toEqual([tenant.organization.id])
    const both = await cli(["admin", "orgs", "list", "--deleted", "--live"], env)
    expect([both.code !== 0, both.stderr]).toEqual([true, expect.stringContaining("give --deleted or --live, not both")])
    const restored = await cli(["admin", "orgs", "restore", tenant.organization.id], env)
    expect(restored.code, restored.stderr).toBe(0)
    expect(restored.stdout).toBe(`Restored Tenant (${tenant.organization.id}).\n`)
    const denied = await cli(["admin", "orgs", "list"], { ...env, ORGPLANE_TOKEN: tenant.token })
    expect(denied.code).not.toBe(0)
    expect(denied.stderr).toContain("operator_only")
  })
})
