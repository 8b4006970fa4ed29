/**
 * `orgplane account export | email | delete`: the CLI in-process (see Harness.ts) against the Effect 3 server
 * (RealServer.ts). Ports packages/cli/test/Account.test.ts's first test; the others (the operator's view, an email
 * taken, a deleted account's sign-in) are left to port.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json } from "./Harness.js"
import * as Http from "./Http.js"
import * as RealServer from "./RealServer.js"

let server: RealServer.RealServer
beforeAll(async () => {
  server = await RealServer.start()
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
})
