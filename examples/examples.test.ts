/** The examples run in CI: each is exercised here the way a reader would run it. */
import { Http, TestServer } from "@orgplane/testkit"
import { describe, expect, it } from "vitest"
import { startHost } from "./src/embed-node-host.js"
import { onboard } from "./src/onboard-team.js"
import { main as webHandler } from "./src/web-handler.js"

describe("examples", () => {
  it("embed-node-host: the host serves its own route and the mounted API side by side", async () => {
    const host = await startHost({ port: 0 })
    try {
      const hello = await fetch(`${host.url}/hello`)
      expect(await hello.json()).toEqual({ hello: "from the host app" })
      const health = await fetch(`${host.url}/orgplane/health`)
      expect(await health.json()).toMatchObject({ ok: true })
      const signUp = await fetch(`${host.url}/orgplane/v1/auth/sign-up`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "host@example.com", password: "a long password", name: "Host" })
      })
      expect(signUp.status).toBe(201)
      expect((await fetch(`${host.url}/elsewhere`)).status).toBe(404)
    } finally {
      await host.close()
    }
  })

  it("web-handler: answers Requests with Responses, no socket involved", async () => {
    const result = await webHandler()
    expect(result.health).toMatchObject({ ok: true })
    expect(result.signUpStatus).toBe(201)
    expect(result.me.user.email).toBe("web@example.com")
  })

  it("onboard-team: puts members in the team, invites the others once, and can run again", async () => {
    const server = await TestServer.start()
    try {
      const org = await Http.staffed(server.url)
      const key = await Http.request(server.url, "POST", "/v1/api-keys", { token: org.owner.token, body: { name: "onboarding" } })
      const options = {
        baseUrl: server.url,
        apiKey: key.body.key as string,
        team: "Platform",
        roster: [
          { email: org.member.email.toUpperCase(), role: "member" as const },
          { email: "newcomer@example.com", role: "admin" as const }
        ]
      }
      const first = await onboard(options)
      expect(first.addedToTeam).toEqual([org.member.membership.id])
      expect(first.invited.map((i) => i.email)).toEqual(["newcomer@example.com"])
      const again = await onboard(options)
      expect(again).toEqual({ teamId: first.teamId, addedToTeam: [], invited: [], alreadyInvited: ["newcomer@example.com"] })
      const accepted = await Http.request(server.url, "POST", "/v1/invitations/accept", {
        body: { token: first.invited[0].inviteToken, signUp: { name: "Newcomer", password: "correct horse battery" } }
      })
      expect(accepted.body.membership.role).toBe("admin")
      const third = await onboard(options)
      expect(third.addedToTeam).toEqual([accepted.body.membership.id])
    } finally {
      await server.close()
    }
  })
})
