import { defineConfig } from "vitest/config"

// The tests run the CLI in-process against the Effect 4 server spawned once per file (test/RealServer.ts), and hold
// its help and usage errors to the Effect 3 CLI's as recorded (test/fixtures/effect3-usage.json): a fresh module graph
// per file costs more than it isolates here, as in next/client. Some tests use packages/testkit's fakes and SCIM
// sequences from its sources, as next/server's do, which import the Effect 3 packages' sources (`@orgplane/source`).
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: { include: ["test/**/*.test.ts"], isolate: false, testTimeout: 120_000, hookTimeout: 120_000 }
})
