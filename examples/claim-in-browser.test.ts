/**
 * A bootstrap's claim link, opened in a real browser: the page the server serves (`/workspace-claim`, here under the
 * embedding example's `/orgplane` mount) creates the person's account, claims the workspace as its owner and signs
 * that session out, every request staying under the mount and none carrying the token in a `Referer`. It drives the
 * system's chromium (`ORGPLANE_CHROMIUM`, else /usr/bin/chromium, which .ci/run installs); without one it is skipped,
 * saying so.
 */
import { AuthResult, BootstrapWorkspaceResult, MySessionPage, OrganizationDetailsResponse } from "@orgplane/schema"
import * as Schema from "effect/Schema"
import * as Fs from "node:fs"
import { chromium } from "playwright-core"
import { describe, expect, it } from "vitest"
import { startHost } from "./src/embed-node-host.js"

const executablePath = process.env["ORGPLANE_CHROMIUM"] ?? "/usr/bin/chromium"
const found = Fs.existsSync(executablePath)
if (!found) console.warn(`claim-in-browser: skipped, no chromium at ${executablePath} (apt-get install -y chromium, or set ORGPLANE_CHROMIUM)`)

const json = async (response: Response): Promise<{ readonly status: number; readonly body: unknown }> => ({ status: response.status, body: await response.json() })

/** An answer's body as the API puts it on the wire: checked against, and typed by, the schema's encoded side. */
const wire = <S extends Schema.Top>(schema: S, answered: { readonly body: unknown }): S["Encoded"] =>
  Schema.decodeUnknownSync(Schema.toEncoded(schema))(answered.body)

describe.skipIf(!found)(`a claim link in chromium (${executablePath}; skipped when it is missing)`, { timeout: 120_000 }, () => {
  it("signs up, claims the workspace as its owner and signs out, all under the mount", async () => {
    const host = await startHost({ port: 0 })
    const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] })
    try {
      const api = (path: string, init: RequestInit = {}) =>
        fetch(`${host.url}/orgplane${path}`, { ...init, headers: { "content-type": "application/json", ...init.headers } }).then(json)
      const made = await api("/v1/bootstrap/workspace", { method: "POST", body: JSON.stringify({ workspaceName: "Agent's garden", ownerEmail: "gardener@example.com" }) })
      expect(made.status).toBe(201)
      const link = new URL(wire(BootstrapWorkspaceResult, made).claimLinks[0]!.url)
      const page = await browser.newPage()
      const requests: Array<{ path: string; referer: string | undefined }> = []
      page.on("request", (request) => requests.push({ path: new URL(request.url()).pathname, referer: request.headers()["referer"] }))
      // The link names the mount (no public URL: the server's own address under its basePath); the host's origin here.
      expect(link.pathname).toBe("/orgplane/workspace-claim")
      await page.goto(`${host.url}${link.pathname}${link.search}`)
      await expect.poll(() => page.getByRole("heading", { name: "Claim a workspace" }).count()).toBe(1)
      // The owner's link prefills the email it was made for.
      expect(await page.getByLabel("Email").inputValue()).toBe("gardener@example.com")
      await page.getByLabel("Password").fill("a long enough password")
      await page.getByLabel("I have no account yet: create one").check()
      await page.getByLabel("Your name").fill("Gardener")
      await page.getByRole("button", { name: "Claim the workspace" }).click()
      await expect.poll(() => page.getByRole("status").textContent(), { timeout: 30_000 }).toMatch(/^You joined Agent's garden as owner\./)

      // The workspace is the person's now; the page's session is over, a new sign-in works.
      const signedIn = await api("/v1/auth/sign-in", { method: "POST", body: JSON.stringify({ email: "gardener@example.com", password: "a long enough password" }) })
      expect(signedIn.status).toBe(200)
      const { session } = wire(AuthResult, signedIn)
      const organization = await api("/v1/organization", { headers: { authorization: `Bearer ${session.token}` } })
      expect(wire(OrganizationDetailsResponse, organization).organization).toMatchObject({ name: "Agent's garden", provisional: false })
      const sessions = await api("/v1/me/sessions", { headers: { authorization: `Bearer ${session.token}` } })
      expect(wire(MySessionPage, sessions).items).toHaveLength(1)
      // The link works once: the same page again says so, in the server's words.
      await page.reload()
      await page.getByLabel("Password").fill("a long enough password")
      await page.getByRole("button", { name: "Claim the workspace" }).click()
      await expect.poll(() => page.getByRole("status").textContent(), { timeout: 30_000 }).toMatch(/^Could not claim the workspace: /)

      expect(requests.map((request) => request.path)).toEqual(expect.arrayContaining([
        "/orgplane/workspace-claim",
        "/orgplane/v1/auth/sign-up",
        "/orgplane/v1/bootstrap/claims/accept",
        "/orgplane/v1/auth/sign-out",
        "/orgplane/v1/auth/sign-in"
      ]))
      expect(requests.filter((request) => !request.path.startsWith("/orgplane/"))).toEqual([])
      // No Referer (chromium reports an empty one): the page's address, which holds the token, goes nowhere.
      expect(requests.filter((request) => (request.referer ?? "") !== "")).toEqual([])
    } finally {
      await browser.close()
      await host.close()
    }
  })
})
