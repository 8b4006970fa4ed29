import { defineConfig } from "tsup"

/**
 * Left out of the bundle: PGlite and its socket server (WebAssembly and data files loaded from beside their own
 * code; both are dependencies in package.json), and `pg`'s optional add-ons that Node never loads (the native
 * binding, the Cloudflare socket) and that are not installed.
 *
 * Everything else is bundled, @effect/platform included: left outside, it would bring a second copy of `effect`
 * from node_modules and triple the start-up time. The server's /docs still reads the Scalar script from the
 * installed @effect/platform package (a dependency), resolved from dist/ at run time.
 */
const external = ["@electric-sql/pglite", "@electric-sql/pglite-socket", "pg-native", "pg-cloudflare"]

const names = external.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")

export default defineConfig({
  // One file set to load instead of hundreds of modules: `orgplane --help` starts several times faster.
  // `serve` imports the server (and the database driver) from its own chunk, on demand.
  entry: ["src/bin.ts", "src/index.ts"],
  format: ["esm"],
  platform: "node",
  target: "node20",
  splitting: true,
  sourcemap: true,
  clean: true,
  dts: { entry: "src/index.ts" },
  tsconfig: "tsconfig.build.json",
  // tsup leaves every package.json dependency external by default; bundle all but the list above.
  noExternal: [new RegExp(`^(?!(${names})(/|$))`)],
  external: [new RegExp(`^(${names})(/.*)?$`)],
  esbuildOptions(options) {
    // Workspace packages are bundled from their sources, so the CLI builds without building them first.
    options.conditions = ["@orgplane/source"]
  },
  banner: {
    // Bundled CommonJS modules (pg) call `require` for Node built-ins: ESM has no `require` unless we make one.
    js: "#!/usr/bin/env node\nimport { createRequire as __createRequire } from \"node:module\"; const require = __createRequire(import.meta.url);"
  }
})
