/**
 * The API reference under a mount, in a real browser: the embedding example's host serves orgplane under
 * `/orgplane`, and `/orgplane/docs` renders the API's reference, loading its script and the document from the mount.
 * It drives the system's chromium (`ORGPLANE_CHROMIUM`, else /usr/bin/chromium: Debian's `apt-get install -y
 * chromium`, which .ci/run installs); without one it is skipped, saying so.
 */
import * as Fs from "node:fs"
import { chromium } from "playwright-core"
import { describe, expect, it } from "vitest"
import { startHost } from "./src/embed-node-host.js"

const executablePath = process.env["ORGPLANE_CHROMIUM"] ?? "/usr/bin/chromium"
const found = Fs.existsSync(executablePath)
if (!found) console.warn(`docs-in-browser: skipped, no chromium at ${executablePath} (apt-get install -y chromium, or set ORGPLANE_CHROMIUM)`)

describe.skipIf(!found)(`/orgplane/docs in chromium (${executablePath}; skipped when it is missing)`, { timeout: 120_000 }, () => {
  it("renders the API reference, everything it loads coming from under the mount", async () => {
    const host = await startHost({ port: 0 })
    // Root in containers: chromium's sandbox needs user namespaces it may not have.
    const browser = await chromium.launch({ executablePath, args: ["--no-sandbox"] })
    try {
      const page = await browser.newPage()
      const loaded: Array<string> = []
      const failed: Array<string> = []
      page.on("response", (response) => {
        loaded.push(new URL(response.url()).pathname)
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`)
      })
      page.on("requestfailed", (request) => failed.push(`${request.failure()?.errorText} ${request.url()}`))
      await page.goto(`${host.url}/orgplane/docs`)
      // Scalar draws the document's title, its groups in the sidebar and the first group's operations once it has
      // read the document.
      await expect.poll(() => page.getByRole("heading", { name: "orgplane control-plane API" }).count(), { timeout: 60_000 }).toBeGreaterThan(0)
      await expect.poll(() => page.getByText("Teams", { exact: true }).count(), { timeout: 30_000 }).toBeGreaterThan(0)
      await expect.poll(() => page.getByText("Check liveness").count(), { timeout: 30_000 }).toBeGreaterThan(0)
      expect(failed).toEqual([])
      expect(loaded).toEqual(expect.arrayContaining(["/orgplane/docs", "/orgplane/docs/scalar.js", "/orgplane/openapi.json"]))
      expect(loaded.filter((path) => !path.startsWith("/orgplane/"))).toEqual([])
    } finally {
      await browser.close()
      await host.close()
    }
  })
})

describe("the mount, named", { timeout: 120_000 }, () => {
  it("in the document's servers and in the root's links", async () => {
    const host = await startHost({ port: 0 })
    try {
      const document = await (await fetch(`${host.url}/orgplane/openapi.json`)).json() as { servers: ReadonlyArray<{ url: string }> }
      expect(document.servers).toEqual([expect.objectContaining({ url: "/orgplane" })])
      const root = await (await fetch(`${host.url}/orgplane/`)).json()
      expect(root).toMatchObject({ docs: "/orgplane/docs", openapi: "/orgplane/openapi.json", health: "/orgplane/health" })
    } finally {
      await host.close()
    }
  })
})
