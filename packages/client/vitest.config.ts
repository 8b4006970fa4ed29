import { defineConfig } from "vitest/config"
import { DurationSequencer } from "../testkit/src/Sequencer.js"

// The tests talk HTTP to a scripted fake server or to the server spawned once per file (test/RealServer.ts): a fresh
// module graph per file costs more than it isolates here, as in packages/schema.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  // Two workers: a file mostly waits on its server, and vitest's default on two cores is one.
  test: { sequence: { sequencer: DurationSequencer }, include: ["test/**/*.test.ts"], setupFiles: ["../testkit/src/FileTimes.ts"], isolate: false, maxWorkers: 2, silent: "passed-only", testTimeout: 30_000, hookTimeout: 120_000 }
})
