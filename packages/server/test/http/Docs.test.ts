/**
 * `/docs`, the API reference, as an air-gapped or self-hosted operator serves it: the page and what it loads come
 * from this server only, and nothing on it leads to Scalar's cloud.
 */
import * as Http from "../../../../packages/testkit/src/Http.js"
import * as TestServer from "../support/HttpServer.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acceptsBrotli } from "../../src/platform/Docs.js"

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
  it("loads only what this server serves: every src and href is a path here, and each answers", async () => {
    const page = await Http.request(server.url, "GET", "/docs")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    // No absolute URL anywhere (a protocol-relative one included).
    expect(page.text).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i)
    const references = [...page.text.matchAll(/\s(?:src|href|data-url)="([^"]*)"/g)].map((match) => match[1]!)
    expect(references.sort()).toEqual(["/docs/scalar.js", "/openapi.json"])
    for (const reference of references) {
      expect((await fetch(new URL(reference, server.url))).status, reference).toBe(200)
    }
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

describe("accept-encoding", () => {
  it("accepts brotli when listed without q=0", () => {
    expect(acceptsBrotli("gzip, deflate, br")).toBe(true)
    expect(acceptsBrotli("br;q=0.5")).toBe(true)
    expect(acceptsBrotli("gzip, br;q=0")).toBe(false)
    expect(acceptsBrotli("gzip, deflate")).toBe(false)
    expect(acceptsBrotli("brotli")).toBe(false)
    expect(acceptsBrotli(undefined)).toBe(false)
  })
})
