/**
 * `orgplane members list | directory | set-directory` as a plain member and as an admin (issue 44 item 4): a member
 * still lists the organization (names and roles; emails print `-` until the organization shows them), and only an
 * admin changes what members see. In-process (Harness.ts) against a real server (RealServer.ts).
 */
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

const as = (token: string) => ({ ORGPLANE_URL: server.url, ORGPLANE_TOKEN: token })

describe("orgplane members as a plain member", () => {
  it("lists names and roles without emails; sees emails once an admin shows them; cannot change it", async () => {
    const { admin, member, owner } = await Http.staffed(server.url, "Directory CLI")
    const { cli } = await fresh()

    const listed = await cli(["members", "list", "--json"], as(member.token))
    expect(listed.code, listed.stderr).toBe(0)
    const items = json(listed).items as ReadonlyArray<Record<string, unknown>>
    expect(items.map((item) => [item["name"], item["role"]])).toEqual([["Owner", "owner"], ["Admin", "admin"], ["Member", "member"]])
    expect(items.some((item) => "email" in item || "userId" in item)).toBe(false)

    const table = await cli(["members", "list"], as(member.token))
    expect(table.code, table.stderr).toBe(0)
    expect(table.stdout).toContain("Admin")
    expect(table.stdout).not.toContain(admin.email)

    const shown = await cli(["members", "directory"], as(member.token))
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain("Members see names and roles, not emails.")
    const refused = await cli(["members", "set-directory", "visible"], as(member.token))
    expect(refused.code).not.toBe(0)

    const set = await cli(["members", "set-directory", "visible"], as(admin.token))
    expect(set.code, set.stderr).toBe(0)
    expect(set.stdout).toContain("Members now see each other's emails.")
    const after = await cli(["members", "list"], as(member.token))
    expect(after.stdout).toContain(admin.email)
    expect(after.stdout).toContain(owner.email)
  })
})
