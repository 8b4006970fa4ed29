/**
 * `orgplane account export | email | delete` and `orgplane admin users list | disable | enable | delete`: the CLI
 * in-process (see Harness.ts) against a real server (RealServer.ts).
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"
import * as Http from "./Http.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer
let operator: Awaited<ReturnType<typeof Http.operator>>
beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_SETUP_TOKEN: Http.SETUP_TOKEN })
  operator = await Http.operator(server.url)
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

describe("orgplane account", () => {
  it("exports the account as JSON, changes its email (the profile follows), and deletes it with --yes, forgetting the session", async () => {
    const owner = await Http.owner(server.url, "Account CLI")
    const { cli, configDir } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_PASSWORD: owner.password }
    expect((await cli(["auth", "login", "--email", owner.email], env)).code).toBe(0)

    const exported = await cli(["account", "export"], env)
    expect(exported.code, exported.stderr).toBe(0)
    const document = json(exported)
    expect(document).toMatchObject({ format: "orgplane.account-export.v1", user: { id: owner.userId, email: owner.email } })
    expect(document.memberships).toEqual([expect.objectContaining({ organization: { id: owner.organization.id, name: "Account CLI" } })])

    const moved = `moved.${Math.random().toString(36).slice(2, 8)}@example.com`
    const changed = await cli(["account", "email", moved], env)
    expect(changed.code, changed.stderr).toBe(0)
    expect(changed.stdout).toBe(`Your email is now ${moved}, unverified until proven: an SSO sign-in through a verified domain proves it.\n`)
    const whoami = await cli(["whoami"], env)
    expect(whoami.stdout).toContain(`<${moved}>`)
    // The profile's email follows, so a re-sign-in asks for the right account.
    expect(await Fs.readFile(Path.join(configDir, "config.json"), "utf8")).toContain(moved)

    const unconfirmed = await cli(["account", "delete"], env)
    expect(unconfirmed.code).toBe(2)
    expect(unconfirmed.stderr).toContain("pass --yes")
    const deleted = await cli(["account", "delete", "--yes"], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toContain(`Deleted account ${owner.userId}: organizations' audit logs name it deleted-user-`)
    expect(deleted.stdout).toContain(`Left without members: ${owner.organization.id}.`)
    const after = await cli(["whoami"], env)
    expect(after.code).toBe(3)
  })

  it("says what to do when the account is the last owner of an organization with other members", async () => {
    const org = await Http.staffed(server.url, "Owned")
    const { cli } = await fresh()
    const refused = await cli(["account", "delete", "--yes"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: org.owner.token, ORGPLANE_PASSWORD: org.owner.password })
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("last_owner_of_organizations")
    expect(refused.stderr).toContain(`Owned (${org.organizationId})`)
  })
})

describe("orgplane admin users", () => {
  it("lists accounts, disables and enables one, and deletes one with --yes", async () => {
    const marker = `cliusers${Math.random().toString(36).slice(2, 8)}`
    const signedUp = await Http.request(server.url, "POST", "/v1/auth/sign-up", {
      body: { email: `${marker}@example.com`, password: "a long password", name: "Listed Person" }
    })
    expect(signedUp.status).toBe(201)
    const person = { user: { id: Http.textAt(signedUp.body, "user", "id") } }
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: operator.token }

    const table = await cli(["admin", "users", "list", "--email", marker], env)
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toMatch(/^ID\s+EMAIL\s+NAME\s+ORGANIZATIONS\s+STATE\s+CREATED$/m)
    expect(table.stdout).toMatch(new RegExp(`^${person.user.id}\\s+${marker}@example.com\\s+Listed Person\\s+0\\s+enabled\\s`, "m"))

    const disabled = await cli(["admin", "users", "disable", person.user.id], env)
    expect(disabled.code, disabled.stderr).toBe(0)
    expect(disabled.stdout).toContain("is disabled: its sessions ended")
    const listed = await cli(["admin", "users", "list", "--email", marker, "--state", "disabled", "--json"], env)
    expect(json(listed).items.map((user: { id: string }) => user.id)).toEqual([person.user.id])
    expect(json(await cli(["admin", "users", "list", "--email", marker, "--state", "enabled", "--json"], env)).items).toEqual([])
    const signIn = await Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: `${marker}@example.com`, password: "a long password" } })
    expect([signIn.status, Http.at(signIn.body, "reason")]).toEqual([403, "account_disabled"])

    const enabled = await cli(["admin", "users", "enable", person.user.id], env)
    expect(enabled.code, enabled.stderr).toBe(0)
    expect(enabled.stdout).toContain("is enabled.")

    expect((await cli(["admin", "users", "delete", person.user.id], env)).stderr).toContain("pass --yes")
    const deleted = await cli(["admin", "users", "delete", person.user.id, "--yes", "--json"], env)
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(json(deleted)).toMatchObject({ userId: person.user.id, organizationsLeft: [] })
    const missing = await cli(["admin", "users", "disable", person.user.id], env)
    expect(missing.code).toBe(4)
    expect(missing.stderr).toContain("user_not_found")
  })
})
