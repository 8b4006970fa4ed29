/**
 * `node scripts/test-durations.mjs`: writes each package's `test/durations.json` (examples/durations.json) from the
 * durations vitest kept of its last run (`node_modules/.vite/vitest/<hash>/results.json`), for the order a fresh clone
 * runs its files in (packages/testkit/src/Sequencer.ts). Run it after a whole `pnpm test` that passed, on the embedded
 * database (a Postgres run keeps its own durations in the same cache), when the files or their weights have changed
 * much; commit what it writes.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"

const root = Path.dirname(Path.dirname(new URL(import.meta.url).pathname))
// Every folder with a vitest run of its own, as `pnpm test` finds them (scripts/test.mjs).
const folders = ["examples", ...Fs.readdirSync(Path.join(root, "packages")).map((name) => `packages/${name}`)]
  .filter((folder) => Fs.existsSync(Path.join(root, folder, "vitest.config.ts")))

for (const folder of folders) {
  const cache = Path.join(root, folder, "node_modules", ".vite", "vitest")
  if (!Fs.existsSync(cache)) {
    console.error(`${folder}: no vitest cache (run pnpm test first)`)
    continue
  }
  const durations = {}
  for (const hash of Fs.readdirSync(cache)) {
    const results = Path.join(cache, hash, "results.json")
    if (!Fs.existsSync(results)) continue
    for (const project of Object.values(JSON.parse(Fs.readFileSync(results, "utf8")).projects ?? {})) {
      for (const [file, { duration }] of Object.entries(project.files ?? {})) {
        if (Fs.existsSync(Path.join(root, folder, file)) && typeof duration === "number") durations[file] = Math.round(duration)
      }
    }
  }
  const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)))
  const target = Path.join(root, folder, folder === "examples" ? "durations.json" : Path.join("test", "durations.json"))
  Fs.writeFileSync(target, `${JSON.stringify(sorted, null, 2)}\n`)
  console.log(`${Path.relative(root, target)}: ${Object.keys(sorted).length} files`)
}
