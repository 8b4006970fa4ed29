/**
 * The order a package's test files start in, longest first (`sequence.sequencer` of every package's vitest.config.ts):
 * as vitest's own order, from the durations its cache kept of the last run, and, for a file the cache knows nothing
 * of (every file of a fresh clone, as CI has), from the durations committed beside the tests (`test/durations.json`,
 * `durations.json` in examples/; `node scripts/test-durations.mjs` writes them from a run's cache). Without them a
 * fresh clone ran its files largest first: on two cores `pnpm test` took 439 s and 850 CPU-s where the same code
 * with the durations took 364 s and 702 (a long file started late holds its lane; heavy files side by side pay
 * for each other). A file in neither runs first, as vitest runs unknown files first.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** The committed durations of a package (milliseconds by path relative to its root), or none. */
const committed = (root: string): ReadonlyMap<string, number> => {
  for (const file of [Path.join(root, "test", "durations.json"), Path.join(root, "durations.json")]) {
    if (!Fs.existsSync(file)) continue
    const read: unknown = JSON.parse(Fs.readFileSync(file, "utf8"))
    if (typeof read !== "object" || read === null) return new Map()
    return new Map(Object.entries(read).flatMap(([path, millis]) => (typeof millis === "number" ? [[path, millis] as const] : [])))
  }
  return new Map()
}

export class DurationSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const known = new Map<string, ReadonlyMap<string, number>>()
    const duration = (spec: TestSpecification): number | undefined => {
      const cached = this.ctx.cache.getTestSpecificationResult(spec)
      if (cached !== undefined) return cached.duration
      const root = spec.project.config.root
      let durations = known.get(root)
      if (durations === undefined) known.set(root, durations = committed(root))
      return durations.get(Path.relative(root, spec.moduleId).split(Path.sep).join("/"))
    }
    const failed = (spec: TestSpecification) => this.ctx.cache.getTestSpecificationResult(spec)?.failed === true
    const ordered = await super.sort(files)
    const rank = new Map(ordered.map((spec, index) => [spec, index]))
    return [...ordered].sort((a, b) => {
      if (a.project.name !== b.project.name) return (rank.get(a) ?? 0) - (rank.get(b) ?? 0)
      if (failed(a) !== failed(b)) return failed(a) ? -1 : 1
      const [da, db] = [duration(a), duration(b)]
      if (da === undefined || db === undefined) {
        return da === undefined && db !== undefined ? -1 : db === undefined && da !== undefined ? 1 : (rank.get(a) ?? 0) - (rank.get(b) ?? 0)
      }
      return db - da
    })
  }
}
