/**
 * `GET /openapi.json` (the OpenAPI 3.1 document generated from the API) and `GET /docs` (the Scalar reference UI).
 * The UI's script ships inside @effect/platform; it is served once from `/docs/scalar.js` with long caching instead
 * of being inlined into every page, so `/docs` is small and works offline.
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { openApiDocument } from "@orgplane/schema"
import { Effect } from "effect"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { ServerConfig } from "./Config.js"

const loadScalar = Effect.promise(async () => {
  const require = createRequire(import.meta.url)
  const root = Path.dirname(require.resolve("@effect/platform/package.json"))
  const module = await import(pathToFileURL(Path.join(root, "dist/esm/internal/httpApiScalar.js")).href)
  return module.javascript as string
})

const page = `<!doctype html>
<html>
  <head>
    <meta charset="utf-8" />
    <title>orgplane API reference</title>
    <meta name="viewport" content="width=device-width, initial-scale=1" />
  </head>
  <body>
    <script id="api-reference" data-url="/openapi.json"></script>
    <script src="/docs/scalar.js"></script>
  </body>
</html>`

/** The routes served beside the API (the request log names them by these paths). */
export const routes = [["GET", "/openapi.json"], ["GET", "/docs"], ["GET", "/docs/scalar.js"]] as const

export const layer = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const settings = yield* ServerConfig
    const document = HttpServerResponse.unsafeJson(openApiDocument(settings.version))
    const scalar = yield* Effect.cached(loadScalar)
    yield* router.get("/openapi.json", Effect.succeed(document))
    yield* router.get("/docs", Effect.succeed(HttpServerResponse.html(page)))
    yield* router.get(
      "/docs/scalar.js",
      Effect.map(scalar, (source) =>
        HttpServerResponse.text(source, {
          contentType: "text/javascript; charset=utf-8",
          headers: { "cache-control": "public, max-age=86400" }
        }))
    )
  })
)
