/**
 * The browser's part of SSO, protocol-neutral (OIDC and SAML end the same way): show the provider's URL (opened in a
 * browser, or printed), and for a sign-in, receive the server's redirect with its one-time code on a loopback
 * listener, then exchange the code for a session.
 */
import type { OrgplaneApiClient } from "@orgplane/client"
import { SsoSignInFailed } from "@orgplane/schema"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Browser from "./Browser.js"
import { CommandFailed } from "./Errors.js"
import * as Loopback from "./Loopback.js"
import * as Output from "./Output.js"
import * as Progress from "./Progress.js"

/** A sign-in or test intent lives 5 minutes: waiting longer cannot succeed. */
export const INTENT_LIFETIME = Duration.minutes(5)

/** Opens `url` in the browser unless `noBrowser` (or none can be opened); prints it on stderr either way. */
export const show = Effect.fn("SsoBrowser.show")(function*(url: string, options: { readonly noBrowser: boolean; readonly purpose: string }) {
  const opened = options.noBrowser ? false : yield* Browser.open(url)
  yield* Output.note(
    opened
      ? `Opened your browser to ${options.purpose}. If it did not open, open this URL (valid 5 minutes):\n  ${url}`
      : `Open this URL in a browser to ${options.purpose} (valid 5 minutes):\n  ${url}`
  )
})

/** What the browser brings back is typed by a person's browser: no terminal control characters, a bounded length. */
const printable = (text: string, max: number) => text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, " ").trim().slice(0, max)

const CODE = /^[a-z0-9_]{1,64}$/

/** A refusal the server sent the browser back with (`?error=<code>`, and its words in `error_description`). */
const refusal = (params: URLSearchParams) => {
  const raw = params.get("error") ?? ""
  const code = CODE.test(raw) ? raw : "invalid_redirect"
  const described = printable(params.get("error_description") ?? "", 500)
  return new SsoSignInFailed({
    code,
    message: described !== "" ? described : "the server or the identity provider refused the sign-in (docs/sso.md lists the codes)"
  })
}

const failedPage = (code: string): Loopback.Page => ({
  ok: false,
  title: "Sign-in failed",
  message: `orgplane could not sign you in (${code}). The terminal says why; you can close this tab.`
})

/**
 * Signs `email` in through the active SSO connection of its domain: a loopback listener, the sign-in started with it
 * as `returnTo`, the browser sent to the provider, then the first redirect to the listener, answered only once the
 * code has been exchanged so the page tells the truth. Fails with `SsoSignInFailed` (the refusal's code), or
 * `sign_in_timeout` after the intent's 5 minutes.
 */
export const signIn = (client: OrgplaneApiClient, email: string, options: { readonly noBrowser: boolean }) =>
  Effect.scoped(Effect.gen(function*() {
    const listener = yield* Loopback.listen
    const started = yield* client.ssoSignIn.start({ payload: { email, returnTo: listener.url } })
    yield* show(started.authorizationUrl, { noBrowser: options.noBrowser, purpose: `sign in as ${email}` })
    const redirect = yield* Progress.spinner("waiting for the sign-in in the browser…", () => listener.redirect).pipe(
      Effect.timeoutOrElse({
        duration: INTENT_LIFETIME,
        orElse: () =>
          Effect.fail(
            new CommandFailed({
              error: "sign_in_timeout",
              message: "the sign-in was not completed in the browser within 5 minutes: run 'orgplane auth login --sso' again"
            })
          )
      })
    )
    const code = redirect.params.get("code")
    if (code === null || code.trim() === "") {
      const refused = redirect.params.has("error")
        ? refusal(redirect.params)
        : new SsoSignInFailed({ code: "invalid_redirect", message: "the browser came back without a code or an error" })
      yield* redirect.answer(failedPage(refused.code))
      return yield* refused
    }
    const result = yield* client.ssoSignIn.exchange({ payload: { code } }).pipe(
      Effect.tapError((error) => redirect.answer(failedPage(error instanceof SsoSignInFailed ? error.code : "exchange_failed")))
    )
    yield* redirect.answer({
      ok: true,
      title: "Signed in",
      message: `You are signed in to orgplane as ${result.user.email}. You can close this tab and return to the terminal.`
    })
    return result
  }))
