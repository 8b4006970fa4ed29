import { defineConfig } from "vitest/config"

// The tests run the CLI in-process against the Effect 3 server spawned once per file (test/RealServer.ts), and the
// Effect 3 CLI out of process for the differential help and usage checks (test/Effect3Cli.ts): a fresh module graph
// per file costs more than it isolates here, as in next/client. Some tests use packages/testkit's fakes and SCIM
// sequences from its sources, as next/server's do, which import the Effect 3 packages' sources (`@orgplane/source`).
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: { include: ["test/**/*.test.ts"], isolate: false, testTimeout: 120_000, hookTimeout: 120_000 }
})
