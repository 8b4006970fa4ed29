/**
 * The `orgplane` bundle as it is published (tsup.config.ts's build, help pages beside it), built into a folder of the
 * package's `.test-dist/` (inside the package, so it resolves its external dependencies from the package's
 * node_modules). It imports nothing of the CLI's sources: the run's global setup (test/GlobalSetup.ts) loads it
 * outside the workers, where the sources' `@orgplane/source` resolution does not apply.
 */
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "tsup"
import config from "../tsup.config.js"

export const root = fileURLToPath(new URL("../../..", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

/** The bundle named `name`: its `bin.js`, `build` to make it and `dispose` to remove it. */
export const make = (name: string) => {
  const bundleDir = Path.join(packageDir, ".test-dist", name)

  const buildBundle = async () => {
    const options = Array.isArray(config) ? config[0] : config
    await build({
      ...options,
      config: false,
      dts: false,
      sourcemap: false,
      silent: true,
      outDir: bundleDir,
      tsconfig: Path.join(packageDir, "tsconfig.build.json"),
      entry: [Path.join(packageDir, "src/bin.ts")]
    })
  }

  const dispose = async () => {
    await Fs.rm(bundleDir, { recursive: true, force: true })
    // The shared parent goes with the last bundle in it.
    await Fs.rmdir(Path.dirname(bundleDir)).catch(() => undefined)
  }

  return { bin: Path.join(bundleDir, "bin.js"), build: buildBundle, dispose }
}
