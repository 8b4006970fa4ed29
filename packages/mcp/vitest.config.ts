import * as Os from "node:os"
import * as Path from "node:path"
import { defineConfig } from "vitest/config"
import { DurationSequencer } from "../testkit/src/Sequencer.js"

// The tests drive the MCP server in memory (effect/ai's McpTest) against a real orgplane server started in the test
// file by the server's own test support (packages/server/test/support/HttpServer.ts: embedded database, or Postgres
// at DATABASE_URL), every answer it sends held to the OpenAPI document and every statement to the tenancy rule.
export default defineConfig({
  resolve: { conditions: ["@orgplane/source"] },
  ssr: { resolve: { conditions: ["@orgplane/source"] } },
  test: {
    // Longest files first, a fresh clone too (testkit's Sequencer.ts, from test/durations.json).
    sequence: { sequencer: DurationSequencer },
    include: ["test/**/*.test.ts"],
    setupFiles: ["../testkit/src/FileTimes.ts", "../server/test/support/contractSetup.ts", "../server/test/support/tenancySetup.ts"],
    isolate: false,
    maxWorkers: 2,
    silent: "passed-only",
    testTimeout: 30_000,
    hookTimeout: 120_000,
    env: {
      ORGPLANE_CACHE_DIR: process.env["ORGPLANE_CACHE_DIR"] ?? Path.join(Os.tmpdir(), "orgplane-test-cache"),
      ORGPLANE_CHECK_RESPONSE_ENCODING: process.env["ORGPLANE_CHECK_RESPONSE_ENCODING"] ?? "1",
      ORGPLANE_CLUSTER_PORT: process.env["ORGPLANE_CLUSTER_PORT"] ?? "0"
    }
  }
})
