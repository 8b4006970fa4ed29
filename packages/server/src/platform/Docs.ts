/**
 * `GET /openapi.json` (the OpenAPI 3.1 document of the API, whose `info.version` is the API contract's label, `dev`,
 * not the software's version: that one is `/health`'s) and `GET /docs` (the Scalar reference UI).
 *
 * The page is self-contained, for air-gapped and self-hosted installs: its one script is served from here
 * (`/docs/scalar.js`, cached), its configuration turns off what would reach outside (Scalar's web fonts, its
 * telemetry) and what only Scalar's cloud offers (the button opening its hosted API client, the toolbar that
 * shares, deploys or generates SDKs there), and its Content-Security-Policy lets the browser load nothing from
 * anywhere else.
 *
 * The document is @orgplane/schema's `openApiDocument`, the whole API's.
 */
import { openApiDocument } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import { HttpRouter } from "effect/http"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Zlib from "node:zlib"
import { ServerConfig } from "./Config.js"

/** Scalar's options, as its standalone script reads them from `data-configuration`. */
export const scalarConfiguration = {
  withDefaultFonts: false,
  telemetry: false,
  hideClientButton: true,
  showToolbar: "never"
} as const

/**
 * Every fetch directive allows this origin only. Scalar injects its styles inline, draws some icons from data URLs
 * and compiles WebAssembly (`'wasm-unsafe-eval'` allows that, not JavaScript's eval).
 */
export const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'self'"
].join("; ")

const escapeAttribute = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const page = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>orgplane API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" data-url="/openapi.json" data-configuration="${escapeAttribute(JSON.stringify(scalarConfiguration))}"></script>
    <script src="/docs/scalar.js"></script>
  </body>
</html>`

interface ScalarScript {
  /** The script as brotli, when it ships compressed. */
  readonly brotli: Uint8Array | undefined
  readonly text: Effect.Effect<string>
}

const isScalarModule = (module: unknown): module is { readonly javascript: string } =>
  typeof module === "object" && module !== null && "javascript" in module && typeof module.javascript === "string"

/**
 * The CLI's bundle carries the script beside it, brotli-compressed (see the CLI's tsup.config.ts); everywhere else
 * it is read from the `effect` package, which ships it (`http-api/internal/httpApiScalar.js`, not among its exports).
 */
const loadScalar: Effect.Effect<ScalarScript> = Effect.gen(function*() {
  const beside = yield* Effect.promise(() => Fs.readFile(new URL("./scalar.js.br", import.meta.url)).catch(() => undefined))
  if (beside !== undefined) {
    const text = yield* Effect.cached(Effect.sync(() => Zlib.brotliDecompressSync(beside).toString("utf8")))
    return { brotli: beside, text }
  }
  const source = yield* Effect.promise(async () => {
    const require = createRequire(import.meta.url)
    const root = Path.dirname(require.resolve("effect/package.json"))
    const module: unknown = await import(pathToFileURL(Path.join(root, "dist/http-api/internal/httpApiScalar.js")).href)
    if (!isScalarModule(module)) throw new Error("effect's Scalar script was not found")
    return module.javascript
  })
  return { brotli: undefined, text: Effect.succeed(source) }
})

/** Whether `accept-encoding` accepts brotli (listed, and not with `q=0`). */
export const acceptsBrotli = (header: string | undefined) =>
  (header ?? "").split(",").some((entry) => {
    const [coding, ...parameters] = entry.trim().toLowerCase().split(";").map((part) => part.trim())
    const q = parameters.find((parameter) => parameter.startsWith("q="))
    return coding === "br" && (q === undefined || Number(q.slice(2)) > 0)
  })

/** The routes served beside the API (the request log names them by these paths). */
export const routes = [["GET", "/openapi.json"], ["GET", "/docs"], ["GET", "/docs/scalar.js"]] as const

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    // `info.version` stays the API contract's label (`dev`); `servers` names ORGPLANE_PUBLIC_URL when it is set, else
    // `/` (the origin the document is read from). Made at the first request, not at start-up: it is the largest
    // piece of work of a start that no request before it needs.
    const document = yield* Effect.cached(Effect.sync(() => HttpServerResponse.jsonUnsafe(openApiDocument(undefined, settings.publicUrl))))
    const scalar = yield* Effect.cached(loadScalar)
    const scriptHeaders = { "cache-control": "public, max-age=86400", vary: "accept-encoding" }
    yield* router.add("GET", "/openapi.json", document)
    yield* router.add(
      "GET",
      "/docs",
      HttpServerResponse.text(page, {
        contentType: "text/html; charset=utf-8",
        headers: { "content-security-policy": contentSecurityPolicy }
      })
    )
    yield* router.add(
      "GET",
      "/docs/scalar.js",
      Effect.gen(function*() {
        const script = yield* scalar
        const request = yield* HttpServerRequest.HttpServerRequest
        if (script.brotli !== undefined && acceptsBrotli(request.headers["accept-encoding"])) {
          return HttpServerResponse.uint8Array(script.brotli, {
            contentType: "text/javascript; charset=utf-8",
            headers: { ...scriptHeaders, "content-encoding": "br" }
          })
        }
        return HttpServerResponse.text(yield* script.text, { contentType: "text/javascript; charset=utf-8", headers: scriptHeaders })
      })
    )
  })
)
