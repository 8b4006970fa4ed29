import { defineConfig } from "vitest/config"
import { DurationSequencer } from "../testkit/src/Sequencer.js"

// The tests check pure schemas and the documents made of them: sharing one worker's modules across files (no
// isolation) keeps the run to seconds, where a fresh import per file took most of a minute on a loaded machine.
// Generating and comparing the whole OpenAPI document takes seconds on a loaded machine, hence the longer timeout.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: { sequence: { sequencer: DurationSequencer }, include: ["test/**/*.test.ts"], setupFiles: ["../testkit/src/FileTimes.ts"], isolate: false, silent: "passed-only", testTimeout: 30_000 }
})
