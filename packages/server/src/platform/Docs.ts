/**
 * What the server serves beside the API: `GET /openapi.json` (the OpenAPI 3.1 document of the API, whose
 * `info.version` is the API contract's label, `dev`, not the software's version: that one is `/health`'s), `GET /docs`
 * (the Scalar reference UI) and `GET /` (where those are).
 *
 * The page is self-contained, for air-gapped and self-hosted installs: its one script is served from here
 * (`/docs/scalar.js`, cached), its configuration turns off what would reach outside (Scalar's web fonts, its
 * telemetry) and what only Scalar's cloud offers (the button opening its hosted API client, the toolbar that
 * shares, deploys or generates SDKs there), and its Content-Security-Policy lets the browser load nothing from
 * anywhere else. It names its script and the document relative to itself, so it works wherever a host mounts the
 * server (`/orgplane/docs` loads `/orgplane/docs/scalar.js` and `/orgplane/openapi.json`).
 *
 * The document is @orgplane/schema's `openApiDocument`, the whole API's, its `servers` naming ORGPLANE_PUBLIC_URL,
 * else the mount (`basePath`), else `/`. It is about 2 MB and takes a few hundred milliseconds of the event loop to
 * build: it is built once, when it is first asked for, with its gzip and brotli forms, and sent in the one the client
 * accepts. Not at start: a build "in the background" still holds the one event loop, and held a start that long.
 */
import { openApiDocument } from "@orgplane/schema"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Zlib from "node:zlib"
import { chooseCoding } from "./Compression.js"
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
    <script id="api-reference" data-url="openapi.json" data-configuration="${escapeAttribute(JSON.stringify(scalarConfiguration))}"></script>
    <script src="docs/scalar.js"></script>
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

/** The document as sent: its JSON, and that JSON gzip- and brotli-compressed. */
interface Document {
  readonly identity: Uint8Array
  readonly gzip: Uint8Array
  readonly br: Uint8Array
}

/**
 * The document, its `servers` naming `serverUrl`, with its compressed forms. Brotli at quality 5 and gzip at level 6:
 * within a few tenths of the smallest sizes for a fraction of the time.
 */
const buildDocument = (serverUrl: string | undefined): Document => {
  const identity = Buffer.from(JSON.stringify(openApiDocument(undefined, serverUrl)), "utf8")
  return {
    identity,
    gzip: Zlib.gzipSync(identity, { level: 6 }),
    br: Zlib.brotliCompressSync(identity, {
      params: { [Zlib.constants.BROTLI_PARAM_QUALITY]: 5, [Zlib.constants.BROTLI_PARAM_SIZE_HINT]: identity.length }
    })
  }
}

/**
 * Documents built in this process, by the URL their `servers` names: a host that starts several servers (a test
 * suite starts hundreds) builds and compresses the document once per URL, not at every start (about 130 ms of CPU).
 * A few URLs at most are kept.
 */
const built = new Map<string, Document>()
const documentFor = (serverUrl: string | undefined): Document => {
  const key = serverUrl ?? ""
  let found = built.get(key)
  if (found === undefined) {
    found = buildDocument(serverUrl)
    if (built.size >= 4) built.delete(built.keys().next().value!)
    built.set(key, found)
  }
  return found
}

/** The routes served beside the API (the request log names them by these paths). */
export const routes = [["GET", "/"], ["GET", "/openapi.json"], ["GET", "/docs"], ["GET", "/docs/scalar.js"]] as const

/** `GET /`'s answer: where the reference, the document and the health check are, under the mount. */
export const index = (basePath: string) => ({
  message: `This is the orgplane API. Its reference is at ${basePath}/docs, its OpenAPI document at ${basePath}/openapi.json.`,
  docs: `${basePath}/docs`,
  openapi: `${basePath}/openapi.json`,
  health: `${basePath}/health`
})

export const layer = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    // `info.version` stays the API contract's label (`dev`); `servers` names ORGPLANE_PUBLIC_URL when it is set, else
    // the mount, else `/` (the origin the document is read from). Built at the first request for it.
    const document = yield* Effect.cached(Effect.sync(() => documentFor(settings.publicUrl ?? (settings.basePath || undefined))))
    const scalar = yield* Effect.cached(loadScalar)
    const scriptHeaders = { "cache-control": "public, max-age=86400", vary: "accept-encoding" }
    yield* router.add("GET", "/", HttpServerResponse.jsonUnsafe(index(settings.basePath)))
    yield* router.add(
      "GET",
      "/openapi.json",
      Effect.gen(function*() {
        const sent = yield* document
        const request = yield* HttpServerRequest.HttpServerRequest
        const coding = chooseCoding(request.headers["accept-encoding"])
        return HttpServerResponse.uint8Array(coding === undefined ? sent.identity : sent[coding], {
          contentType: "application/json",
          headers: { vary: "accept-encoding", ...(coding === undefined ? {} : { "content-encoding": coding }) }
        })
      })
    )
    const pageResponse = HttpServerResponse.text(page, {
      contentType: "text/html; charset=utf-8",
      headers: { "content-security-policy": contentSecurityPolicy }
    })
    yield* router.add(
      "GET",
      "/docs",
      Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        // The router takes `/docs/` for `/docs`, where the page's relative references would miss: sent to `/docs`,
        // relative to the mount as the page's own references are.
        request.url.split("?")[0]!.endsWith("/")
          ? HttpServerResponse.empty({ status: 308, headers: { location: "../docs" } })
          : pageResponse)
    )
    yield* router.add(
      "GET",
      "/docs/scalar.js",
      Effect.gen(function*() {
        const script = yield* scalar
        const request = yield* HttpServerRequest.HttpServerRequest
        if (script.brotli !== undefined && chooseCoding(request.headers["accept-encoding"], ["br"]) === "br") {
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
