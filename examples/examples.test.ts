/** The examples run in CI: each is exercised here the way a reader would run it. */
import { describe, expect, it } from "vitest"
import { startHost } from "./src/embed-node-host.js"
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
})
