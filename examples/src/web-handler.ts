/**
 * orgplane as a web-standard handler, `(Request) => Promise<Response>`: what fetch-based hosts (Deno, Bun,
 * Cloudflare-style runtimes, Next.js route handlers, Hono) plug in. Here we call it directly, without a socket:
 * `pnpm --filter @orgplane/examples web-handler`.
 */
import { makeWebHandler } from "@orgplane/server"

export const main = async () => {
  const { dispose, handler } = makeWebHandler({ dataDir: "memory" })
  try {
    const health = await handler(new Request("http://orgplane.local/health"))
    const signUp = await handler(
      new Request("http://orgplane.local/v1/auth/sign-up", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: "web@example.com", password: "a long password", name: "Web" })
      })
    )
    const { session } = await signUp.json() as { session: { token: string } }
    const me = await handler(new Request("http://orgplane.local/v1/me", { headers: { authorization: `Bearer ${session.token}` } }))
    return { health: await health.json(), signUpStatus: signUp.status, me: await me.json() }
  } finally {
    await dispose()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await main(), null, 2))
}
