/**
 * `/docs`, the API reference, as an air-gapped or self-hosted operator serves it: the page and what it loads come
 * from this server only, and nothing on it leads to Scalar's cloud.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let server: TestServer.RunningServer
beforeAll(async () => {
  server = await TestServer.start()
})
afterAll(() => server.close())

/** The directives of a Content-Security-Policy header: `{ "default-src": ["'self'"], ... }`. */
const directives = (header: string) =>
  Object.fromEntries(
    header.split(";").map((part) => part.trim()).filter((part) => part !== "").map((part) => {
      const [name, ...sources] = part.split(/\s+/)
      return [name!, sources]
    })
  )

/** What the page's `data-configuration` attribute says, decoded as the browser would. */
const configurationOf = (html: string) => {
  const attribute = /<script id="api-reference"[^>]*\sdata-configuration="([^"]*)"/.exec(html)?.[1]
  if (attribute === undefined) throw new Error(`no data-configuration in ${html}`)
  return JSON.parse(attribute.replace(/&quot;/g, "\"").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&"))
}

describe("the API reference page", () => {
  it("loads only what this server serves: every src and href is relative to the page, so it works under a mount, and each answers", async () => {
    const page = await Http.request(server.url, "GET", "/docs")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    // No absolute URL anywhere (a protocol-relative one included), and no absolute path (it would miss a mount).
    expect(page.text).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i)
    const references = [...page.text.matchAll(/\s(?:src|href|data-url)="([^"]*)"/g)].map((match) => match[1]!)
    expect(references.sort()).toEqual(["docs/scalar.js", "openapi.json"])
    for (const reference of references) {
      const resolved = new URL(reference, `${server.url}/docs`)
      expect(resolved.pathname === "/docs/scalar.js" || resolved.pathname === "/openapi.json", reference).toBe(true)
      expect((await fetch(resolved)).status, reference).toBe(200)
    }
  })

  it("sends /docs/ to /docs, where its relative references resolve", async () => {
    const response = await fetch(`${server.url}/docs/`, { redirect: "manual" })
    expect(response.status).toBe(308)
    expect(new URL(response.headers.get("location") ?? "", `${server.url}/docs/`).href).toBe(`${server.url}/docs`)
  })

  it("lets the browser fetch nothing from another origin", async () => {
    const page = await Http.request(server.url, "GET", "/docs")
    const policy = directives(page.headers.get("content-security-policy") ?? "")
    expect(policy["default-src"]).toEqual(["'self'"])
    const allowed = new Set(["'self'", "'none'", "'unsafe-inline'", "'wasm-unsafe-eval'", "data:", "blob:"])
    for (const [name, sources] of Object.entries(policy)) {
      for (const source of sources) expect(allowed.has(source), `${name} ${source}`).toBe(true)
    }
    // Scripts: this server's file only (no inline script, no eval; Scalar compiles WebAssembly).
    expect(policy["script-src"]).toEqual(["'self'", "'wasm-unsafe-eval'"])
    for (const name of ["connect-src", "font-src", "img-src", "style-src"]) expect(policy[name], name).toContain("'self'")
  })

  it("turns off Scalar's web fonts, telemetry, hosted client button and cloud toolbar, with options the served Scalar reads", async () => {
    const page = await Http.request(server.url, "GET", "/docs")
    const configuration = configurationOf(page.text)
    expect(configuration).toEqual({ withDefaultFonts: false, telemetry: false, hideClientButton: true, showToolbar: "never" })
    // An option the script does not know would be ignored without a word: each must appear in its option schema.
    const script = await (await fetch(`${server.url}/docs/scalar.js`)).text()
    for (const option of Object.keys(configuration)) expect(script, option).toMatch(new RegExp(`[{,]${option}:`))
    expect(script).toMatch(/showToolbar:[^,]*\.enum\(\["always","localhost","never"\]\)/)
  })

  it("serves its script cached, as JavaScript", async () => {
    const script = await fetch(`${server.url}/docs/scalar.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get("content-type")).toContain("text/javascript")
    expect(script.headers.get("cache-control")).toContain("max-age")
    expect((await script.text()).length).toBeGreaterThan(100_000)
  })
})

describe("the root", () => {
  it("says where the reference and the document are", async () => {
    const root = await Http.request(server.url, "GET", "/")
    expect(root.status).toBe(200)
    expect(root.body).toEqual({
      message: "This is the orgplane API. Its reference is at /docs, its OpenAPI document at /openapi.json.",
      docs: "/docs",
      openapi: "/openapi.json",
      health: "/health"
    })
  })
})

describe("the OpenAPI document", () => {
  const get = (acceptEncoding: string) => fetch(`${server.url}/openapi.json`, { headers: { "accept-encoding": acceptEncoding } })

  it("is sent compressed in the coding the client accepts, the same document in each, and says it varies by accept-encoding", async () => {
    const plain = await get("identity")
    expect(plain.headers.get("content-encoding")).toBe(null)
    expect(plain.headers.get("vary")?.toLowerCase()).toContain("accept-encoding")
    const text = await plain.text()
    expect(Number(plain.headers.get("content-length"))).toBe(Buffer.byteLength(text))
    expect(JSON.parse(text)).toMatchObject({ openapi: "3.1.0", servers: [{ url: "/" }] })
    for (const [accepted, coding] of [["gzip, deflate, br", "br"], ["gzip", "gzip"], ["br;q=0.1, gzip", "gzip"]] as const) {
      const compressed = await get(accepted)
      expect(compressed.headers.get("content-encoding"), accepted).toBe(coding)
      expect(compressed.headers.get("vary")?.toLowerCase(), accepted).toContain("accept-encoding")
      // Sent at a fraction of the document's size; fetch decodes it back to the same text.
      expect(Number(compressed.headers.get("content-length")), accepted).toBeLessThan(Buffer.byteLength(text) / 5)
      expect(await compressed.text(), accepted).toBe(text)
    }
  })
})
