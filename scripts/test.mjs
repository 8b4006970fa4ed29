/**
 * `pnpm test [vitest arguments]`: the whole suite. First the packages' vitest run (vitest.config.ts at the root),
 * then, while issue 46 moves the project to Effect 4, the vitest 5 run of each package in `next/` (the Effect 4
 * packages grown beside the Effect 3 ones until they take their place; each has its own vitest.config.ts). Flags go
 * to both runs (`--outputFile=x.json` becomes `x.next-<package>.json` for the second); a path filter runs the side
 * it names (`pnpm test packages/server/test/Teams.test.ts`, `pnpm test next/schema`). Fails when either fails.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.dirname(Path.dirname(new URL(import.meta.url).pathname))
const args = process.argv.slice(2)
// A filter is an argument that is not a flag, nor a flag's value (`--reporter default`): a path that exists is one
// wherever it stands (`--silent next/schema`).
const filters = args.filter((arg, index) =>
  !arg.startsWith("-") && (Fs.existsSync(Path.resolve(root, arg)) || !/^--?[\w-]+$/.test(args[index - 1] ?? "-"))
)
const flags = args.filter((arg) => !filters.includes(arg))
const nextFilters = filters.filter((filter) => filter.startsWith("next/") || filter.startsWith("./next/"))
const oldFilters = filters.filter((filter) => !nextFilters.includes(filter))

const run = (cwd, vitestArgs) => {
  const result = spawnSync(Path.join(cwd, "node_modules", ".bin", "vitest"), ["run", ...vitestArgs], { cwd, stdio: "inherit" })
  return result.status ?? 1
}

let failed = false
if (filters.length === 0 || oldFilters.length > 0) {
  failed = run(root, [...flags, ...oldFilters]) !== 0 || failed
}

const nextRoot = Path.join(root, "next")
const packages = Fs.existsSync(nextRoot) ? Fs.readdirSync(nextRoot).filter((name) => Fs.existsSync(Path.join(nextRoot, name, "vitest.config.ts"))) : []
if (filters.length === 0 || nextFilters.length > 0) {
  for (const name of packages) {
    const prefix = `next/${name}`
    const mine = nextFilters.map((filter) => filter.replace(/^\.\//, "")).filter((filter) => filter === prefix || filter.startsWith(`${prefix}/`))
    if (nextFilters.length > 0 && mine.length === 0) continue
    const paths = mine.map((filter) => filter.slice(prefix.length + 1)).filter((path) => path !== "")
    const own = flags.map((flag) =>
      flag.startsWith("--outputFile=")
        ? `--outputFile=${Path.resolve(root, flag.slice("--outputFile=".length)).replace(/(\.json)?$/, `.next-${name}$1`)}`
        : flag
    )
    console.log(`\n--- next/${name} (Effect 4, vitest 5)`)
    failed = run(Path.join(nextRoot, name), [...own, ...paths]) !== 0 || failed
  }
}
process.exit(failed ? 1 : 0)
