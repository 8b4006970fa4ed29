/**
 * The loopback redirect a browser sign-in ends on (RFC 8252 §7.3, as `gh auth login --web` does): an HTTP listener on
 * 127.0.0.1, on a port the system picks, that accepts one GET of one unguessable path and nothing else. What the
 * server sends there (`?code=` or `?error=`) is the same whatever protocol the identity provider spoke.
 */
import * as NodeCrypto from "node:crypto"
import * as NodeHttp from "node:http"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { CommandFailed } from "./Errors.js"

/** What the browser brought back; `answer` sends the page it shows (at most once; a closed tab is no error). */
export interface Redirect {
  readonly params: URLSearchParams
  readonly answer: (page: Page) => Effect.Effect<void>
}

export interface Page {
  readonly ok: boolean
  readonly title: string
  readonly message: string
}

export interface Listener {
  /** `http://127.0.0.1:<port>/<random path>`: the `returnTo` to send. */
  readonly url: string
  /** The first GET of the path: waits until it arrives. */
  readonly redirect: Effect.Effect<Redirect>
}

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c)

const html = (page: Page) =>
  `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>orgplane: ${escapeHtml(page.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem;color:${
    page.ok ? "#176b2c" : "#a3141c"
  }}</style></head>
<body><h1>${escapeHtml(page.title)}</h1><p>${escapeHtml(page.message)}</p></body></html>
`

const HEADERS = {
  "cache-control": "no-store",
  connection: "close",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff"
}

/**
 * Listens until the scope closes (then pending answers are cut). Only the first GET of the path is taken; any other
 * request (another path, another method, the path again) answers 404 and changes nothing.
 */
export const listen = Effect.gen(function*() {
  const path = `/orgplane/${NodeCrypto.randomBytes(18).toString("base64url")}`
  const arrived = yield* Deferred.make<Redirect>()
  let taken = false
  const server = NodeHttp.createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1")
    if (request.method !== "GET" || url.pathname !== path || taken) {
      response.writeHead(404, { ...HEADERS, "content-type": "text/plain; charset=utf-8" }).end("Not found\n")
      return
    }
    taken = true
    let answered = false
    const answer = (page: Page) =>
      Effect.sync(() => {
        if (answered || response.writableEnded) return
        answered = true
        response.writeHead(page.ok ? 200 : 400, { ...HEADERS, "content-type": "text/html; charset=utf-8" }).end(html(page))
      })
    Deferred.doneUnsafe(arrived, Effect.succeed({ params: url.searchParams, answer }))
  })
  yield* Effect.acquireRelease(
    Effect.callback<void, CommandFailed>((resume) => {
      server.once("error", (error) =>
        resume(Effect.fail(new CommandFailed({ error: "loopback_failed", message: `cannot listen on 127.0.0.1 for the browser's redirect: ${error.message}` }))))
      server.listen(0, "127.0.0.1", () => resume(Effect.void))
    }),
    () =>
      Effect.callback<void>((resume) => {
        // Answers carry `connection: close`, so the sockets end once sent; one left open (a browser's preconnect,
        // an answer never given) is cut after a second.
        server.close(() => resume(Effect.void))
        server.closeIdleConnections()
        setTimeout(() => server.closeAllConnections(), 1000).unref()
      })
  )
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return { url: `http://127.0.0.1:${port}${path}`, redirect: Deferred.await(arrived) } satisfies Listener
})
