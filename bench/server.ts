/**
 * The orgplane server under benchmark, alone in its own process: `makeNodeListener` of the checkout at
 * ORGPLANE_BENCH_ROOT (default: this repository), configured from the environment the harness gives it
 * (DATABASE_URL or the embedded database, cheap password hashing), served by a plain `node:http` server (child.ts).
 * Started by run.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { serve } from "./child.js"

interface NodeListener {
  readonly listener: (request: IncomingMessage, response: ServerResponse) => void
  readonly dispose: () => Promise<void>
}

const root = Path.resolve(process.env.ORGPLANE_BENCH_ROOT ?? Path.join(import.meta.dirname, ".."))
// Imported by path, not by package name: the name would resolve in this repository, not in the checkout measured.
const entry = pathToFileURL(Path.join(root, "packages/server/src/index.ts")).href
const { makeNodeListener } = (await import(entry)) as {
  readonly makeNodeListener: (options: { readonly passwordCost?: number; readonly dataDir?: string }) => Promise<NodeListener>
}

// Without DATABASE_URL: a throwaway embedded database, as in tests.
const { listener, dispose } = await makeNodeListener({ passwordCost: 10, dataDir: "memory" })
await serve(listener, dispose)
