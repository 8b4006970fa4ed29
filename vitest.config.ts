import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts"],
    globalSetup: ["packages/testkit/src/globalSetup.ts"],
    setupFiles: ["packages/testkit/src/tenancySetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite runs on the main thread: one worker per core keeps each server responsive.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } }
  }
})
