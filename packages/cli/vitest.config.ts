import * as Os from "node:os"
import * as Path from "node:path"
import { defineConfig } from "vitest/config"
import { DurationSequencer } from "../testkit/src/Sequencer.js"

// The tests run the CLI in-process against the server spawned once per file (test/RealServer.ts), and hold its help
// and usage errors to the saved ones (test/fixtures/usage/, Usage.test.ts): a fresh module graph per file costs more
// than it isolates here. Some tests use packages/testkit's fakes and SCIM sequences from its sources, which import the
// packages' sources (`@orgplane/source`).
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  // Two workers on two cores (vitest's default there is one): a file spends much of its time waiting on a server or
  // a command in a process of its own. Beside the server suite's two (`pnpm test`), two fill the cores better than
  // three (the server's vitest.config.ts has the figures). `ORGPLANE_TEST_WORKERS` sets another count. The run's
  // `orgplane` bundle is built once, before the files (test/GlobalSetup.ts).
  test: {
    // Longest files first, a fresh clone too (testkit's Sequencer.ts, from test/durations.json).
    sequence: { sequencer: DurationSequencer },
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/GlobalSetup.ts"],
    setupFiles: ["../testkit/src/FileTimes.ts"],
    isolate: false,
    maxWorkers: Number(process.env["ORGPLANE_TEST_WORKERS"] ?? 2),
    silent: "passed-only",
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // The embedded database's templates in the test run's cache folder, the server suite's (its servers and the
    // in-process ones here run the same sources), not the user's; test/Binary.ts gives the bundle's servers theirs.
    env: { ORGPLANE_CACHE_DIR: process.env["ORGPLANE_CACHE_DIR"] ?? Path.join(Os.tmpdir(), "orgplane-test-cache") }
  }
})
