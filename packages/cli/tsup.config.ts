/**
 * The `orgplane` executable's bundle (packages/cli/tsup.config.ts's, on the Effect 4 tree): `dist/bin.js` and its
 * chunks, with the help pages rendered beside it (`help.json`) and the API reference's script compressed beside it
 * (`scalar.js.br`).
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Zlib from "node:zlib"
import { defineConfig, type Options } from "tsup"

/**
 * Left out of the bundle: PGlite, its socket server and its pg_dump, and Postgres's parser that `db restore` reads a dump
 * with (WebAssembly and data files loaded from beside their own code), and the server's protocol libraries that only `serve` loads (SAML with its XML signature stack, the OpenID
 * client, the JSON Schema validator, the mail client), all of them dependencies of the published package (until the
 * swap, of @orgplane/server: see test/Binary.ts). Effect 4's `@effect/sql-pg` is its own Postgres client, so
 * `pg` and its optional add-ons are not in the tree any more.
 *
 * Everything else is bundled, and so is a devDependency, not a dependency: installing it again beside the bundle
 * would only take room.
 */
export const external = [
  "@electric-sql/pglite",
  "@electric-sql/pglite-socket",
  "@electric-sql/pglite-tools",
  "libpg-query",
  "@node-saml/node-saml",
  "@xmldom/xmldom",
  "openid-client",
  "nodemailer",
  "ajv",
  "ajv-formats"
]

const names = external.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")

type Plugin = NonNullable<Options["esbuildPlugins"]>[number]

/**
 * A module that stands in for a library the CLI bundles a use of but never runs: each name a function that fails
 * loudly should anything ever call it.
 */
const stub = (library: string, names: ReadonlyArray<string>) =>
  [
    `const missing = (name) => function() { throw new Error(\`${library}.\${name} is not bundled in the orgplane CLI\`) }`,
    ...names.map((name) => `export const ${name} = missing(${JSON.stringify(name)})`),
    "export default {}"
  ].join("\n")

/**
 * Libraries stood in for (see `stub`):
 * - `undici`: @effect/platform-node 4 imports it for its undici HTTP client (NodeHttpClient's dispatcher, `Undici.ts`),
 *   which orgplane never uses (the server's HTTP client is node:http's, Node's own `fetch` the CLI's).
 * - `ws` (50 kB minified): NodeHttpServer makes its WebSocket server the first time a handler upgrades a request to a
 *   WebSocket, which none of the server's handlers does (an `Upgrade: websocket` request is answered like any other),
 *   and the durable engine's runners listen with NodeSocketServer's TCP server, not its WebSocket one. The names are
 *   those of ws's ESM entry, which @effect/platform-node re-exports.
 */
const stubs: Readonly<Record<string, ReadonlyArray<string>>> = {
  undici: ["Agent", "getGlobalDispatcher"],
  ws: ["createWebSocketStream", "extension", "PerMessageDeflate", "Receiver", "Sender", "subprotocol", "WebSocket", "WebSocketServer"]
}

/**
 * effect 4's `http-api` index names HttpApiScalar and HttpApiSwagger, whose layers import the reference UIs' scripts
 * on demand (`./internal/httpApiScalar.js`, 3 MB, and `./internal/httpApiSwagger.js`, 1.9 MB): esbuild writes a
 * dynamically imported module as a chunk of its own even when nothing that imports it is kept, so both would ship,
 * never loaded, should anything import that index (the packages import Effect module by module:
 * .ci/deep-imports.mjs). The server serves its own page (Docs.ts, with the script beside the bundle), not those layers.
 */
const referenceUiStub = (file: string) =>
  `throw new Error(${JSON.stringify(`effect/http-api/internal/${file} is not bundled in the orgplane CLI (Docs.ts serves the API reference)`)})`

const notBundled: Plugin = {
  name: "orgplane-not-bundled",
  setup(build) {
    build.onResolve({ filter: /^(undici|ws)$/ }, (args) => ({ path: args.path, namespace: "orgplane-not-bundled" }))
    build.onResolve({ filter: /^\.\/internal\/httpApi(Scalar|Swagger)\.js$/ }, (args) =>
      /[\\/]effect[\\/]dist[\\/]http-api$/.test(args.resolveDir)
        ? { path: args.path.slice("./internal/".length), namespace: "orgplane-not-bundled" }
        : undefined)
    build.onLoad({ filter: /.*/, namespace: "orgplane-not-bundled" }, (args) => ({
      loader: "js",
      contents: Object.hasOwn(stubs, args.path) ? stub(args.path, stubs[args.path]!) : referenceUiStub(args.path)
    }))
  }
}

/** Beside the bundle: the file `/docs/scalar.js` is served from (see next/server's platform/Docs.ts). */
const SCALAR_ASSET = "scalar.js.br"

const isScalarModule = (module: unknown): module is { readonly javascript: string } =>
  typeof module === "object" && module !== null && "javascript" in module && typeof module.javascript === "string"

/**
 * The API reference's script (Scalar, shipped inside `effect` 4 as `dist/http-api/internal/httpApiScalar.js`, not
 * among its exports: where Docs.ts falls back to when nothing is beside it) written beside the bundle, compressed
 * with brotli, and sent as it is to browsers that accept brotli.
 */
const scalarAsset: Plugin = {
  name: "orgplane-scalar-asset",
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length > 0 || build.initialOptions.outdir === undefined) return
      // `effect` as next/server resolves it: the one whose script Docs.ts would read.
      const require = createRequire(fileURLToPath(new URL("../server/package.json", import.meta.url)))
      const root = Path.dirname(require.resolve("effect/package.json"))
      const module: unknown = await import(pathToFileURL(Path.join(root, "dist/http-api/internal/httpApiScalar.js")).href)
      if (!isScalarModule(module)) throw new Error("effect's Scalar script was not found")
      const source = Buffer.from(module.javascript, "utf8")
      const compressed = await new Promise<Buffer>((resolve, reject) =>
        Zlib.brotliCompress(source, {
          params: {
            [Zlib.constants.BROTLI_PARAM_QUALITY]: 11,
            [Zlib.constants.BROTLI_PARAM_SIZE_HINT]: source.length
          }
        }, (error, value) => (error ? reject(error) : resolve(value)))
      )
      // tsup writes the bundle itself after esbuild ends: on a first build the folder does not exist yet.
      await Fs.mkdir(build.initialOptions.outdir, { recursive: true })
      await Fs.writeFile(Path.join(build.initialOptions.outdir, SCALAR_ASSET), compressed)
    })
  }
}

/** Beside the bundle: the help pages bin.ts prints without loading the CLI (see src/HelpPages.ts). */
const HELP_PAGES = "help.json"

/** Renders the help pages from the sources (the tree as built, with next/cli's own Help.ts) beside the bundle. */
const helpPages: Plugin = {
  name: "orgplane-help-pages",
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length > 0 || build.initialOptions.outdir === undefined) return
      const outdir = build.initialOptions.outdir
      await Fs.mkdir(outdir, { recursive: true })
      const packageDir = Path.dirname(fileURLToPath(import.meta.url))
      await new Promise<void>((resolve, reject) =>
        execFile(
          process.execPath,
          ["--conditions=@orgplane/source", "--import", "tsx", Path.join(packageDir, "scripts/help-pages.ts"), Path.resolve(outdir, HELP_PAGES)],
          { cwd: packageDir },
          (error, _stdout, stderr) => (error ? reject(new Error(`help pages: ${stderr || error.message}`)) : resolve())
        )
      )
    })
  }
}

export default defineConfig({
  // One file set to load instead of hundreds of modules: `orgplane --help` starts several times faster.
  // `serve` imports the server (and the database driver) from its own chunk, on demand.
  entry: ["src/bin.ts", "src/index.ts"],
  format: ["esm"],
  platform: "node",
  target: "node22",
  splitting: true,
  // No source maps. Minified, which Node parses and compiles faster at each start, but with `keepNames`: a stack
  // trace still names the functions and classes, and so do Effect's spans, errors and `Schema` classes that read
  // their `name`.
  sourcemap: false,
  minify: true,
  clean: true,
  dts: { entry: "src/index.ts" },
  tsconfig: "tsconfig.build.json",
  // tsup leaves every package.json dependency external by default; bundle all but the list above.
  noExternal: [new RegExp(`^(?!(${names})(/|$))`)],
  external: [new RegExp(`^(${names})(/.*)?$`)],
  esbuildPlugins: [notBundled, scalarAsset, helpPages],
  esbuildOptions(options) {
    // Workspace packages are bundled from their sources (next/'s export them; packages/'s under this condition).
    options.conditions = ["@orgplane/source"]
    options.keepNames = true
  },
  banner: {
    // Bundled CommonJS modules call `require` for Node built-ins: ESM has no `require` unless we make one.
    js: "#!/usr/bin/env node\nimport { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
  }
})
