/**
 * `GET /workspace-claim`: the page a bootstrap's claim link opens (`<ORGPLANE_PUBLIC_URL>/workspace-claim?token=…`).
 * It says what the link is for, and claims the workspace through the API from the browser: sign in (or create an
 * account), `POST /v1/bootstrap/claims/accept` with the link's token, then sign that session out again (it was only
 * for the claim). Without a browser, the same is `orgplane bootstrap claim <token>` or the API call, which the page
 * also says.
 *
 * The server never writes the token into the page (the script reads it from the address bar), so nothing it sends
 * repeats it; the page sends no `Referer` (it would carry the token), may not be framed, is not cached, and runs only
 * its own script (a Content-Security-Policy naming the script's hash). Its API calls are relative to the page, so it
 * works wherever a host mounts the server.
 */
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { createHash } from "node:crypto"

/** The page's path, beside the API's (the request log names it by it). */
export const path = "/workspace-claim"

/** The routes this module serves, for the request log (`HttpErrors.serverLayer`). */
export const routes = [["GET", path]] as const

/** What the page runs: reads the link, signs in or up, claims, signs out, and says what happened. */
const script = `
"use strict";
const link = new URLSearchParams(location.search);
const token = link.get("token") || "";
const form = document.getElementById("claim");
const outcome = document.getElementById("outcome");
const say = (text, failed) => { outcome.textContent = text; outcome.className = failed ? "failed" : "done"; };
const api = (path, body, session) => fetch(new URL(path, location.href), {
  method: "POST",
  headers: Object.assign({ "content-type": "application/json" }, session ? { authorization: "Bearer " + session } : {}),
  body: body === undefined ? undefined : JSON.stringify(body)
}).then(async (response) => ({ status: response.status, body: await response.json().catch(() => ({})) }));
const why = (answer) => answer.body.message || (answer.body.details || []).map((d) => (d.path || []).join(".") + " " + d.message).join("; ") || answer.body.error || ("HTTP " + answer.status);
if (token === "") {
  form.hidden = true;
  say("This link has no claim token: open the whole link you were sent (it ends in ?token=…).", true);
} else {
  document.getElementById("email").value = link.get("email") || "";
  const newAccount = document.getElementById("new-account");
  const nameRow = document.getElementById("name-row");
  newAccount.addEventListener("change", () => { nameRow.hidden = !newAccount.checked; });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const button = form.querySelector("button");
    button.disabled = true;
    say("Claiming…", false);
    try {
      const email = document.getElementById("email").value.trim();
      const password = document.getElementById("password").value;
      const signedIn = newAccount.checked
        ? await api("v1/auth/sign-up", { email, password, name: document.getElementById("name").value.trim() })
        : await api("v1/auth/sign-in", { email, password });
      if (signedIn.status !== 200 && signedIn.status !== 201) return say("Could not sign in: " + why(signedIn), true);
      const session = signedIn.body.session.token;
      const claimed = await api("v1/bootstrap/claims/accept", { token }, session);
      await api("v1/auth/sign-out", undefined, session);
      if (claimed.status !== 200) return say("Could not claim the workspace: " + why(claimed), true);
      form.hidden = true;
      say("You joined " + claimed.body.organization.name + " as " + claimed.body.membership.role + ". Sign in to it with 'orgplane auth login --url " + new URL(".", location.href).href.replace(/\\/$/, "") + "'.", false);
    } catch (error) {
      say("Could not reach the server: " + error, true);
    } finally {
      button.disabled = false;
    }
  });
}
`

const scriptHash = createHash("sha256").update(script).digest("base64")

/** Nothing but the page's own script, its inline styles, and requests to this server. */
export const contentSecurityPolicy = [
  "default-src 'none'",
  `script-src 'sha256-${scriptHash}'`,
  "style-src 'unsafe-inline'",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'"
].join("; ")

export const page = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="referrer" content="no-referrer" />
    <title>Claim a workspace · orgplane</title>
    <style>
      body { font: 16px/1.5 system-ui, sans-serif; max-width: 34rem; margin: 3rem auto; padding: 0 1rem; color: #1b1b1f; }
      label { display: block; margin-top: .8rem; }
      input[type=email], input[type=password], input[type=text] { width: 100%; padding: .4rem; font: inherit; box-sizing: border-box; }
      button { margin-top: 1rem; padding: .5rem 1.2rem; font: inherit; }
      code { background: #f1f1f4; padding: 0 .2rem; }
      .failed { color: #a4161a; } .done { color: #1b6b2f; }
    </style>
  </head>
  <body>
    <h1>Claim a workspace</h1>
    <p>
      Someone set up an orgplane workspace and sent you this one-time link to take a role in it (the owner's link
      makes you its owner). Sign in, or create an account, and claim it. The link works once and expires.
    </p>
    <form id="claim">
      <label>Email <input id="email" type="email" autocomplete="email" required /></label>
      <label>Password <input id="password" type="password" autocomplete="current-password" required /></label>
      <label><input id="new-account" type="checkbox" /> I have no account yet: create one</label>
      <label id="name-row" hidden>Your name <input id="name" type="text" autocomplete="name" /></label>
      <button type="submit">Claim the workspace</button>
    </form>
    <p id="outcome" role="status"></p>
    <noscript><p class="failed">This page needs JavaScript to claim the workspace; the commands below do the same.</p></noscript>
    <h2>Without this page</h2>
    <p>
      Signed in with the CLI: <code>orgplane bootstrap claim &lt;token&gt;</code>, the token being this link's
      <code>token</code> parameter. Over the API: <code>POST /v1/bootstrap/claims/accept</code> with
      <code>{"token": "&lt;token&gt;"}</code> and a session (<code>Authorization: Bearer &lt;session token&gt;</code>).
    </p>
    <script>${script}</script>
  </body>
</html>`

/** The page, with the headers that keep the token where it is. */
const response = HttpServerResponse.text(page, {
  contentType: "text/html; charset=utf-8",
  headers: {
    "content-security-policy": contentSecurityPolicy,
    "referrer-policy": "no-referrer",
    "cache-control": "no-store"
  }
})

/** `GET /workspace-claim`, on the server's router. */
export const layer = HttpRouter.use((router) => router.add("GET", path, Effect.succeed(response)))
