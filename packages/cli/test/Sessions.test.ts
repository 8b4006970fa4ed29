/**
 * `orgplane auth sessions | end-session | end-other-sessions | password`, `api-keys create --scope`, and the re-sign-in
 * the CLI does when an action needs a recent sign-in. In-process (Harness.ts) against a real server (RealServer.ts)
 * whose recent-sign-in window is 15 seconds: the first test's steps fit in it, and the second test moves the server's
 * clock past it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanup, fresh, json, PASSWORD } from "./Harness.js"
import * as Http from "./Http.js"
import * as RealServer from "./RealServer.js"
import { ShiftedClock } from "../../../packages/testkit/src/Clocks.js"

const clock = new ShiftedClock()
let server: RealServer.RealServer
beforeAll(async () => {
  server = await RealServer.start({ ORGPLANE_RECENT_AUTHENTICATION: "15 seconds" }, { clock })
})
afterAll(async () => {
  await server?.close()
  await cleanup()
})

describe("orgplane auth sessions and password", () => {
  it("lists the sessions, ends another one and the rest, and changes the password listing the API keys, then revoking them", async () => {
    const owner = await Http.owner(server.url, "Sessions CLI")
    const { cli } = await fresh()
    const env = { ORGPLANE_URL: server.url, ORGPLANE_PASSWORD: owner.password }
    const login = await cli(["auth", "login", "--email", owner.email], env)
    expect(login.code, login.stderr).toBe(0)

    const listed = await cli(["auth", "sessions", "--json"], env)
    expect(listed.code, listed.stderr).toBe(0)
    const sessions: ReadonlyArray<{ id: string; current: boolean; method: string }> = json(listed).items
    expect(sessions).toHaveLength(2)
    expect(sessions.filter((session) => session.current)).toHaveLength(1)
    const other = sessions.find((session) => !session.current)!
    const table = await cli(["auth", "sessions"], env)
    expect(table.stdout).toContain("(this one)")

    const ended = await cli(["auth", "end-session", other.id], env)
    expect(ended.code, ended.stderr).toBe(0)
    expect(ended.stdout).toContain(`Ended session ${other.id}.`)
    expect((await Http.request(server.url, "GET", "/v1/me", { token: owner.token })).status).toBe(401)

    const signedIn = await Http.request(server.url, "POST", "/v1/auth/sign-in", { body: { email: owner.email, password: owner.password } })
    expect(signedIn.status).toBe(200)
    const third = Http.textAt(signedIn.body, "session", "token")
    const others = await cli(["auth", "end-other-sessions"], env)
    expect(others.stdout).toContain("Ended 1 other session.")
    expect((await Http.request(server.url, "GET", "/v1/me", { token: third })).status).toBe(401)

    const scoped = await cli(["api-keys", "create", "ci", "--scope", "teams.*", "--scope", "members.read", "--json"], env)
    expect(scoped.code, scoped.stderr).toBe(0)
    expect(json(scoped).apiKey.scopes).toEqual(["members.read", "teams.read", "teams.manage"])
    const beyond = await cli(["api-keys", "create", "wide", "--scope", "no.such"], env)
    expect(beyond.code).not.toBe(0)

    const changed = await cli(["auth", "password"], { ...env, ORGPLANE_NEW_PASSWORD: "the second passphrase" })
    expect(changed.code, changed.stderr).toBe(0)
    expect(changed.stdout).toContain("Password changed; 0 other sessions ended.")
    expect(changed.stdout).toContain("Your 1 API key still works")
    expect(changed.stdout).toContain("ci")
    const revoked = await cli(["auth", "password", "--revoke-api-keys", "--json"], {
      ...env,
      ORGPLANE_PASSWORD: "the second passphrase",
      ORGPLANE_NEW_PASSWORD: "the third passphrase"
    })
    expect(revoked.code, revoked.stderr).toBe(0)
    expect(json(revoked)).toMatchObject({ apiKeysRevoked: true, apiKeys: [{ name: "ci" }] })
    expect((await Http.request(server.url, "GET", "/v1/teams", { apiKey: json(scoped).key })).status).toBe(401)
  })

  it("an action that needs a recent sign-in signs in again with ORGPLANE_PASSWORD and runs once more; with a token from the environment it fails with the server's message", async () => {
    const owner = await Http.owner(server.url, "Sudo CLI")
    const { cli } = await fresh()
    const login = await cli(["auth", "login", "--email", owner.email], { ORGPLANE_URL: server.url, ORGPLANE_PASSWORD: owner.password })
    expect(login.code, login.stderr).toBe(0)
    clock.advance("16 seconds")

    const fromEnvironment = await cli(["api-keys", "create", "late"], { ORGPLANE_URL: server.url, ORGPLANE_TOKEN: owner.token })
    expect(fromEnvironment.code).not.toBe(0)
    expect(fromEnvironment.stderr).toContain("recent_authentication_required")
    expect(fromEnvironment.stderr).toContain("sign in again")

    const withoutPassword = await cli(["api-keys", "create", "late"], { ORGPLANE_URL: server.url })
    expect(withoutPassword.code).not.toBe(0)
    expect(withoutPassword.stderr).toContain("recent_authentication_required")

    const again = await cli(["api-keys", "create", "late", "--json"], { ORGPLANE_URL: server.url, ORGPLANE_PASSWORD: PASSWORD })
    expect(again.code, again.stderr).toBe(0)
    expect(json(again).apiKey.name).toBe("late")
    // The new session was saved: the next such action needs no password.
    const next = await cli(["api-keys", "create", "later"], { ORGPLANE_URL: server.url })
    expect(next.code, next.stderr).toBe(0)
  })
})
