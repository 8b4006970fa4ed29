import { defineConfig } from "tsup"

const common = { sourcemap: true, target: "node22", tsconfig: "tsconfig.build.json" } as const

export default defineConfig([
  {
    ...common,
    // ESM keeps one file per module (`bundle: false`): with `sideEffects: false`, a bundler then drops the modules a
    // program does not use, and a client of a few groups (`apiOf`) carries only theirs.
    entry: ["src/**/*.ts"],
    bundle: false,
    format: ["esm"],
    dts: { entry: "src/index.ts" },
    // Both builds write to dist/ at once: this one cleans, sparing what the other writes.
    clean: ["**/*", "!index.cjs", "!index.cjs.map", "!index.d.cts"]
  },
  {
    ...common,
    // CommonJS callers `require` the whole package anyway: one file.
    entry: ["src/index.ts"],
    format: ["cjs"],
    dts: { entry: "src/index.ts" }
  }
])
