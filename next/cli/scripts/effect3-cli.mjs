// The Effect 3 CLI in-process (packages/cli/test/Harness.ts's `invoke`), in a process of its own: reads a JSON list of
// `{ args, env }` on stdin and writes the list of `{ code, stdout, stderr }` on stdout. Run with
// `node --conditions=@orgplane/source --import tsx` from the repository's root by record-effect3-usage.ts; plain
// JavaScript, so that a type-check does not read Effect 3's sources.
import { invoke } from "../../../packages/cli/test/Harness.ts"

const chunks = []
for await (const chunk of process.stdin) chunks.push(chunk)
const cases = JSON.parse(Buffer.concat(chunks).toString("utf8"))
const results = []
for (const { args, env } of cases) results.push(await invoke(args, env))
process.stdout.write(JSON.stringify(results))
