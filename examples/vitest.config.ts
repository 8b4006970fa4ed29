import { defineConfig } from "vitest/config"
import { DurationSequencer } from "../packages/testkit/src/Sequencer.js"

// The examples run in-process against the server's test servers (packages/server/test/support/HttpServer.ts): every
// answer held to the OpenAPI document and every statement to the tenancy rule, as the server's own tests are.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: {
    // Longest files first, a fresh clone too (testkit's Sequencer.ts, from test/durations.json).
    sequence: { sequencer: DurationSequencer },
    include: ["**/*.test.ts"],
    exclude: ["**/node_modules/**"],
    setupFiles: ["../packages/testkit/src/FileTimes.ts", "../packages/server/test/support/contractSetup.ts", "../packages/server/test/support/tenancySetup.ts"],
    // A passing example's console output (its servers' log lines) is not printed; a failing one's is.
    silent: "passed-only",
    testTimeout: 120_000,
    hookTimeout: 120_000
  }
})
