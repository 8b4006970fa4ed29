import { defineConfig } from "vitest/config"

// The tests run the CLI in-process against the server spawned once per file (test/RealServer.ts), and hold its help
// and usage errors to the saved ones (test/fixtures/usage/, Usage.test.ts): a fresh module graph per file costs more
// than it isolates here. Some tests use packages/testkit's fakes and SCIM sequences from its sources, which import the
// packages' sources (`@orgplane/source`).
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  // Two workers: a file spends most of its time waiting on its server (a process of its own), and vitest's default
  // on two cores is one.
  test: { include: ["test/**/*.test.ts"], isolate: false, maxWorkers: 2, silent: "passed-only", testTimeout: 120_000, hookTimeout: 120_000 }
})
