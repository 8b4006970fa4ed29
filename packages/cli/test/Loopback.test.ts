/** The loopback listener a browser sign-in ends on, and the command that opens a browser on each platform. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { describe, expect, it } from "vitest"
import * as Browser from "../src/Browser.js"
import * as Loopback from "../src/Loopback.js"

describe("Loopback.listen", () => {
  it("takes the first GET of its own path only, answers it when told, and stops listening with its scope", async () => {
    const seen = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const listener = yield* Loopback.listen
      const url = new URL(listener.url)
      expect(url.origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(url.pathname).toMatch(/^\/orgplane\/[\w-]{24}$/)
      const other = yield* Loopback.listen
      expect(new URL(other.url).pathname).not.toBe(url.pathname)

      const wrong = yield* Effect.promise(() => fetch(`${url.origin}/orgplane/guess?code=x`))
      expect(wrong.status).toBe(404)
      const posted = yield* Effect.promise(() => fetch(`${listener.url}?code=x`, { method: "POST" }))
      expect(posted.status).toBe(404)

      // The browser's request waits for its page until the command answers it.
      const first = fetch(`${listener.url}?code=ssx_1&state=a`)
      const redirect = yield* listener.redirect
      expect(redirect.params.get("code")).toBe("ssx_1")
      const again = yield* Effect.promise(() => fetch(`${listener.url}?code=ssx_2`))
      expect(again.status).toBe(404)
      yield* redirect.answer({ ok: true, title: "Signed in", message: "<b>close</b> this tab" })
      yield* redirect.answer({ ok: false, title: "ignored", message: "a second answer is dropped" })
      const page = yield* Effect.promise(() => first)
      expect(page.status).toBe(200)
      expect(page.headers.get("cache-control")).toBe("no-store")
      const text = yield* Effect.promise(() => page.text())
      expect(text).toContain("&lt;b&gt;close&lt;/b&gt; this tab")
      return listener.url
    })))
    await expect(fetch(seen)).rejects.toThrow()
  })
})

describe("Browser.opener", () => {
  const url = "https://idp.example/authorize?client_id=a&state=b"
  const display = { x11: true, wayland: false }

  it("uses open on macOS, xdg-open with a display, nothing without one", () => {
    expect(Browser.opener("darwin", url, display)).toEqual(Option.some({ command: "open", args: [url], verbatim: false }))
    expect(Browser.opener("linux", url, display)).toEqual(Option.some({ command: "xdg-open", args: [url], verbatim: false }))
    expect(Browser.opener("linux", url, { x11: false, wayland: true })).toEqual(Option.some({ command: "xdg-open", args: [url], verbatim: false }))
    expect(Browser.opener("linux", url, { x11: false, wayland: false })).toEqual(Option.none())
  })

  it("escapes cmd's metacharacters on Windows, where start is a shell built-in", () => {
    expect(Browser.opener("win32", url, { x11: false, wayland: false })).toEqual(Option.some({
      command: "cmd",
      args: ["/c", "start", "\"\"", "https://idp.example/authorize?client_id=a^&state=b"],
      verbatim: true
    }))
  })
})
