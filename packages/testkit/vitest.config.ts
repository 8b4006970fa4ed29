import { defineConfig } from "vitest/config"
import { DurationSequencer } from "./src/Sequencer.js"

// The fakes and checkers on loopback: no orgplane server and no database, but ResponseContract.test reads the
// server's and schema's sources (`@orgplane/source`). Files share their worker's modules (`isolate: false`): no test
// replaces a module or a global.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: { sequence: { sequencer: DurationSequencer }, include: ["test/**/*.test.ts"], setupFiles: ["src/FileTimes.ts"], isolate: false, maxWorkers: 2, silent: "passed-only", testTimeout: 30_000, hookTimeout: 60_000 }
})
