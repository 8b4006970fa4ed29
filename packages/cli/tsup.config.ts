import { execFile } from "node:child_process"
import { createRequire } from "node:module"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Zlib from "node:zlib"
import { defineConfig, type Options } from "tsup"

/**
 * Left out of the bundle: PGlite and its socket server (WebAssembly and data files loaded from beside their own
 * code), the server's protocol libraries that only `serve` loads (SAML with its XML signature stack, the OpenID
 * client, the JSON Schema validator, the mail client: about 0.35 MB of the packed tarball, which stays under 2 MB without them), all
 * of them dependencies in package.json; and `pg`'s optional add-ons that Node never loads (the native binding, the
 * Cloudflare socket) and that are not installed.
 *
 * Everything else is bundled, and so is a devDependency, not a dependency: installing it again beside the bundle
 * would only take room (a global install was 123 MB, 70 MB of it never loaded).
 */
const external = [
  "@electric-sql/pglite",
  "@electric-sql/pglite-socket",
  "@node-saml/node-saml",
  "@xmldom/xmldom",
  "openid-client",
  "nodemailer",
  "ajv",
  "ajv-formats",
  "pg-native",
  "pg-cloudflare"
]

const names = external.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")

type Plugin = NonNullable<Options["esbuildPlugins"]>[number]

/**
 * `undici` stands in for nothing the CLI runs: @effect/platform-node imports it for its undici HTTP client and its
 * Kubernetes runner client, which orgplane never uses (the server's HTTP client is node:http's, Node's own `fetch`
 * the CLI's). Bundled it would be a sixth of the bundle; this stub fails loudly should anything ever call it.
 */
const withoutUndici: Plugin = {
  name: "orgplane-without-undici",
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: "undici", namespace: "orgplane-not-bundled" }))
    build.onLoad({ filter: /.*/, namespace: "orgplane-not-bundled" }, () => ({
      loader: "js",
      contents: [
        "const missing = (name) => function() { throw new Error(`undici.${name} is not bundled in the orgplane CLI`) }",
        "export const Agent = missing(\"Agent\")",
        "export const getGlobalDispatcher = missing(\"getGlobalDispatcher\")",
        "export default {}"
      ].join("\n")
    }))
  }
}

/** Beside the bundle: the file `/docs/scalar.js` is served from (see the server's platform/Docs.ts). */
const SCALAR_ASSET = "scalar.js.br"

/**
 * The API reference's script (Scalar, shipped inside @effect/platform) written beside the bundle, compressed with
 * brotli: 0.7 MB in the tarball instead of 0.9 MB gzipped, and sent as it is to browsers that accept brotli.
 */
const scalarAsset: Plugin = {
  name: "orgplane-scalar-asset",
  setup(build) {
    build.onEnd(async (result) => {
      if (result.errors.length > 0 || build.initialOptions.outdir === undefined) return
      const require = createRequire(import.meta.url)
      const root = Path.dirname(require.resolve("@effect/platform/package.json"))
      const module = await import(pathToFileURL(Path.join(root, "dist/esm/internal/httpApiScalar.js")).href)
      const source = Buffer.from(module.javascript as string, "utf8")
      const compressed = await new Promise<Buffer>((resolve, reject) =>
        Zlib.brotliCompress(source, {
          params: {
            [Zlib.constants.BROTLI_PARAM_QUALITY]: 10,
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

/** Renders the help pages from the sources (the tree as built) and writes them beside the bundle. */
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
  // No source maps (they were 18 of the 25 MB unpacked). Minified, which Node parses and compiles faster at each
  // start (and which leaves room under the package's size budget), but with `keepNames`: a stack trace still names
  // the functions and classes, and so do Effect's spans, errors and `Schema` classes that read their `name`.
  sourcemap: false,
  minify: true,
  clean: true,
  dts: { entry: "src/index.ts" },
  tsconfig: "tsconfig.build.json",
  // tsup leaves every package.json dependency external by default; bundle all but the list above.
  noExternal: [new RegExp(`^(?!(${names})(/|$))`)],
  external: [new RegExp(`^(${names})(/.*)?$`)],
  esbuildPlugins: [withoutUndici, scalarAsset, helpPages],
  esbuildOptions(options) {
    // Workspace packages are bundled from their sources, so the CLI builds without building them first.
    options.conditions = ["@orgplane/source"]
    options.keepNames = true
  },
  banner: {
    // Bundled CommonJS modules (pg) call `require` for Node built-ins: ESM has no `require` unless we make one.
    js: "#!/usr/bin/env node\nimport { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
  }
})
