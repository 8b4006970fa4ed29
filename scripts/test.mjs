/**
 * `pnpm test [vitest arguments]`: the whole suite, each package's own vitest run in turn (packages/schema, client,
 * testkit, server, mcp, cli, then examples/: every folder with a vitest.config.ts). Flags go to every run
 * (`--outputFile=x.json` becomes `x.<package>.json`, one report each); a path filter runs the package it names, with
 * the rest of the path as vitest's filter (`pnpm test packages/server/test/Teams.test.ts`, `pnpm test packages/schema`).
 * Fails when any run fails.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.dirname(Path.dirname(new URL(import.meta.url).pathname))
// The order of the runs: the quick ones first, so a broken schema fails in seconds.
const order = ["packages/schema", "packages/client", "packages/testkit", "packages/server", "packages/mcp", "packages/cli", "examples"]
const folders = order.filter((folder) => Fs.existsSync(Path.join(root, folder, "vitest.config.ts")))

const args = process.argv.slice(2)
// A filter is an argument that is not a flag, nor a flag's value (`--reporter default`): a path that exists is one
// wherever it stands (`--silent packages/schema`).
const filters = args.filter((arg, index) =>
  !arg.startsWith("-") && (Fs.existsSync(Path.resolve(root, arg)) || !/^--?[\w-]+$/.test(args[index - 1] ?? "-"))
)
const flags = args.filter((arg) => !filters.includes(arg))
const relative = filters.map((filter) => Path.relative(root, Path.resolve(root, filter)))
const unknown = relative.filter((filter) => !folders.some((folder) => filter === folder || filter.startsWith(`${folder}/`)))
if (unknown.length > 0) {
  console.error(`pnpm test: ${unknown.join(", ")} is in none of ${folders.join(", ")}`)
  process.exit(2)
}

let failed = false
for (const folder of folders) {
  const mine = relative.filter((filter) => filter === folder || filter.startsWith(`${folder}/`))
  if (relative.length > 0 && mine.length === 0) continue
  const paths = mine.map((filter) => filter.slice(folder.length + 1)).filter((path) => path !== "")
  const name = folder.replace(/^packages\//, "")
  const own = flags.map((flag) =>
    flag.startsWith("--outputFile=")
      ? `--outputFile=${Path.resolve(root, flag.slice("--outputFile=".length)).replace(/(\.json)?$/, `.${name}$1`)}`
      : flag
  )
  const cwd = Path.join(root, folder)
  console.log(`\n--- ${folder}`)
  const result = spawnSync(Path.join(cwd, "node_modules", ".bin", "vitest"), ["run", ...own, ...paths], { cwd, stdio: "inherit" })
  failed = (result.status ?? 1) !== 0 || failed
}
process.exit(failed ? 1 : 0)
