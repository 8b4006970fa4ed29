/**
 * Discovery and import planning in process, without the network: the plugin candidates of a repository listing of
 * 20,000 files in 200 plugins (100 files each: a manifest, 30 skills, 30 commands, 39 other files) and their import
 * plans, as `connectors/Discovery.ts` and `ImportPlans.ts` compute them. The same listing as the test of their
 * results (packages/server/test/Discovery.test.ts); this prints how long they take.
 */
import { Effect } from "effect"
import { discover } from "../packages/server/src/connectors/Discovery.js"
import { importPlans } from "../packages/server/src/connectors/ImportPlans.js"
import type { Entry } from "../packages/server/src/connectors/RepositoryTree.js"

const listing = (): Array<Entry> => {
  const entries: Array<Entry> = []
  for (let plugin = 0; plugin < 200; plugin++) {
    const root = `plugins/p${String(plugin).padStart(3, "0")}`
    entries.push({ path: `${root}/.claude-plugin/plugin.json`, type: "blob", sha: `m${plugin}`, size: 20 })
    for (let i = 0; i < 99; i++) {
      const path = i < 30 ? `${root}/skills/s${i}/SKILL.md` : i < 60 ? `${root}/commands/c${i}.md` : `${root}/src/deep/er/f${i}.ts`
      entries.push({ path, type: "blob", sha: `${plugin}:${i}`, size: 100 })
    }
  }
  return entries
}

const once = (entries: ReadonlyArray<Entry>) =>
  Effect.runPromise(Effect.gen(function*() {
    const outcome = yield* discover({ entries, readText: (path) => Effect.succeed(JSON.stringify({ name: path.split("/")[1] })) })
    return outcome.candidates.flatMap((candidate) => importPlans(candidate, entries)).length
  }))

/** Prints the median of 5 runs after one to warm up. */
export const measurePlanning = async () => {
  const entries = listing()
  await once(entries)
  const times: Array<number> = []
  for (let i = 0; i < 5; i++) {
    const started = performance.now()
    await once(entries)
    times.push(performance.now() - started)
  }
  times.sort((a, b) => a - b)
  console.log(`\ndiscovery and import plans in process (${entries.length} entries, 200 plugins):`)
  console.log(`  median of 5                             ${times[2]!.toFixed(0).padStart(8)} ms`)
}
